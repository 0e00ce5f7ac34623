"""Online operation: replay a plan against the demand a day actually brings.

:func:`simulate` follows the specification (docs/model.md). A method plans on the
forecast (the instance's demand, scaled by ``1 + headroom``); the day then
brings the scenario's actual demand, slot by slot:

0. jobs whose last slot was ``t - 1`` complete; at slot 0 and then every
   ``replan`` slots, a new plan is made (see below);
1. actual inference ``a[t]`` is served first: while ``a[t]`` plus the GPUs
   of the running batch jobs exceeds ``G``, one running job is preempted,
   the lowest priority ``w_j`` first, ties by the latest start, then by the
   later position in the job list; its work is lost. With ``preempt=False``
   nothing is preempted and the excess is counted as inference unserved;
2. the jobs the plan starts at ``t`` start, in job-list order, each only if
   it fits beside ``a[t]`` and the jobs running (a job that does not fit
   stays among the jobs not yet started: a later plan may place it; with
   ``replan=None`` there is no later plan and it is lost);
3. a preempted job is again a job not yet started, which a later plan may
   start again from scratch within its window.

The plan made at slot ``t0`` is the method's schedule of a *plan instance*:
the same pool and horizon; services whose demand is the actual demand in the
slots before ``t0`` and ``min(ceil((1 + H) f_s[t]), G)`` from ``t0`` on (the
services' total then capped at ``G``, the last service lowered first); when
jobs are running, one more service, the pseudo-service ``running-batch``,
holding their GPUs from ``t0`` until each ends (lowered where forecast and
running work together pass ``G``: the plan then has no room there); and the
jobs not yet started, a job released before ``t0`` with release ``t0``
when it can still end in its window (dropped otherwise). At slot 0 the plan
instance is the instance itself with the scaled forecast, job for job.
Every method of :func:`gpusched.solve` plans on it unchanged.

On an instance with nodes each job keeps the placement its plan gave it, and
step 2 starts it only if it also fits on its nodes beside the jobs running
there. The plan instance then carries nodes: each node less the GPUs the
running jobs hold on it at ``t0``, for the rest of the horizon (a node they
fill is left out), a pool of the GPUs left, and the services' demand less
the GPUs the running jobs free as they end (inference may use any free GPU);
a job is in the plan only when every valid placement there is valid beside
the running jobs (a one-node job must stay a one-node job, a larger one must
find only untouched whole nodes). No instance can hold GPUs of one node for
part of the horizon, so this is the safe constant: exact for one-node starts at
``t0``, conservative for later ones (a later plan sees the room).

Peak-reservation methods (``fifo``, ``easy-peak``, ``list-peak``, ...)
reserve the sum of the plan instance's per-service peaks. With
``replan=None`` the only plan is made at slot 0, where nothing runs and no
slot is past: it is exactly the offline plan on the scaled forecast, so
FIFO-peak plans as it would offline (the FIFO-peak end of the trade-off).
A re-planned peak method also reserves the pseudo-service's peak (the GPUs
running at the plan's slot, for the whole rest of the horizon) and any past
actual demand above the forecast's peak: no constant reservation can follow
the running jobs' end, so this is the safe one. The choice is deliberate and
not special-cased.

Everything the simulation reports comes from :func:`instances.evaluate` on
the instance with the actual demand (or, with ``preempt=False``, with the
demand served): the completed jobs ran for their whole duration without a
break, so they form a feasible schedule there.

Over 500 lines because the plan instance, the per-slot rules and the result are one algorithm whose invariants (what a plan withholds, what step 2 checks) are read together; the plan-instance builders are the candidate to split off.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

import gpusched
from instances import Instance, Job, Metrics, Node, Scenario, Schedule, Service, evaluate
from instances import actual_instance as _actual_instance
from instances.model import subset_sums

__all__ = [
    "ClairvoyantBound",
    "SimResult",
    "clairvoyant_bound",
    "headroom_sweep",
    "peak_headroom",
    "plan_instance",
    "scaled_forecast",
    "simulate",
]

logger = logging.getLogger(__name__)

RUNNING_SERVICE = "running-batch"
"""Name of the plan instance's pseudo-service holding the running jobs' GPUs."""

_TOL = 1e-6


@dataclass(frozen=True)
class ClairvoyantBound:
    """The exact MILP on the instance with the actual demand: what no online policy beats.

    Attributes
    ----------
    instance
        Name of the instance.
    scenario
        The scenario whose actual demand the MILP saw.
    upper_bound
        The MILP's proven upper bound (its optimum when ``status`` is ``optimal``).
    value
        Value of the best schedule it found (a lower bound on the optimum).
    status
        The MILP's status (``optimal`` or ``time_limit``).
    runtime_s
        Seconds the MILP took.
    time_limit
        Its time limit.
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
    """Solve ``gpusched.solve(actual_instance, "milp")`` and keep its bound.

    Computed once, it can be passed to several :func:`simulate` calls on the
    same instance and scenario (``clairvoyant=``).

    Raises
    ------
    ValueError
        If the scenario does not fit the instance.
    RuntimeError
        If the MILP ends with status ``error`` or without a bound.
    """
    actual = _actual_instance(inst, scenario)
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
    instance, method, method_params, replan, headroom, preempt
        What was simulated.
    scenario_meta
        The scenario's provenance (model, seed, parameters).
    realized_value
        Value of the jobs that completed (the checker's ``V``).
    planned_value
        Value of the first plan (slot 0) on the scaled forecast: the
        method's offline value when ``headroom == 0``.
    preemptions
        Preemption events (a job may be preempted more than once).
    lost_gpu_slots
        GPU-slots of preempted runs (work lost).
    unserved_gpu_slots
        Inference GPU-slots left unserved (``preempt=False`` only).
    utilization
        Inference served plus GPU-slots of completed jobs, over ``G T``.
    clairvoyant_bound, clairvoyant_value, bound_status
        The MILP's upper bound and best value on the instance with the actual
        demand, and its status; ``None`` when not computed.
    bound_applies
        Whether the realized schedule is feasible against the full actual
        demand (always with ``preempt=True``; with ``preempt=False`` when no
        inference went unserved). Then ``realized_value <= clairvoyant_bound``
        holds and is enforced. Without it, the batch value was bought with
        unserved inference and may exceed the bound.
    jobs_completed, jobs_preempted, missed_starts, plans
        Jobs completed; distinct jobs preempted at least once; planned starts
        that did not fit; plans made.
    plan_runtime_s, runtime_s, bound_runtime_s
        Seconds in the planning method, in the whole simulation (without the
        bound), and in the bound's MILP.
    schedule
        The realized schedule: completed jobs at the start of their completed run.
    metrics
        :func:`instances.evaluate` of ``schedule`` on the instance with the
        actual demand (the demand served, with ``preempt=False``).
    timeline
        Per-slot arrays: ``forecast`` and ``actual`` inference, ``served``,
        ``unserved``, ``batch`` (GPUs of running batch jobs after step 2),
        ``preempted`` (preemptions at the slot), ``started``.
    events
        ``(slot, job name)`` of every preemption, in order.

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
        """The command line's ``--json`` object: the row, the realized starts and the
        preemptions (JSON-safe: no NaN or infinity)."""
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
            f"{self.method} (replan {self.replan}, headroom {self.headroom:g}, "
            f"{'preempt' if self.preempt else 'no preempt'})",
            f"realized {self.realized_value:.6g} (first plan, on the forecast at slot 0: {self.planned_value:.6g})",
            f"{self.preemptions} preemptions, {self.lost_gpu_slots} GPU-slots lost",
            f"{self.unserved_gpu_slots} inference GPU-slots unserved",
            f"utilization {100 * self.utilization:.1f}%",
        ]
        if self.clairvoyant_bound is not None:
            parts.append(
                f"clairvoyant bound {self.clairvoyant_bound:.6g} ({self.bound_status}; "
                f"price of uncertainty {self.price_of_uncertainty:.6g})"
            )
        parts.append(f"{self.plans} plans, {self.runtime_s:.3f} s")
        return ", ".join(parts)


# ------------------------------------------------------------------- planning
def scaled_forecast(inst: Instance, headroom: float) -> np.ndarray:
    """``min(ceil((1 + H) f_s[t]), G)`` per service, the total then capped at ``G``
    (the last service lowered first); shape ``(num_services, horizon)``.

    The product is rounded up after removing ``1e-9`` of float noise, so that
    ``(1 + 0.1) * 10`` is 11, not 12.
    """
    G = inst.num_gpus
    f = np.ceil((1.0 + headroom) * inst.demand - 1e-9).astype(np.int64)
    f = np.clip(f, 0, G)
    excess = f.sum(axis=0) - G
    for k in range(f.shape[0] - 1, -1, -1):
        if not (excess > 0).any():
            break
        cut = np.minimum(f[k], np.maximum(excess, 0))
        f[k] -= cut
        excess -= cut
    return f


def _released_at(job: Job, t: int) -> Job:
    """``job`` with release ``t``: a copy that skips re-validation.

    The caller guarantees ``t + duration <= min(deadline, T)``, so the copy
    is as valid as the job (this runs for hundreds of jobs at every plan).
    """
    if not hasattr(job, "__dict__"):  # pragma: no cover - a slotted Job
        from dataclasses import replace

        return replace(job, release=t)
    new = object.__new__(type(job))
    new.__dict__.update(job.__dict__)
    new.__dict__["release"] = t
    return new


def _service(name: str, priority: float, demand: tuple[int, ...]) -> Service:
    """A :class:`Service` from values already known valid (integers in ``[0, G]``),
    without re-checking each one: a plan instance carries ``S x T`` of them."""
    new = object.__new__(Service)
    new.__dict__.update(name=name, priority=priority, demand=demand)
    return new


class _Planner:
    """Builds plan instances for one simulation (the arrays computed once)."""

    def __init__(self, inst: Instance, actual: np.ndarray, headroom: float) -> None:
        self.inst = inst
        self.actual = actual
        self.future = scaled_forecast(inst, headroom)
        self.future_total = self.future.sum(axis=0)
        self.names = [s.name for s in inst.services]
        self.prios = [s.priority for s in inst.services]
        name = RUNNING_SERVICE
        while name in self.names:
            name = "_" + name
        self.running_name = name
        self.jobs = inst.jobs
        self.rel = inst.releases
        self.dur = inst.durations
        self.dl = inst.deadlines
        self.gpus = inst.gpus
        self.prio = inst.priorities
        self.values = inst.job_values
        if inst.has_nodes:
            self.node_sizes = inst.node_gpus
            self.largest = int(self.node_sizes.max())
            self.node_list = inst.nodes or ()

    def _running_profile(self, t0: int, running: list[int], end: np.ndarray) -> np.ndarray:
        """GPUs of the running jobs at each slot (0 before ``t0``), length ``T``."""
        T = self.inst.horizon
        held = np.zeros(T + 1, dtype=np.int64)
        for j in running:
            held[t0] += self.gpus[j]
            held[end[j]] -= self.gpus[j]
        return np.cumsum(held[:T])

    def _jobs(self, t0: int, idx: np.ndarray) -> tuple[Job, ...]:
        """The plan's jobs ``idx``: a job released before ``t0`` gets release ``t0``."""
        jobs = self.jobs
        late = (self.rel[idx] < t0).tolist()
        return tuple(
            _released_at(jobs[j], t0) if is_late else jobs[j]
            for j, is_late in zip(idx.tolist(), late)
        )

    def _cache(self, plan: Instance, t0: int, idx: np.ndarray) -> None:
        """The per-job arrays the methods read, from the arrays at hand instead of
        one list comprehension per array and plan (same values, read-only)."""
        lo = np.maximum(self.rel, t0)
        cached = plan.__dict__
        for key, arr in (
            ("gpus", self.gpus[idx]), ("durations", self.dur[idx]),
            ("releases", lo[idx]), ("deadlines", self.dl[idx]),
            ("priorities", self.prio[idx]), ("job_values", self.values[idx]),
        ):
            arr.setflags(write=False)
            cached[key] = arr

    def _candidates(self, t0: int, waiting: np.ndarray) -> np.ndarray:
        # a job released later is kept as it is (at slot 0: the offline instance,
        # job for job); one released before t0 only if it can still end in time
        return np.flatnonzero(waiting & ((self.rel >= t0) | (t0 + self.dur <= self.dl)))

    def build(
        self, t0: int, waiting: np.ndarray, running: list[int], end: np.ndarray,
        node_held: np.ndarray | None = None,
    ) -> tuple[Instance | None, np.ndarray]:
        """The plan instance at slot ``t0`` and the original indices of its jobs.

        ``node_held`` (instances with nodes): GPUs the running jobs hold on each
        node at ``t0``. The plan is ``None`` when the running jobs fill every node.
        """
        if self.inst.has_nodes:
            held = np.zeros(self.inst.num_nodes, dtype=np.int64) if node_held is None else node_held
            return self._build_nodes(t0, waiting, running, end, held)
        inst, G, T = self.inst, self.inst.num_gpus, self.inst.horizon
        demand = np.concatenate([self.actual[:, :t0], self.future[:, t0:]], axis=1)
        services = [
            _service(n, p, tuple(row)) for n, p, row in zip(self.names, self.prios, demand.tolist())
        ]
        if running:
            run = self._running_profile(t0, running, end)
            run[t0:] = np.minimum(run[t0:], G - self.future_total[t0:])
            if run.any():
                services.append(_service(self.running_name, 1.0, tuple(run.tolist())))
        idx = self._candidates(t0, waiting)
        plan = Instance(inst.name, G, T, tuple(services), self._jobs(t0, idx), inst.slot_hours)
        self._cache(plan, t0, idx)
        return plan, idx

    def _build_nodes(
        self, t0: int, waiting: np.ndarray, running: list[int], end: np.ndarray, held: np.ndarray,
    ) -> tuple[Instance | None, np.ndarray]:
        """The plan instance on nodes: each node less what the running jobs hold
        there at ``t0``, for the rest of the horizon (see ``docs/simulation.md``)."""
        inst, T = self.inst, self.inst.horizon
        sizes = self.node_sizes
        free = sizes - held
        keep = np.flatnonzero(free > 0)
        G = int(free.sum())
        if G == 0:
            return None, np.zeros(0, dtype=np.int64)
        if held.any():
            nodes = tuple(
                Node(self.node_list[k].name, int(free[k])) if held[k] else self.node_list[k]
                for k in keep.tolist()
            )
        else:
            nodes = self.node_list
        # demand: the actual before t0, the scaled forecast from t0 on, less the
        # GPUs the running jobs free as they end (inference may take any free GPU;
        # the plan's batch work cannot: those GPUs stay off its nodes), capped at
        # the plan's pool
        demand = np.concatenate([self.actual[:, :t0], self.future[:, t0:]], axis=1)
        if running:
            run = self._running_profile(t0, running, end)
            freed = np.zeros(T, dtype=np.int64)
            freed[t0:] = run[t0] - run[t0:]
            _lower_last_first(demand, freed)
        _lower_last_first(demand, demand.sum(axis=0) - G)
        services = [
            _service(n, p, tuple(row)) for n, p, row in zip(self.names, self.prios, demand.tolist())
        ]
        idx = self._candidates(t0, waiting)
        if held.any():
            idx = idx[self._placeable(self.gpus[idx], free[keep], held[keep] > 0)]
        plan = Instance(inst.name, G, T, tuple(services), self._jobs(t0, idx), inst.slot_hours,
                        nodes=nodes)
        self._cache(plan, t0, idx)
        return plan, idx

    def _placeable(self, g: np.ndarray, free: np.ndarray, touched: np.ndarray) -> np.ndarray:
        """Per job of ``g`` GPUs: every valid placement on the plan's nodes is valid
        beside the running jobs.

        A job of at most the largest node's GPUs must stay a one-node job in the
        plan (``g`` at most the largest node left); a larger job takes whole nodes,
        so it is kept only when some set of untouched nodes sums to ``g`` and no
        set holding a node the running jobs touch does.
        """
        out = g <= int(free.max())
        multi = g > self.largest
        if multi.any():
            limit = int(free.sum())
            sizes = free.tolist()
            whole = subset_sums([s for s, t in zip(sizes, touched.tolist()) if not t], limit)
            bad = 0
            for v in sorted({s for s, t in zip(sizes, touched.tolist()) if t}):
                rest = list(sizes)
                rest.remove(v)
                bad |= subset_sums(rest, limit) << v
            for k in np.flatnonzero(multi).tolist():
                gk = int(g[k])
                out[k] = bool((whole >> gk) & 1) and not (bad >> gk) & 1
        return out


def _lower_last_first(demand: np.ndarray, excess: np.ndarray) -> None:
    """Lower ``demand`` (services x slots) in place by ``excess`` per slot (where
    positive), the last service first, never below 0."""
    left = np.maximum(excess, 0)
    for k in range(demand.shape[0] - 1, -1, -1):
        if not left.any():
            break
        cut = np.minimum(demand[k], left)
        demand[k] -= cut
        left = left - cut


def plan_instance(
    inst: Instance, scenario: Scenario, t0: int, *, headroom: float = 0.0,
    running: Mapping[str, int] | None = None, started: frozenset[str] | set[str] = frozenset(),
    placement: Mapping[str, Mapping[str, int]] | None = None,
) -> Instance | None:
    """The plan instance of slot ``t0`` (see the module docstring), for inspection.

    Parameters
    ----------
    running
        Jobs running at ``t0``, by name, with the slot of their start.
    started
        Jobs completed or running: they are not in the plan.
    placement
        On an instance with nodes, the placement of every running job (node
        name -> GPUs, as in :attr:`instances.Schedule.placement`).

    Returns
    -------
    Instance or None
        ``None`` on an instance with nodes when the running jobs fill every node.

    Raises
    ------
    ValueError
        On an instance with nodes, for a running job without a placement or
        with one naming an unknown node.
    """
    scenario.validate(inst)
    planner = _Planner(inst, scenario.demand(inst), headroom)
    running = dict(running or {})
    index = inst.job_index
    waiting = np.ones(inst.num_jobs, dtype=bool)
    end = np.full(inst.num_jobs, -1, dtype=np.int64)
    for name in set(started) | set(running):
        waiting[index[name]] = False
    for name, s in running.items():
        end[index[name]] = s + inst.jobs[index[name]].duration
    held = None
    if inst.has_nodes:
        held = np.zeros(inst.num_nodes, dtype=np.int64)
        node_index = inst.node_index
        placement = placement or {}
        for name in running:
            if name not in placement:
                raise ValueError(f"placement: running job {name!r} has no placement")
            for node, cnt in placement[name].items():
                if node not in node_index:
                    raise ValueError(f"placement[{name!r}]: unknown node {node!r}")
                held[node_index[node]] += int(cnt)
    return planner.build(t0, waiting, [index[n] for n in running], end, held)[0]


# ------------------------------------------------------------------ the replay
WAITING, RUNNING, DONE = 0, 1, 2


def _check_policy(replan: Any, headroom: Any, preempt: Any) -> tuple[int | None, float]:
    if replan is not None and (
        isinstance(replan, bool) or not isinstance(replan, (int, np.integer)) or replan < 1
    ):
        raise ValueError(f"replan: must be a positive number of slots or None, got {replan!r}")
    if isinstance(headroom, bool) or not isinstance(headroom, (int, float, np.integer, np.floating)):
        raise ValueError(f"headroom: must be a number >= 0, got {headroom!r}")
    if not (math.isfinite(float(headroom)) and headroom >= 0):
        raise ValueError(f"headroom: must be a finite number >= 0, got {headroom!r}")
    if not isinstance(preempt, bool):
        raise ValueError(f"preempt: must be true or false, got {preempt!r}")
    return (None if replan is None else int(replan)), float(headroom)


def _served_instance(inst: Instance, actual: np.ndarray, unserved: np.ndarray) -> Instance:
    """The instance with the demand served: each slot's unserved GPUs taken from the
    services of lowest priority first (ties: later in the list first)."""
    served = actual.copy()
    order = sorted(range(len(inst.services)), key=lambda k: (inst.services[k].priority, -k))
    left = unserved.copy()
    for k in order:
        cut = np.minimum(served[k], left)
        served[k] -= cut
        left -= cut
    services = tuple(
        Service(s.name, s.priority, tuple(served[k].tolist())) for k, s in enumerate(inst.services)
    )
    return inst.replace(services=services)


def _plan_placements(
    inst: Instance, plan: Instance, schedule: Schedule, idx: np.ndarray, starts: np.ndarray,
    until: int, method: str,
) -> dict[int, list[tuple[int, int]]]:
    """Per job the plan starts before ``until`` (by original index), its
    ``(node position, GPUs)`` on ``inst``, ascending by node.

    The plan's nodes carry the instance's names, so a placement maps by name.

    Raises
    ------
    RuntimeError
        When the method starts a job without a placement on the plan's nodes.
    """
    node_index = inst.node_index
    out: dict[int, list[tuple[int, int]]] = {}
    placement = schedule.placement
    for k in np.flatnonzero((starts >= 0) & (starts < until)).tolist():
        name = plan.jobs[k].name
        where = placement.get(name)
        if not where or sum(where.values()) != plan.jobs[k].gpus:
            raise RuntimeError(
                f"method {method!r} started job {name!r} without a valid placement on the nodes "
                f"of instance {inst.name!r} (is it node-aware?)"
            )
        out[int(idx[k])] = sorted((node_index[node], int(c)) for node, c in where.items() if c > 0)
    return out


def simulate(
    inst: Instance,
    scenario: Scenario,
    method: str,
    replan: int | None = None,
    headroom: float = 0.0,
    preempt: bool = True,
    *,
    clairvoyant: bool | ClairvoyantBound = True,
    bound_time_limit: float = 60.0,
    **method_params: Any,
) -> SimResult:
    """Replay one day: plan on the forecast, operate on the actual demand.

    Parameters
    ----------
    inst
        The instance; its services' demand is the forecast.
    scenario
        The actual demand (validated against ``inst``).
    method
        Any method of :func:`gpusched.solve`; it makes every plan.
    replan
        Slots between plans (a plan at slot 0, then every ``replan`` slots);
        ``None``: one plan, at slot 0.
    headroom
        ``H >= 0``: plans see the forecast scaled by ``1 + H`` (rounded up,
        capped at ``G``).
    preempt
        Preempt batch jobs to serve inference (``True``), or leave the excess
        inference unserved and count it (``False``).
    clairvoyant
        ``True``: compute the clairvoyant bound with ``gpusched.solve(actual,
        "milp", time_limit=bound_time_limit)``; ``False``: skip it; or a
        :class:`ClairvoyantBound` computed before for this instance and scenario.
    bound_time_limit
        Seconds of the bound's MILP.
    **method_params
        Passed to ``gpusched.solve`` at every plan; ``time_limit`` is then the
        budget of each plan (``best``, ``milp``, ...).

    Returns
    -------
    SimResult

    Raises
    ------
    ValueError
        For a scenario that does not fit the instance, a negative headroom, a
        replan interval below 1, or an unknown method or parameter.
    """
    t_start = time.perf_counter()
    replan, headroom = _check_policy(replan, headroom, preempt)
    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario: must be a Scenario, got {type(scenario).__name__}")
    scenario.validate(inst)
    if isinstance(clairvoyant, ClairvoyantBound):
        if clairvoyant.instance != inst.name or clairvoyant.scenario != scenario:
            raise ValueError("clairvoyant: the bound was computed for another instance or scenario")
    elif not isinstance(clairvoyant, bool):
        raise ValueError(f"clairvoyant: must be true, false or a ClairvoyantBound, got {clairvoyant!r}")

    G, T, n = inst.num_gpus, inst.horizon, inst.num_jobs
    actual = scenario.demand(inst)
    a_total = actual.sum(axis=0).tolist() if actual.size else [0] * T
    planner = _Planner(inst, actual, headroom)
    gpus = inst.gpus.tolist()
    dur = inst.durations.tolist()
    prio = inst.priorities.tolist()
    names = [j.name for j in inst.jobs]

    state = np.zeros(n, dtype=np.int8)
    start = np.full(n, -1, dtype=np.int64)
    end = np.full(n, -1, dtype=np.int64)
    done_start = np.full(n, -1, dtype=np.int64)
    running: list[int] = []
    used = 0
    batch = np.zeros(T, dtype=np.int64)
    unserved = np.zeros(T, dtype=np.int64)
    preempted_at = np.zeros(T, dtype=np.int64)
    started_at = np.zeros(T, dtype=np.int64)
    events: list[tuple[int, str]] = []
    # on nodes: the GPUs in use per node, and each job's (node, GPUs) of its plan
    has_nodes = inst.has_nodes
    sizes = inst.node_gpus.tolist() if has_nodes else []
    node_used = [0] * len(sizes)
    planned_on: dict[int, list[tuple[int, int]]] = {}
    on_nodes: dict[int, list[tuple[int, int]]] = {}
    done_place: dict[int, list[tuple[int, int]]] = {}
    lost = 0
    missed = 0
    plans = 0
    plan_time = 0.0
    planned_value = 0.0
    by_slot: dict[int, list[int]] = {}

    for t in range(T):
        # 0. completions, then the plan of this slot
        if running:
            still = [j for j in running if end[j] > t]
            if len(still) < len(running):
                for j in running:
                    if end[j] <= t:
                        state[j] = DONE
                        done_start[j] = start[j]
                        used -= gpus[j]
                        if has_nodes:
                            done_place[j] = on_nodes[j]
                            for k, c in on_nodes[j]:
                                node_used[k] -= c
                running = still
        if t == 0 or (replan is not None and t % replan == 0):
            waiting = state == WAITING
            by_slot = {}
            if waiting.any():
                held = np.asarray(node_used, dtype=np.int64) if has_nodes else None
                plan, idx = planner.build(t, waiting, running, end, held)
                if plan is not None and plan.num_jobs:
                    res = gpusched.solve(plan, method, **method_params)
                    if str(res.status) == "error":
                        logger.warning("plan at slot %d: %s failed: %s", t, method, res.message)
                    plan_time += res.runtime_s
                    starts = res.schedule.to_array(plan)
                    for k in np.flatnonzero(starts >= 0).tolist():
                        by_slot.setdefault(int(starts[k]), []).append(int(idx[k]))
                    if has_nodes:
                        # only the starts before the next plan are ever looked at
                        until = T if replan is None else t + replan
                        planned_on = _plan_placements(
                            inst, plan, res.schedule, idx, starts, until, method
                        )
                    if t == 0:
                        planned_value = res.value
                    plans += 1
            for lst in by_slot.values():
                lst.sort()
        a = a_total[t]
        # 1. inference first
        if a + used > G:
            if preempt:
                while a + used > G:
                    v = min(running, key=lambda j: (prio[j], -start[j], -j))
                    running.remove(v)
                    used -= gpus[v]
                    if has_nodes:
                        for k, c in on_nodes.pop(v):
                            node_used[k] -= c
                    lost += gpus[v] * (t - int(start[v]))
                    state[v] = WAITING
                    preempted_at[t] += 1
                    events.append((t, names[v]))
            else:
                unserved[t] = a + used - G
        # 2. the plan's starts at t, in job-list order, each if it fits now
        for j in by_slot.get(t, ()):
            if state[j] != WAITING:  # pragma: no cover - a plan only holds waiting jobs
                continue
            fits = a + used + gpus[j] <= G
            if fits and has_nodes:
                where = planned_on[j]
                fits = all(node_used[k] + c <= sizes[k] for k, c in where)
            if fits:
                if has_nodes:
                    on_nodes[j] = where
                    for k, c in where:
                        node_used[k] += c
                state[j] = RUNNING
                start[j] = t
                end[j] = t + dur[j]
                used += gpus[j]
                running.append(j)
                started_at[t] += 1
            else:
                missed += 1
        batch[t] = used
    for j in running:  # every started job ends by its deadline, so by T
        state[j] = DONE
        done_start[j] = start[j]
        if has_nodes:
            done_place[j] = on_nodes[j]

    if has_nodes:
        place = np.full((n, inst.max_span), -1, dtype=np.int64)
        for j, where in done_place.items():
            for m, (k, _) in enumerate(where):
                place[j, m] = k
        schedule = Schedule.from_array(inst, done_start, place)
    else:
        schedule = Schedule.from_array(inst, done_start)
    if preempt or not unserved.any():
        checked = _actual_instance(inst, scenario)
    else:
        checked = _served_instance(inst, actual, unserved)
    metrics = evaluate(checked, schedule)
    runtime = time.perf_counter() - t_start

    ub = val = None
    status: str | None = None
    bound_time = 0.0
    if clairvoyant is True:
        cb = clairvoyant_bound(inst, scenario, time_limit=bound_time_limit)
    elif isinstance(clairvoyant, ClairvoyantBound):
        cb = clairvoyant
    else:
        cb = None
    if cb is not None:
        ub, val, status, bound_time = cb.upper_bound, cb.value, cb.status, cb.runtime_s

    total_unserved = int(unserved.sum())
    return SimResult(
        instance=inst.name,
        method=method,
        method_params=method_params,
        replan=replan,
        headroom=headroom,
        preempt=preempt,
        scenario_meta=scenario.meta,
        realized_value=metrics.value,
        planned_value=float(planned_value),
        preemptions=len(events),
        lost_gpu_slots=int(lost),
        unserved_gpu_slots=total_unserved,
        utilization=metrics.utilization,
        clairvoyant_bound=ub,
        clairvoyant_value=val,
        bound_status=status,
        bound_applies=preempt or total_unserved == 0,
        jobs_completed=metrics.jobs_run,
        jobs_preempted=len({j for _, j in events}),
        missed_starts=missed,
        plans=plans,
        plan_runtime_s=plan_time,
        runtime_s=runtime,
        bound_runtime_s=bound_time,
        schedule=schedule,
        metrics=metrics,
        timeline={
            "forecast": inst.total_demand.copy(),
            "actual": np.asarray(a_total, dtype=np.int64),
            "served": np.asarray(a_total, dtype=np.int64) - unserved,
            "unserved": unserved,
            "batch": batch,
            "preempted": preempted_at,
            "started": started_at,
        },
        events=tuple(events),
    )


# ------------------------------------------------------------------ trade-off
def peak_headroom(inst: Instance) -> float:
    """The headroom at which the scaled forecast reserves the peak everywhere.

    ``max_t P / F[t] - 1`` over the slots with forecast ``F[t] > 0`` (``F`` the
    services' total, ``P`` its peak): from this headroom on, every such slot
    reserves ``P`` or more, as peak reservation does (a slot forecast at 0
    stays at 0 whatever ``H``; rounding up may reach ``P`` a little earlier).
    0 without inference.
    """
    total = inst.total_demand
    pos = total[total > 0]
    if pos.size == 0:
        return 0.0
    return float(total.max() / pos.min() - 1.0)


def headroom_sweep(
    inst: Instance,
    scenario: Scenario,
    method: str = "list",
    headrooms: Any = None,
    *,
    replan: int | None = None,
    preempt: bool = True,
    baseline: str | None = "fifo",
    clairvoyant: bool | ClairvoyantBound = True,
    bound_time_limit: float = 60.0,
    **method_params: Any,
) -> tuple[list[SimResult], SimResult | None]:
    """The trade-off of headroom: ``method`` at each ``H`` of ``headrooms``, and the baseline.

    Parameters
    ----------
    headrooms
        The values of ``H``; default 9 values from 0 to :func:`peak_headroom`.
    baseline
        A method replayed once with ``replan=None`` and ``H = 0`` (default
        ``fifo``, FIFO-peak: the static end of the trade-off); ``None``: none.
    clairvoyant
        As in :func:`simulate`; the bound is computed once for the whole sweep.

    Returns
    -------
    (results, baseline)
        One :class:`SimResult` per headroom, in order, and the baseline's.
    """
    if headrooms is None:
        headrooms = np.linspace(0.0, peak_headroom(inst), 9)
    cb: bool | ClairvoyantBound = clairvoyant
    if clairvoyant is True:
        cb = clairvoyant_bound(inst, scenario, time_limit=bound_time_limit)
    results = [
        simulate(inst, scenario, method, replan, float(h), preempt, clairvoyant=cb, **method_params)
        for h in headrooms
    ]
    base = (
        simulate(inst, scenario, baseline, None, 0.0, preempt, clairvoyant=cb)
        if baseline is not None else None
    )
    return results, base
