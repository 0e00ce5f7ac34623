"""What a simulation reports (:class:`SimResult`), and the clairvoyant bound it is held to:
the exact MILP on the instance with the actual demand, which no online policy beats.

Both are in the instance's objective (section 15 of the specification): under
``value`` the realized ``V`` and an upper bound on it, under ``flow`` the realized
weighted flow time ``F`` and a lower bound on it (:mod:`instances.objective`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

import gpusched
from instances import Instance, Metrics, Scenario, Schedule, actual_instance
from instances.objective import bound_is_valid, sense

__all__ = ["ClairvoyantBound", "SimResult", "clairvoyant_bound"]

_TOL = 1e-6


@dataclass(frozen=True)
class ClairvoyantBound:
    """The exact MILP on the instance with the actual demand: what no online policy beats.

    ``bound`` is its proven bound in the instance's ``objective`` (upper on ``V``,
    lower on ``F``: :attr:`instances.Result.bound`), ``value`` its best schedule's
    figure, ``status`` ``optimal`` or ``time_limit``.
    """

    instance: str
    scenario: Scenario
    bound: float
    value: float
    status: str
    runtime_s: float
    time_limit: float
    objective: str = "value"

    @property
    def upper_bound(self) -> float:
        """:attr:`bound` under its name before the flow objective (a lower bound under ``flow``)."""
        return self.bound


def clairvoyant_bound(
    inst: Instance, scenario: Scenario, *, time_limit: float = 60.0, **milp_params: Any
) -> ClairvoyantBound:
    """Solve ``gpusched.solve(actual_instance, "milp")`` and keep its bound (computed once,
    it can serve several :func:`simulate` calls as ``clairvoyant=``).

    Raises
    ------
    ValueError
        If the scenario does not fit the instance.
    RuntimeError
        If the MILP ends with status ``error`` or without a bound.
    """
    actual = actual_instance(inst, scenario)
    res = gpusched.solve(actual, "milp", time_limit=time_limit, **milp_params)
    if str(res.status) == "error" or res.bound is None:
        raise RuntimeError(f"clairvoyant bound: the MILP failed ({res.status}: {res.message})")
    return ClairvoyantBound(
        instance=inst.name, scenario=scenario, bound=float(res.bound),
        value=float(res.value), status=str(res.status), runtime_s=res.runtime_s,
        time_limit=float(time_limit), objective=res.objective,
    )


@dataclass(frozen=True)
class SimResult:
    """What :func:`simulate` reports.

    Attributes
    ----------
    realized_value, planned_value
        The instance's objective (``value`` or ``flow``) of the realized schedule, the
        jobs that completed (the checker's ``V``, or ``F`` with every other job
        censored), and of the first plan on the scaled forecast (the offline figure
        at ``H = 0``).
    preemptions, lost_gpu_slots, unserved_gpu_slots
        Preemption events, GPU-slots of preempted runs (in GPU amounts ``a_j``: a
        shared job's fraction on model version 3), inference GPU-slots left unserved
        (``preempt=False`` only).
    clairvoyant_bound, clairvoyant_value, bound_status
        The bound's MILP on the actual demand, in the objective (an upper bound on
        ``V``, a lower bound on ``F``); ``None`` when not computed.
    bound_applies
        Whether the realized schedule is feasible against the whole actual demand
        (always with ``preempt=True``, else when nothing went unserved); then the
        realized figure on the wrong side of the bound is refused.
    objective, mean_jct_hours, jobs_censored
        The instance's objective; the checker's mean job completion time over every
        job (a job not completed censored at the horizon) and the jobs not completed.
    jobs_preempted, missed_starts
        Distinct jobs preempted; planned starts that did not fit.
    runtime_s, plan_runtime_s, bound_runtime_s
        Seconds of the simulation (without the bound), of its plans, of the bound.
    schedule, metrics
        The completed runs and :func:`instances.evaluate` of them on the actual
        demand (the demand served, with ``preempt=False``).
    timeline, events
        Per-slot arrays (``forecast``, ``actual``, ``served``, ``unserved``,
        ``batch``, ``preempted``, ``started``); ``(slot, job)`` of each preemption.

    Raises
    ------
    ValueError
        When the bound applies and the realized value is above it (a bug).
    """

    instance: str
    method: str
    method_params: Mapping[str, Any]
    replan: int | None
    headroom: float
    preempt: bool
    scenario_meta: Mapping[str, Any]
    realized_value: float
    planned_value: float
    preemptions: int
    lost_gpu_slots: float
    unserved_gpu_slots: int
    utilization: float
    clairvoyant_bound: float | None
    clairvoyant_value: float | None
    bound_status: str | None
    bound_applies: bool
    jobs_completed: int
    jobs_preempted: int
    missed_starts: int
    plans: int
    plan_runtime_s: float
    runtime_s: float
    bound_runtime_s: float
    schedule: Schedule
    metrics: Metrics
    timeline: Mapping[str, np.ndarray] = field(default_factory=dict, compare=False, repr=False)
    events: tuple[tuple[int, str], ...] = field(default=(), compare=False, repr=False)
    objective: str = "value"
    mean_jct_hours: float = math.nan
    jobs_censored: int = 0

    def __post_init__(self) -> None:
        sense(self.objective)  # a ValueError naming the field on anything else
        ub = self.clairvoyant_bound
        if (
            ub is not None
            and self.bound_applies
            and not bound_is_valid(self.objective, self.realized_value, ub,
                                   _TOL * max(1.0, abs(ub)))
        ):
            side = "above" if sense(self.objective) < 0 else "below"
            raise ValueError(
                f"clairvoyant_bound: {ub} is {side} the realized value {self.realized_value} "
                f"of a schedule feasible against the actual demand ({self.method} on "
                f"{self.instance!r})"
            )
        object.__setattr__(self, "method_params", MappingProxyType(dict(self.method_params)))
        object.__setattr__(self, "scenario_meta", MappingProxyType(dict(self.scenario_meta)))
        object.__setattr__(self, "timeline", MappingProxyType(dict(self.timeline)))

    @property
    def price_of_uncertainty(self) -> float | None:
        """What not knowing the future cost, in the objective's units: ``clairvoyant_bound -
        realized_value`` under ``value``, ``realized_value - clairvoyant_bound`` under
        ``flow`` (``None`` without the bound).
        """
        if self.clairvoyant_bound is None:
            return None
        return sense(self.objective) * (self.clairvoyant_bound - self.realized_value)

    @property
    def gap_to_bound(self) -> float | None:
        """``(bound - V) / bound`` under ``value``, ``(F - bound) / F`` under ``flow`` (0 when
        both are 0; ``None`` without the bound).
        """
        b, v = self.clairvoyant_bound, self.realized_value
        if b is None:
            return None
        over, scale = (b - v, b) if sense(self.objective) > 0 else (v - b, v)
        if scale <= 0:
            return 0.0 if over <= 0 else math.inf
        return over / scale

    def to_row(self) -> dict[str, Any]:
        """A flat ``dict`` of scalars (one pandas row, one sweep cell's record)."""
        meta = self.scenario_meta
        return {
            "instance": self.instance,
            "method": self.method,
            "method_params": dict(self.method_params),
            "replan": self.replan,
            "headroom": self.headroom,
            "preempt": self.preempt,
            "scenario_model": meta.get("model"),
            "scenario_seed": meta.get("seed"),
            "scenario_params": dict(meta.get("params", {})),
            "objective": self.objective,
            "realized_value": self.realized_value,
            "planned_value": self.planned_value,
            "preemptions": self.preemptions,
            "lost_gpu_slots": self.lost_gpu_slots,
            "unserved_gpu_slots": self.unserved_gpu_slots,
            "utilization": self.utilization,
            "clairvoyant_bound": self.clairvoyant_bound,
            "clairvoyant_value": self.clairvoyant_value,
            "bound_status": self.bound_status,
            "bound_applies": self.bound_applies,
            "price_of_uncertainty": self.price_of_uncertainty,
            "gap_to_bound": self.gap_to_bound,
            "jobs_completed": self.jobs_completed,
            "mean_jct_hours": self.mean_jct_hours,
            "jobs_censored": self.jobs_censored,
            "jobs_preempted": self.jobs_preempted,
            "missed_starts": self.missed_starts,
            "plans": self.plans,
            "plan_runtime_s": self.plan_runtime_s,
            "runtime_s": self.runtime_s,
            "bound_runtime_s": self.bound_runtime_s,
        }

    def to_json(self) -> dict[str, Any]:
        """The command line's ``--json`` object: the row, the realized starts (and placement)
        and the preemptions, JSON-safe.
        """
        row = self.to_row()
        row["starts"] = dict(self.schedule.starts)
        if self.schedule.placement:  # GPU index lists where the schedule gives them
            row["placement"] = self.schedule.to_dict()["placement"]
        row["preempted"] = [{"slot": t, "job": j} for t, j in self.events]
        return {
            k: (None if isinstance(v, float) and not math.isfinite(v) else v)
            for k, v in row.items()
        }

    def summary(self) -> str:
        """A short human-readable account."""
        parts = [
            f"{self.method} ({'one plan' if self.replan is None else f'replan every {self.replan}'}"
            f", headroom {self.headroom:g}, "
            f"{'preempt' if self.preempt else 'no preempt'})",
            f"realized {'flow ' if self.objective == 'flow' else ''}{self.realized_value:.6g} "
            f"(first plan, on the forecast at slot 0: {self.planned_value:.6g})",
            f"mean JCT {self.mean_jct_hours:.4g} h ({self.jobs_censored} censored)",
            f"{self.preemptions} preemption{'s' * (self.preemptions != 1)}, "
            f"{self.lost_gpu_slots} GPU-slots lost",
            f"{self.unserved_gpu_slots} inference GPU-slots unserved",
            f"utilization {100 * self.utilization:.1f}%",
        ]
        if self.clairvoyant_bound is not None:
            parts.append(
                f"clairvoyant bound {self.clairvoyant_bound:.6g} ({self.bound_status}; "
                f"price of uncertainty {self.price_of_uncertainty:.6g})"
            )
        parts.append(f"{self.plans} plan{'s' * (self.plans != 1)}, {self.runtime_s:.3f} s")
        return ", ".join(parts)
