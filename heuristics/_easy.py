"""The queue of EASY backfilling, once for every model version (:mod:`heuristics.backfill`).

At each slot the FIFO queue's heads that fit now start, heads that fit nowhere
are dropped, and the first head that fits only later gets a reservation, behind
which the rest of the queue may start now. The model's fit, start and backfill
come as callables, so the rule is written here once.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from instances import Instance

from .rules import fifo_order

__all__ = ["easy_queue"]


def easy_queue(
    inst: Instance,
    fit_head: Callable[[int, int], int],
    start_head: Callable[[int, int], None],
    backfill: Callable[[int, int, int, np.ndarray, np.ndarray], np.ndarray | list[int]],
    log: list[tuple[int, int, int]] | None = None,
) -> np.ndarray:
    """Start array of EASY backfilling (``-1``: not run) over a model's callables.

    Parameters
    ----------
    fit_head
        ``(h, t) -> r``: the earliest start from ``t`` of job ``h`` (``-1``: none), its
        placement kept for the calls that follow.
    start_head
        ``(h, t)``: start ``h`` at ``t`` on the placement just found.
    backfill
        ``(h, r, t, rest, start) -> started``: reserve ``h`` at ``r`` on the placement just
        found and start at ``t`` those of ``rest`` that fit besides; the jobs started.
    log
        If given, receives one ``(t, head, reserved_start)`` triple each time
        the queue head is given a reservation in the future.
    """
    n, T = inst.num_jobs, inst.horizon
    last = inst.deadlines - inst.durations
    order = fifo_order(inst)
    alive = np.ones(n, dtype=bool)  # neither started nor dropped
    start = np.full(n, -1, dtype=np.int64)
    o_rel = inst.releases[order]
    for t in range(T):
        alive[last < t] = False  # its last feasible start has passed
        q = order[alive[order] & (o_rel <= t)]
        i = 0
        reserved = -1
        while i < q.size:  # heads that fit now start; heads that fit nowhere are dropped
            h = int(q[i])
            r = fit_head(h, t)
            if r < 0:
                alive[h] = False
            elif r == t:
                start_head(h, t)
                start[h] = t
                alive[h] = False
            else:
                reserved = r
                break
            i += 1
        if reserved < 0:
            continue
        h = int(q[i])
        if log is not None:
            log.append((t, h, reserved))
        alive[backfill(h, reserved, t, q[i + 1 :], start)] = False
    return start
