"""`workbench diff A B`: turn by turn, call by call; exit 1 when they differ."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sessions.helpers import READ_A, record_run, write_session
from workbench.__main__ import main
from workbench.sessions.diff import Call, Turn, compare


def diff(capsys: pytest.CaptureFixture[str], a: Path, b: Path, *flags: str) -> tuple[int, str]:
    code = main(["diff", str(a), str(b), *flags])
    return code, capsys.readouterr().out


async def test_two_runs_of_the_same_flow_are_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, _ = await record_run(tmp_path / "one", READ_A)
    second, _ = await record_run(tmp_path / "two", READ_A)
    code, out = diff(capsys, first.session_path, second.session_path)
    assert code == 0, out
    assert "the same" in out and out.rstrip().endswith("no differences")
    assert "timings (A / B" in out and "turn 1:" in out  # shown, not counted


async def test_a_changed_result_is_the_first_divergence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, _ = await record_run(tmp_path / "one", READ_A)
    changed = {**READ_A, "workspace_files": {"a.txt": "beta\n"}}
    second, _ = await record_run(tmp_path / "two", changed)
    code, out = diff(capsys, first.session_path, second.session_path, "--no-timings")
    assert code == 1
    assert "first divergence: turn 1, call 1 (read_file): result" in out
    assert "  -alpha\n  +beta\n" in out
    assert "timings" not in out and out.rstrip().endswith("1 difference")


async def test_an_extra_turn_and_changed_arguments_are_each_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, _ = await record_run(tmp_path / "one", READ_A)
    turns = [dict(t) for t in READ_A["turns"]]
    turns[0] = {
        **turns[0],
        "tool_calls": [
            {"name": "read_file", "arguments": {"path": "b.txt"}},
            turns[0]["tool_calls"][1],
        ],
    }
    turns[1] = {**turns[1], "tool_calls": [{"name": "list_directory", "arguments": {"path": "."}}]}
    longer = {**READ_A, "turns": [*turns, {"text": "Anything else?"}]}
    second, _ = await record_run(tmp_path / "two", longer)
    code, out = diff(capsys, first.session_path, second.session_path)
    assert code == 1
    assert "first divergence: turn 1, call 1 (read_file): raw arguments" in out
    assert "turn 1, call 1 (read_file): validated arguments" in out
    assert 'B: {"path": "b.txt"}' in out
    assert "turn 1, call 1 (read_file): result" in out  # b.txt does not exist
    assert "turn 2, call 1 (list_directory): no such call in A" in out
    assert "turn 3: only in B" in out and "B: Anything else? [no calls]" in out


def test_prompts_decisions_and_text_differ_literally(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = write_session(tmp_path / "a.jsonl", "fix it", reply="done")
    b = write_session(
        tmp_path / "b.jsonl", "fix it \x1b]52;c;aGk=\x07", denied=True, reply="done \u202eevil"
    )
    code, out = diff(capsys, a, b)
    assert code == 1
    assert "first divergence: turn 1: prompt" in out
    assert "B: fix it ␛]52;c;aGk=␇" in out
    assert "turn 1, call 1 (read_file): decision" in out
    assert "A: allow by rule" in out and "B: deny by rule" in out
    assert "turn 2: model text" in out and "B: done ⟨U+202E⟩evil" in out
    assert "\x1b" not in out and "\u202e" not in out


def test_timings_count_only_past_the_tolerance() -> None:
    a = [Turn(calls=[Call("t", duration_ms=100.0)], duration_ms=1000.0)]
    b = [Turn(calls=[Call("t", duration_ms=300.0)], duration_ms=1100.0)]
    assert compare(a, b) == []
    found = compare(a, b, tolerance=0.5)
    assert [(d.where, d.what, d.a, d.b) for d in found] == [
        ("turn 1, call 1 (t)", "duration", "100 ms", "300 ms")
    ]
    assert len(compare(a, b, tolerance=0.05)) == 2


def test_a_bad_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write_session(tmp_path / "a.jsonl")
    assert main(["diff", str(good), str(tmp_path / "missing.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot read" in err
