"""Make untrusted text safe to show: literal, never interpreted.

Model output, tool output and file contents may contain terminal escape
sequences or other control characters. They are replaced by visible stand-ins
(`\\x1b` becomes `␛[...`, other C0/C1 controls their `\\xNN` escape) so nothing
reaches the terminal as a command. Markup is handled by the renderers (Rich
`Text`, Textual `Content`), which never parse markup from these strings.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_NAMES = {"\x1b": "␛", "\r": "␍", "\x07": "␇", "\x08": "␈", "\x00": "␀"}


def _replace(match: re.Match[str]) -> str:
    char = match.group()
    return _NAMES.get(char, f"\\x{ord(char):02x}")


def literal(text: str) -> str:
    """`text` with every control character except newline and tab made visible."""
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub(_replace, text)


def one_line(text: str, width: int = 120) -> str:
    """The first non-empty line of `text`, made literal and cut to `width` characters."""
    for line in text.splitlines():
        if line.strip():
            line = literal(line.strip()).replace("\t", " ")
            return line if len(line) <= width else line[: width - 1] + "…"
    return ""
