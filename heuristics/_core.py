"""Shared machinery of the heuristics: the capacity profile, earliest fit, results.

The hot loop of every constructive heuristic is "find the earliest slot from
which ``g`` GPUs stay free for ``p`` slots". :func:`earliest_fit` answers it
with array operations over the window (a cumulative count of the slots that
have room), never a Python loop over slots. ``tests/reference.py`` keeps a
plain per-slot version that the tests hold it to.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from instances import Instance, Result, Schedule, Status, evaluate

__all__ = ["earliest_fit", "occupy", "finish"]


def earliest_fit(free: np.ndarray, g: int, p: int, lo: int, hi: int) -> int:
    """Earliest start ``s`` in ``[lo, hi - p]`` with ``free[s:s+p] >= g``, or ``-1``.

    Parameters
    ----------
    free
        Free GPUs per slot.
    g, p
        GPUs and duration (slots) of the block.
    lo, hi
        The block must start at or after ``lo`` and end at or before ``hi``.
    """
    n = hi - lo
    if n < p or lo < 0:
        return -1
    ok = free[lo:hi] >= g
    if p == 1:
        k = int(np.argmax(ok))
        return lo + k if ok[k] else -1
    c = np.empty(n + 1, dtype=np.int64)
    c[0] = 0
    np.cumsum(ok, out=c[1:])
    full = (c[p:] - c[:-p]) == p
    k = int(np.argmax(full))
    return lo + k if full[k] else -1


def occupy(free: np.ndarray, s: int, g: int, p: int) -> None:
    """Take ``g`` GPUs in slots ``s .. s+p-1`` of the profile, in place."""
    free[s : s + p] -= g


def finish(
    inst: Instance,
    method: str,
    start: np.ndarray,
    *,
    reservation: str,
    started_at: float,
    params: Mapping[str, Any] | None = None,
    message: str = "",
) -> Result:
    """Check a heuristic's start array with the independent checker and wrap it.

    Parameters
    ----------
    start
        Per-job start slot, ``-1`` for a job not run.
    reservation
        Reservation the method used; the checker enforces it, so a ``peak``
        method's schedule must respect the peak reservation too.
    started_at
        ``time.perf_counter()`` at the method's start.

    Raises
    ------
    instances.InfeasibleScheduleError
        If the heuristic produced an infeasible schedule (a bug).
    """
    schedule = Schedule.from_array(inst, start)
    metrics = evaluate(inst, schedule, reservation, enforce_reservation=True)  # type: ignore[arg-type]
    return Result(
        method=method,
        status=Status.FEASIBLE,
        schedule=schedule,
        value=metrics.value,
        upper_bound=None,
        runtime_s=time.perf_counter() - started_at,
        metrics=metrics,
        reservation=reservation,
        params=dict(params or {}),
        message=message,
    )
