"""The parallel (time-stepping) scheme over any state, slot by slot (:meth:`start_now` at each).

Both states run it (:meth:`heuristics.profile.Profile.parallel`,
:meth:`heuristics.shares.SharesProfile.parallel`); the count state on one node
runs it compiled in one call instead (``heuristics._compiled.parallel_one_node``),
held to this loop by ``tests/heuristics/test_engine.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["parallel_loop"]


def parallel_loop(state: Any, order: np.ndarray, jobs: np.ndarray, start: np.ndarray,
                  place: np.ndarray | None) -> np.ndarray:
    """Fill ``start``: at each slot ``t``, the jobs of ``order`` released by ``t``, not
    started, whose last start ``D_j - p_j`` is not past, each started at ``t`` where it fits
    (``state.start_now``, in order); ``state`` is changed in place."""
    order = np.asarray(order, dtype=np.int64)
    pending = np.ones(order.size, dtype=bool)
    o_rel, o_last = jobs[2][order], (jobs[3] - jobs[1])[order]
    for t in range(int(state.pool.shape[0])):
        cand = order[pending & (o_rel <= t) & (o_last >= t)]
        if cand.size and state.start_now(t, cand, jobs, start, place):
            pending[start[order] >= 0] = False
    return start
