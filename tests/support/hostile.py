"""Hostile text: a scenario whose every string tries to act on the terminal, and a
scanner for what the apps would write to it.

`EVIL` carries an OSC 52 (set the clipboard), an OSC 2 (set the window title), a CSI
(colour, clear screen), the 8-bit CSI and OSC, DEL, a bidi override and a zero-width
space. The scenario puts it in the prompt, the model id, the system prompt, thinking,
text, tool names, call ids, arguments, file names, file contents and command output;
one call's JSON arguments hold a lone surrogate.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from textual._compositor import ChopsUpdate, LayoutUpdate
from textual.app import App

from workbench.sanitize import UNSAFE

EVIL = (
    "\x1b]52;c;cHduZWQ=\x07\x1b]2;pwned\x1b\\\x1b[31;1mRED\x1b[2J"
    "\x9b2J\x9d2;c1\x9c\x7f\u202eevil\u2066\u200b\ufeff"
)
"""One string with every kind of character that must never reach a terminal raw."""
OSC_52 = "\x1b]52;c;cHduZWQ="
NON_UTF8_NAME = b"bytes\xff\xfename.txt"
"""A file name that is not UTF-8 (Python reads it back with lone surrogates)."""


def hostile_scenario() -> dict[str, Any]:
    """A scripted scenario attacking every string the screen shows."""
    return {
        "name": "hostile",
        "prompt": "please " + EVIL,
        "model": "model" + EVIL,
        "system_prompt": "system " + EVIL,
        "workspace_files": {
            "note" + EVIL.replace("/", "") + ".txt": "content " + EVIL + "\n",
            "a.txt": "alpha\n",
        },
        "turns": [
            {
                "thinking": "thinking " + EVIL,
                "text": "text " + EVIL + "\n\n# heading " + EVIL,
                "tool_calls": [
                    {"name": "list_directory", "arguments": {"path": "."}},
                    {"name": "read_file", "arguments": {"path": "a.txt" + EVIL}},
                    {"name": "tool" + EVIL, "id": "id" + EVIL, "arguments": {"x" + EVIL: EVIL}},
                    {"name": "read_file", "raw": '{"path": "a\\ud800.txt"}'},
                    {
                        "name": "run_command",
                        "arguments": {
                            "command": "printf '\\033]52;c;cHduZWQ=\\007 out \\302\\233 "
                            "\\342\\200\\256 end'"
                        },
                    },
                ],
            },
            {"text": "done " + EVIL},
        ],
    }


def make_non_utf8_file(workspace: Path) -> None:
    """A file whose name is not UTF-8, next to the scenario's files."""
    path = os.fsencode(workspace) + b"/" + NON_UTF8_NAME
    with open(path, "wb") as handle:
        handle.write(b"x\n")


class FrameScanner:
    """Collects what every screen update would write, segment by segment.

    Textual hands each compositor update to `App._display` (the headless test driver
    then writes nothing); the segments of those updates are exactly the text the
    terminal would get, between the compositor's own cursor moves.
    """

    def __init__(self) -> None:
        self.frames = 0
        self.raw: list[str] = []
        """Segment texts holding a character `sanitize.literal` would have replaced."""
        self.text: list[str] = []

    def install(self, monkeypatch: Any) -> FrameScanner:
        original = App._display

        def display(app: App[Any], screen: Any, renderable: Any) -> None:
            self.scan(renderable)
            original(app, screen, renderable)

        monkeypatch.setattr(App, "_display", display)
        return self

    def scan(self, update: Any) -> None:
        strips: list[Any] = []
        if isinstance(update, LayoutUpdate):
            strips = [strip for line in update.strips for strip in line]
        elif isinstance(update, ChopsUpdate):
            strips = [s for chop in update.chops for s in chop.values() if s is not None]
        else:
            return
        self.frames += 1
        for strip in strips:
            for segment in strip:
                text, style, control = segment
                if control:
                    continue
                link = style.link if style is not None else None
                if UNSAFE.search(text) or (link and UNSAFE.search(link)):
                    self.raw.append(text)
                self.text.append(text)

    def seen(self, pattern: str) -> bool:
        """Whether some frame showed text matching `pattern` (a regex)."""
        return re.search(pattern, "".join(self.text)) is not None
