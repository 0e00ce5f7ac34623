"""EASY and conservative backfilling, the policies Slurm users get today.

Both keep the FIFO queue: jobs by (release, position in the job list), and
both know each job's exact duration (runtime estimates are exact here), so a
reservation, once made, is never broken by a job that ends early.

On an instance with nodes both place as FIFO does (the specification (docs/model.md)): a
job fits when it has a valid placement for its whole run, and takes the first
one in node-list order; a reservation holds its nodes.
"""

from __future__ import annotations

import time

import numpy as np

from instances import Instance, Result

from .decoder import job_arrays, serial_starts
from .engine import new_profile
from .placement import new_place
from .results import finish
from .rules import fifo_order

__all__ = ["conservative", "conservative_starts", "easy", "easy_starts"]


def easy_starts(
    inst: Instance, reservation: str = "peak", log: list[tuple[int, int, int]] | None = None,
    *, place: np.ndarray | None = None,
) -> np.ndarray:
    """Start array of EASY backfilling (``-1``: not run).

    Parameters
    ----------
    log
        If given, receives one ``(t, head, reserved_start)`` triple each time
        the queue head is given a reservation in the future.
    place
        On an instance with nodes, the placement array to fill.
    """
    prof = new_profile(inst, reservation, "first-fit")  # any model version
    jobs = job_arrays(inst)
    g_, p_, d_ = (c.tolist() for c in jobs[[0, 1, 3]])
    n, T = inst.num_jobs, inst.horizon
    last = inst.deadlines - inst.durations
    order = fifo_order(inst)
    alive = np.ones(n, dtype=bool)  # neither started nor dropped
    start = np.full(n, -1, dtype=np.int64)
    o_rel = inst.releases[order]
    for t in range(T):
        alive[last < t] = False  # its last feasible start has passed
        q = order[alive[order] & (o_rel <= t)]
        i, r, where = 0, -1, None
        while i < q.size:  # heads that fit now start; heads that fit nowhere are dropped
            h = int(q[i])
            r, where = prof.earliest(h, g_[h], p_[h], t, d_[h])
            if r < 0:
                alive[h] = False
            elif r == t:
                prof.take(h, g_[h], p_[h], t, where, place)
                start[h] = t
                alive[h] = False
            else:
                break
            i += 1
        if i == q.size:
            continue
        h = int(q[i])  # reserved at r > t: the rest start now only beside its reservation
        if log is not None:
            log.append((t, h, r))
        shadow = prof.copy()
        shadow.take(h, g_[h], p_[h], r, where)
        rest = q[i + 1 :]
        if shadow.start_now(t, rest, jobs, start, place, also=prof):
            alive[rest[start[rest] >= 0]] = False
    return start


def easy(inst: Instance, *, reservation: str = "peak") -> Result:
    """EASY backfilling.

    Time advances slot by slot, ``t = 0 .. T-1``. The queue at ``t`` holds the
    jobs released by ``t``, not started, whose last feasible start
    ``min(D_j, T) - p_j`` is ``>= t``, in FIFO order. While the queue head fits
    now (``g`` GPUs free in slots ``t .. t+p-1``), it starts; a head that fits
    at no slot from ``t`` on is dropped (the free profile only shrinks, so it
    never will). The next head gets a reservation at its earliest feasible
    start ``R > t``. Every later queued job, in FIFO order, starts at ``t`` if
    it fits now in the profile where the head's block at ``R`` is already
    taken: so a backfilled job never delays the head's reserved start, and the
    head starts exactly at ``R``.

    Parameters
    ----------
    reservation
        ``peak`` (methods ``easy``, ``easy-peak``) or ``curve`` (``easy-curve``).
    """
    t0 = time.perf_counter()
    place = new_place(inst) if inst.has_nodes else None
    start = easy_starts(inst, reservation, place=place)
    return finish(inst, f"easy-{reservation}", start, reservation=reservation, started_at=t0,
                  place=place)


def conservative_starts(
    inst: Instance, reservation: str = "peak", *, place: np.ndarray | None = None
) -> np.ndarray:
    """Start array of conservative backfilling (``-1``: not run).

    Parameters
    ----------
    place
        On an instance with nodes, the placement array to fill (first fit).
    """
    prof = new_profile(inst, reservation, "first-fit")
    jobs = job_arrays(inst)
    order = fifo_order(inst)
    start = np.full(inst.num_jobs, -1, dtype=np.int64)
    rel = inst.releases[order]
    # events: the release slots; arrivals at one slot get reservations in list order
    for t in np.unique(rel).tolist():
        serial_starts(prof, order[rel == t], jobs, start, place)
    return start


def conservative(inst: Instance, *, reservation: str = "peak") -> Result:
    """Conservative backfilling.

    Every queued job holds a reservation. At each release slot ``t`` the jobs
    released at ``t`` join the queue in list order, and each gets a
    reservation at its earliest feasible start ``>= t`` in the profile that
    already holds the reservations of every earlier job (a hole before them
    is backfilled only if the job fits there entirely, so no earlier
    reservation moves); a job with no feasible start is dropped. Durations are
    exact, so no job ends early, no reservation is ever compressed, and each
    job starts at its reservation: the schedule equals serial list scheduling
    in FIFO order, without FIFO's rule that no job starts before an earlier one.

    Parameters
    ----------
    reservation
        ``peak`` (method ``conservative-peak``) or ``curve`` (``conservative-curve``).
    """
    t0 = time.perf_counter()
    place = new_place(inst) if inst.has_nodes else None
    start = conservative_starts(inst, reservation, place=place)
    return finish(
        inst, f"conservative-{reservation}", start, reservation=reservation, started_at=t0,
        place=place,
    )
