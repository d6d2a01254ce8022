"""Each test judges commands afresh: the parsers' caches hold what earlier tests parsed,
and a cached answer would hide a change to the parser (mutation testing forks one
process after the tests ran once, caches full)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from workbench.permissions.commands import literal_command
from workbench.permissions.pipelines import literal_list


@pytest.fixture(autouse=True)
def _fresh_parser_caches() -> Iterator[None]:
    literal_command.cache_clear()
    literal_list.cache_clear()
    yield
