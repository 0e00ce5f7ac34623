"""Warm starts as :func:`milp.solve` takes them: a Schedule, a Result or a start array, checked.

On an instance with nodes, a schedule without a valid placement that is
feasible on the flat pool is placed on the nodes
(:func:`instances.capacity.place_starts`, filling in what it can); not on
model version 3, whose placements that greedy does not know.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from instances import InfeasibleScheduleError, Instance, Result, Schedule, evaluate
from instances.capacity import place_starts
from instances.resources import shares_gpus, uses_resources

from .gpus import gpu_of_schedule

__all__ = ["WarmStart", "warm_start_arrays"]

WarmStart = (tuple[str, np.ndarray, np.ndarray | None]
             | tuple[str, np.ndarray, np.ndarray | None, np.ndarray])
"""A labelled solution: ``(label, start array, placement array or None)``, and on model
version 3 with shared jobs each shared job's GPU on its node (:data:`milp.backend.Solution`)."""


def warm_start_arrays(inst: Instance, warm_start: Any) -> WarmStart | None:
    """The arrays of a warm start, checked by :func:`instances.evaluate`, and a label.

    Raises
    ------
    ValueError
        For something that is not a warm start (``'auto'`` is resolved
        above the MILP), or an infeasible schedule.
    """
    if warm_start is None:
        return None
    if isinstance(warm_start, str):
        if warm_start == "auto":
            raise ValueError(
                "warm_start: 'auto' is resolved above the MILP, by matheuristics.solve_milp "
                "(what gpusched.solve(inst, 'milp') runs); milp.solve takes None, a Schedule, "
                "a Result or a start array"
            )
        raise ValueError(
            f"warm_start: must be None, a Schedule, a Result or a start array, got {warm_start!r}"
        )
    if isinstance(warm_start, Result):
        schedule, source = warm_start.schedule, warm_start.method
    elif isinstance(warm_start, Schedule):
        schedule, source = warm_start, "given schedule"
    elif isinstance(warm_start, np.ndarray) and warm_start.dtype.kind in "iu":
        schedule, source = Schedule.from_array(inst, warm_start), "given start array"
    else:
        raise ValueError(
            "warm_start: must be None, a Schedule, a Result or an integer start array, got "
            f"{type(warm_start).__name__}"
        )
    try:
        evaluate(inst, schedule)
    except InfeasibleScheduleError as e:
        if not inst.has_nodes or uses_resources(inst):
            raise ValueError(f"warm_start: the schedule is infeasible: {e}") from None
        try:  # on the flat pool it may hold: then it is placed on the nodes
            evaluate(inst.replace(nodes=None), Schedule(schedule.instance, schedule.starts))
        except InfeasibleScheduleError:
            raise ValueError(f"warm_start: the schedule is infeasible: {e}") from None
        start, placed = place_starts(inst, schedule.to_array(inst), fill=True)
        return f"{source}, placed on the nodes", start, placed
    place = schedule.to_placement_array(inst) if inst.has_nodes else None
    if shares_gpus(inst):
        return source, schedule.to_array(inst), place, gpu_of_schedule(inst, schedule)
    return source, schedule.to_array(inst), place
