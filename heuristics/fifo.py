"""The FIFO baseline, exactly as PROBLEM.md section 3 defines it."""

from __future__ import annotations

import time

import numpy as np

from instances import Instance, Result

from ._core import earliest_fit, finish, occupy

__all__ = ["fifo", "fifo_starts"]


def fifo_starts(inst: Instance, reservation: str = "peak") -> np.ndarray:
    """FIFO start slots (``-1`` for rejected jobs).

    Jobs are taken by (release, position in the job list). Each starts at the
    earliest slot ``s >= max(r_j, S_last)`` from which it fits for its whole
    duration and ends by ``min(D_j, T)``; ``S_last`` is the start of the last
    job placed. A job that fits nowhere is rejected and leaves ``S_last`` as it
    was.
    """
    free = inst.batch_capacity(reservation)  # type: ignore[arg-type]
    start = np.full(inst.num_jobs, -1, dtype=np.int64)
    order = np.argsort(inst.releases, kind="stable")
    gpus, dur, rel, dl = inst.gpus, inst.durations, inst.releases, inst.deadlines
    s_last = 0
    for j in order:
        s = earliest_fit(free, int(gpus[j]), int(dur[j]), max(int(rel[j]), s_last), int(dl[j]))
        if s >= 0:
            occupy(free, s, int(gpus[j]), int(dur[j]))
            start[j] = s
            s_last = s
    return start


def fifo(inst: Instance, *, reservation: str = "peak") -> Result:
    """FIFO in arrival order; ``peak`` reservation by default (the baseline).

    Parameters
    ----------
    reservation
        ``"peak"`` (method ``fifo``) or ``"curve"`` (method ``fifo-curve``).
    """
    t0 = time.perf_counter()
    start = fifo_starts(inst, reservation)
    name = "fifo" if reservation == "peak" else "fifo-curve"
    return finish(inst, name, start, reservation=reservation, started_at=t0)
