"""One clock for every timestamp: epoch milliseconds that never go backwards.

The wall clock is read once; after that, time advances by the monotonic clock, so
the difference of two timestamps is a true duration even if the system clock is
adjusted mid-run.
"""

from __future__ import annotations

import time

_EPOCH_MS = time.time() * 1000.0
_MONO_START = time.perf_counter()


def now_ms() -> float:
    """Epoch milliseconds, monotonic within the process."""
    return _EPOCH_MS + (time.perf_counter() - _MONO_START) * 1000.0
