"""`pytest --workbench-sessions DIR`: every recorded session re-run as a test item,
each in a scratch workspace of its own, failing with the re-run's report."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import anyio
import pytest

from tests.sessions.helpers import record_run, write_session
from tests.support.pytest_runs import UNUSED_PLUGINS

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ("-p", "workbench.pytest_plugin", *UNUSED_PLUGINS)
"""The plugin, without the snapshot plugin (its temp dir is global to the process)."""
ALL = ("--workbench-approve", "all")
"""The runs were recorded approving every call."""


EDIT = {
    "name": "edit",
    "prompt": "Set the port to 8081 in config.json.",
    "workspace_files": {"config.json": '{"port": 8080}\n'},
    "turns": [
        {
            "text": "Editing it.",
            "tool_calls": [
                {
                    "name": "edit_file",
                    "arguments": {"path": "config.json", "old_text": "8080", "new_text": "8081"},
                }
            ],
        },
        {
            "text": "Reading it back.",
            "tool_calls": [{"name": "read_file", "arguments": {"path": "config.json"}}],
        },
        {"text": "The port is 8081."},
    ],
}
"""A scripted run that edits a file: two items sharing a workspace would see each
other's edit (the second `edit_file` would find no 8080)."""


@pytest.fixture
def flows(tmp_path: Path) -> Path:
    """Two copies of a recorded scripted run that edits config.json, and a session that
    reads `a.txt` of the directory it ran in."""
    directory = tmp_path / "flows"
    directory.mkdir()
    runtime, _ = anyio.run(record_run, tmp_path / "demo-ws", EDIT)
    recorded = runtime.recorder.path
    shutil.copy(recorded, directory / "demo-1.jsonl")
    shutil.copy(recorded, directory / "demo-2.jsonl")
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.txt").write_text("alpha\n")
    write_session(
        directory / "reads-a.jsonl", "what is in a.txt?", result="alpha\n", workspace=project
    )
    return directory


def test_the_entry_point_is_declared() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    entry = data["project"]["entry-points"]["pytest11"]
    assert entry == {"workbench.pytest_plugin": "workbench.pytest_plugin"}
    extras = data["project"]["optional-dependencies"]["test"]
    assert any(dep.startswith("pytest-xdist>=") for dep in extras)


def test_importing_it_loads_nothing_of_the_runtime() -> None:
    code = (
        "import sys, workbench.pytest_plugin; "
        "print(sorted(m for m in sys.modules if m.startswith(('workbench.', 'textual'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
    ).stdout
    assert out.strip() == "['workbench.pytest_plugin']"


def test_without_the_flag_session_files_are_not_collected(
    pytester: pytest.Pytester, flows: Path
) -> None:
    result = pytester.runpytest(*PLUGIN, str(flows))
    result.assert_outcomes()  # nothing collected, nothing run
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_each_session_is_an_item_the_divergent_one_fails_with_the_report(
    pytester: pytest.Pytester, flows: Path
) -> None:
    pytester.makepyfile(test_other="def test_other(): pass")
    result = pytester.runpytest(*PLUGIN, "--workbench-sessions", str(flows), *ALL, "-v")
    result.assert_outcomes(passed=3)  # only the sessions: test_other.py is not run
    result.stdout.fnmatch_lines(
        [
            "*demo-1.jsonl::Set the port to 8081 in config.json. PASSED*",
            "*reads-a.jsonl::what is in a.txt? PASSED*",
        ]
    )

    (flows.parent / "project" / "a.txt").write_text("beta\n")  # the file the session reads
    result = pytester.runpytest(*PLUGIN, "--workbench-sessions", str(flows), *ALL, "-rA")
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()
    failure = out[out.index("___ session reads-a.jsonl") :]
    assert failure.splitlines()[1:5] == [
        "first divergence: call 1 of 1, call_1 (read_file): differs",
        "  --- recorded",
        "  +++ now",
        "  @@ -1 +1 @@",
    ]
    assert "  -alpha" in failure and "  +beta" in failure
    assert "1 calls: 1 differs; something differed" in failure
    assert "a copy of the directory the session ran in" in failure
    assert (flows.parent / "project" / "a.txt").read_text() == "beta\n"  # a copy ran, not it


def test_a_file_that_is_not_a_session_fails_its_item(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    flows = tmp_path / "flows"
    flows.mkdir()
    (flows / "notes.jsonl").write_text('{"kind": "something else"}\n')
    result = pytester.runpytest(*PLUGIN, "--workbench-sessions", str(flows))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*not a session the workbench can read*"])


def test_under_xdist_two_workers_run_the_items_apart(
    pytester: pytest.Pytester, flows: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (flows.parent / "project" / "a.txt").write_text("beta\n")
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    )
    result = pytester.runpytest(*PLUGIN, "--workbench-sessions", str(flows), *ALL, "-n", "2")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*first divergence: call 1 of 1, call_1 (read_file): differs*"])
    assert "2 workers" in result.stdout.str()


def test_a_workspace_that_is_not_here_fails_and_one_can_be_named(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    flows = tmp_path / "flows"
    flows.mkdir()
    gone = tmp_path / "gone"
    write_session(flows / "reads-a.jsonl", "what is in a.txt?", result="alpha\n", workspace=gone)
    result = pytester.runpytest(*PLUGIN, "--workbench-sessions", str(flows))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*the session ran in '{gone}', which is not here*"])

    named = tmp_path / "files"
    named.mkdir()
    (named / "a.txt").write_text("alpha\n")
    result = pytester.runpytest(
        *PLUGIN, "--workbench-sessions", str(flows), "--workbench-workspace", str(named), "-rA"
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"*(a copy of --workbench-workspace {named})*"])


NOTES = {
    "name": "notes",
    "prompt": "What do the notes say?",
    "workspace_files": {},
    "turns": [
        {
            "text": "Reading.",
            "tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}],
        },
        {"text": "They say hello."},
    ],
}
"""A run that reads a file the scenario does not ship: only the workspace's checkpoints
hold it."""


def test_a_session_with_checkpoints_starts_from_the_files_it_recorded(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    workspace = tmp_path / "notes-ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("hello\n")
    runtime, _ = anyio.run(record_run, workspace, NOTES)
    (workspace / "notes.txt").write_text("changed since\n")  # the files move on
    flows = tmp_path / "flows"
    flows.mkdir()
    shutil.copy(runtime.recorder.path, flows / "notes.jsonl")
    result = pytester.runpytest(*PLUGIN, *ALL, "--workbench-sessions", str(flows), "-rA")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*the files recorded at the session's start*"])
