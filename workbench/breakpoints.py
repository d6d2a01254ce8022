"""Breakpoints: where the stepper stops, parsed from text (`--break`, the breakpoints
dialog): a tool name (a glob), an argument pattern in the permission rules' syntax,
or one of the `@` breakpoints for failures.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.permissions.patterns import CallPattern, PatternError

INVALID = "@invalid"
ERROR = "@error"
STAGE_BREAKPOINTS = {
    "parse": "@parse",
    "lookup": "@unknown",
    "prepare": "@prepare",
    "validate": "@validate",
}
"""A breakpoint for each stage of the argument pipeline (`@invalid` is all of them)."""
SPECIAL = frozenset({INVALID, ERROR, *STAGE_BREAKPOINTS.values()})
"""Every `@` breakpoint."""


class StepperError(ValueError):
    """A breakpoint or a resume action was refused; `str()` says why (a pause stays paused)."""


@dataclass(frozen=True)
class Breakpoint:
    """Where to pause: a tool name (glob), an argument pattern, or one of `SPECIAL`
    (`@invalid`, `@parse`, `@unknown`, `@prepare`, `@validate`, `@error`)."""

    text: str
    pattern: CallPattern | None = None
    """None for the `@` ones."""

    @classmethod
    def parse(cls, text: str) -> Breakpoint:
        text = text.strip()
        if text in SPECIAL:
            return cls(text)
        if text.startswith("@"):
            raise StepperError(
                f"Unknown breakpoint {text!r}: use a tool name, a pattern, or one of "
                + ", ".join(sorted(SPECIAL))
            )
        try:
            pattern = CallPattern.parse(text)
        except PatternError as exc:
            raise StepperError(str(exc)) from None
        return cls(str(pattern), pattern)


def canonical(text: str) -> str:
    """A breakpoint's text as stored (a pattern written the one way `CallPattern` writes it)."""
    try:
        return str(CallPattern.parse(text))
    except PatternError:
        return text.strip()
