"""Held list scheduling: the parallel scheme with releases held back to Lagrangian starts.

Under the ``flow`` objective a work-conserving schedule starts a wide or long job
as soon as it fits, and a burst of small jobs released just after it then waits
for its GPUs. The optimum holds such a job back. The time-indexed LP says which
ones: at slot prices ``lam`` (from :func:`milp.bound`, or any other source)
each job has a cheapest start ``s*_j`` (:func:`instances.lagrangian.reduced_profits`),
which is later than its release when the capacity it would take is dear.

:func:`held_starts` runs the parallel (time-stepping) scheme of
:func:`heuristics.listsched.parallel_starts` on the instance with each release
moved to ``max(r_j, s*_j - back)``, jobs in the order of a key, then re-decodes
the result with the serial decoder in the order of its starts on the real
instance: every job then starts no later than it did (a left shift), so the
idle time the holding left is filled where it can be. The schedule is feasible
for the real instance (a later release only restricts). The multipliers are a
parameter: this module does not compute them (heuristics do not import the MILP).
The measurements behind it are in ``docs/flow.md``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from instances import Instance
from instances.lagrangian import check_multipliers, reduced_profits

from .listsched import list_starts, parallel_starts
from .results import start_value
from .rules import sort_keys

__all__ = ["HELD_VARIANTS", "held_instance", "held_orders", "held_starts", "left_shift"]

HELD_VARIANTS: tuple[tuple[str, int], ...] = (("area", 0), ("sqrt-area", 0), ("area", 2))
"""The ``(order, back)`` pairs :func:`held_starts` tries: jobs by GPU-slots
``g_j p_j`` or by ``sqrt(g_j) p_j`` per unit of priority, releases held to the
cheapest start (``back = 0``) or two slots before it."""


def held_orders(inst: Instance) -> dict[str, np.ndarray]:
    """Job orders by ``g_j p_j / w_j`` (``area``) and ``sqrt(g_j) p_j / w_j`` (``sqrt-area``),
    ascending, ties by ``p_j`` then the job index."""
    g = inst.gpus.astype(np.float64)
    p = inst.durations.astype(np.float64)
    w = inst.priorities
    idx = np.arange(inst.num_jobs)
    return {"area": sort_keys((g * p / w, p), idx),
            "sqrt-area": sort_keys((np.sqrt(g) * p / w, p), idx)}


def held_instance(inst: Instance, release: np.ndarray) -> Instance:
    """``inst`` with each job's release replaced by ``release`` (clipped to
    ``[r_j, D_j - p_j]``, so that every start it allows is one the instance allows)."""
    rel = np.clip(np.asarray(release, dtype=np.int64), inst.releases,
                  np.maximum(inst.releases, inst.deadlines - inst.durations))
    jobs = tuple(job if int(x) == job.release else dataclasses.replace(job, release=int(x))
                 for job, x in zip(inst.jobs, rel.tolist()))
    return inst.replace(jobs=jobs)


def left_shift(inst: Instance, start: np.ndarray) -> np.ndarray:
    """The serial decoder's schedule for the jobs of ``start`` in the order of their starts
    (ties by duration): every job starts no later than in ``start`` (a feasible ``curve``
    schedule), and the jobs not run in it are tried last."""
    start = np.asarray(start, dtype=np.int64)
    key = np.where(start >= 0, start, inst.horizon)
    return list_starts(inst, np.lexsort((np.arange(inst.num_jobs), inst.durations, key)))


def held_starts(
    inst: Instance, lam: Any, *, variants: tuple[tuple[str, int], ...] = HELD_VARIANTS,
) -> tuple[np.ndarray, str]:
    """The best start array over ``variants`` of the held scheme at prices ``lam``, and its name.

    Parameters
    ----------
    inst
        A flat instance (on nodes the parallel scheme places first fit).
    lam
        Slot prices, one per slot, finite and ``>= 0``
        (:func:`instances.lagrangian.check_multipliers`).
    variants
        ``(order, back)`` pairs: an order of :func:`held_orders` and the slots the
        releases are held short of the cheapest start.

    Returns
    -------
    tuple
        The start array (``-1``: not run) of the best variant, by the instance's
        objective, and ``"held order=... back=..."``.
    """
    lam = check_multipliers(inst, lam)
    profit, cheapest = reduced_profits(inst, lam)
    target = np.where(np.isfinite(profit), cheapest, inst.releases)
    orders = held_orders(inst)
    best: tuple[float, np.ndarray, str] | None = None
    for name, back in variants:
        held = held_instance(inst, target - int(back))
        start = left_shift(inst, parallel_starts(held, orders[name]))
        value = start_value(inst, start)
        if best is None or value > best[0]:
            best = (value, start, f"held order={name} back={back}")
    if best is None:
        raise ValueError("variants: must name at least one (order, back) pair")
    return best[1], best[2]
