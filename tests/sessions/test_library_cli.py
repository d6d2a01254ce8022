"""`workbench sessions --list | --search TEXT`: what scripts and people at a shell see."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.sessions.helpers import write_session
from workbench.__main__ import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["sessions", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_list_and_search_as_json_with_filters(
    sessions_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sessions_dir.mkdir()
    write_session(sessions_dir / "old.jsonl", "rename the module", created=1e12)
    write_session(
        sessions_dir / "new.jsonl",
        "fix the config",
        tool="edit_file",
        is_error=True,
        created=2e12,
        model="gpt-4o",
    )
    code, out, _ = run(capsys, "--list", "--json")
    assert code == 0
    listed = json.loads(out)
    assert [Path(e["path"]).name for e in listed] == ["new.jsonl", "old.jsonl"]
    assert listed[0]["by_tool"] == {"edit_file": {"calls": 1, "errors": 1}}
    assert listed[0]["outcome"] == "finished" and listed[0]["errors"] == 1

    code, out, _ = run(capsys, "--search", "config", "--json")
    [hit] = json.loads(out)
    assert code == 0 and Path(hit["path"]).name == "new.jsonl" and "[config]" in hit["snippet"]

    for flags, expected in (
        (["--tool", "edit_file", "--errors"], ["new.jsonl"]),
        (["--tool", "read_file", "--errors"], []),
        (["--model", "gpt"], ["new.jsonl"]),
        (["--denied"], []),
        (["--since", "2020-01-01"], ["new.jsonl"]),  # 2e12 ms is in 2033
        (["--since", "2001-01-01"], ["new.jsonl", "old.jsonl"]),
        (["--since", "2040-01-01"], []),
    ):
        code, out, _ = run(capsys, "--list", "--json", *flags)
        assert code == 0 and [Path(e["path"]).name for e in json.loads(out)] == expected, flags


def test_the_table_shows_untrusted_text_literally(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_session(
        tmp_path / "evil.jsonl", "\x1b]52;c;aGk=\x07 steal \u202eclipboard", model="m\x1b[2J"
    )
    code, out, _ = run(capsys, "--dir", str(tmp_path), "--list")
    assert code == 0
    assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out
    assert "␛]52;c;aGk=␇ steal ⟨U+202E⟩clipboard" in out and "m␛[2J" in out
    assert out.rstrip().endswith("1 session")


def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "--dir", str(tmp_path), "--search", "   ")
    assert code == 2 and err.count("\n") == 1 and "nothing to search for" in err
    with pytest.raises(SystemExit) as exc:
        main(["sessions", "--since", "yesterday"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a date" in err
    code, out, err = run(capsys, "--dir", str(tmp_path / "none"), "--list")
    assert code == 0 and out.strip() == "no sessions"


def test_help_and_a_pipe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["sessions"], ["sessions", "prune"], ["diff"]):
        with pytest.raises(SystemExit) as exc:
            main([*argv, "--help"])
        assert exc.value.code == 0
        assert f"usage: workbench {' '.join(argv)}" in capsys.readouterr().out
    write_session(tmp_path / "a.jsonl", "hello")
    code, out, _ = run(capsys, "--dir", str(tmp_path))  # no terminal: a list, not the screen
    assert code == 0 and "a.jsonl" in out and out.rstrip().endswith("1 session")
