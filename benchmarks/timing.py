"""The benchmarks' timing: the median of repeated calls, and two calls timed in turn.

Each scripted benchmark reports ratios of calls timed side by side in one run
(a shared machine drifts), so the pairing is written once here.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from typing import Any


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


def cpu_seconds() -> float:
    """The process's CPU seconds so far (user and system): a loaded machine tells itself."""
    t = os.times()
    return t.user + t.system


def timed(fn: Callable[..., Any], *args: Any, **kw: Any) -> tuple[Any, float, float]:
    """``fn(*args, **kw)`` with its wall and CPU seconds."""
    t0, c0 = time.perf_counter(), cpu_seconds()
    res = fn(*args, **kw)
    return res, time.perf_counter() - t0, cpu_seconds() - c0


def fmt_number(x: float | None) -> str:
    """A figure with thousands separators and two decimals (``-`` for none)."""
    return "-" if x is None else f"{x:,.2f}"


def fmt_gap(res: Any) -> str:
    """A result's gap in percent (``-`` without a bound)."""
    return "-" if res.gap is None else f"{100 * res.gap:.2f}%"
