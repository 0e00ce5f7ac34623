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
from heuristics.shares import new_place, place_width, schedule_of
from instances import Instance, Scenario, Schedule, Service, actual_instance, evaluate
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

    G, T, n = inst.num_gpus, inst.horizon, inst.num_jobs
    actual = scenario.demand(inst)
    a_total = actual.sum(axis=0).tolist() if actual.size else [0] * T
    planner = Planner(inst, actual, headroom)
    checked = actual_instance(inst, scenario)
    occ = occupancy(inst, checked, planner.cap)
    # a job's GPU amount in milli (g_j gpu_milli_j): what a preempted run loses per slot
    milli = (inst.gpus * np.array([j.gpu_milli for j in inst.jobs], dtype=np.int64)).tolist()
    dur = inst.durations.tolist()
    prio = inst.priorities.tolist()
    names = [j.name for j in inst.jobs]

    state = np.zeros(n, dtype=np.int8)
    start = np.full(n, -1, dtype=np.int64)
    end = np.full(n, -1, dtype=np.int64)
    running: list[int] = []
    batch = np.zeros(T, dtype=np.int64)
    unserved = np.zeros(T, dtype=np.int64)
    preempted_at = np.zeros(T, dtype=np.int64)
    started_at = np.zeros(T, dtype=np.int64)
    events: list[tuple[int, str]] = []
    # each job's placement as its plan gave it, and where each running and each
    # completed job is
    planned_on: dict[int, Where] = {}
    on_nodes: dict[int, Where] = {}
    done_on: dict[int, Where] = {}
    lost_milli = 0
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
                        occ.stop(j, t)
                        done_on[j] = on_nodes.pop(j)
                running = still
        if t == 0 or (replan is not None and t % replan == 0):
            waiting = state == WAITING
            by_slot = {}
            if waiting.any():
                plan = planner.build(t, waiting, planner.held(t, running, end, on_nodes))
                if plan.instance is not None and plan.instance.num_jobs:
                    res = gpusched.solve(plan.instance, method, **method_params)
                    if str(res.status) == "error":
                        logger.warning("plan at slot %d: %s failed: %s", t, method, res.message)
                    plan_time += res.runtime_s
                    starts = res.schedule.to_array(plan.instance)
                    for k in np.flatnonzero(starts >= 0).tolist():
                        by_slot.setdefault(int(starts[k]), []).append(int(plan.jobs[k]))
                    # only the starts before the next plan are ever looked at
                    until = T if replan is None else t + replan
                    planned_on = _plan_placements(inst, plan, res.schedule, starts, until, method)
                    if t == 0:
                        planned_value = res.value
                    plans += 1
            for lst in by_slot.values():
                lst.sort()
        a = a_total[t]
        # 1. inference first
        if a + occ.busy(t) > G:
            if preempt:
                while a + occ.busy(t) > G:
                    v = min(running, key=lambda j: (prio[j], -start[j], -j))
                    running.remove(v)
                    occ.stop(v, t)
                    on_nodes.pop(v)
                    lost_milli += milli[v] * (t - int(start[v]))
                    state[v] = WAITING
                    preempted_at[t] += 1
                    events.append((t, names[v]))
            else:
                unserved[t] = a + occ.busy(t) - G
        # 2. the plan's starts at t, in job-list order, each if it fits now
        for j in by_slot.get(t, ()):
            if state[j] != WAITING:  # pragma: no cover - a plan only holds waiting jobs
                continue
            where = planned_on[j]
            if occ.fits(j, where, t, a):
                occ.start(j, where, t)
                on_nodes[j] = where
                state[j] = RUNNING
                start[j] = t
                end[j] = t + dur[j]
                running.append(j)
                started_at[t] += 1
            else:
                missed += 1
        batch[t] = occ.busy(t)
    for j in running:  # every started job ends by its deadline, so by T
        state[j] = DONE
        done_on[j] = on_nodes[j]

    schedule = _realized(inst, planner, start, done_on)
    if not preempt and unserved.any():
        checked = _served_instance(inst, actual, unserved)
    metrics = evaluate(checked, schedule)
    runtime = time.perf_counter() - t_start

    cb = _bound(inst, scenario, clairvoyant, bound_time_limit)
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
        lost_gpu_slots=lost_milli // 1000 if lost_milli % 1000 == 0 else lost_milli / 1000,
        unserved_gpu_slots=total_unserved,
        utilization=metrics.utilization,
        clairvoyant_bound=None if cb is None else cb.bound,
        clairvoyant_value=None if cb is None else cb.value,
        bound_status=None if cb is None else cb.status,
        bound_applies=preempt or total_unserved == 0,
        jobs_completed=metrics.jobs_run,
        objective=inst.objective,
        mean_jct_hours=metrics.mean_jct_hours,
        jobs_censored=metrics.jobs_censored,
        jobs_preempted=len({j for _, j in events}),
        missed_starts=missed,
        plans=plans,
        plan_runtime_s=plan_time,
        runtime_s=runtime,
        bound_runtime_s=0.0 if cb is None else cb.runtime_s,
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
