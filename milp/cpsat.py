"""The CP-SAT backend (OR-Tools, the ``cpsat`` extra): the independent cross-check.

A different model of the same problem: one optional interval per job (start
domain = the starts that have a column in the MILP), one cumulative
constraint of capacity ``G`` in which the inference demand is a set of fixed
intervals (one per run of equal summed demand). Identical jobs are ordered
(presence and start) to break their symmetry. On nodes a job also chooses
one of its placements (a literal each, exactly one when it runs; a start
domain of its own where the MILP has fewer columns there), and each node
that has a capacity row in the MILP gets a cumulative of its GPUs holding
the intervals placed there (``g_j``, or the node's GPUs for a multi-node
job) and the GPUs withheld there as fixed intervals. A flat pool has no such
node: its model is the one above.

On model version 3 (:mod:`milp.shares`) a shared job chooses a GPU slot
``(k, v)`` of its node instead (a literal each): each slot gets a cumulative
of capacity 1000 holding the shares placed there, and a boolean per slot
and time slot that must be on whenever a share placed there covers it
(one clause per share, slot and time slot, over literals ``start <= t``);
these busy booleans, as fixed intervals of one GPU, are what the shared
jobs put in the pool and node cumulatives. Each node with CPU or memory
gets a cumulative of them over the one-node jobs placed there.

CP-SAT needs integer objective coefficients. Each job value ``v_j`` is scaled
by ``S`` (a power of ten making every value an integer when one up to 10^6
does, as for two-decimal priorities) and rounded *up*, ``c_j = ceil(v_j S)``,
so ``sum_j v_j x_j <= sum_j c_j x_j / S`` for every schedule: CP-SAT's bound
divided by ``S`` (plus a relative 1e-9 for the float division) is an upper
bound on the true value. The value itself is recomputed by the checker.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from instances import Instance, Status
from instances.resources import resources, uses_resources

from .backend import RawSolve, Solution, as_solution
from .formulation import Formulation
from .progress import Progress
from .shares import canonical_gpu

__all__ = ["demand_runs", "objective_scale", "solve_cpsat"]


def objective_scale(values: np.ndarray) -> tuple[float, np.ndarray]:
    """Scale ``S`` and integer coefficients ``c >= values * S`` (rounded up).

    Returns
    -------
    (float, numpy.ndarray)
        ``S`` and the int64 coefficients; ``c / S >= values`` up to 1e-9 relative.
    """
    values = np.asarray(values, dtype=np.float64)
    top = float(values.max(initial=0.0))
    scale = None
    for d in range(7):
        s = 10.0**d
        v = values * s
        if np.all(np.abs(v - np.rint(v)) <= 1e-9 * np.maximum(1.0, v)) and top * s < 2**50:
            scale = s
            break
    if scale is None:
        # keep the largest coefficient near 1e9 (sums stay far below 2^63)
        scale = 10.0 ** math.floor(9 - math.log10(max(top, 1e-300)))
    v = values * scale
    near = np.abs(v - np.rint(v)) <= 1e-9 * np.maximum(1.0, v)
    coef = np.where(near, np.rint(v), np.ceil(v)).astype(np.int64)
    return scale, coef


def demand_runs(total: np.ndarray) -> list[tuple[int, int, int]]:
    """Maximal runs ``(start, length, height)`` of equal positive demand."""
    runs = []
    t, T = 0, total.size
    while t < T:
        u = t
        while u < T and total[u] == total[t]:
            u += 1
        if total[t] > 0:
            runs.append((t, u - t, int(total[t])))
        t = u
    return runs


def solve_cpsat(
    form: Formulation, *, time_limit: float, mip_gap: float, threads: int,
    warm_start: Solution | np.ndarray | None, progress: Progress | None, seed: int = 0,
    stop: threading.Event | None = None, on_solution: Callable[[Solution], None] | None = None,
    **options: Any,
) -> RawSolve:
    """Solve with OR-Tools CP-SAT (``threads`` search workers).

    ``stop``, when set by another solver of a portfolio, ends the search.
    ``on_solution`` is called with every improving solution CP-SAT finds
    during the search, as a :data:`Solution` (``(start, place)``; ``place``
    ``None`` flat), from CP-SAT's thread: the incumbents it hands to the
    others of a portfolio. The warm start becomes solution hints (its
    placement relabelled as ``form.encode`` does). ``**options`` are CP-SAT
    parameters by name (``interleave_search=True``, ...).
    """
    from ortools.sat.python import cp_model

    if form.relax != "exact":
        raise ValueError(f"relax: CP-SAT solves the exact model only, not the {form.relax!r} "
                         "relaxation")
    inst = form.instance
    model = cp_model.CpModel()
    timed = inst.objective != "value"  # a start's delay costs (flow)
    scale, coef = objective_scale(np.concatenate([inst.worth_base, inst.worth_slope])
                                  if timed else inst.worth_base)
    jobs = _job_vars(form, model)
    for t, length, height in demand_runs(np.asarray(inst.total_demand)):
        jobs.pool.append(model.new_fixed_size_interval_var(t, length, f"demand_{t}"))
        jobs.heights.append(height)
    if form.has_slots:
        _busy(form, model, jobs)
    model.add_cumulative(jobs.pool, jobs.heights, inst.num_gpus)
    for k, (ivs, hs) in jobs.nodes.items():
        cap = int(form.node_free[k].max(initial=0))
        for t, length, height in demand_runs(cap - form.node_free[k]):
            ivs.append(model.new_fixed_size_interval_var(t, length, f"withheld_{k}_{t}"))
            hs.append(height)
        model.add_cumulative(ivs, hs, cap)
    if uses_resources(inst):
        _node_resources(form, model, jobs)
    model.maximize(sum(int(coef[j]) * x for j, x in jobs.present.items())
                   - (_delay_cost(inst, model, jobs, scale) if timed else 0))
    ws = as_solution(warm_start)
    if ws is not None:
        _hint(form, model, jobs, ws)

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit)
    solver.parameters.num_workers = int(threads)
    solver.parameters.relative_gap_limit = float(mip_gap)
    solver.parameters.random_seed = int(seed)
    for key, value in options.items():
        if not hasattr(solver.parameters, key):
            raise ValueError(f"params: CP-SAT has no parameter {key!r}")
        setattr(solver.parameters, key, value)
    done = threading.Event()
    if stop is not None:
        def watch() -> None:
            while not done.wait(0.05):
                if stop.is_set():
                    solver.stop_search()
                    return

        threading.Thread(target=watch, daemon=True).start()
    callback = None if on_solution is None else _found(cp_model, form, jobs, on_solution)
    try:
        code = solver.solve(model, callback)
    finally:
        done.set()
    name = solver.status_name(code)
    start = place = gpu = None
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        sol = _arrays(form, jobs, solver.boolean_value, solver.value)
        start, place = sol[0], sol[1]
        if form.has_slots:
            gpu = np.full(inst.num_jobs, -1, dtype=np.int64)
            for (j, q), lit in jobs.on.items():
                if form.place_gpu[q] >= 0 and solver.boolean_value(lit):  # type: ignore[index]
                    gpu[j] = form.place_gpu[q]  # type: ignore[index]
    if code == cp_model.OPTIMAL:
        status = Status.OPTIMAL
    elif code in (cp_model.FEASIBLE, cp_model.UNKNOWN):
        status = Status.TIME_LIMIT
    elif code == cp_model.INFEASIBLE:
        status = Status.INFEASIBLE
    else:
        status = Status.ERROR
    dual = None
    # not on UNKNOWN: stopped before its search (by a portfolio's other solver), CP-SAT
    # reported a bound of 0 below a feasible value (model version 3, 2026-12-01)
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        b = float(solver.best_objective_bound)
        if math.isfinite(b):
            dual = b / scale * (1 + 1e-9) + 1e-12
    return RawSolve(
        status=status,
        start=start,
        dual_bound=dual,
        lp_bound=None,
        nodes=int(solver.num_branches),
        message=f"CP-SAT: {name}, objective scale {scale:g}",
        place=place,
        gpu=gpu,
    )


def _delay_cost(inst: Instance, model: Any, jobs: _JobVars, scale: float) -> Any:
    """``sum_j slope_j S_j`` over the jobs run, scaled and rounded down (the objective
    then never falls below the worth, so CP-SAT's bound stays one)."""
    v = inst.worth_slope * scale
    near = np.abs(v - np.rint(v)) <= 1e-9 * np.maximum(1.0, v)
    slope = np.where(near, np.rint(v), np.floor(v)).astype(np.int64)
    terms = []
    for j, x in jobs.present.items():
        if slope[j] == 0:
            continue
        s = jobs.starts[j]
        e = model.new_int_var(0, jobs.span[j][1], f"delay_{inst.jobs[j].name}")  # S_j if run, else 0
        model.add(e == s).only_enforce_if(x)
        model.add(e == 0).only_enforce_if(~x)
        terms.append(int(slope[j]) * e)
    return sum(terms)


@dataclass
class _JobVars:
    """The model's variables: per job a start and a presence, per (job, placement) a literal."""

    starts: dict[int, Any] = field(default_factory=dict)
    present: dict[int, Any] = field(default_factory=dict)
    on: dict[tuple[int, int], Any] = field(default_factory=dict)
    pool: list[Any] = field(default_factory=list)
    heights: list[int] = field(default_factory=list)
    nodes: dict[int, tuple[list[Any], list[int]]] = field(default_factory=dict)
    placed: dict[tuple[int, int], Any] = field(default_factory=dict)
    span: dict[int, tuple[int, int]] = field(default_factory=dict)


def _job_vars(form: Formulation, model: Any) -> _JobVars:
    """Intervals of every job on the pool and on the nodes that have a capacity row."""
    from ortools.util.python import sorted_interval_list

    inst = form.instance
    out = _JobVars()
    bound = set(form.bound_nodes.tolist())
    out.nodes = {k: ([], []) for k in sorted(bound)}
    shared = resources(inst).shared if form.has_slots else np.zeros(inst.num_jobs, dtype=bool)
    group_cols = np.split(np.arange(form.num_x), np.flatnonzero(np.diff(form.col_group)) + 1)
    for cols in group_cols:
        if cols.size == 0:
            continue
        k = int(form.col_group[cols[0]])
        union = np.unique(form.col_start[cols])
        n_starts = union.size
        domain = sorted_interval_list.Domain.from_values(union.tolist())
        qs = np.unique(form.col_place[cols]).tolist()
        previous = None
        for j in form.groups[k].tolist():
            job = inst.jobs[j]
            s = model.new_int_var_from_domain(domain, f"start_{job.name}")
            x = model.new_bool_var(f"run_{job.name}")
            iv = model.new_optional_fixed_size_interval_var(s, job.duration, x, f"iv_{job.name}")
            if not shared[j]:  # a share is in the pool through its GPU slot's busy booleans
                out.pool.append(iv)
                out.heights.append(job.gpus)
            out.starts[j], out.present[j] = s, x
            out.span[j] = (int(union[0]), int(union[-1]))
            if previous is not None:  # identical jobs: run and start in order
                model.add_implication(x, out.present[previous])
                model.add(out.starts[previous] <= s).only_enforce_if(x)
            previous = j
            if not inst.has_nodes:
                continue
            lits = []
            for q in qs:
                where = form.placements[q]
                lit = x if len(qs) == 1 else model.new_bool_var(f"run_{job.name}@{q}")
                own = form.col_start[cols[form.col_place[cols] == q]]
                if own.size < n_starts:  # fewer starts on this placement than on the union
                    model.add_linear_expression_in_domain(
                        s, sorted_interval_list.Domain.from_values(own.tolist())).only_enforce_if(lit)
                on = iv if lit is x else model.new_optional_fixed_size_interval_var(
                    s, job.duration, lit, f"iv_{job.name}@{q}")
                out.placed[(j, q)] = on
                for node in bound.intersection(where) if not shared[j] else ():
                    out.nodes[node][0].append(on)
                    out.nodes[node][1].append(job.gpus if len(where) == 1 else int(inst.node_gpus[node]))
                out.on[(j, q)] = lit
                lits.append(lit)
            if len(lits) > 1:
                model.add(sum(lits) == x)
    return out


def _arrays(form: Formulation, jobs: _JobVars, boolean: Callable[[Any], bool],
            value: Callable[[Any], int]) -> Solution:
    """The schedule of a CP-SAT solution, read through ``boolean`` and ``value``."""
    inst = form.instance
    start = np.full(inst.num_jobs, -1, dtype=np.int64)
    for j, x in jobs.present.items():
        if boolean(x):
            start[j] = value(jobs.starts[j])
    place = None
    if inst.has_nodes:
        place = np.full((inst.num_jobs, inst.max_span), -1, dtype=np.int64)
        for (j, q), lit in jobs.on.items():
            if boolean(lit):
                place[j] = form.place_nodes[q][: inst.max_span]
    return start, place


def _found(cp_model: Any, form: Formulation, jobs: _JobVars,
           on_solution: Callable[[Solution], None]) -> Any:
    """A CP-SAT solution callback handing every solution to ``on_solution`` as arrays."""

    class Found(cp_model.CpSolverSolutionCallback):  # type: ignore[misc]
        def on_solution_callback(self) -> None:
            on_solution(_arrays(form, jobs, self.boolean_value, self.value))

    return Found()


def _hint(form: Formulation, model: Any, jobs: _JobVars, ws: Solution) -> None:
    """The warm start as solution hints (placements relabelled as ``form.encode`` does)."""
    start, place = ws[0], ws[1]
    if place is not None and form.reduced:
        place = form.canonical(start, place)
    labels = np.full(start.shape[0], -1, dtype=np.int64)
    if len(ws) > 2 and place is not None:
        labels = canonical_gpu(start, place, ws[2], form.node_free.shape[0])  # type: ignore[misc]
    for j, x in jobs.present.items():
        run = int(start[j]) >= 0
        model.add_hint(x, run)
        if run:
            model.add_hint(jobs.starts[j], int(start[j]))
    if place is None:
        return
    for (j, q), lit in jobs.on.items():
        if lit is not jobs.present[j]:
            model.add_hint(lit, int(start[j]) >= 0 and form.place_index.get(
                (tuple(int(k) for k in place[j] if k >= 0), int(labels[j]))) == q)


def _busy(form: Formulation, model: Any, jobs: _JobVars) -> None:
    """Per GPU slot: its cumulative of shares, and busy booleans in the pool and node cumulatives."""
    inst = form.instance
    milli = resources(inst).gpu_milli
    bound = set(jobs.nodes)
    by_slot: dict[int, list[tuple[int, Any]]] = {}
    for (j, q), on in jobs.placed.items():
        if form.place_gpu[q] >= 0:  # type: ignore[index]
            by_slot.setdefault(q, []).append((j, on))
    order: dict[int, dict[int, Any]] = {}  # per shared job, the literals start <= t

    def at_most(j: int, t: int) -> Any:
        lits = order.setdefault(j, {})
        if t not in lits:
            lit = lits[t] = model.new_bool_var(f"le_{inst.jobs[j].name}_{t}")
            model.add(jobs.starts[j] <= t).only_enforce_if(lit)
            model.add(jobs.starts[j] >= t + 1).only_enforce_if(~lit)
        return lits[t]

    for q, held in sorted(by_slot.items()):
        k = form.placements[q][0]
        model.add_cumulative([on for _, on in held], [int(milli[j]) for j, _ in held], 1000)
        busy: dict[int, Any] = {}
        for j, _ in held:
            p = int(inst.durations[j])
            lo, hi = jobs.span[j]
            for t in range(lo, hi + p):
                b = busy.get(t)
                if b is None:
                    b = busy[t] = model.new_bool_var(f"busy_{q}_{t}")
                    iv = model.new_optional_fixed_size_interval_var(t, 1, b, f"busyiv_{q}_{t}")
                    jobs.pool.append(iv)
                    jobs.heights.append(1)
                    if k in bound:
                        jobs.nodes[k][0].append(iv)
                        jobs.nodes[k][1].append(1)
                # placed on q and covering t (start <= t and not start <= t - p) => busy
                clause = [jobs.on[(j, q)].Not(), b]
                if t < hi:
                    clause.append(at_most(j, t).Not())
                if t - p >= lo:
                    clause.append(at_most(j, t - p))
                model.add_bool_or(clause)


def _node_resources(form: Formulation, model: Any, jobs: _JobVars) -> None:
    """CPU and memory cumulatives of the nodes that state them, over the one-node jobs there."""
    inst = form.instance
    res = resources(inst)
    for need, cap in ((res.job_cpu, res.node_cpu), (res.job_memory, res.node_memory)):
        held: dict[int, tuple[list[Any], list[int]]] = {}
        for (j, q), on in jobs.placed.items():
            where = form.placements[q]
            if len(where) == 1 and need[j] > 0 and np.isfinite(cap[where[0]]):
                ivs, hs = held.setdefault(where[0], ([], []))
                ivs.append(on)
                hs.append(int(need[j]))
        for k, (ivs, hs) in sorted(held.items()):
            model.add_cumulative(ivs, hs, int(cap[k]))
