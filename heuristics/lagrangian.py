"""The Lagrangian heuristic: multipliers turned into a schedule by the serial decoder.

Given slot prices ``lam`` (from :func:`milp.bound`, or any other source),
each job's *reduced profit* is its value less the cheapest price of a run,
``v_j - g_j * min_s sum_{t in run(s)} lam[t]``: what the job is worth once
the capacity it takes is paid for. Jobs are placed by the serial decoder
(:func:`heuristics.decoder.serial_starts`, earliest fit) in a few orders
derived from it, each decoded twice: earliest fit from the release, and a
repair of the relaxed solution (each job placed at the earliest fit from
its cheapest start at ``lam``, the jobs left over then from their release);
the best schedule is kept. The multipliers are a
parameter: this module does not compute them (heuristics do not import the
MILP). On an instance with nodes the decoder places the jobs first fit.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from instances import Instance, Result
from instances.lagrangian import check_multipliers, reduced_profits

from .decoder import job_arrays, serial_starts
from .engine import new_profile
from .placement import new_place
from .results import finish, start_value

__all__ = ["ORDERS", "lagrangian_orders", "lagrangian_schedule", "lagrangian_starts"]

ORDERS: tuple[str, ...] = ("profit", "profit-density", "density-priced")
"""The orders tried: reduced profit, reduced profit per GPU-slot, and value per
GPU-slot with the reduced profit breaking ties."""


def lagrangian_orders(inst: Instance, lam: Any) -> dict[str, np.ndarray]:
    """Job orders (best first) from the reduced profits at ``lam``.

    Jobs with no feasible start are left out; jobs with a negative reduced
    profit come last (they may still fit in what is left).
    """
    profit, _ = reduced_profits(inst, lam)
    usable = np.flatnonzero(np.isfinite(profit))
    if usable.size == 0:
        return dict.fromkeys(ORDERS, usable)
    area = (inst.gpus * inst.durations * inst.slot_hours)[usable].astype(np.float64)
    pr = profit[usable]
    density = inst.job_values[usable] / area
    keys = {
        "profit": (-pr,),
        "profit-density": (-pr / area,),
        "density-priced": (-pr, -density),
    }
    # np.lexsort sorts by its last key first; the job index breaks every tie
    return {name: usable[np.lexsort((usable, *reversed(k)))] for name, k in keys.items()}


def lagrangian_starts(
    inst: Instance, lam: Any, *, place: np.ndarray | None = None,
) -> tuple[np.ndarray, str]:
    """The best start array over :data:`ORDERS` and both decodings, and what gave it.

    On an instance with nodes its placement is written into ``place`` when given.
    """
    jobs = job_arrays(inst)
    profit, cheapest = reduced_profits(inst, lam)
    relaxed = jobs.copy()
    relaxed[2] = np.where(profit > 0, cheapest, jobs[2])
    empty = new_profile(inst, "curve")
    best: tuple[float, np.ndarray, np.ndarray | None, str] | None = None
    for name, order in lagrangian_orders(inst, lam).items():
        for relax in (False, True):  # from the release; the relaxed solution repaired
            cand_place = None if place is None else new_place(inst)
            prof = empty.copy()
            start = serial_starts(prof, order, relaxed if relax else jobs, None, cand_place)
            if relax:
                serial_starts(prof, order[start[order] < 0], jobs, start, cand_place)
            value = start_value(inst, start)
            if best is None or value > best[0]:
                best = (value, start, cand_place, f"{name}, repaired" if relax else name)
    assert best is not None
    if place is not None and best[2] is not None:
        place[:] = best[2]
    return best[1], best[3]


def lagrangian_schedule(inst: Instance, lam: Any) -> Result:
    """The Lagrangian heuristic's schedule at ``lam``, checked by the checker.

    Parameters
    ----------
    inst
        The instance.
    lam
        One non-negative price per slot (length ``horizon``).

    Returns
    -------
    instances.Result
        Method ``lagrangian-heuristic``, curve reservation.

    Raises
    ------
    ValueError
        If ``lam`` has the wrong length, or an entry is negative or not finite.
    """
    t0 = time.perf_counter()
    lam = check_multipliers(inst, lam)
    place = new_place(inst) if inst.has_nodes else None
    start, order = lagrangian_starts(inst, lam, place=place)
    return finish(inst, "lagrangian-heuristic", start, reservation="curve", started_at=t0,
                  message=f"order: {order}", place=place)
