"""What a schedule is worth (section 15 of the specification), written once.

An instance is judged by ``value`` (maximise ``V = sum w_j a_j p_j h`` over the jobs
run) or by ``flow`` (minimise ``F = sum_j w_j (C_j - r_j) h`` over every job, a job
not run censored as if it started at the horizon ``T``). Every method maximises one
quantity, the *worth* ``W = sum over jobs run of (base_j - slope_j * S_j)``:

- ``value``: ``base = v_j``, ``slope = 0``: ``W = V``.
- ``flow``: ``base = w_j T h``, ``slope = w_j h``: ``W = C - F`` with
  ``C = sum_j w_j (T + p_j - r_j) h``, the flow of running nothing (``-offset``).

A job started at ``t < T`` is worth ``base_j - slope_j t > 0``, so a method that
maximises ``V`` maximises ``W`` unchanged, and every worth and bound on it is ``>= 0``.
What is reported is the objective's own figure (:func:`report`): ``V``, or ``C - W``;
an upper bound on ``W`` is reported the same way (a lower bound on ``F``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

import numpy as np

from .rounding import rounded, tolerance

if TYPE_CHECKING:
    from .checker import Metrics
    from .model import Instance

__all__ = [
    "CENSOR_KEY", "OBJECTIVES", "Objective", "bound_is_valid", "delay_price", "gain", "gap",
    "integral_bound", "least_flow", "report", "report_bound", "sense", "start_worth",
    "window_meta", "worth_terms",
]

Objective = Literal["value", "flow"]
OBJECTIVES: tuple[str, ...] = ("value", "flow")


def sense(objective: str) -> int:
    """``+1`` for a maximised objective (``value``), ``-1`` for a minimised one (``flow``)."""
    if objective == "value":
        return 1
    if objective == "flow":
        return -1
    raise ValueError(f"objective: must be one of {', '.join(OBJECTIVES)}, got {objective!r}")


def worth_terms(inst: Instance) -> tuple[np.ndarray, np.ndarray, float]:
    """``(base, slope, offset)``: a job started at ``t`` adds ``base - slope * t`` to the
    worth ``offset`` of running nothing (new float64 arrays, one entry per job).
    """
    h = inst.slot_hours
    if inst.objective == "value":
        return (np.array(inst.job_values, dtype=np.float64),
                np.zeros(inst.num_jobs, dtype=np.float64), 0.0)
    w = inst.priorities
    base = w * float(inst.meta.get(CENSOR_KEY, inst.horizon)) * h
    slope = w * h
    cens = w * (inst.horizon + inst.durations - inst.releases).astype(np.float64) * h
    return base, slope.astype(np.float64), -math.fsum(cens.tolist())


CENSOR_KEY = "flow_censored_at"
"""``meta`` key of a sub-instance cut from slot ``a`` of a ``flow`` instance: the slot, in
the sub-instance's time, where its parent censors (``T - a``), so that a job's worth in
the window is its worth in the whole (:func:`window_meta`)."""


def window_meta(inst: Instance, a: int) -> dict[str, object]:
    """The ``meta`` of a window cut from slot ``a`` of ``inst`` (empty under ``value``)."""
    if inst.objective == "value":
        return {}
    return {CENSOR_KEY: int(inst.meta.get(CENSOR_KEY, inst.horizon)) - int(a)}


def start_worth(inst: Instance, start: np.ndarray) -> float:
    """Worth ``W`` of a start array (``-1``: not run); larger is better under both objectives."""
    start = np.asarray(start)
    run = start >= 0
    if inst.objective == "value":  # the searches' hot path: one masked sum, as ever
        return float(inst.job_values[run].sum())
    return float((inst.worth_base[run] - inst.worth_slope[run] * start[run]).sum())


def report_bound(inst: Instance, worth_bound: float) -> float:
    """:func:`report` of an upper bound on the worth, rounded outward: an upper bound on
    ``V`` as given, a lower bound on ``F`` never above the exact ``C - worth_bound``
    (``C``'s products and sum raised by a margin of ``4 n u C``, then rounded down).
    """
    if inst.objective == "value":
        return worth_bound
    c = -inst.worth_offset
    margin = 4.0 * (inst.num_jobs + 2) * 2.0 ** -53 * abs(c)
    return math.nextafter(c - worth_bound - margin, -math.inf)


def integral_bound(inst: Instance, worth_bound: float) -> float:
    """An upper bound on the worth rounded down to an integer where every worth is one.

    Where every job's ``base`` and ``slope`` are integers, every schedule's worth is an
    integer, so no schedule is worth more than ``floor(worth_bound)``. The bound is never
    raised, and one within its :func:`~instances.rounding.tolerance` below an integer (a
    solver's rounding error) is kept as it is, as is any bound of an instance with
    fractional worths or a bound that is not finite.
    """
    if not math.isfinite(worth_bound):
        return worth_bound
    terms = np.concatenate([inst.worth_base, inst.worth_slope])
    if not np.array_equal(terms, np.round(terms)):
        return worth_bound
    whole = math.floor(worth_bound)
    if whole + 1 - worth_bound <= tolerance(worth_bound):
        return worth_bound  # an integer less a rounding error
    return float(whole)


def least_flow(inst: Instance) -> float:
    """``sum_j w_j p_j h``: no schedule has a smaller ``F`` (every job waits 0 at best)."""
    return math.fsum((inst.priorities * inst.durations * inst.slot_hours).tolist())


def delay_price(inst: Instance, amounts: np.ndarray) -> np.ndarray:
    """``slope_j / a_j`` per job: a start's delay in the units of a Lagrangian window price,
    so that ``base_j - a_j (window(s) + delay_j s)`` is the job's reduced profit at ``s``
    (all 0 under ``value``: the window alone).
    """
    return inst.worth_slope / np.maximum(np.asarray(amounts, dtype=np.float64), 1e-300)


def report(inst: Instance, worth: float) -> float:
    """The objective's own figure of a worth or of a bound on it: ``V``, or ``F = C - W``
    (its own inverse: the worth of a figure).
    """
    if inst.objective == "value":
        return worth
    return -inst.worth_offset - worth + 0.0  # + 0.0: no -0.0


def gap(value: float, bound: float | None, objective: str = "value") -> float | None:
    """Relative gap to the bound: ``(bound - V) / bound`` under ``value``, ``(F - bound) / F``
    under ``flow``; ``None`` without a bound, 0 within the :func:`~instances.rounding.tolerance`
    of it, otherwise :func:`~instances.rounding.rounded`.
    """
    if bound is None or (isinstance(bound, float) and math.isnan(bound)):
        return None
    over, scale = (value - bound, value) if sense(objective) < 0 else (bound - value, bound)
    if over <= tolerance(scale, floor=0.0):
        return 0.0
    if scale <= 0:
        return math.inf
    return rounded(over / scale)


def gain(method: Metrics, baseline: Metrics) -> dict[str, float | None]:
    """Gains of a method over a baseline (normally FIFO): ``utilization_pp`` (percentage
    points), ``value_pct`` (percent, the objective's: ``(V - V0) / V0`` or
    ``(F0 - F) / F0``) and ``total_value_pct``; ``None`` where the baseline's figure is 0.
    """

    def pct(new: float, old: float, sign: int = 1) -> float | None:
        return None if old == 0 else 100.0 * sign * (new - old) / old

    return {
        "utilization_pp": 100.0 * (method.utilization - baseline.utilization),
        "value_pct": pct(method.value, baseline.value, sense(method.objective)),
        "total_value_pct": pct(method.total_value, baseline.total_value),
    }


def bound_is_valid(objective: str, value: float, bound: float, tol: float) -> bool:
    """Whether ``bound`` is on the right side of a feasible ``value`` (within ``tol``)."""
    return sense(objective) * (bound - value) >= -tol
