"""The CP-SAT backend (OR-Tools, the ``cpsat`` extra): the independent cross-check.

A different model of the same problem: one optional interval per job (start
domain = the starts that have a column in the MILP), one cumulative
constraint of capacity ``G`` in which the inference demand is a set of fixed
intervals (one per run of equal summed demand). Identical jobs are ordered
(presence and start) to break their symmetry.

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
from typing import Any

import numpy as np

from instances import Status

from ._common import RawSolve
from .formulation import Formulation
from .progress import Progress

__all__ = ["objective_scale", "solve_cpsat"]


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


def _demand_runs(total: np.ndarray) -> list[tuple[int, int, int]]:
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
    form: Formulation,
    *,
    time_limit: float,
    mip_gap: float,
    threads: int,
    warm_start: np.ndarray | None,
    progress: Progress | None,
    seed: int = 0,
    stop: threading.Event | None = None,
    **options: Any,
) -> RawSolve:
    """Solve with OR-Tools CP-SAT (``threads`` search workers).

    ``stop``, when set by another solver of a portfolio, ends the search.
    ``**options`` are CP-SAT parameters by name (``interleave_search=True``, ...).
    """
    from ortools.sat.python import cp_model
    from ortools.util.python import sorted_interval_list

    inst = form.instance
    model = cp_model.CpModel()
    scale, coef = objective_scale(inst.job_values)
    starts: dict[int, Any] = {}
    present: dict[int, Any] = {}
    intervals, heights = [], []
    group_cols = np.split(np.arange(form.num_cols), np.flatnonzero(np.diff(form.col_group)) + 1)
    for cols in group_cols:
        if cols.size == 0:
            continue
        k = int(form.col_group[cols[0]])
        domain = sorted_interval_list.Domain.from_values(form.col_start[cols].tolist())
        previous = None
        for j in form.groups[k].tolist():
            job = inst.jobs[j]
            s = model.new_int_var_from_domain(domain, f"start_{job.name}")
            x = model.new_bool_var(f"run_{job.name}")
            intervals.append(
                model.new_optional_fixed_size_interval_var(s, job.duration, x, f"iv_{job.name}")
            )
            heights.append(job.gpus)
            starts[j], present[j] = s, x
            if previous is not None:  # identical jobs: run and start in order
                model.add_implication(x, present[previous])
                model.add(starts[previous] <= s).only_enforce_if(x)
            previous = j
    for t, length, height in _demand_runs(np.asarray(inst.total_demand)):
        intervals.append(model.new_fixed_size_interval_var(t, length, f"demand_{t}"))
        heights.append(height)
    model.add_cumulative(intervals, heights, inst.num_gpus)
    model.maximize(sum(int(coef[j]) * x for j, x in present.items()))
    if warm_start is not None:
        for j, x in present.items():
            run = int(warm_start[j]) >= 0
            model.add_hint(x, run)
            if run:
                model.add_hint(starts[j], int(warm_start[j]))

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
    try:
        code = solver.solve(model)
    finally:
        done.set()
    name = solver.status_name(code)
    start = None
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        start = np.full(inst.num_jobs, -1, dtype=np.int64)
        for j, x in present.items():
            if solver.boolean_value(x):
                start[j] = solver.value(starts[j])
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
    return RawSolve(
        status=status,
        start=start,
        dual_bound=dual,
        lp_bound=None,
        nodes=int(solver.num_branches),
        message=f"CP-SAT: {name}, objective scale {scale:g}",
    )
