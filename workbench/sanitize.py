"""Make untrusted text safe to show: literal, never interpreted.

Model output, tool output, file names and session files may hold characters that
act on a terminal or mislead a reader instead of being shown:

- C0/C1 control characters: terminal escape sequences (`\\x1b]52;...` sets the
  clipboard, `\\x1b]2;...` the window title) and the 8-bit forms (`\\x9b` is CSI);
- bidi controls (U+202A-202E, U+2066-2069, U+200E/F, U+061C), which reorder what
  follows so the text reads differently from what it is;
- zero-width characters (U+200B-200D, U+2060, U+FEFF), which hide inside names;
- lone surrogates (a model's JSON `"\\ud800"`, a file name that is not UTF-8),
  which no terminal or UTF-8 file can take at all.

`literal` replaces each with a visible stand-in (`\\x1b` becomes `␛`, other
controls their `\\xNN` escape, the rest `⟨U+202E⟩`), so nothing reaches the
terminal as a command and nothing hides. Markup is handled by the renderers (Rich
`Text`, Textual `Content`), which never parse markup from these strings.
"""

from __future__ import annotations

import re

UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 and C1 controls except tab and newline
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidi controls
    "\u200b-\u200d\u2060\ufeff"  # zero-width characters
    "\ud800-\udfff]"  # surrogates (only ever lone in a str)
)
"""Every character `literal` replaces."""
_NAMES = {"\x1b": "␛", "\r": "␍", "\x07": "␇", "\x08": "␈", "\x00": "␀"}


def _replace(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if code <= 0x9F:
        return _NAMES.get(char, f"\\x{code:02x}")
    return f"⟨U+{code:04X}⟩"


def safe(text: str) -> bool:
    """Whether `text` holds no unsafe character (see `UNSAFE`)."""
    # Every unsafe character is unprintable (category Cc, Cf or Cs); the C test runs first.
    return text.isprintable() or UNSAFE.search(text) is None


def literal(text: str) -> str:
    """`text` with every unsafe character (see `UNSAFE`) made visible; newline and tab stay."""
    if safe(text):
        return text
    return UNSAFE.sub(_replace, text)


def one_line(text: str, width: int = 120) -> str:
    """The first non-empty line of `text`, made literal and cut to `width` characters."""
    for line in text.splitlines():
        if line.strip():
            line = literal(line.strip()).replace("\t", " ")
            return line if len(line) <= width else line[: width - 1] + "…"
    return ""
