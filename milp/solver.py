"""``milp.solve``: build, hand to a backend, check, and bound honestly.

Whatever the backend says, the returned :class:`~instances.Result` holds

* the best *checked* schedule among the solver's incumbent, the hooks' best
  and the warm start (its value recomputed by :func:`instances.evaluate`,
  never the solver's objective);
* an ``upper_bound`` that is the smallest of the valid bounds at hand (the
  solver's dual bound, the LP relaxation, the value of running every job that
  has a column), and never below the schedule's value: a dual bound below a
  checked value by more than the tolerance is a bug, reported as status
  ``error`` with the figures in ``message``.

:func:`solve_arrays` is the same solve on arrays (a formulation and a start
array in, a :class:`RawSolve` out, no checker): :func:`solve` runs it, and
so does the large-neighbourhood search of :mod:`matheuristics`, window
after window.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from instances import InfeasibleScheduleError, Instance, Result, Schedule, Status, evaluate
from instances.rounding import tolerance

from ._common import Backend, IncumbentHooks, RawSolve
from .bound import HeldBounds, bound_after_solve, bounds_before_solve
from .formulation import DEFAULT_MAX_COLUMNS, DEFAULT_ROUNDING, Formulation, build
from .progress import Progress

__all__ = ["BACKENDS", "METHOD_BACKENDS", "METHOD_NAMES", "solve", "solve_arrays"]

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
    progress: Progress | None, **params: Any,
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
        fc = pool.submit(run, "CP-SAT", _cpsat, threads=max(1, threads - 1), progress=None)
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

METHOD_BACKENDS: dict[str, str] = {
    m: next(b for b, name in METHOD_NAMES.items() if name == m)
    for m in dict.fromkeys(METHOD_NAMES.values())
}
"""Method name -> backend: :data:`METHOD_NAMES` read backwards, the first backend of a
method winning (``milp`` is ``highs``, not ``portfolio``)."""

HOOK_BACKENDS: frozenset[str] = frozenset({"highs"})
"""Backends that call :class:`IncumbentHooks`."""


def _tolerance(inst: Instance, value: float) -> float:
    """Slack for comparing values and bounds: relative, on the scale of the job values.

    ``1e-6`` times the larger of ``|value|`` and the smallest positive job
    value, so that instances whose values are all far below 1 are held to
    the same relative standard as the others.
    """
    values = inst.job_values[inst.job_values > 0]
    floor = float(values.min()) if values.size else 1.0
    return tolerance(value, floor)


def _check_args(backend: str, time_limit: Any, mip_gap: Any, threads: Any) -> None:
    if backend not in BACKENDS:
        raise ValueError(f"backend: must be one of {list(BACKENDS)}, got {backend!r}")
    if not (isinstance(time_limit, (int, float)) and time_limit >= 0 and not math.isnan(time_limit)):
        raise ValueError(f"time_limit: must be a number >= 0, got {time_limit!r}")
    if not (isinstance(mip_gap, (int, float)) and 0 <= mip_gap < 1):
        raise ValueError(f"mip_gap: must be in [0, 1), got {mip_gap!r}")
    if not (isinstance(threads, int) and threads >= 1):
        raise ValueError(f"threads: must be an integer >= 1, got {threads!r}")


def _warm_start_array(inst: Instance, warm_start: Any) -> tuple[np.ndarray | None, str]:
    """The start array of a warm start (checked) and a label for it."""
    if warm_start is None:
        return None, ""
    if isinstance(warm_start, str):
        if warm_start == "auto":
            raise ValueError(
                "warm_start: 'auto' is resolved above the MILP, by matheuristics.solve_milp "
                "(what gpusched.solve(inst, 'milp') runs); milp.solve takes None, a Schedule, "
                "a Result or a start array"
            )
        raise ValueError(
            f"warm_start: must be None, a Schedule, a Result or a start array, got {warm_start!r}"
        )
    if isinstance(warm_start, Result):
        schedule, source = warm_start.schedule, warm_start.method
    elif isinstance(warm_start, Schedule):
        schedule, source = warm_start, "given schedule"
    elif isinstance(warm_start, np.ndarray) and warm_start.dtype.kind in "iu":
        schedule, source = Schedule.from_array(inst, warm_start), "given start array"
    else:
        raise ValueError(
            "warm_start: must be None, a Schedule, a Result or an integer start array, got "
            f"{type(warm_start).__name__}"
        )
    try:
        evaluate(inst, schedule)
    except InfeasibleScheduleError as e:
        raise ValueError(f"warm_start: the schedule is infeasible: {e}") from None
    return schedule.to_array(inst), source


def solve_arrays(
    form: Formulation,
    *,
    time_limit: float,
    mip_gap: float = 1e-4,
    threads: int = 1,
    warm_start: np.ndarray | None = None,
    backend: str = "highs",
    progress: Progress | None = None,
    hooks: IncumbentHooks | None = None,
    **params: Any,
) -> RawSolve:
    """Solve a built formulation from a start array: the array-level core of :func:`solve`.

    Nothing here builds a :class:`~instances.Schedule` or runs the checker;
    :func:`solve` does both on what this returns. A solver failure is a
    :class:`RawSolve` of status ``error``, never an exception.

    Parameters
    ----------
    form
        The formulation (:func:`milp.build`).
    time_limit
        Seconds for the backend.
    warm_start
        A feasible per-job start array (``-1``: not run), or ``None``; not
        checked here.
    backend, mip_gap, threads, progress, hooks, **params
        As for :func:`solve`.

    Returns
    -------
    RawSolve
        Status, the solver's incumbent as a start array (``start``), the
        dual bound and the LP bound.

    Raises
    ------
    ValueError
        For a bad argument or backend option (``params: ...``).
    """
    _check_args(backend, time_limit, mip_gap, threads)
    if hooks is not None and backend not in HOOK_BACKENDS:
        raise ValueError(f"hooks: backend {backend!r} takes none (only {sorted(HOOK_BACKENDS)})")
    if form.num_cols == 0:
        return RawSolve(Status.OPTIMAL, None, 0.0, 0.0, 0, "no job can run: nothing to solve")
    if time_limit <= 0:
        return RawSolve(Status.TIME_LIMIT, message="time limit reached before the solver started")
    if hooks is not None:
        params["hooks"] = hooks
    try:
        return BACKENDS[backend](
            form, time_limit=time_limit, mip_gap=mip_gap, threads=threads, warm_start=warm_start,
            progress=progress, **params,
        )
    except (ValueError, TypeError, ImportError) as e:
        if isinstance(e, ValueError) and str(e).startswith("params:"):
            raise
        if isinstance(e, TypeError) and "unexpected keyword argument" in str(e):
            raise ValueError(f"params: backend {backend!r}: {e}") from None
        return RawSolve(Status.ERROR, message=f"{type(e).__name__}: {e}")
    except Exception as e:  # a solver failure must not crash the caller
        logger.exception("backend %s failed", backend)
        return RawSolve(Status.ERROR, message=f"{type(e).__name__}: {e}")


def solve(
    inst: Instance,
    *,
    time_limit: float = 60.0,
    mip_gap: float = 1e-4,
    threads: int = 1,
    warm_start: Any = None,
    backend: str = "highs",
    progress: bool | Progress = False,
    hooks: IncumbentHooks | None = None,
    max_columns: int = DEFAULT_MAX_COLUMNS,
    aggregate: bool = True,
    cliques: bool = False,
    rounding: Sequence[int] = DEFAULT_ROUNDING,
    lagrangian: Any = None,
    fixing: bool = False,
    **params: Any,
) -> Result:
    """Solve the time-indexed MILP of an instance.

    The MILP alone: the automatic warm start (the ``best`` heuristic) and
    the LNS helper beside HiGHS are added above it, by
    :func:`matheuristics.solve_milp`, which ``gpusched.solve(inst, "milp")``
    and the command line run.

    On an instance with nodes this solves the node model instead
    (:func:`milp.nodes.solve_nodes`, which takes further options:
    ``symmetry``, ``flat_share``, ``flat``, ``lagrangian``); the backend is
    ``highs`` or ``cpsat`` there, and incumbent hooks are not taken.

    Parameters
    ----------
    inst
        The instance.
    time_limit
        Wall-clock seconds for everything (model build, LP relaxation, search).
    mip_gap
        Relative gap at which the search stops and reports ``optimal``.
    threads
        Solver threads.
    warm_start
        ``None`` (default), a :class:`~instances.Schedule`, a
        :class:`~instances.Result` or a per-job start array (``-1``: not
        run); checked by :func:`instances.evaluate` first.
    backend
        ``"highs"`` (method ``milp``), ``"pulp"`` (``milp-pulp``),
        ``"cpsat"`` (``cpsat``), or ``"portfolio"`` (method ``milp``: HiGHS
        and CP-SAT in parallel, for ``threads >= 2``; see :func:`portfolio`).
    progress
        Show a progress bar with incumbent, bound and gap: ``True`` for one
        over this call, or a :class:`~milp.progress.Progress` the caller made
        earlier (and closes).
    hooks
        :class:`~milp.IncumbentHooks` run beside the search, trading
        incumbents with it (HiGHS backend; HiGHS then runs on one thread).
    max_columns
        Refuse larger models (see :func:`milp.build`).
    aggregate, cliques, rounding
        Formulation options (see :func:`milp.build`).
    lagrangian
        Compute a Lagrangian bound (:func:`milp.bound`) before the backend
        runs, within a tenth of the time limit: ``None`` (default) for
        models of 50,000 columns or more, and afterwards (a short search)
        whenever the backend left no dual or LP bound; or a
        :class:`milp.Bound` found earlier for this instance, held as it is.
    fixing
        Reduced-cost fixing (:mod:`milp.fixing`) relative to the warm
        start's value ``V`` before the backend runs; the reduced model's
        bounds then count as ``max(V, bound)``.
    **params
        Backend options. HiGHS: ``root_lp``, ``seed`` and HiGHS options by
        name (see :func:`milp.highs.solve_highs`). CP-SAT: ``seed`` and
        CP-SAT parameters by name.

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
    if inst.nodes is not None:  # -- the node model (milp/nodes.py): nodes need their own model --
        from .nodes import solve_nodes

        if hooks is not None:
            raise ValueError("hooks: the node model takes no incumbent hooks")
        if fixing:
            raise ValueError("fixing: reduced-cost fixing is not available for the node model")
        return solve_nodes(
            inst, time_limit=time_limit, mip_gap=mip_gap, threads=threads, warm_start=warm_start,
            backend=backend, progress=progress, max_columns=max_columns, aggregate=aggregate,
            cliques=cliques, rounding=rounding, lagrangian=lagrangian, **params,
        )
    t0 = time.perf_counter()
    _check_args(backend, time_limit, mip_gap, threads)
    if "lns_helper" in params:
        raise ValueError(
            "lns_helper: the LNS helper is added above the MILP, by matheuristics.solve_milp; "
            "milp.solve takes incumbent hooks (hooks=)"
        )
    method = METHOD_NAMES[backend]
    bar = progress if isinstance(progress, Progress) else (
        Progress(time_limit, "milp") if progress else None)
    try:
        if bar is not None:
            bar.set_phase("build")
        form = build(inst, max_columns, aggregate=aggregate, cliques=cliques, rounding=rounding)
        call = {
            "time_limit": time_limit, "mip_gap": mip_gap, "threads": threads,
            "backend": backend, "aggregate": aggregate, "cliques": cliques,
            "rounding": [int(d) for d in rounding], **params,
        }
        ws, source = _warm_start_array(inst, warm_start)
        if ws is not None:
            call["warm_start"] = source
        # -- bounds held beside the backend (milp/bound.py): Lagrangian, fixing --
        if lagrangian is not None or fixing:
            call.update(lagrangian=lagrangian if isinstance(lagrangian, bool | None) else "given",
                        fixing=fixing)
        if bar is not None:
            bar.set_phase("bound")
        form, held = bounds_before_solve(form, ws, time_limit, time.perf_counter() - t0,
                                         lagrangian=lagrangian, fixing=fixing)
        if held.lagrangian is not None and backend == "highs" and "root_lp" not in params:
            # the Lagrangian bound is the plain LP's; the root LP (with the rounded rows,
            # tighter) runs only when it is expected to end in its share of the time left
            from .highs import root_lp_fits

            params["root_lp"] = root_lp_fits(form.nnz, time_limit - (time.perf_counter() - t0))
        raw = solve_arrays(
            form, time_limit=max(0.0, time_limit - (time.perf_counter() - t0)), mip_gap=mip_gap,
            threads=threads, warm_start=ws, backend=backend, progress=bar, hooks=hooks, **params,
        )
        known = [float(inst.job_values[a >= 0].sum()) for a in (raw.start, ws) if a is not None]
        bound_after_solve(inst, held, raw.dual_bound, raw.lp_bound, lagrangian, time_limit,
                          lower=max(known) if known else None)
        return _assemble(inst, method, form, raw, ws, source, call, t0, held)
    finally:
        if bar is not None and bar is not progress:
            bar.close()


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
