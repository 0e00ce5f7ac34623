"""What a simulation reports (:class:`SimResult`), and the clairvoyant bound it is held to:
the exact MILP on the instance with the actual demand, which no online policy beats.
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

__all__ = ["ClairvoyantBound", "SimResult", "clairvoyant_bound"]

_TOL = 1e-6


@dataclass(frozen=True)
class ClairvoyantBound:
    """The exact MILP on the instance with the actual demand: what no online policy beats.

    ``upper_bound`` is its proven bound, ``value`` its best schedule's value,
    ``status`` ``optimal`` or ``time_limit``.
    """

    instance: str
    scenario: Scenario
    upper_bound: float
    value: float
    status: str
    runtime_s: float
    time_limit: float


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
    if str(res.status) == "error" or res.upper_bound is None:
        raise RuntimeError(f"clairvoyant bound: the MILP failed ({res.status}: {res.message})")
    return ClairvoyantBound(
        instance=inst.name, scenario=scenario, upper_bound=float(res.upper_bound),
        value=float(res.value), status=str(res.status), runtime_s=res.runtime_s,
        time_limit=float(time_limit),
    )


@dataclass(frozen=True)
class SimResult:
    """What :func:`simulate` reports.

    Attributes
    ----------
    realized_value, planned_value
        Value of the jobs that completed (the checker's ``V``), and of the first
        plan on the scaled forecast (the offline value at ``H = 0``).
    preemptions, lost_gpu_slots, unserved_gpu_slots
        Preemption events, GPU-slots of preempted runs, inference GPU-slots left
        unserved (``preempt=False`` only).
    clairvoyant_bound, clairvoyant_value, bound_status
        The bound's MILP on the actual demand; ``None`` when not computed.
    bound_applies
        Whether the realized schedule is feasible against the whole actual demand
        (always with ``preempt=True``, else when nothing went unserved); then
        ``realized_value <= clairvoyant_bound`` is enforced.
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
    lost_gpu_slots: int
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

    def __post_init__(self) -> None:
        ub = self.clairvoyant_bound
        if (
            ub is not None
            and self.bound_applies
            and self.realized_value > ub + _TOL * max(1.0, abs(ub))
        ):
            raise ValueError(
                f"clairvoyant_bound: {ub} is below the realized value {self.realized_value} "
                f"of a schedule feasible against the actual demand ({self.method} on "
                f"{self.instance!r})"
            )
        object.__setattr__(self, "method_params", MappingProxyType(dict(self.method_params)))
        object.__setattr__(self, "scenario_meta", MappingProxyType(dict(self.scenario_meta)))
        object.__setattr__(self, "timeline", MappingProxyType(dict(self.timeline)))

    @property
    def price_of_uncertainty(self) -> float | None:
        """``clairvoyant_bound - realized_value`` (``None`` without the bound)."""
        if self.clairvoyant_bound is None:
            return None
        return self.clairvoyant_bound - self.realized_value

    @property
    def gap_to_bound(self) -> float | None:
        """``(clairvoyant_bound - realized_value) / clairvoyant_bound`` (0 when both are 0)."""
        ub = self.clairvoyant_bound
        if ub is None:
            return None
        if ub <= 0:
            return 0.0 if self.realized_value >= ub else math.inf
        return (ub - self.realized_value) / ub

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
        if self.schedule.placement:
            row["placement"] = {j: dict(p) for j, p in self.schedule.placement.items()}
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
            f"realized {self.realized_value:.6g} (first plan, on the forecast at slot 0: {self.planned_value:.6g})",
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
