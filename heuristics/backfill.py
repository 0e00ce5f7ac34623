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

from . import shares
from ._easy import easy_queue
from .decoder import job_arrays, serial_starts
from .placement import new_place
from .profile import counts_profile, fit, new_profile, occupy, start_now
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
    if inst.jobs_use_resources:  # model version 3
        return shares.easy_starts(inst, reservation, log, place=place)
    prof = counts_profile(new_profile(inst, reservation, "first-fit"))
    g_, p_, d_ = inst.gpus.tolist(), inst.durations.tolist(), inst.deadlines.tolist()
    held: list[int] = []  # the nodes of the last fit

    def fit_head(h: int, t: int) -> int:
        nonlocal held
        r, held = fit(prof, g_[h], p_[h], t, d_[h])
        return int(r)

    def start_head(h: int, t: int) -> None:
        occupy(prof, g_[h], t, p_[h], held, place, h)

    def backfill(h: int, r: int, t: int, rest: np.ndarray, start: np.ndarray) -> list[int]:
        shadow = prof.copy()
        occupy(shadow, g_[h], r, p_[h], held)
        return start_now(shadow, t, rest, inst.gpus, inst.durations, start, place, also=prof)

    return easy_queue(inst, fit_head, start_head, backfill, log)


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
