"""A method's own seconds: wall time less the time numba spent compiling or loading kernels.

The first call of a compiled kernel in a process compiles it, or loads it
from numba's disk cache; that cost belongs to the process, not to the
method that happened to call first (it made ``fifo`` look slower than
``best``). A listener on numba's compiler lock records each outermost hold
as an interval; :func:`own_seconds` is the wall time since a start less the
part of those intervals inside it. Runtimes reported by every method are
measured so (docs/methods.md).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any

__all__ = ["compile_seconds_since", "install", "own_seconds"]

_lock = threading.Lock()
_intervals: deque[tuple[float, float]] = deque(maxlen=100_000)
_local = threading.local()
_installed: list[bool] = []


def _listener() -> Any:
    from numba.core import event

    class _Holds(event.Listener):  # type: ignore[misc]
        """Records the outermost holds of numba's compiler lock (nested holds re-enter it)."""

        def on_start(self, ev: Any) -> None:
            depth = getattr(_local, "depth", 0)
            if depth == 0:
                _local.t0 = time.perf_counter()
            _local.depth = depth + 1

        def on_end(self, ev: Any) -> None:
            _local.depth = getattr(_local, "depth", 1) - 1
            if _local.depth == 0:
                with _lock:
                    _intervals.append((_local.t0, time.perf_counter()))

    return _Holds()


def install() -> None:
    """Start recording compile intervals (once per process; a no-op without numba)."""
    if _installed:
        return
    _installed.append(True)
    try:
        from numba.core import event
    except ImportError:  # pragma: no cover (numba is a dependency)
        return
    event.register("numba:compiler_lock", _listener())


def compile_seconds_since(t0: float) -> float:
    """Seconds of compiling or loading kernels between ``t0`` (``time.perf_counter()``) and now."""
    now = time.perf_counter()
    with _lock:
        spans = list(_intervals)
    open_t0 = getattr(_local, "t0", None) if getattr(_local, "depth", 0) else None
    if open_t0 is not None:
        spans.append((open_t0, now))
    return sum(max(0.0, min(b, now) - max(a, t0)) for a, b in spans if b > t0)


def own_seconds(t0: float) -> float:
    """Wall seconds since ``t0`` (``time.perf_counter()``) less the compile time inside them."""
    return max(0.0, time.perf_counter() - t0 - compile_seconds_since(t0))

