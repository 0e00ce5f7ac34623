"""The CP-SAT node model (OR-Tools): the independent cross-check of :mod:`milp.nodes`.

A different model of the node problem: one optional interval per (job,
placement) (a node for a one-node job, a set of whole nodes for a larger
one), with its own start whose domain is the starts the node MILP has a
column for; at most one interval of a job is present. One cumulative per
node, of the node's GPUs, holding the intervals placed there (``g_j`` for a
one-node job, the node's GPUs for a multi-node job); one cumulative for the
pool, of ``G``, holding every interval with ``g_j`` and the inference demand
as fixed intervals. The objective is scaled to integers and rounded up as in
:mod:`milp.cpsat`, so CP-SAT's bound divided by the scale is an upper bound.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from instances import Status

from .cpsat import _demand_runs, objective_scale
from .nodes import NodeFormulation, NodeRaw

__all__ = ["solve_cpsat_nodes"]


def solve_cpsat_nodes(
    form: NodeFormulation,
    *,
    time_limit: float,
    mip_gap: float,
    threads: int,
    warm_start: tuple[np.ndarray, np.ndarray] | None,
    seed: int = 0,
    **options: Any,
) -> NodeRaw:
    """Solve the node problem with CP-SAT (``threads`` search workers).

    ``warm_start`` (start and placement arrays) becomes solution hints,
    relabelled to canonical form when the formulation drops symmetric
    columns. ``**options`` are CP-SAT parameters by name.
    """
    from ortools.sat.python import cp_model
    from ortools.util.python import sorted_interval_list

    inst = form.instance
    sizes = inst.node_gpus
    model = cp_model.CpModel()
    scale, coef = objective_scale(inst.job_values)
    node_iv: list[list[Any]] = [[] for _ in range(inst.num_nodes)]
    node_h: list[list[int]] = [[] for _ in range(inst.num_nodes)]
    pool_iv, pool_h = [], []
    lits: dict[tuple[int, int], tuple[Any, Any]] = {}
    by_job: dict[int, list[Any]] = {}
    keys = form.col_job.astype(np.int64) * (len(form.placements) + 1) + form.col_place
    bounds = np.flatnonzero(np.diff(keys)) + 1
    for cols in np.split(np.arange(form.num_x), bounds):
        if cols.size == 0:
            continue
        j, q = int(form.col_job[cols[0]]), int(form.col_place[cols[0]])
        job, where = inst.jobs[j], form.placements[q]
        domain = sorted_interval_list.Domain.from_values(form.col_start[cols].tolist())
        tag = f"{job.name}@{'+'.join(str(k) for k in where)}"
        s = model.new_int_var_from_domain(domain, f"start_{tag}")
        x = model.new_bool_var(f"run_{tag}")
        iv = model.new_optional_fixed_size_interval_var(s, job.duration, x, f"iv_{tag}")
        for k in where:
            node_iv[k].append(iv)
            node_h[k].append(job.gpus if len(where) == 1 else int(sizes[k]))
        pool_iv.append(iv)
        pool_h.append(job.gpus)
        lits[(j, q)] = (s, x)
        by_job.setdefault(j, []).append(x)
    for xs in by_job.values():
        if len(xs) > 1:
            model.add_at_most_one(xs)
    for k in range(inst.num_nodes):
        if node_iv[k]:
            model.add_cumulative(node_iv[k], node_h[k], int(sizes[k]))
    for t, length, height in _demand_runs(np.asarray(inst.total_demand)):
        pool_iv.append(model.new_fixed_size_interval_var(t, length, f"demand_{t}"))
        pool_h.append(height)
    model.add_cumulative(pool_iv, pool_h, inst.num_gpus)
    model.maximize(sum(int(coef[j]) * x for (j, _), (_, x) in lits.items()))
    if warm_start is not None:
        start, place = warm_start
        place = form.canonical(start, place)
        index = {p: i for i, p in enumerate(form.placements)}
        for (j, q), (s, x) in lits.items():
            on = int(start[j]) >= 0 and index.get(tuple(int(k) for k in place[j] if k >= 0)) == q
            model.add_hint(x, on)
            if on:
                model.add_hint(s, int(start[j]))

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit)
    solver.parameters.num_workers = int(threads)
    solver.parameters.relative_gap_limit = float(mip_gap)
    solver.parameters.random_seed = int(seed)
    for key, value in options.items():
        if not hasattr(solver.parameters, key):
            raise ValueError(f"params: CP-SAT has no parameter {key!r}")
        setattr(solver.parameters, key, value)
    code = solver.solve(model)
    start_out = place_out = None
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        start_out = np.full(inst.num_jobs, -1, dtype=np.int64)
        place_out = np.full((inst.num_jobs, inst.max_span), -1, dtype=np.int64)
        for (j, q), (s, x) in lits.items():
            if solver.boolean_value(x):
                start_out[j] = solver.value(s)
                place_out[j] = form.place_nodes[q][: inst.max_span]
    if code == cp_model.OPTIMAL:
        status = Status.OPTIMAL
    elif code in (cp_model.FEASIBLE, cp_model.UNKNOWN):
        status = Status.TIME_LIMIT
    elif code == cp_model.INFEASIBLE:
        status = Status.INFEASIBLE
    else:
        status = Status.ERROR
    dual = None
    if status in (Status.OPTIMAL, Status.TIME_LIMIT):
        b = float(solver.best_objective_bound)
        if math.isfinite(b):
            dual = b / scale * (1 + 1e-9) + 1e-12
    return NodeRaw(
        status=status,
        start=start_out,
        place=place_out,
        dual_bound=dual,
        nodes=int(solver.num_branches),
        message=f"CP-SAT (node model): {solver.status_name(code)}, objective scale {scale:g}",
    )
