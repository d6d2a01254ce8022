"""Start-up: the app draws its first frame before the runtime exists, then shows it.

`workbench` opens the app with `make_app(start=...)`: the starting screen is up while
`start` builds the runtime in a thread, and the main screen replaces it once built. A
`start` that fails ends the app with exit code 2 and the reason (`start_error`).
"""

from __future__ import annotations

import math
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.widgets import Static

from workbench.providers.scripted import Scenario
from workbench.runtime import RunOptions, Runtime, build_runtime
from workbench.scratch import seed
from workbench.widgets.app import make_app
from workbench.widgets.main_screen import MainScreen
from workbench.widgets.starting_screen import StartingScreen

ROOT = Path(__file__).resolve().parents[2]


def held_start(tmp_path: Path) -> tuple[Callable[[], Runtime], threading.Event, list[str]]:
    """A `start` that waits for `release` before it builds the demo's runtime; `called`
    lists the threads it ran in."""
    release = threading.Event()
    called: list[str] = []

    def start() -> Runtime:
        called.append(threading.current_thread().name)
        release.wait(10)
        scenario = Scenario.load("demo")
        seed(tmp_path, scenario.workspace_files)
        options = RunOptions(scenario=scenario, workspace=tmp_path, pace=math.inf, record=False)
        return build_runtime(options)

    return start, release, called


async def main_screen_up(app: Any, pilot: Any) -> None:
    """Until the main screen has replaced the starting one and is mounted."""
    while not isinstance(app.screen, MainScreen):
        await pilot.pause(0.02)
    await app.main.mounted.wait()
    await pilot.pause()


async def test_the_starting_screen_shows_until_the_runtime_is_built(tmp_path: Path) -> None:
    start, release, called = held_start(tmp_path)
    app = make_app(start=start)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, StartingScreen)
            assert "Starting the workbench" in str(
                app.screen.query_one("#starting", Static).content
            )
            assert app.runtime is None
            assert called and called[0] != threading.main_thread().name  # built off the loop
            await pilot.press("ctrl+n", "f6", "ctrl+l", "f4", "ctrl+c")  # nothing to act on yet
            assert isinstance(app.screen, StartingScreen) and app.is_running
            release.set()
            await main_screen_up(app, pilot)
            assert app.runtime is not None and app.runs == [app.runtime]
            assert app.prompt_bar.input.value == app.runtime.prompt  # the scenario's prompt
            assert app.sub_title.startswith("scripted:")
            await pilot.press("enter")  # the demo runs as it does from `make_app(runtime)`
            while not app.view_state.calls:
                await pilot.pause(0.02)
    finally:
        release.set()
    assert app.start_error is None


async def test_a_start_that_fails_ends_the_app_with_2_and_says_why() -> None:
    def start() -> Runtime:
        raise ValueError("--workspace /nowhere is not a directory")

    app = make_app(start=start)
    async with app.run_test(size=(80, 24)) as pilot:
        while app.is_running:
            await pilot.pause(0.02)
    assert app.return_code == 2 and app.return_value == 2
    assert app.start_error == "--workspace /nowhere is not a directory"
    assert app.runs == []


async def test_ctrl_q_quits_while_starting(tmp_path: Path) -> None:
    start, release, _ = held_start(tmp_path)
    app = make_app(start=start)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await pilot.press("ctrl+q")
            await pilot.pause()
            assert not app.is_running
    finally:
        release.set()


def words_printed_by(probe: str) -> list[str]:
    """What the Python code `probe` prints, run in a fresh interpreter on the checkout."""
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
        timeout=60,
    )
    return done.stdout.split()


def test_the_first_frame_loads_none_of_the_runtime() -> None:
    """What `workbench` imports before its first frame: the entry module and the app's
    class. The runtime, pydantic and the providers load after it, in `start`."""
    probe = (
        "import sys, workbench.__main__, workbench.widgets.app; "
        "print('\\n'.join(m for m in sys.modules if m.split('.')[0] in "
        "('pydantic', 'openai', 'mcp', 'jsonschema', 'anyio') "
        "or m.startswith(('workbench.agent', 'workbench.runtime', 'workbench.providers', "
        "'workbench.permissions', 'workbench.view', 'workbench.tools', "
        "'workbench.widgets.main_screen'))))"
    )
    assert words_printed_by(probe) == []


def test_make_app_takes_a_runtime_or_a_start_not_both(tmp_path: Path) -> None:
    start, release, _ = held_start(tmp_path)
    release.set()
    runtime: Any = start()
    with pytest.raises(TypeError, match="a runtime or a way to start one"):
        make_app()
    with pytest.raises(TypeError, match="a runtime or a way to start one"):
        make_app(runtime, start=start)


async def test_what_is_typed_while_starting_goes_to_the_prompt(tmp_path: Path) -> None:
    start, release, _ = held_start(tmp_path)
    app = make_app(start=start, prefill="")
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            await pilot.press("l", "s", "space", "x", "backspace")
            app.post_message(events.Paste("-la src"))
            await pilot.press("exclamation_mark", "ctrl+n", "f6", "enter")  # commands: dropped
            await pilot.pause()
            assert isinstance(app.screen, StartingScreen)
            release.set()
            await main_screen_up(app, pilot)
            assert app.prompt_bar.input.value == "ls -la src!"
            assert app.runs == [app.runtime] and not app.runtime.stepper.enabled
            assert not app.view_state.event_count  # nothing was sent
    finally:
        release.set()


def test_markdown_loads_in_a_thread_once_the_timeline_is_up() -> None:
    """The first text a run draws does not wait for `rich.markdown` to be imported."""
    probe = (
        "import sys, threading, asyncio, tempfile, pathlib\n"
        "importers = []\n"
        "class Watch:\n"  # notes which thread imports rich.markdown, finds nothing
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'rich.markdown': importers.append(threading.current_thread())\n"
        "sys.meta_path.insert(0, Watch())\n"
        "from workbench.widgets.app import make_app\n"
        "from workbench.runtime import RunOptions, build_runtime\n"
        "from workbench.providers.scripted import Scenario\n"
        "runtime = build_runtime(RunOptions(scenario=Scenario.load('demo'),"
        " workspace=pathlib.Path(tempfile.mkdtemp())))\n"
        "app = make_app(runtime)\n"
        "print('at-start', 'rich.markdown' in sys.modules)\n"
        "async def main():\n"
        "    async with app.run_test() as pilot:\n"
        "        await app.main.mounted.wait()\n"
        "        main = threading.main_thread()\n"
        "        for thread in importers: thread is main or thread.join()\n"
        "        print('loaded', 'rich.markdown' in sys.modules)\n"
        "        print('off-the-loop', importers != [] and main not in importers)\n"
        "asyncio.run(main())\n"
    )
    assert words_printed_by(probe) == [
        "at-start",
        "False",
        "loaded",
        "True",
        "off-the-loop",
        "True",
    ]
