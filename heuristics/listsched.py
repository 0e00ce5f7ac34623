"""List scheduling: the serial and the parallel schedule-generation schemes.

``list`` is the constraint-aware allocator of the seed claim: jobs in the order
of a priority rule, each at its earliest fit under the elastic ``curve``
reservation. ``list-peak`` is the same under the static ``peak`` reservation,
so the gain over FIFO splits into a reservation part and an ordering part.
``parallel`` steps through time instead of through the list.
"""

from __future__ import annotations

import time

import numpy as np

from instances import Instance, Result

from ._core import check_reservation, finish, first_fits_now, job_arrays, serial_starts
from .rules import order_by

__all__ = ["list_schedule", "list_starts", "parallel_schedule", "parallel_starts"]


def list_starts(inst: Instance, order: np.ndarray, reservation: str = "curve") -> np.ndarray:
    """Start array of the serial decoder for a job order (``-1``: not run)."""
    free = inst.batch_capacity(check_reservation(reservation))  # type: ignore[arg-type]
    return serial_starts(free, order, job_arrays(inst))


def list_schedule(
    inst: Instance, *, rule: str = "priority", reservation: str = "curve"
) -> Result:
    """Serial list scheduling with earliest fit.

    Jobs are taken in the order of ``rule`` (see :data:`heuristics.rules.RULES`;
    ties by ``w`` desc, ``w g p`` desc, list position). Each starts at the
    earliest slot ``s >= r_j`` from which it fits for ``p_j`` slots and ends by
    ``min(D_j, T)``, in the capacity left by inference (under ``reservation``)
    and the jobs placed before it; a job that fits nowhere is not run. Unlike
    FIFO, a job may start before one placed earlier.

    Parameters
    ----------
    rule
        Priority rule name (default ``priority``: ``w`` descending).
    reservation
        ``curve`` (method ``list``) or ``peak`` (method ``list-peak``).
    """
    t0 = time.perf_counter()
    start = list_starts(inst, order_by(inst, rule), reservation)
    name = "list" if reservation == "curve" else "list-peak"
    return finish(
        inst, name, start, reservation=reservation, started_at=t0, params={"rule": rule}
    )


def parallel_starts(
    inst: Instance, order: np.ndarray, reservation: str = "curve"
) -> np.ndarray:
    """Start array of the parallel (time-stepping) scheme for a job order."""
    free = inst.batch_capacity(check_reservation(reservation))  # type: ignore[arg-type]
    n, T = inst.num_jobs, inst.horizon
    gpus, dur, rel, dl = inst.gpus, inst.durations, inst.releases, inst.deadlines
    start = np.full(n, -1, dtype=np.int64)
    order = np.asarray(order, dtype=np.int64)
    pending = np.ones(order.size, dtype=bool)
    o_rel, o_last = rel[order], (dl - dur)[order]
    for t in range(T):
        cand = order[pending & (o_rel <= t) & (o_last >= t)]
        pos = 0
        while pos < cand.size:
            k = first_fits_now(free, t, cand[pos:], gpus, dur)
            if k < 0:
                break
            j = int(cand[pos + k])
            free[t : t + dur[j]] -= gpus[j]
            start[j] = t
            pos += k + 1
        if cand.size:
            pending[start[order] >= 0] = False
    return start


def parallel_schedule(
    inst: Instance, *, rule: str = "priority", reservation: str = "curve"
) -> Result:
    """Parallel (time-stepping) schedule generation.

    For ``t = 0, 1, ..., T-1``: the jobs released by ``t`` that are not yet
    started and can still end by ``min(D_j, T)`` if started at ``t`` are
    scanned in the order of ``rule``; each one that fits in slots
    ``t .. t+p_j-1`` starts at ``t``. A job whose last feasible start passes
    is not run. Every scan is one vectorized test over all candidates.

    Parameters
    ----------
    rule
        Priority rule name (default ``priority``).
    reservation
        ``curve`` (default) or ``peak``.
    """
    t0 = time.perf_counter()
    start = parallel_starts(inst, order_by(inst, rule), reservation)
    return finish(
        inst, "parallel", start, reservation=reservation, started_at=t0,
        params={"rule": rule, "reservation": reservation},
    )
