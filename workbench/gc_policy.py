"""How the workbench's process collects garbage while a session runs.

An agent run allocates a great many short-lived objects (a pydantic event per delta,
per update), and CPython's default policy collects the youngest generation every 700
allocations and, now and then, walks every object in the process. In the app that
walk includes the whole widget tree, its styles, every loaded module and everything
the session has shown so far (the transcript, the view model, the timeline's drawn
lines): at 1,000 turns of 20 calls, about 800,000 objects and 0.3-0.9 s, during which
no key is answered. None of that is garbage, so, while a session runs:

- everything alive once start-up is over is frozen (`gc.freeze`): collections skip it;
- the youngest generation is collected every `YOUNG_THRESHOLD` allocations instead
  of 700, so young collections are five times rarer (objects that die young, almost
  all of them, are freed by reference counting anyway);
- whatever survives a full collection is frozen as well, and full collections come
  every `OLDER_THRESHOLDS[1]` collections of the middle generation: each one walks
  only what the session made since the last one, so its pause stays the same however
  long the session has run, instead of growing with it. A long-lived object is walked
  three times (once per generation), then never again.

How long a pause is follows from the thresholds: a full collection walks what is left
alive of about `YOUNG_THRESHOLD * OLDER_THRESHOLDS[0] * OLDER_THRESHOLDS[1]`
allocations, and a key pressed meanwhile waits for it.

The price of freezing: a cycle of objects that was alive at a full collection and dies
later is not freed until the policy is undone (reference counting still frees
everything outside cycles), and the more often full collections come, the more such
cycles they catch. In the app they are mostly what Textual makes again when the focus
moves (the styles of each widget's parts, drawn lines), a few megabytes per thousand
busy turns (`benchmarks/key_latency.py --attribute` prints how much; figures in
benchmarks/README.md).

Both the app and the headless runner use the same policy, and both undo it on the
way out (`gc.unfreeze` hands the frozen objects back to the collector).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

YOUNG_THRESHOLD = 3_500
OLDER_THRESHOLDS = (5, 2)


def _freeze_survivors(phase: str, info: dict[str, Any]) -> None:
    """After a full collection, what is left is alive: keep later ones from walking it."""
    if phase == "stop" and info["generation"] == 2:
        gc.freeze()


def apply() -> tuple[int, int, int]:
    """Freeze what is alive now and set the session's thresholds; returns the old ones."""
    previous = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *OLDER_THRESHOLDS)
    if _freeze_survivors not in gc.callbacks:
        gc.callbacks.append(_freeze_survivors)
    # A full collection of nothing (all is frozen): CPython skips a full collection
    # until a quarter as many objects as the last one kept have come of age, and the
    # last one, at start-up, kept everything.
    gc.collect()
    return previous


def restore(previous: tuple[int, int, int]) -> None:
    """Undo `apply`: the old thresholds, and frozen objects collectable again."""
    if _freeze_survivors in gc.callbacks:
        gc.callbacks.remove(_freeze_survivors)
    gc.set_threshold(*previous)
    gc.unfreeze()


@contextmanager
def session_gc() -> Iterator[None]:
    previous = apply()
    try:
        yield
    finally:
        restore(previous)
