"""A heuristic's start array (and placement) turned into a checked :class:`~instances.Result`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from instances import Instance, Result, Schedule, Status, evaluate
from instances.compile_clock import own_seconds
from instances.objective import start_worth

from .shares import schedule_of

__all__ = ["finish", "start_value"]


def start_value(inst: Instance, start: np.ndarray) -> float:
    """Worth of a start array (``-1``: not run), to compare candidates: ``V`` under
    ``value``, ``C - F`` under ``flow`` (:func:`instances.objective.start_worth`; larger
    is better under both).

    Only for choosing between candidates inside a method: the value a method
    reports is always the checker's (:func:`finish`).
    """
    return start_worth(inst, start)


def finish(
    inst: Instance,
    method: str,
    start: np.ndarray,
    *,
    reservation: str,
    started_at: float,
    params: Mapping[str, Any] | None = None,
    message: str = "",
    place: np.ndarray | None = None,
) -> Result:
    """Check a heuristic's start array with the independent checker and wrap it.

    Parameters
    ----------
    start
        Per-job start slot, ``-1`` for a job not run.
    place
        On an instance with nodes, the placement array (see
        :func:`heuristics.placement.new_place`); required there, ignored on a
        flat instance (whose schedule carries no placement).
    reservation
        Reservation the method used; the checker enforces it, so a ``peak``
        method's schedule must respect the peak reservation too.
    started_at
        ``time.perf_counter()`` at the method's start; the runtime reported is
        the method's own, less any kernel compiling or cache loading
        (:func:`instances.compile_clock.own_seconds`).

    Raises
    ------
    instances.InfeasibleScheduleError
        If the heuristic produced an infeasible schedule (a bug).
    ValueError
        If the instance has nodes and ``place`` is missing.
    """
    if inst.has_nodes and place is None:
        raise ValueError(f"place: required for instance {inst.name!r}, which has nodes")
    if inst.jobs_use_resources:  # model version 3: the placement lists GPU indices
        assert place is not None
        schedule = schedule_of(inst, start, place)
    else:
        schedule = Schedule.from_array(inst, start, place if inst.has_nodes else None)
    metrics = evaluate(inst, schedule, reservation, enforce_reservation=True)  # type: ignore[arg-type]
    return Result(
        method=method,
        status=Status.FEASIBLE,
        schedule=schedule,
        value=metrics.value,
        upper_bound=None,
        runtime_s=own_seconds(started_at),
        metrics=metrics,
        reservation=reservation,
        params=dict(params or {}),
        message=message,
    )
