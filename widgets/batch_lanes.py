"""Batch lanes: what ran at the same time, what waited, and for how long.

One lane per call of a batch on a shared time axis; each lane is coloured by phase
(preflight, waiting for approval, paused, queued behind its batch, executing,
after-hook), so a parallel batch shows overlapping bars and a sequential one a
staircase. Under the lanes, the selected call's time in each phase (or the hovered
one's: the inspector passes it as `detail_id`).
"""

from __future__ import annotations

from itertools import groupby

from rich.text import Text

from workbench.sanitize import literal
from workbench.view.records import ToolCallRecord
from workbench.view.summary import phase_durations, phase_spans
from workbench.widgets.render import format_ms, format_times

PHASE_STYLE = {
    "preflight": ("░", "grey62"),
    "approval": ("▒", "magenta"),
    "paused": ("▒", "yellow"),
    "queued": ("·", "grey50"),
    "executing": ("█", "cyan"),
    "after_hook": ("█", "blue"),
}
PHASE_LABEL = {
    "preflight": "preflight",
    "approval": "approval",
    "paused": "paused",
    "queued": "queued",
    "executing": "executing",
    "after_hook": "after hook",
}
LABEL_WIDTH = 16


def render_lanes(
    records: list[ToolCallRecord],
    selected_id: str | None,
    now: float,
    width: int,
    detail_id: str | None = None,
) -> Text:
    """The lanes as text, `width` cells wide, with `detail_id`'s durations under them."""
    started = [r for r in records if r.started_at is not None]
    if not started:
        return Text("no call of this batch has started yet", style="dim")
    t0 = min(r.started_at for r in started if r.started_at is not None)
    t1 = max((r.ended_at if r.ended_at is not None else now) for r in started)
    span = max(t1 - t0, 1e-6)
    times = {r.id: format_times(r.times(now)) for r in records}
    time_width = max(7, *(len(t) for t in times.values()))
    cells = max(10, width - LABEL_WIDTH - time_width - 3)
    out = Text()
    for record in records:
        chosen = record.id == selected_id
        label = literal(record.name)
        label = (label[: LABEL_WIDTH - 2] + "…") if len(label) > LABEL_WIDTH - 1 else label
        out.append(
            f"{'▸' if chosen else ' '}{label:<{LABEL_WIDTH - 1}}", style="bold" if chosen else ""
        )
        lane = [(" ", "")] * cells
        for name, a, b in phase_spans(record, now):
            char, style = PHASE_STYLE.get(name, ("█", "white"))
            first = int((a - t0) / span * cells)
            last = max(first + 1, int((b - t0) / span * cells))
            for i in range(max(0, first), min(cells, last)):
                lane[i] = (char, style)
        if (
            record.status in ("error", "invalid", "denied", "aborted")
            and record.ended_at is not None
        ):
            end = min(cells - 1, int((record.ended_at - t0) / span * cells))
            lane[end] = ("✗", "bold red")
        for (char, style), run in groupby(lane):  # one span a run, not one a cell
            out.append(char * len(list(run)), style=style)
        if times[record.id]:
            out.append(f" {times[record.id]:>{time_width}}", style="dim")
        out.append("\n")
    out.append(
        " " * LABEL_WIDTH + "0" + " " * (cells - len(format_ms(span)) - 1) + format_ms(span) + "\n",
        style="dim",
    )
    for phase, (char, style) in PHASE_STYLE.items():
        out.append(f"{char} ", style=style)
        out.append(f"{PHASE_LABEL[phase]}  ", style="dim")
    detail = next((r for r in records if r.id == (detail_id or selected_id)), None)
    if detail is not None and detail.started_at is not None:
        out.append("\n")
        durations = phase_durations(detail, now)
        parts = [f"{PHASE_LABEL.get(k, k)} {format_ms(v)}" for k, v in durations.items()]
        out.append(
            f"{literal(detail.name)} [{literal(detail.id)}]: " + " · ".join(parts), style="italic"
        )
    return out
