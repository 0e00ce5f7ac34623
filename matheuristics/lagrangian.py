"""``lagrangian``: the Lagrangian heuristic at the multipliers of :func:`milp.bound`.

:func:`heuristics.lagrangian.lagrangian_schedule` turns slot prices into a
schedule but does not find them (heuristics do not import the MILP); this
method finds them with :func:`milp.bound` (the Volume search, the
heuristic's values its step target), decodes the schedule at the final
multipliers, keeps the best one the search saw if better, and returns it
with the bound those multipliers certify, so one call gives a schedule and
its certified gap.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

import milp
from heuristics import finish, start_value
from heuristics.lagrangian import lagrangian_starts
from instances import Instance, Result

__all__ = ["lagrangian"]


def lagrangian(inst: Instance, *, time_limit: float | None = 10.0, lower: float | None = None,
               bound: milp.Bound | None = None) -> Result:
    """The Lagrangian heuristic's schedule, with the certified bound of its multipliers.

    Parameters
    ----------
    inst
        The instance (without nodes).
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
        For an instance with nodes, or a bad argument.
    """
    t0 = time.perf_counter()
    if inst.nodes is not None:
        raise ValueError(f"inst: the lagrangian method places no nodes ({inst.name!r} has nodes)")
    seen: list[tuple[float, np.ndarray, str]] = []

    def primal(lam: np.ndarray) -> float:
        """The heuristic at the search's multipliers: the step target, and a candidate."""
        start, order = lagrangian_starts(inst, lam)
        value = float(start_value(inst, start))
        if not seen or value > seen[0][0]:
            seen[:] = [(value, start, f"{order}, during the search")]
        return value

    b = bound if bound is not None else milp.bound(inst, "lagrangian", time_limit=time_limit,
                                                   lower=lower, primal=primal)
    assert b.multipliers is not None  # the Volume search always has some
    start, order = lagrangian_starts(inst, b.multipliers)
    if seen and seen[0][0] > start_value(inst, start):
        _, start, order = seen[0]
    res = finish(
        inst, "lagrangian", start, reservation="curve", started_at=t0,
        params={"time_limit": time_limit},
        message=(f"order: {order}; multipliers from {b.method} ({b.iterations} iterations, "
                 f"{b.runtime_s:.2f} s, {b.message})"),
    )
    if b.value < res.value - 1e-9 * abs(res.value):  # a bound below a checked value: a bug
        raise RuntimeError(f"bound {b.value!r} below the checked value {res.value!r}")
    return dataclasses.replace(res, upper_bound=max(b.value, res.value),
                               bound_method="lagrangian", runtime_s=time.perf_counter() - t0)
