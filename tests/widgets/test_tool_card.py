"""Tool cards are drawn straight into segments: they must look exactly as Rich's own
`Text` would draw the same runs (cut with an ellipsis, padded, styled), at any width."""

from __future__ import annotations

import pytest
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from workbench.view.records import ToolCallRecord
from workbench.widgets.tool_card import BAR, Run, card_strips, row_strip

CONSOLE = Console(width=200, color_system="truecolor")
BASE = Style(color="#e0e0e0", bgcolor="#1e1e1e")
SELECTED = Style(bgcolor="#004578")


def as_text(runs: list[Run]) -> Text:
    text = Text()
    for chunk, styles in runs:
        text.append(chunk, style=" ".join(styles) if styles else "")
    return text


def reference(
    width: int, bar: Run, body: list[Run], right: list[Run], style: Style, margin: int
) -> list[Segment]:
    """The same row drawn with Rich `Text`: the oracle."""
    inner = width - 2 * margin
    bar_text, right_text, body_text = as_text([bar]), as_text(right), as_text(body)
    right_width = right_text.cell_len + 1 if right else 0
    body_text.truncate(
        max(0, inner - bar_text.cell_len - right_width), overflow="ellipsis", pad=True
    )
    line = Text(style=style, end="")
    line.append_text(bar_text)
    line.append_text(body_text)
    if right:
        line.append(" ")
        line.append_text(right_text)
    line.truncate(inner, pad=True)
    segments = list(line.render(CONSOLE))
    if margin:
        segments = [Segment(" " * margin, BASE), *segments, Segment(" " * margin, BASE)]
    return segments


def cells(segments: list[Segment]) -> list[tuple[str, Style]]:
    """Each cell's character and style: how a row looks, however it is cut into segments."""
    return [(char, segment.style) for segment in segments for char in segment.text]


BODY: list[Run] = [
    ("Read file ", ("bold",)),
    ("read_file ", ("dim",)),
    (" ", ()),
    ('{"path": "notes/设计.md", "limit": 20}', ("italic",)),
]
RIGHT: list[Run] = [
    ("▶ running", ("bold cyan",)),
    (" ", ("bold cyan",)),
    (" 1.2s", ("bold cyan", "dim")),
]


@pytest.mark.parametrize("width", [0, 1, 5, 12, 17, 18, 19, 20, 21, 24, 30, 41, 42, 43, 60, 90])
@pytest.mark.parametrize("margin", [0, 1])
@pytest.mark.parametrize("right", [RIGHT, []])
def test_a_row_looks_as_rich_would_draw_it(width: int, margin: int, right: list[Run]) -> None:
    bar: Run = (BAR, ("cyan",))
    style = BASE + SELECTED
    drawn = row_strip(CONSOLE, width, bar, BODY, right, style, BASE, margin)
    expected = reference(width, bar, BODY, right, style, margin)
    assert cells(list(drawn)) == cells(expected)
    assert drawn.cell_length == width


def test_a_cut_row_ends_in_an_ellipsis_in_the_cut_runs_style() -> None:
    drawn = row_strip(CONSOLE, 24, (BAR, ()), BODY, [], BASE, BASE)
    text = "".join(char for char, _ in cells(list(drawn)))
    assert text == "▌Read file read_file  {…"
    assert cells(list(drawn))[-1][1].italic


def record(**fields: object) -> ToolCallRecord:
    call = ToolCallRecord("call-1", "read_file", 1, 0)
    for name, value in fields.items():
        setattr(call, name, value)
    return call


def drawn_text(
    call: ToolCallRecord, width: int = 80, *, label: str = "Read file", now_ms: float = 0.0
) -> list[str]:
    strips = card_strips(
        CONSOLE,
        call,
        label,
        width,
        selected=False,
        now_ms=now_ms,
        slow_after_ms=10_000.0,
        base=BASE,
        selected_style=SELECTED,
        margin=1,
    )
    assert all(strip.cell_length == width for strip in strips)
    return [strip.text for strip in strips]


def test_a_card_shows_label_arguments_badge_time_and_output() -> None:
    call = record(
        parsed={"path": "a.txt"},
        status="running",
        started_at=1_000.0,
        output="line 1\nreading 3/9\n",
    )
    head, second = drawn_text(call, now_ms=1_250.0)
    assert head.startswith(' ▌Read file read_file  {"path": "a.txt"}')
    assert head.rstrip().endswith("▶ running  250ms")
    assert second.strip() == "▌… reading 3/9"


def test_a_slow_running_call_shows_its_time_as_a_warning() -> None:
    call = record(status="running", started_at=0.0)
    strips = card_strips(
        CONSOLE,
        call,
        "Read file",
        80,
        selected=False,
        now_ms=12_000.0,
        slow_after_ms=10_000.0,
        base=BASE,
        selected_style=SELECTED,
    )
    time = next(segment for segment in strips[0] if "12.0s" in segment.text)
    assert time.style is not None and time.style.reverse and time.style.bold


def test_untrusted_label_name_and_arguments_are_shown_literally() -> None:
    call = ToolCallRecord("call-1", "evil\x1b[2Jtool", 1, 0)
    call.parsed = {"cmd": "[bold red]rm[/] \x1b[31m"}
    call.content, call.is_error = None, False
    head, _ = drawn_text(call, 120, label="Evil \x1b]0;pwned\x07")
    assert "\x1b" not in head and "\x07" not in head
    assert "␛]0;pwned␇" in head and "evil␛[2Jtool" in head
    assert "[bold red]rm[/]" in head
