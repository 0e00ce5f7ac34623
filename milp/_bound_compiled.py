"""The Lagrangian oracle's inner loop compiled with numba (optional).

For each job, the cheapest of its feasible starts at the current prices:
one pass over the job's starts with the window sum from a prefix sum, no
temporary arrays. :class:`milp.bound.LagrangianOracle` falls back to its
numpy version (a masked 2-D minimum per duration) when numba is missing,
and the tests hold the two equal.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["cheapest_from_release", "cheapest_starts"]


@njit(cache=True, nogil=True)
def cheapest_starts(
    prefix: np.ndarray, offsets: np.ndarray, starts: np.ndarray, dur: np.ndarray,
    delay: np.ndarray, cost: np.ndarray, arg: np.ndarray,
) -> None:  # pragma: no cover (compiled; tested through its results)
    """``cost[i] = min_s prefix[s + p_i] - prefix[s] + delay_i s`` over
    ``starts[offsets[i]:offsets[i+1]]`` (``delay``: 0 under ``value``).

    ``arg[i]`` is the earliest start reaching it (starts ascending).
    """
    for i in range(dur.shape[0]):
        p = dur[i]
        d = delay[i]
        best = np.inf
        at = -1
        for k in range(offsets[i], offsets[i + 1]):
            s = starts[k]
            w = prefix[s + p] - prefix[s] + d * s
            if w < best:
                best = w
                at = s
        cost[i] = best
        arg[i] = at


@njit(cache=True, nogil=True)
def cheapest_from_release(
    prefix: np.ndarray, group_start: np.ndarray, dur: np.ndarray, delay: np.ndarray,
    release: np.ndarray, cost: np.ndarray, arg: np.ndarray,
) -> None:  # pragma: no cover (compiled; tested through its results)
    """:func:`cheapest_starts` where job ``i`` may start at every slot from ``release[i]`` to
    ``T - p_i`` (``T = prefix.size - 1``), the jobs in groups of equal duration and delay
    (``group_start``: offsets), each group latest release first.

    One scan per group from its last start down keeps the running minimum of
    ``prefix[s + p] - prefix[s] + delay s`` (``<=``: the earliest start on a tie,
    as :func:`cheapest_starts`) and hands it to each job as the scan passes its release.
    """
    T = prefix.shape[0] - 1
    for grp in range(group_start.shape[0] - 1):
        lo, hi = group_start[grp], group_start[grp + 1]
        p = dur[lo]
        d = delay[lo]
        best = np.inf
        at = -1
        s = T - p
        for i in range(lo, hi):
            r = release[i]
            while s >= r:
                w = prefix[s + p] - prefix[s] + d * s
                if w <= best:
                    best = w
                    at = s
                s -= 1
            cost[i] = best
            arg[i] = at
