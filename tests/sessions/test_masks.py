"""Masks: volatile text hidden before results are compared, in `rerun`, `diff` and
the project file's `[rerun] ignore`; a pattern is matched under a time bound."""

from __future__ import annotations

import contextlib
from pathlib import Path

import anyio
import pytest

from tests.sessions.helpers import record_run
from workbench.__main__ import main
from workbench.safe_regex import RegexTimeout
from workbench.sessions.masks import MASK, Masks

CLOCK = {
    "name": "clock",
    "prompt": "what time is it?",
    "turns": [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "date +%s%N"}}]},
        {"text": "Now."},
    ],
}
NANOS = r"\d{16,}"


def _recorded(tmp_path: Path, name: str = "ws") -> Path:
    (tmp_path / name).mkdir()
    runtime, _ = anyio.run(record_run, tmp_path / name, CLOCK)
    return runtime.session_path


def test_rerun_masks_what_you_ignore(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _recorded(tmp_path)
    assert main(["rerun", str(path), "--workspace", str(tmp_path / "r1")]) == 1
    assert "something differed" in capsys.readouterr().out
    again = ["rerun", str(path), "--workspace", str(tmp_path / "r2"), "--ignore", NANOS]
    assert main(again) == 0
    assert "every result is the same" in capsys.readouterr().out


def test_the_project_file_s_masks_apply_to_rerun_and_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = _recorded(tmp_path, "a"), _recorded(tmp_path, "b")
    project = tmp_path / "project"
    project.mkdir()
    assert main(["diff", str(first), str(second), "--no-timings"]) == 1
    assert "turn 1, call 1 (run_command): result" in capsys.readouterr().out
    (project / "workbench.toml").write_text(f"[rerun]\nignore = ['{NANOS}']\n")
    with contextlib.chdir(project):
        assert main(["diff", str(first), str(second), "--no-timings"]) == 0
        assert main(["rerun", str(first), "--workspace", str(tmp_path / "r")]) == 0
    assert main(["diff", str(first), str(second), "--ignore", "("]) == 2
    assert "Invalid regular expression" in capsys.readouterr().err


def test_a_mask_hides_only_what_it_matches() -> None:
    masks = Masks([r"\d+ms", r"/tmp/\S+"])
    assert masks.apply("took 12ms in /tmp/abc/x.txt ok") == f"took {MASK} in {MASK} ok"
    assert not Masks() and masks


def test_a_pathological_mask_fails_in_bounded_time() -> None:
    with pytest.raises(RegexTimeout, match="took more than"):
        Masks([r"(a|aa)+$"]).apply("a" * 64 + "b")
