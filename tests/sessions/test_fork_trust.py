"""A fork never runs its tools where the session file says unless the user names it
(issue 16): a scratch copy of the scenario's files, `--workspace`, or the current
directory after a question; `/` and the home directory are refused even when named."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.sessions.helpers import READ_A, record_run
from workbench.__main__ import main
from workbench.session_runs import ForkChoice, ForkRequest, fork_options
from workbench.sessions import read_session

SCRIPTED = ForkChoice("the recorded scenario")


def _claiming(path: Path, workspace: Path, *, scenario: bool, checkpoints: bool = False) -> Path:
    """The session at `path`, rewritten to claim it ran in `workspace` (and, without
    `scenario`, as a live-model session; without `checkpoints`, as recorded before they
    existed: no files to copy or restore)."""
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header["workspace"] = str(workspace)
    if not scenario:
        header["scenario_data"] = None
    if not checkpoints:
        lines = [line for line in lines if '"type":"workspace_' not in line]
    kind = "scripted" if scenario else "live"
    out = path.with_name(f"claims-{kind}-{checkpoints}.jsonl")
    out.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    return out


@pytest.fixture
async def recorded(tmp_path: Path) -> Path:
    runtime, _ = await record_run(tmp_path / "ws", READ_A)
    assert runtime.session_path is not None
    return runtime.session_path


def test_a_scripted_fork_gets_a_fresh_copy_not_the_recorded_directory(
    recorded: Path, tmp_path: Path
) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    session = read_session(_claiming(recorded, victim, scenario=True))
    options = fork_options(session, ForkRequest(1, SCRIPTED), session_path=tmp_path / "f.jsonl")
    assert options.workspace is not None and options.workspace != victim
    assert (options.workspace / "a.txt").read_text() == "alpha\n"  # the scenario's files


def test_a_live_fork_needs_the_directory_named(recorded: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    session = read_session(_claiming(recorded, victim, scenario=False))
    with pytest.raises(ValueError, match="a fork does not trust a path from a session file"):
        fork_options(session, ForkRequest(1, SCRIPTED))
    named = fork_options(session, ForkRequest(1, SCRIPTED), workspace=victim)
    assert named.workspace == victim
    # with checkpoints: a scratch copy of the files at the fork point, nothing to name
    session = read_session(_claiming(recorded, victim, scenario=False, checkpoints=True))
    options = fork_options(session, ForkRequest(1, SCRIPTED))
    assert options.workspace not in (None, victim) and list(victim.iterdir()) == []
    assert (options.workspace / "a.txt").read_text() == "alpha\n"
    assert options.fork is not None and options.fork.notes[0].startswith(
        f"workspace: {options.workspace}: a scratch copy of the files at the end of turn 1"
    )


@pytest.mark.parametrize("where", ["/", "home"])
def test_root_and_home_are_refused_for_a_fork_even_when_named(recorded: Path, where: str) -> None:
    workspace = Path.home() if where == "home" else Path("/")
    with pytest.raises(ValueError, match="refusing to run a fork's tools in"):
        fork_options(read_session(recorded), ForkRequest(1, SCRIPTED), workspace=workspace)


def test_replay_asks_before_forking_into_the_current_directory(
    recorded: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from workbench.widgets.replay_app import ForkedApp, ReplayApp

    victim, here = tmp_path / "victim", tmp_path / "here"
    victim.mkdir()
    here.mkdir()
    path = str(_claiming(recorded, victim, scenario=False))
    ran_in: list[Path] = []

    def fork_once_read(self: ReplayApp) -> Any:  # the replay reads the session, then f
        async def drive() -> None:
            async with self.run_test() as pilot:
                while getattr(self, "main", None) is None:  # the session is on screen
                    await pilot.pause(0.02)
                await self.main.mounted.wait()
                self.exit(ForkRequest(1, SCRIPTED))

        asyncio.run(drive())
        return self.return_value

    monkeypatch.setattr(ReplayApp, "run", fork_once_read)
    monkeypatch.setattr(ForkedApp, "run", lambda self: ran_in.append(self.runtime.workspace))
    monkeypatch.chdir(here)
    argv = ["replay", path, "--session", str(tmp_path / "fork.jsonl")]

    monkeypatch.setattr(sys.stdin, "isatty", lambda: False, raising=False)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "a fork does not trust a path" in err and "pass --workspace DIR" in err
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True, raising=False)
    questions: list[str] = []
    monkeypatch.setattr("builtins.input", lambda q: questions.append(q) or "n")
    assert main(argv) == 2
    assert str(victim) in questions[0] and str(here) in questions[0]
    assert "not forked; pass --workspace DIR" in capsys.readouterr().err
    assert ran_in == []
    monkeypatch.setattr("builtins.input", lambda q: "y")
    assert main(argv) == 0
    assert ran_in == [here] and list(victim.iterdir()) == []
    assert (
        main([*argv[:2], "--workspace", str(victim), "--session", str(tmp_path / "2.jsonl")]) == 0
    )
    assert ran_in == [here, victim]  # named on the command line: used without a question
