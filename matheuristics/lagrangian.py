"""``lagrangian``: the Lagrangian heuristic at the multipliers of :func:`milp.bound`.

:func:`heuristics.lagrangian.lagrangian_schedule` turns slot prices into a
schedule but does not find them (heuristics do not import the MILP); this
method finds them with :func:`milp.bound` (the Volume search, the
heuristic's values its step target), decodes the schedule at the final
multipliers, keeps the best one the search saw if better, and returns it
with the bound those multipliers certify, so one call gives a schedule and
its certified gap.

On an instance with nodes the multipliers are those of the flat relaxation
(the pool row only), still a valid certificate: every schedule on the nodes
is a schedule of the flat pool, so ``L(lam)`` bounds it too (the
specification's section 7). The schedule is placed on the nodes
(:func:`lagrangian_arrays`): on one node it is the flat one.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

import milp
from heuristics import finish, start_value
from heuristics.lagrangian import lagrangian_orders, lagrangian_starts
from heuristics.listsched import list_starts
from heuristics.placement import PLACEMENTS, new_place
from instances import Instance, Result
from instances.capacity import place_starts  # the one placement greedy
from instances.objective import report, report_bound

__all__ = ["lagrangian", "lagrangian_arrays"]


def lagrangian_arrays(inst: Instance, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray | None, str]:
    """The Lagrangian heuristic's best schedule at ``lam``: ``(start, place, what gave it)``.

    The flat pool's schedule, :func:`heuristics.lagrangian.lagrangian_starts`
    (``place`` ``None`` on a flat instance). On nodes the best (the first on
    ties) of that schedule placed on the nodes (the jobs that find no room
    left out: :func:`instances.capacity.place_starts`) and each order of
    :func:`~heuristics.lagrangian.lagrangian_orders` decoded on the nodes by
    each placement rule. On one node the flat schedule is placed whole, so the
    value is the flat one. On model version 3 the orders decoded alone (with
    GPU indices; the placement greedy has none).
    """
    start, label = lagrangian_starts(inst, lam)
    if not inst.has_nodes:
        return start, None, label
    if inst.jobs_use_resources:  # version 3: the placement greedy gives no GPU indices
        best = (0.0, np.full(inst.num_jobs, -1, dtype=np.int64), new_place(inst), "nothing run")
    else:
        start, place = place_starts(inst, start, fill=False)
        best = (start_value(inst, start), start, place, f"{label}, placed")
    for name, order in lagrangian_orders(inst, lam).items():
        for rule in PLACEMENTS:
            place = new_place(inst)
            start = list_starts(inst, order, "curve", placement=rule, place=place)
            value = start_value(inst, start)
            if value > best[0]:
                best = (value, start, place, f"{name}, placement {rule}")
    return best[1], best[2], best[3]


def lagrangian(inst: Instance, *, time_limit: float | None = 10.0, lower: float | None = None,
               bound: milp.Bound | None = None) -> Result:
    """The Lagrangian heuristic's schedule, with the certified bound of its multipliers.

    Parameters
    ----------
    inst
        The instance (on nodes too).
    time_limit
        Seconds for the multiplier search (``None``: until it converges).
    lower
        A known feasible value, the search's step target (default: the
        heuristic's own values during the search).
    bound
        Multipliers already found for ``inst`` (a :class:`milp.Bound`): no
        search then.

    Returns
    -------
    instances.Result
        Method ``lagrangian``, checked by :func:`instances.evaluate` once;
        ``upper_bound`` is the bound's value (``bound_method`` ``lagrangian``).

    Raises
    ------
    ValueError
        For a bad argument.
    """
    t0 = time.perf_counter()
    seen: list[tuple[float, np.ndarray, np.ndarray | None, str]] = []

    def primal(lam: np.ndarray) -> float:
        """The heuristic at the search's multipliers: the step target, and a candidate."""
        start, place, order = lagrangian_arrays(inst, lam)
        value = float(start_value(inst, start))
        if not seen or value > seen[0][0]:
            seen[:] = [(value, start, place, f"{order}, during the search")]
        return value

    b = bound if bound is not None else milp.bound(inst, "lagrangian", time_limit=time_limit,
                                                   lower=lower, primal=primal)
    assert b.multipliers is not None  # the Volume search always has some
    start, place, order = lagrangian_arrays(inst, b.multipliers)
    if seen and seen[0][0] > start_value(inst, start):
        _, start, place, order = seen[0]
    res = finish(
        inst, "lagrangian", start, reservation="curve", started_at=t0,
        params={"time_limit": time_limit}, place=place,
        message=(f"order: {order}; multipliers from {b.method} ({b.iterations} iterations, "
                 f"{b.runtime_s:.2f} s, {b.message})"),
    )
    worth = report(inst, res.value)
    if b.value < worth - 1e-9 * abs(worth):  # a bound below a checked worth: a bug
        raise RuntimeError(f"bound {b.value!r} below the checked worth {worth!r}")
    return dataclasses.replace(res, upper_bound=report_bound(inst, max(b.value, worth)),
                               bound_method="lagrangian", runtime_s=time.perf_counter() - t0)
