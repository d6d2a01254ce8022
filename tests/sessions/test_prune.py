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
        write_session(
            directory / f"{name}.jsonl",
            f"prompt {name}",
            created=now - days * DAY,
            parent=(directory / f"{parent}.jsonl").resolve() if parent else None,
        )


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
    make(
        tmp_path,
        {"fork": 1, "parent": 50, "grand": 60, "lone": 70},
        parents={"fork": "parent", "parent": "grand"},
    )
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
    for flags, message in (
        ([], "say what to delete"),
        (["--older-than", "soon"], "not an age"),
        (["--max-size", "2 lots"], "not a size"),
    ):
        with pytest.raises(SystemExit) as exc:
            main(["sessions", "prune", "--dir", str(tmp_path), *flags])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err


def test_sizes_and_ages_read_as_people_write_them() -> None:
    from workbench.sessions.prune import age, size

    assert [size(t) for t in ("2GB", "500MB", "10k", "1GiB", "123")] == [
        2 * 10**9,
        500 * 10**6,
        10_000,
        2**30,
        123,
    ]
    assert [age(t) for t in ("30d", "12h", "2w", "90m")] == [
        30 * 86400,
        12 * 3600,
        14 * 86400,
        90 * 60,
    ]


def test_the_project_policy_prunes_at_the_start_of_a_recorded_run(
    tmp_path: Path,
    sessions_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    sessions_dir.mkdir(parents=True)
    make(sessions_dir, {"parent": 40, "old": 35, "fork": 31, "new": 1}, {"fork": "parent"})
    project = tmp_path / "project"
    project.mkdir()
    (project / "workbench.toml").write_text(
        '[sessions]\nprune = { older_than = "30d", max_size = "2GB" }\n'
    )
    monkeypatch.chdir(project)

    assert main(["--headless", "--approve", "all", "--no-record"]) == 0
    assert left(sessions_dir) == ["fork", "new", "old", "parent"]  # no recording: no prune

    assert main(["--headless", "--approve", "all"]) == 0
    err = capsys.readouterr().err
    # the fork is old too: it goes, and then nothing keeps its parent
    assert "workbench: deleted 3 old sessions (0.0 MB) as the [sessions] prune policy says\n" in err
    assert [p for p in left(sessions_dir) if not p.endswith("-demo")] == ["new"]
    assert len(left(sessions_dir)) == 2  # and the run just recorded


def test_the_policy_keeps_a_parent_and_says_so(
    tmp_path: Path,
    sessions_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    sessions_dir.mkdir(parents=True)
    make(sessions_dir, {"parent": 40, "old": 35, "fork": 1}, {"fork": "parent"})
    (tmp_path / "workbench.toml").write_text("[sessions]\nprune = { keep = 1 }\n")
    monkeypatch.chdir(tmp_path)
    assert main(["--headless", "--approve", "all"]) == 0
    err = capsys.readouterr().err
    assert (
        "workbench: deleted 1 old session (0.0 MB) as the [sessions] prune policy says; "
        "kept 1 that a fork names as its parent (parent.jsonl)"
    ) in err
    assert "fork" in left(sessions_dir) and "parent" in left(sessions_dir)
    assert "old" not in left(sessions_dir)


@pytest.mark.parametrize(
    ("policy", "named"),
    [
        ('{ older_than = "soon" }', "sessions.prune.older_than"),
        ('{ max_size = "lots" }', "sessions.prune.max_size"),
        ("{ keep = -1 }", "sessions.prune.keep"),
        ("{ newest = 3 }", "sessions.prune.newest"),
    ],
)
def test_a_bad_policy_is_named(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    policy: str,
    named: str,
) -> None:
    (tmp_path / "workbench.toml").write_text(f"[sessions]\nprune = {policy}\n")
    monkeypatch.chdir(tmp_path)
    assert main(["--headless", "--approve", "all"]) == 2
    assert named in capsys.readouterr().err


def test_the_readme_policy_is_one_the_project_file_accepts() -> None:
    import re

    from workbench.project.config import load_project

    readme = (Path(__file__).resolve().parents[2] / "docs/sessions.md").read_text()
    [block] = [b for b in re.findall(r"```toml\n(.*?)```", readme, re.S) if "[sessions]" in b]
    import tomllib

    policy = load_project(Path("workbench.toml"), tomllib.loads(block)).sessions
    assert policy is not None and policy.prune is not None
    assert (policy.prune.older_than_seconds, policy.prune.keep) == (30 * 86400, 500)
    assert policy.prune.max_size_bytes == 2 * 10**9
