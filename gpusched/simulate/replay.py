"""The replay: operate one day on the actual demand, slot by slot.

At each slot: completions and (every ``replan`` slots) a plan; actual inference
first, preempting running jobs (lowest priority, latest start first) or, with
``preempt=False``, counting inference unserved; then the plan's starts that fit
in the pool and on their nodes, each job keeping its plan's placement (on model
version 3 its GPU indices; :mod:`.occupancy` says what fits). Everything
reported comes from :func:`instances.evaluate` of the completed runs on the
actual demand, in the instance's objective. The rules are in docs/simulation.md.
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any

import numpy as np

import gpusched
from heuristics.placement import new_place, place_width
from heuristics.shares import schedule_of
from instances import Instance, Metrics, Scenario, Schedule, Service, actual_instance, evaluate
from milp.gpus import gpu_indices

from .occupancy import occupancy
from .plan import Plan, Planner, Where, where_of
from .result import ClairvoyantBound, SimResult, clairvoyant_bound

__all__ = ["check_policy", "simulate"]

logger = logging.getLogger(__name__)

WAITING, RUNNING, DONE = 0, 1, 2


def check_policy(replan: Any, headroom: Any, preempt: Any) -> tuple[int | None, float, bool]:
    """A replay policy checked (a ``ValueError`` ``replan: ...``, ``headroom: ...`` or
    ``preempt: ...`` for a bad one), for :func:`simulate` and a sweep's ``[policy]``."""
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
    return (None if replan is None else int(replan)), float(headroom), preempt


def _served_instance(inst: Instance, actual: np.ndarray, unserved: np.ndarray) -> Instance:
    """The instance with the demand served: each slot's unserved GPUs taken from the
    services of lowest priority first (ties: later in the list first).
    """
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
    inst: Instance, plan: Plan, schedule: Schedule, starts: np.ndarray, until: int, method: str,
) -> dict[int, Where]:
    """Per job the plan starts before ``until`` (by original index), where it runs on the
    capacity model of ``inst``: on model version 3 with its GPU indices on ``inst``'s nodes
    (the plan's indices on a node it holds less of mapped back; a plan of whole-GPU jobs
    that gives counts gets its indices by interval colouring, :func:`milp.gpus.gpu_indices`).

    Raises
    ------
    RuntimeError
        When the method starts a job without a placement on the plan's nodes.
    """
    p = plan.instance
    assert p is not None
    out: dict[int, Where] = {}
    v3 = inst.jobs_use_resources
    coloured: dict[str, dict[str, tuple[int, ...]]] | None = None
    for k in np.flatnonzero((starts >= 0) & (starts < until)).tolist():
        job = p.jobs[k]
        on: Any = schedule.placement.get(job.name)
        if v3 and on:
            if job.name in schedule.indices:
                on = schedule.indices[job.name]
            else:
                coloured = _coloured(p, schedule, starts) if coloured is None else coloured
                on = coloured.get(job.name, on)
            on = {node: tuple(plan.gpu_map[node][i] for i in held) if node in plan.gpu_map
                  else held for node, held in on.items()}
        try:
            where = where_of(inst, job, on)
        except ValueError as e:
            raise RuntimeError(f"method {method!r} started job {job.name!r} with an invalid "
                               f"placement on instance {inst.name!r}: {e}") from e
        if where is None:
            raise RuntimeError(
                f"method {method!r} started job {job.name!r} without a valid placement on the "
                f"nodes of instance {inst.name!r} (is it node-aware?)"
            )
        out[int(plan.jobs[k])] = where
    return out


def _coloured(plan: Instance, schedule: Schedule, starts: np.ndarray
              ) -> dict[str, dict[str, tuple[int, ...]]]:
    """The GPU indices of a plan's schedule that gives counts (whole GPUs only)."""
    place = schedule.to_placement_array(plan)
    held = gpu_indices(plan, starts, place, np.full(plan.num_jobs, -1, dtype=np.int64))
    names = [n.name for n in plan.nodes or ()]
    return {plan.jobs[j].name: {names[k]: v for k, v in on.items()} for j, on in held.items()}


def _bound(
    inst: Instance, scenario: Scenario, clairvoyant: bool | ClairvoyantBound, time_limit: float,
) -> ClairvoyantBound | None:
    if clairvoyant is True:
        return clairvoyant_bound(inst, scenario, time_limit=time_limit)
    return clairvoyant if isinstance(clairvoyant, ClairvoyantBound) else None


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
    scenario
        The actual demand (validated against ``inst``).
    method
        Any method of :func:`gpusched.solve`; it makes every plan.
    replan
        Slots between plans (from slot 0); ``None``: one plan, at slot 0.
    headroom
        ``H >= 0``: plans see the forecast scaled by ``1 + H``.
    preempt
        Preempt batch jobs to serve inference, or leave the excess unserved and count it.
    clairvoyant
        Compute the clairvoyant bound (``True``), skip it, or a
        :class:`ClairvoyantBound` computed before for this instance and scenario.
    bound_time_limit
        Seconds of the bound's MILP.
    **method_params
        Passed to ``gpusched.solve`` at every plan (``time_limit``: each plan's budget).

    Raises
    ------
    ValueError
        For a scenario that does not fit, a bad policy, or an unknown method or parameter.
    RuntimeError
        On nodes, when the method starts a job without a placement.
    """
    t_start = time.perf_counter()
    replan, headroom, _ = check_policy(replan, headroom, preempt)
    _check_inputs(inst, scenario, clairvoyant)
    day = _Replay(inst, scenario, method, method_params, replan, headroom, preempt)
    day.run()
    schedule, metrics = day.outcome()
    runtime = time.perf_counter() - t_start
    cb = _bound(inst, scenario, clairvoyant, bound_time_limit)
    return _result(day, schedule, metrics, runtime, cb)


def _check_inputs(inst: Instance, scenario: Any, clairvoyant: Any) -> None:
    """A ``ValueError`` for a scenario that is not one or does not fit ``inst``, or a
    ``clairvoyant`` that is neither a bool nor a bound of this instance, scenario and
    objective."""
    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario: must be a Scenario, got {type(scenario).__name__}")
    scenario.validate(inst)
    if isinstance(clairvoyant, ClairvoyantBound):
        if (clairvoyant.instance != inst.name or clairvoyant.scenario != scenario
                or clairvoyant.objective != inst.objective):
            raise ValueError("clairvoyant: the bound was computed for another instance, "
                             "scenario or objective")
    elif not isinstance(clairvoyant, bool):
        raise ValueError(f"clairvoyant: must be true, false or a ClairvoyantBound, got {clairvoyant!r}")


class _Replay:
    """One day replayed: the set-up (:meth:`__init__`), the slots by re-planning epoch
    (:meth:`run`), what each slot does (:meth:`_complete`, :meth:`_plan`, :meth:`_serve`,
    :meth:`_start_planned`), and what was realized (:meth:`outcome`)."""

    def __init__(self, inst: Instance, scenario: Scenario, method: str,
                 method_params: dict[str, Any], replan: int | None, headroom: float,
                 preempt: bool) -> None:
        self.inst, self.method, self.method_params = inst, method, method_params
        self.replan, self.headroom, self.preempt = replan, headroom, preempt
        G, T, n = inst.num_gpus, inst.horizon, inst.num_jobs
        self.G, self.T = G, T
        self.scenario_meta = scenario.meta
        self.actual = scenario.demand(inst)
        self.a_total: list[int] = (self.actual.sum(axis=0).tolist() if self.actual.size
                                   else [0] * T)
        self.planner = Planner(inst, self.actual, headroom)
        self.checked = actual_instance(inst, scenario)
        self.occ = occupancy(inst, self.checked, self.planner.cap)
        # a job's GPU amount in milli (g_j gpu_milli_j): what a preempted run loses per slot
        self.milli = (inst.gpus * np.array([j.gpu_milli for j in inst.jobs], dtype=np.int64)
                      ).tolist()
        self.dur = inst.durations.tolist()
        self.prio = inst.priorities.tolist()
        self.names = [j.name for j in inst.jobs]
        self.state = np.zeros(n, dtype=np.int8)
        self.start = np.full(n, -1, dtype=np.int64)
        self.end = np.full(n, -1, dtype=np.int64)
        self.running: list[int] = []
        self.batch = np.zeros(T, dtype=np.int64)
        self.unserved = np.zeros(T, dtype=np.int64)
        self.preempted_at = np.zeros(T, dtype=np.int64)
        self.started_at = np.zeros(T, dtype=np.int64)
        self.events: list[tuple[int, str]] = []
        # each job's placement as its plan gave it, and where each running and each
        # completed job is
        self.planned_on: dict[int, Where] = {}
        self.on_nodes: dict[int, Where] = {}
        self.done_on: dict[int, Where] = {}
        self.lost_milli = 0
        self.missed = 0
        self.plans = 0
        self.plan_time = 0.0
        self.planned_value = 0.0
        self.by_slot: dict[int, list[int]] = {}

    def run(self) -> None:
        """Every slot, one re-planning epoch after another (the whole day without ``replan``):
        at an epoch's first slot the completions, then the plan; then at every slot of it the
        completions, inference and the plan's starts. The jobs still running at the end
        complete (each ends by its deadline, so by the horizon)."""
        T = self.T
        step = max(T if self.replan is None else self.replan, 1)
        for t0 in range(0, T, step):
            for t in range(t0, min(t0 + step, T)):
                self._complete(t)
                if t == t0:
                    self._plan(t)
                self._serve(t)
                self._start_planned(t)
                self.batch[t] = self.occ.busy(t)
        for j in self.running:
            self.state[j] = DONE
            self.done_on[j] = self.on_nodes[j]

    def _complete(self, t: int) -> None:
        """The running jobs that end by ``t`` complete."""
        if not self.running:
            return
        still = [j for j in self.running if self.end[j] > t]
        if len(still) < len(self.running):
            for j in self.running:
                if self.end[j] <= t:
                    self.state[j] = DONE
                    self.occ.stop(j, t)
                    self.done_on[j] = self.on_nodes.pop(j)
            self.running = still

    def _plan(self, t: int) -> None:
        """The plan of slot ``t`` for the waiting jobs: the method's starts before the next
        plan, by slot (in job-list order), and the placements they keep."""
        self.by_slot = {}
        waiting = self.state == WAITING
        if waiting.any():
            planner = self.planner
            plan = planner.build(t, waiting, planner.held(t, self.running, self.end,
                                                          self.on_nodes))
            if plan.instance is not None and plan.instance.num_jobs:
                res = gpusched.solve(plan.instance, self.method, **self.method_params)
                if str(res.status) == "error":
                    logger.warning("plan at slot %d: %s failed: %s", t, self.method, res.message)
                self.plan_time += res.runtime_s
                starts = res.schedule.to_array(plan.instance)
                for k in np.flatnonzero(starts >= 0).tolist():
                    self.by_slot.setdefault(int(starts[k]), []).append(int(plan.jobs[k]))
                # only the starts before the next plan are ever looked at
                until = self.T if self.replan is None else t + self.replan
                self.planned_on = _plan_placements(self.inst, plan, res.schedule, starts, until,
                                                   self.method)
                if t == 0:
                    self.planned_value = res.value
                self.plans += 1
        for lst in self.by_slot.values():
            lst.sort()

    def _serve(self, t: int) -> None:
        """Inference first: preempt running jobs (lowest priority, latest start first) until
        the actual demand fits, or (without ``preempt``) count what does not."""
        a, G, occ = self.a_total[t], self.G, self.occ
        if a + occ.busy(t) <= G:
            return
        if not self.preempt:
            self.unserved[t] = a + occ.busy(t) - G
            return
        prio, start = self.prio, self.start
        while a + occ.busy(t) > G:
            v = min(self.running, key=lambda j: (prio[j], -start[j], -j))
            self.running.remove(v)
            occ.stop(v, t)
            self.on_nodes.pop(v)
            self.lost_milli += self.milli[v] * (t - int(start[v]))
            self.state[v] = WAITING
            self.preempted_at[t] += 1
            self.events.append((t, self.names[v]))

    def _start_planned(self, t: int) -> None:
        """The plan's starts at ``t``, in job-list order, each if it fits now (else missed)."""
        a = self.a_total[t]
        for j in self.by_slot.get(t, ()):
            if self.state[j] != WAITING:  # pragma: no cover - a plan only holds waiting jobs
                continue
            where = self.planned_on[j]
            if self.occ.fits(j, where, t, a):
                self.occ.start(j, where, t)
                self.on_nodes[j] = where
                self.state[j] = RUNNING
                self.start[j] = t
                self.end[j] = t + self.dur[j]
                self.running.append(j)
                self.started_at[t] += 1
            else:
                self.missed += 1

    def outcome(self) -> tuple[Schedule, Metrics]:
        """The completed runs as a schedule and its metrics on the actual demand (the demand
        served, when inference went unserved)."""
        schedule = _realized(self.inst, self.planner, self.start, self.done_on)
        checked = self.checked
        if not self.preempt and self.unserved.any():
            checked = _served_instance(self.inst, self.actual, self.unserved)
        return schedule, evaluate(checked, schedule)


def _result(day: _Replay, schedule: Schedule, metrics: Metrics, runtime: float,
            cb: ClairvoyantBound | None) -> SimResult:
    """The :class:`SimResult` of a replayed day."""
    inst = day.inst
    total_unserved = int(day.unserved.sum())
    lost = day.lost_milli
    a_total = np.asarray(day.a_total, dtype=np.int64)
    return SimResult(
        instance=inst.name,
        method=day.method,
        method_params=day.method_params,
        replan=day.replan,
        headroom=day.headroom,
        preempt=day.preempt,
        scenario_meta=day.scenario_meta,
        realized_value=metrics.value,
        planned_value=float(day.planned_value),
        preemptions=len(day.events),
        lost_gpu_slots=lost // 1000 if lost % 1000 == 0 else lost / 1000,
        unserved_gpu_slots=total_unserved,
        utilization=metrics.utilization,
        clairvoyant_bound=None if cb is None else cb.bound,
        clairvoyant_value=None if cb is None else cb.value,
        bound_status=None if cb is None else cb.status,
        bound_applies=day.preempt or total_unserved == 0,
        jobs_completed=metrics.jobs_run,
        objective=inst.objective,
        mean_jct_hours=metrics.mean_jct_hours,
        jobs_censored=metrics.jobs_censored,
        jobs_preempted=len({j for _, j in day.events}),
        missed_starts=day.missed,
        plans=day.plans,
        plan_runtime_s=day.plan_time,
        runtime_s=runtime,
        bound_runtime_s=0.0 if cb is None else cb.runtime_s,
        schedule=schedule,
        metrics=metrics,
        timeline={
            "forecast": inst.total_demand.copy(),
            "actual": a_total,
            "served": a_total - day.unserved,
            "unserved": day.unserved,
            "batch": day.batch,
            "preempted": day.preempted_at,
            "started": day.started_at,
        },
        events=tuple(day.events),
    )


def _realized(
    inst: Instance, planner: Planner, start: np.ndarray, done_on: dict[int, Where],
) -> Schedule:
    """The completed jobs at the start of their completed run, with their nodes (and, on
    model version 3, their GPU indices)."""
    done_start = np.full(inst.num_jobs, -1, dtype=np.int64)
    if planner.cap.shares is not None:
        place = new_place(inst)
        span = place_width(inst)[0]
        for j, where in done_on.items():
            done_start[j] = start[j]
            place[j, : len(where.nodes)] = [k for k, _ in where.nodes]
            place[j, span : span + len(where.gpus)] = where.gpus
        return schedule_of(inst, done_start, place)
    place = np.full((inst.num_jobs, inst.max_span), -1, dtype=np.int64)
    for j, where in done_on.items():
        done_start[j] = start[j]
        for m, (k, _) in enumerate(where.nodes):
            place[j, m] = k
    return Schedule.from_array(inst, done_start, None if planner.cap.flat else place)
