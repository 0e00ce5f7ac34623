"""One result type for every method: heuristics and exact solvers alike."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from .checker import Metrics
from .objective import bound_is_valid, gap, sense
from .rounding import format_value, rounded_all, tolerance
from .schedule import Schedule

__all__ = ["Result", "Status"]


class Status(StrEnum):
    """How a method ended."""

    OPTIMAL = "optimal"
    """Proven optimal (exact methods only)."""
    FEASIBLE = "feasible"
    """A checked feasible schedule, optimality not proven (heuristics)."""
    TIME_LIMIT = "time_limit"
    """An exact method stopped at its limit; the bound is the dual bound."""
    INFEASIBLE = "infeasible"
    """The model has no solution (cannot happen for valid instances: the empty schedule is feasible)."""
    ERROR = "error"
    """The method failed; ``message`` says why."""

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Result:
    """What a method returns.

    Attributes
    ----------
    value
        The schedule's figure under the instance's objective, as recomputed by the
        checker: ``V`` under ``value``, the weighted flow time ``F`` under ``flow``.
    upper_bound
        A proven bound on that figure over all feasible schedules (an upper bound on ``V``,
        a lower bound on ``F``: :attr:`bound` is its name under both), or ``None``.
    metrics
        The checker's figures for the schedule.
    reservation
        The reservation policy the method used (``peak`` or ``curve``).
    lp_bound, nodes
        The root LP bound and the branch-and-bound nodes, when an exact method reports them.
    message
        The error for status ``error``, notes otherwise.
    bound_method
        Where ``upper_bound`` comes from (``dual``, ``lp``, ``lagrangian``, ...).
    objective
        ``value`` or ``flow`` (default: the metrics', else ``value``).
    """

    method: str
    status: Status
    schedule: Schedule
    value: float
    upper_bound: float | None = None
    runtime_s: float = 0.0
    metrics: Metrics | None = None
    reservation: str = "curve"
    params: dict[str, Any] = field(default_factory=dict)
    lp_bound: float | None = None
    nodes: int | None = None
    message: str = ""
    bound_method: str | None = None
    objective: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", Status(self.status))
        if not self.objective:
            object.__setattr__(self, "objective",
                               self.metrics.objective if self.metrics is not None else "value")
        sense(self.objective)  # a ValueError naming the field on anything else
        if self.upper_bound is not None and not bound_is_valid(
                self.objective, self.value, self.upper_bound, tolerance(self.value)):
            side = "above" if sense(self.objective) < 0 else "below"
            raise ValueError(
                f"upper_bound: {self.upper_bound} is {side} the feasible value {self.value}"
            )

    @property
    def bound(self) -> float | None:
        """The proven bound under the instance's objective (upper on ``V``, lower on ``F``)."""
        return self.upper_bound

    @property
    def signed_value(self) -> float:
        """The value times the objective's sense: larger is better under both objectives."""
        return sense(self.objective) * self.value

    @property
    def gap(self) -> float | None:
        """Relative gap to the bound (:func:`instances.objective.gap`), or ``None``."""
        return gap(self.value, self.upper_bound, self.objective)

    @property
    def utilization(self) -> float:
        """Utilization of the schedule (``nan`` without metrics)."""
        return self.metrics.utilization if self.metrics is not None else math.nan

    def to_row(self) -> dict[str, Any]:
        """A flat ``dict``, one row of a table (``pandas.DataFrame([r.to_row() for r in
        results])``): identification, bound and every metric, its floats
        :func:`~instances.rounding.rounded`.
        """
        row: dict[str, Any] = {
            "instance": self.schedule.instance,
            "method": self.method,
            "status": str(self.status),
            "objective": self.objective,
            "value": self.value,
            "upper_bound": self.upper_bound if self.objective == "value" else None,
            "bound": self.upper_bound,
            "bound_method": self.bound_method,
            "gap": self.gap,
            "lp_bound": self.lp_bound,
            "nodes": self.nodes,
            "runtime_s": self.runtime_s,
            "reservation": self.reservation,
            "params": dict(self.params),
            "message": self.message,
        }
        if self.metrics is not None:
            for k, v in self.metrics.to_dict().items():
                if k not in ("value", "reservation", "objective"):
                    row[k] = v
        return rounded_all(row)

    def to_json(self) -> dict[str, Any]:
        """The command line's ``--json`` object: the row, the ``starts`` and, on nodes, the
        ``placement`` as in the schedule file (JSON-safe: no NaN).
        """
        row = self.to_row()
        row["starts"] = dict(self.schedule.starts)
        if self.schedule.placement:
            row["placement"] = self.schedule.to_dict()["placement"]  # GPU index lists where given
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in row.items()}

    def summary(self) -> str:
        """A short human-readable account (an optimal status beside a gap above 0 reads
        ``optimal within the gap tolerance``).
        """
        status = str(self.status)
        if self.status is Status.OPTIMAL and (self.gap or 0) > 0:
            status = "optimal within the gap tolerance"
            tol = self.params.get("mip_gap")
            if isinstance(tol, (int, float)) and not isinstance(tol, bool):
                status += f" ({100 * tol:g}%)"
        flow = self.objective == "flow"
        parts = [f"{self.method}: {status}",
                 f"{'flow' if flow else 'value'} {format_value(self.value)}"]
        if self.metrics is not None:
            if flow:
                parts.append(f"mean JCT {self.metrics.mean_jct_hours:.2f} h")
            parts.append(f"utilization {100 * self.metrics.utilization:.1f}%")
            parts.append(f"jobs {self.metrics.jobs_run}/{self.metrics.jobs_run + self.metrics.jobs_rejected}")
        if self.upper_bound is not None:
            side = "lower bound" if flow else "bound"
            parts.append(f"{side} {format_value(self.upper_bound)} (gap {100 * (self.gap or 0):.2f}%)")
        parts.append(f"{self.runtime_s:.3f} s")
        if self.message:
            parts.append(self.message)
        return ", ".join(parts)
