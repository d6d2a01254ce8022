"""The instruction-count benchmark's pieces: its slowed clock and its reading of callgrind's
dumps."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.ui_instructions import slow_clock, window_instructions

pytestmark = pytest.mark.bench


def test_the_slowed_clock_runs_the_given_factor_slower_from_now_on() -> None:
    now = [100.0]
    clock = slow_clock(50.0, lambda: now[0])
    assert clock() == 100.0
    now[0] = 110.0  # ten real seconds
    assert clock() == pytest.approx(100.2)


def dump(folder: Path, name: str, instructions: int) -> None:
    (folder / name).write_text(
        f"# callgrind format\nversion: 1\ncmd: python\npart: 2\n\nevents: Ir\n"
        f"fn=(1) main\n0 {instructions}\n\ntotals: {instructions}\n"
    )


def test_the_window_is_the_second_part_callgrind_dumped(tmp_path: Path) -> None:
    dump(tmp_path, "callgrind.4242.1", 3_000_000_000)  # start-up, up to the first mark
    dump(tmp_path, "callgrind.4242.2", 2_600_000_000)  # the run
    dump(tmp_path, "callgrind.4242", 140_000_000)  # after the second mark
    assert window_instructions(tmp_path) == 2_600_000_000


def test_a_mark_too_many_or_none_at_all_is_an_error_not_a_count(tmp_path: Path) -> None:
    dump(tmp_path, "callgrind.7.1", 1)
    with pytest.raises(SystemExit, match="expected 2 marks, callgrind dumped 1"):
        window_instructions(tmp_path)
    dump(tmp_path, "callgrind.7.2", 2)
    dump(tmp_path, "callgrind.7.3", 3)
    with pytest.raises(SystemExit, match="dumped 3 parts"):
        window_instructions(tmp_path)
