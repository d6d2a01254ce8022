"""PauseBanner: a bar that cannot be missed while the run is paused, with what to press."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from workbench.sanitize import literal, one_line
from workbench.widgets.render import compact_json


class PauseBanner(Static):
    DEFAULT_CSS = """
    PauseBanner {
        height: auto; display: none; background: $warning; color: $background; padding: 0 1;
        text-style: bold; text-wrap: nowrap; text-overflow: ellipsis;
    }
    PauseBanner.-shown { display: block; }
    """

    def show(self, pause: Any, labels: dict[str, str]) -> None:
        if pause is None:
            self.set_class(False, "-shown")
            return
        text = Text("‖ PAUSED ")
        where = {
            "before_model": "before the next model request",
            "before_tool": "before running",
            "after_tool": "at the error result of",
            "invalid_arguments": f"at arguments that failed ({pause.failed_stage or 'validate'}):",
        }.get(pause.point, pause.point)
        text.append(where)
        if pause.tool_name:
            text.append(f" {literal(labels.get(pause.tool_name, pause.tool_name))}")
        if pause.breakpoint:
            text.append(f"  (breakpoint {literal(pause.breakpoint)})")
        result = getattr(pause, "result", None)  # recorded before pauses carried it: none
        if result is not None:
            said = "".join(getattr(c, "text", "") for c in result.content)
            text.append("  " + one_line(said, 200) + " (not sent yet)", style="not bold")
        elif pause.tool_name and pause.args is not None:
            text.append("  " + compact_json(pause.args, 200), style="not bold")
        text.no_wrap, text.overflow = True, "ellipsis"
        keys = Text("F10 step · F5 continue · ^r run to end", no_wrap=True, overflow="ellipsis")
        if pause.point == "before_tool":
            keys.append(" · F2 edit args · ^o answer it yourself")
        elif pause.point == "invalid_arguments" and pause.failed_stage != "lookup":
            keys.append(" · F2 edit args (the pipeline runs again)")
        elif pause.point == "after_tool":
            keys.append(" · ^o replace the result")
        keys.append(" · ^c cancel run")
        text.append("\n")
        text.append_text(keys)
        self.update(text)
        self.set_class(True, "-shown")
