"""The flags that judge and pause calls mean the same to the app, headless runs and the
proxy: one mapping (`oversight_of`) fills every field of `Oversight` from them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from workbench.cli.args import approve_of, build_parser, oversight_of
from workbench.cli.proxy import proxy_parser
from workbench.oversight import Oversight

FLAGS = [
    "--rules", "r.toml", "--allow", "read_file", "--ask", "run_command(git *)",
    "--deny", "write_file(.env)", "--step", "--break", "edit_file",
]  # fmt: skip


PARSERS = pytest.mark.parametrize(
    ("parser", "needed"),
    [(build_parser(), []), (proxy_parser(), ["--upstream", "http://127.0.0.1:9/v1"])],
    ids=["workbench", "proxy"],
)


@PARSERS
def test_every_oversight_field_comes_from_the_same_flags(parser: object, needed: list[str]) -> None:
    args = parser.parse_args([*needed, *FLAGS])  # type: ignore[attr-defined]
    mapped = oversight_of(args, approve_of(parser, args, headless=False))  # type: ignore[arg-type]
    assert set(mapped) == {f.name for f in dataclasses.fields(Oversight)}
    assert Oversight(**mapped) == Oversight(
        approve="ask",
        rules_file=Path("r.toml"),
        allow=["read_file"],
        ask=["run_command(git *)"],
        deny=["write_file(.env)"],
        step=True,
        breakpoints=["edit_file"],
    )


@PARSERS
def test_no_one_can_answer_a_headless_ask(
    parser: object, needed: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    args = parser.parse_args(needed)  # type: ignore[attr-defined]
    assert approve_of(parser, args, headless=True) == "rules"  # type: ignore[arg-type]
    assert approve_of(parser, args, headless=False) == "ask"  # type: ignore[arg-type]
    args = parser.parse_args([*needed, "--approve", "ask"])  # type: ignore[attr-defined]
    with pytest.raises(SystemExit):
        approve_of(parser, args, headless=True)  # type: ignore[arg-type]
    assert "--approve ask needs the app" in capsys.readouterr().err
