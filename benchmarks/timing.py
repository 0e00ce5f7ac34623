"""The benchmarks' timing: the median of repeated calls, and two calls timed in turn.

Each scripted benchmark reports ratios of calls timed side by side in one run
(a shared machine drifts), so the pairing is written once here.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_seconds(fn: Callable[[], object], repeat: int) -> float:
    """Median wall seconds of ``fn()`` over ``repeat`` runs (after one warm-up)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def paired(a: Callable[[], object], b: Callable[[], object], repeat: int
           ) -> tuple[float, float, float]:
    """``a`` and ``b`` timed in turn ``repeat`` times (after one warm-up each): their median
    seconds and the median of ``b / a`` over the pairs."""
    a()
    b()
    ta, tb = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        a()
        t1 = time.perf_counter()
        b()
        t2 = time.perf_counter()
        ta.append(t1 - t0)
        tb.append(t2 - t1)
    return (statistics.median(ta), statistics.median(tb),
            statistics.median(y / x for x, y in zip(ta, tb)))
