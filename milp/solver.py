"""``milp.solve``: build, warm-start, hand to a backend, check, and bound honestly.

Whatever the backend says, the returned :class:`~instances.Result` holds

* the best *checked* schedule among the solver's incumbent and the warm start
  (its value recomputed by :func:`instances.evaluate`, never the solver's
  objective);
* an ``upper_bound`` that is the smallest of the valid bounds at hand (the
  solver's dual bound, the LP relaxation, the value of running every job that
  has a column), and never below the schedule's value: a dual bound below a
  checked value by more than the tolerance is a bug, reported as status
  ``error`` with the figures in ``message``.
"""

from __future__ import annotations

import inspect
import logging
import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from instances import InfeasibleScheduleError, Instance, Result, Schedule, Status, evaluate

from ._common import Backend, RawSolve
from .bound import HeldBounds, bound_after_solve, bounds_before_solve
from .formulation import DEFAULT_MAX_COLUMNS, DEFAULT_ROUNDING, build

__all__ = ["BACKENDS", "METHOD_NAMES", "solve", "warm_start_schedule"]

logger = logging.getLogger(__name__)


def _highs(*args: Any, **kwargs: Any) -> RawSolve:
    from .highs import solve_highs

    return solve_highs(*args, **kwargs)


def _pulp(*args: Any, **kwargs: Any) -> RawSolve:
    from .pulp_backend import solve_pulp

    return solve_pulp(*args, **kwargs)


def _cpsat(*args: Any, **kwargs: Any) -> RawSolve:
    from .cpsat import solve_cpsat

    return solve_cpsat(*args, **kwargs)


def portfolio(
    form: Any, *, time_limit: float, mip_gap: float, threads: int, warm_start: np.ndarray | None,
    progress: bool, **params: Any,
) -> RawSolve:
    """HiGHS (one thread) and CP-SAT (``threads - 1`` workers) side by side.

    Both start from the warm start and run in parallel threads (both solvers
    release the GIL); the first to prove optimality stops the other. The
    result keeps both incumbents (the checker picks the better one) and the
    smaller of the two valid upper bounds.
    """
    import threading
    from concurrent.futures import ThreadPoolExecutor

    stop = threading.Event()

    def run(name: str, fn: Backend, **kw: Any) -> RawSolve:
        try:
            raw = fn(form, time_limit=time_limit, mip_gap=mip_gap, warm_start=warm_start,
                     stop=stop, **kw)
        except Exception as e:  # one failed solver leaves the other's answer
            logger.exception("portfolio: %s failed", name)
            raw = RawSolve(Status.ERROR, message=f"{name}: {type(e).__name__}: {e}")
        if raw.status is Status.OPTIMAL:
            stop.set()
        return raw

    with ThreadPoolExecutor(2) as pool:
        fh = pool.submit(run, "HiGHS", _highs, threads=1, progress=progress, **params)
        fc = pool.submit(run, "CP-SAT", _cpsat, threads=max(1, threads - 1), progress=False)
        h, c = fh.result(), fc.result()
    ok = [r for r in (h, c) if r.status is not Status.ERROR]
    starts = sorted(
        (r.start for r in ok if r.start is not None),
        key=lambda a: -float(form.instance.job_values[a >= 0].sum()),
    )
    bounds = [r.dual_bound for r in ok if r.dual_bound is not None]
    if any(r.status is Status.OPTIMAL for r in ok):
        status = Status.OPTIMAL
    elif ok:
        status = Status.TIME_LIMIT
    else:
        status = Status.ERROR
    return RawSolve(
        status=status,
        start=starts[0] if starts else None,
        dual_bound=min(bounds) if bounds else None,
        lp_bound=h.lp_bound if h.status is not Status.ERROR else None,
        nodes=h.nodes,
        message=f"portfolio: {h.message}; {c.message}",
        alternatives=tuple(starts[1:]),
    )


BACKENDS: dict[str, Backend] = {
    "highs": _highs, "pulp": _pulp, "cpsat": _cpsat, "portfolio": portfolio,
}
"""Backend name -> solver function (imported lazily)."""

METHOD_NAMES: dict[str, str] = {
    "highs": "milp", "pulp": "milp-pulp", "cpsat": "cpsat", "portfolio": "milp",
}
"""Backend name -> ``Result.method``."""

WARM_START_SHARE = 0.1
"""Largest share of the time limit the automatic warm start may spend (capped at 10 s)."""


def _tolerance(inst: Instance, value: float) -> float:
    """Slack for comparing values and bounds: relative, on the scale of the job values.

    ``1e-6`` times the larger of ``|value|`` and the smallest positive job
    value, so that instances whose values are all far below 1 are held to
    the same relative standard as the others.
    """
    values = inst.job_values[inst.job_values > 0]
    floor = float(values.min()) if values.size else 1.0
    return 1e-6 * max(abs(value), floor)


def _accepts(fn: Any, name: str) -> bool:
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):  # pragma: no cover
        return False


def warm_start_schedule(inst: Instance, time_limit: float) -> tuple[Schedule | None, str]:
    """The best fast heuristic's schedule, within a small share of ``time_limit``.

    Uses the ``best`` heuristic when it is registered, else the best of
    ``fifo-curve`` and the registered ``list*`` methods.

    Returns
    -------
    (Schedule or None, str)
        The schedule (``None`` when no time is left) and the method that found it.
    """
    if time_limit <= 0:
        return None, ""
    import heuristics

    budget = min(10.0, WARM_START_SHARE * time_limit)
    names = (
        ["best"] if "best" in heuristics.METHODS
        else ["fifo-curve", *(m for m in heuristics.METHODS if m.startswith("list"))]
    )
    best: Result | None = None
    for name in names:
        params: dict[str, Any] = {}
        if _accepts(heuristics.METHODS[name], "time_limit"):
            params["time_limit"] = budget
        res = heuristics.solve(inst, name, **params)
        if best is None or res.value > best.value:
            best = res
    assert best is not None
    return best.schedule, best.method


def _resolve_warm_start(
    inst: Instance, warm_start: Any, time_limit: float
) -> tuple[np.ndarray | None, str]:
    if warm_start is None:
        return None, ""
    if isinstance(warm_start, str):
        if warm_start != "auto":
            raise ValueError(
                f"warm_start: must be 'auto', None, a Schedule or a Result, got {warm_start!r}"
            )
        schedule, source = warm_start_schedule(inst, time_limit)
    elif isinstance(warm_start, Result):
        schedule, source = warm_start.schedule, warm_start.method
    elif isinstance(warm_start, Schedule):
        schedule, source = warm_start, "given schedule"
    else:
        raise ValueError(
            f"warm_start: must be 'auto', None, a Schedule or a Result, got {type(warm_start).__name__}"
        )
    if schedule is None:
        return None, ""
    try:
        evaluate(inst, schedule)
    except InfeasibleScheduleError as e:
        raise ValueError(f"warm_start: the schedule is infeasible: {e}") from None
    return schedule.to_array(inst), source


def solve(
    inst: Instance,
    *,
    time_limit: float = 60.0,
    mip_gap: float = 1e-4,
    threads: int = 1,
    warm_start: Any = "auto",
    backend: str = "highs",
    progress: bool = False,
    max_columns: int = DEFAULT_MAX_COLUMNS,
    aggregate: bool = True,
    cliques: bool = False,
    rounding: Sequence[int] = DEFAULT_ROUNDING,
    lagrangian: bool | None = None,
    fixing: bool = False,
    **params: Any,
) -> Result:
    """Solve the time-indexed MILP of an instance.

    Parameters
    ----------
    inst
        The instance.
    time_limit
        Wall-clock seconds for everything (warm start, LP relaxation, search).
    mip_gap
        Relative gap at which the search stops and reports ``optimal``.
    threads
        Solver threads.
    warm_start
        ``"auto"`` (the best fast heuristic), ``None``, a
        :class:`~instances.Schedule` or a :class:`~instances.Result`.
    backend
        ``"highs"`` (method ``milp``), ``"pulp"`` (``milp-pulp``),
        ``"cpsat"`` (``cpsat``), or ``"portfolio"`` (method ``milp``: HiGHS
        and CP-SAT in parallel, for ``threads >= 2``; see :func:`portfolio`).
    progress
        Show a progress bar with incumbent and bound (HiGHS backend).
    max_columns
        Refuse larger models (see :func:`milp.build`).
    aggregate, cliques, rounding
        Formulation options (see :func:`milp.build`).
    lagrangian
        Compute a Lagrangian bound (:func:`milp.bound`) before the backend
        runs, within a tenth of the time limit: ``None`` (default) for
        models of 50,000 columns or more, and afterwards (a short search)
        whenever the backend left no dual or LP bound.
    fixing
        Reduced-cost fixing (:mod:`milp.fixing`) relative to the warm
        start's value ``V`` before the backend runs; the reduced model's
        bounds then count as ``max(V, bound)``.
    **params
        Backend options. HiGHS: ``root_lp``, ``seed``, ``lns_helper`` (run the
        large-neighbourhood search beside HiGHS in a second thread, trading
        incumbents with it; on by default when ``threads == 2``: see
        :func:`milp.highs.solve_highs`) and HiGHS
        options by name. CP-SAT: ``seed`` and CP-SAT parameters by name.

    Returns
    -------
    instances.Result
        ``value`` recomputed by the checker; ``upper_bound`` never below it.

    Raises
    ------
    ValueError
        For a bad argument, an infeasible warm start, or a model over
        ``max_columns``.
    """
    t0 = time.perf_counter()
    if backend not in BACKENDS:
        raise ValueError(f"backend: must be one of {list(BACKENDS)}, got {backend!r}")
    if not (isinstance(time_limit, (int, float)) and time_limit >= 0 and not math.isnan(time_limit)):
        raise ValueError(f"time_limit: must be a number >= 0, got {time_limit!r}")
    if not (isinstance(mip_gap, (int, float)) and 0 <= mip_gap < 1):
        raise ValueError(f"mip_gap: must be in [0, 1), got {mip_gap!r}")
    if not (isinstance(threads, int) and threads >= 1):
        raise ValueError(f"threads: must be an integer >= 1, got {threads!r}")
    method = METHOD_NAMES[backend]
    form = build(inst, max_columns, aggregate=aggregate, cliques=cliques, rounding=rounding)
    call = {
        "time_limit": time_limit, "mip_gap": mip_gap, "threads": threads,
        "backend": backend, "aggregate": aggregate, "cliques": cliques,
        "rounding": [int(d) for d in rounding], **params,
    }
    ws, source = _resolve_warm_start(inst, warm_start, time_limit)
    if ws is not None:
        call["warm_start"] = source
    # -- bounds held beside the backend (milp/bound.py): Lagrangian, fixing --
    if lagrangian is not None or fixing:
        call.update(lagrangian=lagrangian, fixing=fixing)
    form, held = bounds_before_solve(form, ws, time_limit, time.perf_counter() - t0,
                                     lagrangian=lagrangian, fixing=fixing)

    remaining = time_limit - (time.perf_counter() - t0)
    if form.num_cols == 0:
        raw = RawSolve(Status.OPTIMAL, None, 0.0, 0.0, 0, "no job can run: nothing to solve")
    elif remaining <= 0:
        raw = RawSolve(Status.TIME_LIMIT, message="time limit reached before the solver started")
    else:
        try:
            raw = BACKENDS[backend](
                form, time_limit=remaining, mip_gap=mip_gap, threads=threads, warm_start=ws,
                progress=progress, **params,
            )
        except (ValueError, TypeError, ImportError) as e:
            if isinstance(e, ValueError) and str(e).startswith("params:"):
                raise
            if isinstance(e, TypeError) and "unexpected keyword argument" in str(e):
                raise ValueError(f"params: backend {backend!r}: {e}") from None
            raw = RawSolve(Status.ERROR, message=f"{type(e).__name__}: {e}")
        except Exception as e:  # a solver failure must not crash the caller
            logger.exception("backend %s failed", backend)
            raw = RawSolve(Status.ERROR, message=f"{type(e).__name__}: {e}")
    bound_after_solve(inst, held, raw.dual_bound, raw.lp_bound, lagrangian, time_limit)
    return _assemble(inst, method, form, raw, ws, source, call, t0, held)


def _assemble(
    inst: Instance, method: str, form: Any, raw: RawSolve, ws: np.ndarray | None, source: str,
    call: dict[str, Any], t0: float, held: HeldBounds | None = None,
) -> Result:
    status = raw.status
    notes = [raw.message] if raw.message else []
    candidates: list[tuple[str, np.ndarray]] = []
    if raw.start is not None:
        candidates.append(("solver", raw.start))
    candidates += [("solver", alt) for alt in raw.alternatives]
    if ws is not None:
        candidates.append((f"warm start ({source})", ws))
    candidates.append(("empty schedule", np.full(inst.num_jobs, -1, dtype=np.int64)))
    best = None
    for label, start in candidates:
        schedule = Schedule.from_array(inst, start)
        try:
            metrics = evaluate(inst, schedule)
        except InfeasibleScheduleError as e:
            notes.append(f"{label} rejected by the checker: {e}")
            status = Status.ERROR
            continue
        if best is None or metrics.value > best[2].value + _tolerance(inst, metrics.value):
            best = (label, schedule, metrics)
    assert best is not None  # the empty schedule is always feasible
    label, schedule, metrics = best
    value = metrics.value
    if label != "solver" and raw.start is not None:
        notes.append(f"incumbent from the {label}")
    elif raw.start is None and status is not Status.OPTIMAL:
        notes.append(f"solver has no incumbent; returning the {label}")

    held = held if held is not None else HeldBounds()
    upper: float | None
    bound_method: str | None
    upper, bound_method = held.smallest(form.trivial_bound, raw.dual_bound, raw.lp_bound,
                                        status is not Status.ERROR)
    if held.note():
        notes.append(held.note())
    if upper < value - _tolerance(inst, value):
        notes.append(
            f"bug: upper bound {upper!r} below the checked value {value!r} "
            f"(dual {raw.dual_bound!r}, lp {raw.lp_bound!r})"
        )
        logger.error("%s on %s: %s", method, inst.name, notes[-1])
        status, upper, bound_method = Status.ERROR, None, None
    else:
        upper = max(upper, value)
    return Result(
        method=method,
        status=status,
        schedule=schedule,
        value=value,
        upper_bound=upper,
        runtime_s=time.perf_counter() - t0,
        metrics=metrics,
        reservation="curve",
        params=call,
        lp_bound=raw.lp_bound,
        nodes=raw.nodes,
        message="; ".join(notes),
        bound_method=bound_method,
    )
