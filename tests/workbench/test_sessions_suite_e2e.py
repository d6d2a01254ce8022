"""Recorded runs as a CI suite, end to end: sessions recorded on one machine (approvals,
a denial, an edit, a hand edit, volatile output, your own tools) are bundled, then pass
`pytest --workbench-sessions DIR` on another (another home, another signing key), with
and without `-n 2`, and fail with the first divergence when a tool's behaviour or the
content of a file it writes changes."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from tests.sessions.person_runs import MIXED, answers_for_mixed, record_with_person
from tests.support.pytest_runs import UNUSED_PLUGINS
from workbench.__main__ import main
from workbench.permissions.answers import PermissionAnswer
from workbench.sessions.header import SESSIONS_DIR_ENV

ROOT = Path(__file__).resolve().parents[2]

STAMP_TOOL = """
import time
from pathlib import Path


def stamp(label: str) -> str:
    \"\"\"Write stamps/LABEL.txt and say when.\"\"\"
    Path("stamps").mkdir(exist_ok=True)
    Path("stamps", label + ".txt").write_text(label + "\\n", encoding="utf-8")
    return f"{label} stamped at {time.time_ns()}"
"""
PROJECT_FILE = "tools = ['tools/stamp.py']\n\n[rerun]\nignore = ['at [0-9]+']\n"

STAMP = {
    "name": "stamp",
    "prompt": "stamp it",
    "turns": [
        {"tool_calls": [{"name": "stamp", "arguments": {"label": "one"}}]},
        {"text": "Stamped."},
    ],
}


def _edit_by_hand(workspace: Path) -> None:
    (workspace / "a.txt").write_text("changed by hand\n")


def _record(tmp_path: Path, project: Path) -> Path:
    """Record both sessions on "machine A" and bundle them; machine A's sessions
    folder (its blobs and key) is deleted afterwards."""
    os.environ[SESSIONS_DIR_ENV] = str(tmp_path / "home-a" / "sessions")
    paths = []
    for name, data, options in (
        ("mixed", MIXED, {}),
        ("stamp", STAMP, {"tool_specs": ["tools/stamp.py"], "project_dir": project}),
    ):
        workspace = tmp_path / f"ws-{name}"
        workspace.mkdir()
        with contextlib.chdir(workspace):
            runtime = anyio.run(
                lambda d=data, w=workspace, o=options: record_with_person(
                    w,
                    d,
                    answers_for_mixed if d is MIXED else (lambda _r: PermissionAnswer.allow_once()),
                    second_prompt="and again" if d is MIXED else None,
                    between=_edit_by_hand,
                    **o,
                )
            )
        paths.append(str(runtime.session_path))
    bundle = tmp_path / "flows"
    assert main(["bundle", *paths, "--to", str(bundle)]) == 0
    shutil.rmtree(tmp_path / "home-a")
    return bundle


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the bundle, the project), recorded once on machine A for the module's tests."""
    tmp_path = tmp_path_factory.mktemp("machine-a")
    project = tmp_path / "project"
    (project / "tools").mkdir(parents=True)
    (project / "tools" / "stamp.py").write_text(STAMP_TOOL, encoding="utf-8")
    (project / "workbench.toml").write_text(PROJECT_FILE, encoding="utf-8")
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv(SESSIONS_DIR_ENV, "")  # restored after _record sets it
        bundle = _record(tmp_path, project)
    return bundle, project


@pytest.fixture
def machine_b(recorded: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """(the bundle, the project checked out on machine B, machine B's environment):
    copies of both, for each test."""
    bundle = tmp_path / "flows"
    shutil.copytree(recorded[0], bundle)
    checkout = tmp_path / "checkout"
    shutil.copytree(recorded[1], checkout)
    home = tmp_path / "home-b"
    home.mkdir()
    env = {
        **os.environ,
        "HOME": str(home),
        SESSIONS_DIR_ENV: str(home / "sessions"),
        "PYTHONPATH": str(ROOT),
    }
    return bundle, checkout, env


def _pytest(bundle: Path, checkout: Path, env: dict[str, str], *more: str) -> tuple[int, str]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            *UNUSED_PLUGINS,
            "--workbench-sessions",
            str(bundle),
            "--workbench-approve",  # another key signed them: their decisions replay only so
            "recorded",
            *more,
        ],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done.returncode, done.stdout + done.stderr


def test_a_bundled_suite_passes_elsewhere_and_its_rules_do_not_replay_it(
    machine_b: tuple[Path, Path, dict[str, str]],
) -> None:
    bundle, checkout, env = machine_b
    code, out = _pytest(bundle, checkout, env)
    assert code == 0 and "2 passed" in out, out
    code, out = _pytest(bundle, checkout, env, "--workbench-approve", "rules")
    assert code == 1 and "judged by your rules" not in out and "differs" in out, out


def test_a_bundled_suite_passes_under_xdist_each_item_in_its_own_workspace(
    machine_b: tuple[Path, Path, dict[str, str]],
) -> None:
    bundle, checkout, env = machine_b
    code, out = _pytest(bundle, checkout, env, "-n", "2")
    assert code == 0 and "2 passed" in out, out
    assert not (checkout / "stamps").exists()  # the tool ran in each item's workspace


def test_a_tool_whose_result_changed_fails_with_the_first_divergence(
    machine_b: tuple[Path, Path, dict[str, str]],
) -> None:
    bundle, checkout, env = machine_b
    tool = checkout / "tools" / "stamp.py"
    tool.write_text(STAMP_TOOL.replace('f"{label} stamped', 'f"{label} was stamped'))
    code, out = _pytest(bundle, checkout, env)
    assert code == 1 and "1 failed, 1 passed" in out, out
    assert "first divergence: call 1 of 1, call_1_1 (stamp): differs" in out
    assert "+one was stamped <masked>" in out, out


def test_a_tool_that_writes_other_content_fails_under_xdist(
    machine_b: tuple[Path, Path, dict[str, str]],
) -> None:
    bundle, checkout, env = machine_b
    tool = checkout / "tools" / "stamp.py"
    tool.write_text(STAMP_TOOL.replace('label + "\\n"', 'label + "!\\n"'))
    code, out = _pytest(bundle, checkout, env, "-n", "2")
    assert code == 1 and "1 failed, 1 passed" in out, out
    assert "file stamps/one.txt: its content differs from the recording" in out
