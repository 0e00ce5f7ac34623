"""What a schedule is worth (section 15 of the specification), written once.

An instance is judged by ``value`` (maximise ``V = sum w_j a_j p_j h`` over the jobs
run) or by ``flow`` (minimise ``F = sum_j w_j (C_j - r_j) h`` over every job, a job
not run censored as if it started at the horizon ``T``). Every method maximises one
quantity, the *worth*: ``offset + sum over jobs run of (base_j - slope_j * S_j)``.

- ``value``: ``base = v_j``, ``slope = 0``, ``offset = 0``; worth is ``V``.
- ``flow``: ``base = w_j T h``, ``slope = w_j h``,
  ``offset = -sum_j w_j (T + p_j - r_j) h``; worth is ``-F``.

A job is worth ``base_j - slope_j t > 0`` more started at ``t < T`` than not run, so
a method that maximises worth under ``value`` does the same under ``flow``. What is
reported is the objective's own figure, ``sense * worth`` (``V`` or ``F``); a bound on
worth from above is reported as ``sense * bound`` (an upper bound on ``V``, a lower
bound on ``F``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

import numpy as np

if TYPE_CHECKING:
    from .model import Instance

__all__ = [
    "OBJECTIVES", "Objective", "bound_is_valid", "gain", "gap", "reported", "sense",
    "start_worth", "worth_terms",
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
    base = w * float(inst.horizon) * h
    slope = w * h
    cens = w * (inst.horizon + inst.durations - inst.releases).astype(np.float64) * h
    return base, slope.astype(np.float64), -math.fsum(cens.tolist())


def start_worth(inst: Instance, start: np.ndarray) -> float:
    """Worth of a start array (``-1``: not run); larger is better under both objectives."""
    run = np.asarray(start) >= 0
    base, slope = inst.worth_base, inst.worth_slope
    if not run.any():
        return inst.worth_offset
    gain = base[run] - slope[run] * np.asarray(start)[run]
    return inst.worth_offset + math.fsum(gain.tolist())


def reported(objective: str, worth: float) -> float:
    """The objective's own figure (``V`` or ``F``) of a worth, or of a bound on worth."""
    return sense(objective) * worth if worth != 0 else 0.0


def gap(objective: str, value: float, bound: float | None) -> float | None:
    """Relative gap to the bound: ``(bound - V) / bound`` under ``value``,
    ``(F - bound) / F`` under ``flow``; 0 when both are 0, ``None`` without a bound.
    """
    if bound is None:
        return None
    if objective == "flow":
        num, den = value - bound, value
    else:
        num, den = bound - value, bound
    if den == 0:
        return 0.0 if num == 0 else math.inf
    return max(0.0, num / abs(den))


def gain(objective: str, baseline: float, value: float) -> float:
    """Relative improvement over a baseline (FIFO): ``(V - V0) / V0`` or ``(F0 - F) / F0``."""
    diff = value - baseline if objective != "flow" else baseline - value
    if baseline == 0:
        return 0.0 if diff == 0 else math.copysign(math.inf, diff)
    return diff / abs(baseline)


def bound_is_valid(objective: str, value: float, bound: float, tol: float) -> bool:
    """Whether ``bound`` is on the right side of a feasible ``value`` (within ``tol``)."""
    if objective == "flow":
        return bound <= value + tol
    return bound >= value - tol
