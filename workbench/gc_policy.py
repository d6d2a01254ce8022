"""How the workbench's process collects garbage while a session runs.

An agent run allocates a great many short-lived objects (a pydantic event per delta,
per update), and CPython's default policy collects the youngest generation every 700
allocations and, now and then, walks every object in the process. In the app that
walk includes the whole widget tree, its styles and every loaded module, none of
which is ever garbage, and it is what made a busy run slow down when the screen was
attached. So, while a session runs:

- everything alive once start-up is over is frozen (`gc.freeze`): collections skip it;
- the youngest generation is collected every `YOUNG_THRESHOLD` allocations instead
  of 700, so every generation is collected ten times less often (objects that die
  young, almost all of them, are freed by reference counting anyway).

Both the app and the headless runner use the same policy, and both undo it on the
way out (`gc.unfreeze` hands the frozen objects back to the collector).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 7_000
OLDER_THRESHOLDS = (10, 10)


def apply() -> tuple[int, int, int]:
    """Freeze what is alive now and set the session's thresholds; returns the old ones."""
    previous = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *OLDER_THRESHOLDS)
    return previous  # type: ignore[return-value]


def restore(previous: tuple[int, int, int]) -> None:
    """Undo `apply`: the old thresholds, and frozen objects collectable again."""
    gc.set_threshold(*previous)
    gc.unfreeze()


@contextmanager
def session_gc() -> Iterator[None]:
    previous = apply()
    try:
        yield
    finally:
        restore(previous)
