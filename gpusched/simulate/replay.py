"""The replay: operate one day on the actual demand, slot by slot.

At each slot: completions and (every ``replan`` slots) a plan; actual inference
first, preempting running jobs (lowest priority, latest start first) or, with
``preempt=False``, counting inference unserved; then the plan's starts that fit
in the pool and on their nodes. Everything reported comes from
:func:`instances.evaluate` of the completed runs on the actual demand. The rules
are in docs/simulation.md.
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any

import numpy as np

import gpusched
from instances import Instance, Scenario, Schedule, Service, actual_instance, evaluate

from .plan import Planner, node_counts
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
    inst: Instance, plan: Instance, schedule: Schedule, idx: np.ndarray, starts: np.ndarray,
    until: int, method: str,
) -> dict[int, list[tuple[int, int]]]:
    """Per job the plan starts before ``until`` (by original index), its ``(node position,
    GPUs)`` on the capacity model of ``inst``.

    Raises
    ------
    RuntimeError
        When the method starts a job without a placement on the plan's nodes.
    """
    out: dict[int, list[tuple[int, int]]] = {}
    placement = schedule.placement
    for k in np.flatnonzero((starts >= 0) & (starts < until)).tolist():
        job = plan.jobs[k]
        where = node_counts(inst, job, placement.get(job.name))
        if where is None:
            raise RuntimeError(
                f"method {method!r} started job {job.name!r} without a valid placement on the "
                f"nodes of instance {inst.name!r} (is it node-aware?)"
            )
        out[int(idx[k])] = where
    return out


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
        if clairvoyant.instance != inst.name or clairvoyant.scenario != scenario:
            raise ValueError("clairvoyant: the bound was computed for another instance or scenario")
    elif not isinstance(clairvoyant, bool):
        raise ValueError(f"clairvoyant: must be true, false or a ClairvoyantBound, got {clairvoyant!r}")

    G, T, n = inst.num_gpus, inst.horizon, inst.num_jobs
    actual = scenario.demand(inst)
    a_total = actual.sum(axis=0).tolist() if actual.size else [0] * T
    planner = Planner(inst, actual, headroom)
    gpus = inst.gpus.tolist()
    dur = inst.durations.tolist()
    prio = inst.priorities.tolist()
    names = [j.name for j in inst.jobs]

    state = np.zeros(n, dtype=np.int8)
    start = np.full(n, -1, dtype=np.int64)
    end = np.full(n, -1, dtype=np.int64)
    running: list[int] = []
    used = 0
    batch = np.zeros(T, dtype=np.int64)
    unserved = np.zeros(T, dtype=np.int64)
    preempted_at = np.zeros(T, dtype=np.int64)
    started_at = np.zeros(T, dtype=np.int64)
    events: list[tuple[int, str]] = []
    # the GPUs in use on each node of the capacity model, each job's (node, GPUs)
    # as its plan placed it, and where each running and each completed job is
    sizes = planner.cap.sizes.tolist()
    node_used = [0] * len(sizes)
    planned_on: dict[int, list[tuple[int, int]]] = {}
    on_nodes: dict[int, list[tuple[int, int]]] = {}
    done_on: dict[int, list[tuple[int, int]]] = {}
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
                        used -= gpus[j]
                        done_on[j] = on_nodes.pop(j)
                        for k, c in done_on[j]:
                            node_used[k] -= c
                running = still
        if t == 0 or (replan is not None and t % replan == 0):
            waiting = state == WAITING
            by_slot = {}
            if waiting.any():
                held = np.asarray(node_used, dtype=np.int64)
                plan, idx = planner.build(t, waiting, running, end, held)
                if plan is not None and plan.num_jobs:
                    res = gpusched.solve(plan, method, **method_params)
                    if str(res.status) == "error":
                        logger.warning("plan at slot %d: %s failed: %s", t, method, res.message)
                    plan_time += res.runtime_s
                    starts = res.schedule.to_array(plan)
                    for k in np.flatnonzero(starts >= 0).tolist():
                        by_slot.setdefault(int(starts[k]), []).append(int(idx[k]))
                    # only the starts before the next plan are ever looked at
                    until = T if replan is None else t + replan
                    planned_on = _plan_placements(inst, plan, res.schedule, idx, starts, until,
                                                  method)
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
            where = planned_on[j]
            if a + used + gpus[j] <= G and all(node_used[k] + c <= sizes[k] for k, c in where):
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
        done_on[j] = on_nodes[j]

    schedule = _realized(inst, planner, start, done_on)
    if preempt or not unserved.any():
        checked = actual_instance(inst, scenario)
    else:
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
        lost_gpu_slots=int(lost),
        unserved_gpu_slots=total_unserved,
        utilization=metrics.utilization,
        clairvoyant_bound=None if cb is None else cb.upper_bound,
        clairvoyant_value=None if cb is None else cb.value,
        bound_status=None if cb is None else cb.status,
        bound_applies=preempt or total_unserved == 0,
        jobs_completed=metrics.jobs_run,
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
    inst: Instance, planner: Planner, start: np.ndarray, done_on: dict[int, list[tuple[int, int]]],
) -> Schedule:
    """The completed jobs at the start of their completed run, with their nodes."""
    done_start = np.full(inst.num_jobs, -1, dtype=np.int64)
    place = np.full((inst.num_jobs, inst.max_span), -1, dtype=np.int64)
    for j, where in done_on.items():
        done_start[j] = start[j]
        for m, (k, _) in enumerate(where):
            place[j, m] = k
    return Schedule.from_array(inst, done_start, None if planner.cap.flat else place)
