"""Options for the pytest runs that tests start (the pytest plugin's own tests)."""

from __future__ import annotations

UNUSED_PLUGINS = (
    "-p",
    "no:textual-snapshot",
    "-p",
    "no:syrupy",
    "-p",
    "no:hypothesispytest",
    "-p",
    "no:asyncio",
)
"""Plugins that recorded sessions as tests never use, left out of a pytest run that a
test starts: the hypothesis plugin imports all of hypothesis for its end-of-run summary
(and pytest rewrites the asserts of every module of a plugin's package as it loads),
about a second of each started run's start-up."""
