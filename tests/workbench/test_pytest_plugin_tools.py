"""Your own tools in `pytest --workbench-sessions`: they run in each item's workspace,
and sessions recorded elsewhere (another signing key) get them from `--workbench-tools`
or the project's `workbench.toml`; a tool that does not load fails its item in a line."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

import anyio
import pytest

from tests.sessions.helpers import record_run
from tests.support.pytest_runs import UNUSED_PLUGINS
from workbench.sessions.header import SESSIONS_DIR_ENV

PLUGIN = ("-p", "workbench.pytest_plugin", *UNUSED_PLUGINS)

NOTE_TOOL = '''
from pathlib import Path


def note(text: str) -> str:
    """Append a line to notes.txt (in the current directory) and say how many there are."""
    with Path("notes.txt").open("a", encoding="utf-8") as out:
        out.write(text + "\\n")
    return f"{len(Path('notes.txt').read_text().splitlines())} notes"
'''

NOTE = {
    "name": "note",
    "prompt": "note it",
    "turns": [
        {"tool_calls": [{"name": "note", "arguments": {"text": "buy milk"}}]},
        {"text": "Noted."},
    ],
}


@pytest.fixture
def flows(tmp_path: Path) -> Path:
    """A session recorded with `--tools note.py` (signed by this test's key)."""
    project = tmp_path / "recorded-project"
    project.mkdir()
    (project / "note.py").write_text(NOTE_TOOL, encoding="utf-8")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with contextlib.chdir(workspace):  # live, the tool writes where the workbench runs
        runtime, _ = anyio.run(
            lambda: record_run(workspace, NOTE, tool_specs=["note.py"], project_dir=project)
        )
    directory = tmp_path / "flows"
    directory.mkdir()
    shutil.copy(runtime.session_path, directory / "note.jsonl")
    shutil.copytree(runtime.session_path.parent / "blobs", directory / "blobs")
    return directory


def _elsewhere(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Another machine: another sessions folder, so another signing key."""
    monkeypatch.setenv(SESSIONS_DIR_ENV, str(tmp_path / "other-home"))


def test_your_tools_run_in_the_item_s_workspace_every_time(
    pytester: pytest.Pytester, flows: Path
) -> None:
    for _ in range(2):  # a second run finds no notes.txt left behind
        result = pytester.runpytest(*PLUGIN, "--workbench-sessions", str(flows))
        result.assert_outcomes(passed=1)
    assert not (pytester.path / "notes.txt").exists()


def test_a_session_recorded_elsewhere_takes_the_tools_you_name(
    pytester: pytest.Pytester, flows: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _elsewhere(monkeypatch, tmp_path)
    result = pytester.runpytest(*PLUGIN, "--workbench-sessions", str(flows))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*not recorded by your workbench, so its tools are not started*"])

    (pytester.path / "tools").mkdir()
    (pytester.path / "tools" / "note.py").write_text(NOTE_TOOL, encoding="utf-8")
    replay = ("--workbench-approve", "recorded")  # another key signed it: only when asked
    result = pytester.runpytest(
        *PLUGIN, "--workbench-sessions", str(flows), "--workbench-tools", "tools/note.py"
    )
    result.assert_outcomes(failed=1)  # the recorded approval is not replayed by default
    result.stdout.fnmatch_lines(["*its recorded decisions are not replayed*"])
    result = pytester.runpytest(
        *PLUGIN, "--workbench-sessions", str(flows), "--workbench-tools", "tools/note.py", *replay
    )
    result.assert_outcomes(passed=1)

    (pytester.path / "workbench.toml").write_text('tools = ["tools/note.py"]\n')
    result = pytester.runpytest(*PLUGIN, "--workbench-sessions", str(flows), *replay)
    result.assert_outcomes(passed=1)


def test_a_recorded_absolute_path_is_never_looked_for(
    pytester: pytest.Pytester, flows: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Trusting the recorded tools looks for them here, not at the recorded project."""
    _elsewhere(monkeypatch, tmp_path)
    result = pytester.runpytest(
        *PLUGIN, "--workbench-sessions", str(flows), "--workbench-trust-recorded-tools"
    )
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "the re-run could not start: --tools note.py" in out
    assert str(tmp_path / "recorded-project") not in out
    assert "Traceback" not in out and len(out.splitlines()) < 40


def test_a_tool_that_fails_to_load_fails_its_item_in_one_line(
    pytester: pytest.Pytester, flows: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _elsewhere(monkeypatch, tmp_path)
    (pytester.path / "broken.py").write_text("import nowhere_to_be_found\n", encoding="utf-8")
    result = pytester.runpytest(
        *PLUGIN, "--workbench-sessions", str(flows), "--workbench-tools", "broken.py"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*the re-run could not start: --tools broken.py: importing it failed: *nowhere_to_be*"]
    )
    assert "Traceback" not in result.stdout.str()
