"""`workbench sessions prune`: by age, count and size; never a fork's parent unasked."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tests.sessions.helpers import write_session

from workbench.__main__ import main
from workbench.sessions.library import Library

DAY = 86_400_000.0


def make(
    directory: Path, ages_in_days: dict[str, float], parents: dict[str, str] | None = None
) -> None:
    now = time.time() * 1000.0
    for name, days in ages_in_days.items():
        parent = (parents or {}).get(name)
        write_session(directory / f"{name}.jsonl", f"prompt {name}", created=now - days * DAY,
                      parent=(directory / f"{parent}.jsonl").resolve() if parent else None)


def left(directory: Path) -> list[str]:
    return sorted(p.stem for p in directory.glob("*.jsonl"))


def prune(capsys: pytest.CaptureFixture[str], directory: Path, *flags: str) -> tuple[int, str]:
    code = main(["sessions", "prune", "--dir", str(directory), *flags])
    return code, capsys.readouterr().out


def test_older_than_and_dry_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make(tmp_path, {"new": 1, "mid": 20, "old": 40, "older": 90})
    code, out = prune(capsys, tmp_path, "--older-than", "30d", "--dry-run")
    assert code == 0 and "would delete old.jsonl" in out and "would delete older.jsonl" in out
    assert "would delete 2 sessions" in out
    assert left(tmp_path) == ["mid", "new", "old", "older"]  # nothing went

    code, out = prune(capsys, tmp_path, "--older-than", "30d")
    assert code == 0 and "deleted 2 sessions" in out
    assert left(tmp_path) == ["mid", "new"]
    with Library(tmp_path) as library:  # the index dropped them too
        assert sorted(e.path.stem for e in library.entries()) == ["mid", "new"]


def test_keep_the_newest_n(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make(tmp_path, {"a": 1, "b": 2, "c": 3, "d": 4})
    assert prune(capsys, tmp_path, "--keep", "2")[0] == 0
    assert left(tmp_path) == ["a", "b"]
    assert prune(capsys, tmp_path, "--keep", "5")[1].startswith("deleted 0 sessions")
    assert left(tmp_path) == ["a", "b"]


def test_max_size_deletes_the_oldest_until_the_rest_fit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make(tmp_path, {"a": 1, "b": 2, "c": 3, "d": 4})
    budget = sum((tmp_path / f"{n}.jsonl").stat().st_size for n in "ab")
    assert prune(capsys, tmp_path, "--max-size", str(budget))[0] == 0
    assert left(tmp_path) == ["a", "b"]


def test_a_forks_parent_is_kept_and_the_reason_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # grand <- parent <- fork (fork is new); lone is old and no one's parent
    make(tmp_path, {"fork": 1, "parent": 50, "grand": 60, "lone": 70},
         parents={"fork": "parent", "parent": "grand"})
    code, out = prune(capsys, tmp_path, "--older-than", "30d")
    assert code == 0
    assert "kept parent.jsonl: the fork fork.jsonl names it as its parent" in out
    assert "kept grand.jsonl: the fork parent.jsonl names it as its parent" in out
    assert "deleted 1 session " in out and "deleted lone.jsonl" in out
    assert left(tmp_path) == ["fork", "grand", "parent"]

    # when the fork goes too, nothing keeps its parents
    code, out = prune(capsys, tmp_path, "--keep", "0", "--dry-run")
    assert "kept" not in out and "would delete 3 sessions" in out

    code, out = prune(capsys, tmp_path, "--older-than", "30d", "--include-parents")
    assert code == 0 and "kept" not in out
    assert left(tmp_path) == ["fork"]


def test_max_size_skips_a_parent_and_takes_the_next(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make(tmp_path, {"fork": 1, "b": 2, "c": 3, "parent": 4}, parents={"fork": "parent"})
    budget = sum((tmp_path / f"{n}.jsonl").stat().st_size for n in ("fork", "b", "parent"))
    code, out = prune(capsys, tmp_path, "--max-size", str(budget))
    assert code == 0 and "kept parent.jsonl" in out
    assert left(tmp_path) == ["b", "fork", "parent"]


def test_prune_needs_a_rule_and_good_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for flags, message in (([], "say what to delete"), (["--older-than", "soon"], "not an age"),
                           (["--max-size", "2 lots"], "not a size")):
        with pytest.raises(SystemExit) as exc:
            main(["sessions", "prune", "--dir", str(tmp_path), *flags])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err


def test_sizes_and_ages_read_as_people_write_them() -> None:
    from workbench.cli.prune import size
    from workbench.cli.sessions import age

    assert [size(t) for t in ("2GB", "500MB", "10k", "1GiB", "123")] == [
        2 * 10**9, 500 * 10**6, 10_000, 2**30, 123]
    assert [age(t) for t in ("30d", "12h", "2w", "90m")] == [
        30 * 86400, 12 * 3600, 14 * 86400, 90 * 60]
