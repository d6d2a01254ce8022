"""One clock for every timestamp: epoch milliseconds that never go backwards.

The wall clock is read once; after that, time advances by the monotonic clock, so
the difference of two timestamps is a true duration even if the system clock is
adjusted mid-run. Tests and snapshot runs can install another source with
`set_clock` (for example a frozen one, so durations on screen are stable).
"""

from __future__ import annotations

import time
from collections.abc import Callable

_EPOCH_MS = time.time() * 1000.0
_MONO_START = time.perf_counter()


def _monotonic_epoch_ms() -> float:
    return _EPOCH_MS + (time.perf_counter() - _MONO_START) * 1000.0


_source: Callable[[], float] = _monotonic_epoch_ms


def now_ms() -> float:
    """Epoch milliseconds, monotonic within the process."""
    return _source()


def set_clock(source: Callable[[], float] | None) -> None:
    """Use `source` for every timestamp from now on (None restores the real clock)."""
    global _source
    _source = source or _monotonic_epoch_ms
