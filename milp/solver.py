"""``milp.solve``: build, hand to a backend, check, and bound honestly; flat or on nodes.

:func:`solve` builds the one formulation (:func:`milp.build`: on a flat
instance the flat model, on nodes the node model), holds the bounds beside
the backend (:mod:`milp.held`; on nodes also the flat model's, from a short
solve of it first, whose incumbent placed on the nodes is a warm start too),
runs the backend through :func:`solve_arrays`, and returns what
:func:`milp.assemble.assemble` makes of it: the best checked schedule and a
bound never below it.

:func:`solve_arrays` is the same solve on arrays (a formulation and a
solution in, a :class:`RawSolve` out, no checker): :func:`solve` runs it,
and so does the large-neighbourhood search of :mod:`matheuristics`, window
after window.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from instances import Instance, Result, Schedule, Status
from instances.capacity import place_starts

from .assemble import assemble
from .backend import Backend, IncumbentHooks, RawSolve, Solution
from .builder import build
from .formulation import DEFAULT_MAX_COLUMNS, DEFAULT_ROUNDING, Formulation
from .held import bound_after_solve, bounds_before_solve
from .progress import Progress
from .warm import WarmStart, warm_start_arrays

__all__ = ["BACKENDS", "FLAT_SHARE", "HOOK_BACKENDS", "METHOD_BACKENDS", "METHOD_NAMES",
           "check_args", "solve", "solve_arrays"]

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


def _portfolio(*args: Any, **kwargs: Any) -> RawSolve:
    from .portfolio import portfolio

    return portfolio(*args, **kwargs)


BACKENDS: dict[str, Backend] = {
    "highs": _highs, "pulp": _pulp, "cpsat": _cpsat, "portfolio": _portfolio,
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

FLAT_SHARE = 0.1
"""On nodes, the share of :func:`solve`'s time limit the flat solve first may take (at most 10 s)."""


def check_args(backend: str, time_limit: Any, mip_gap: Any, threads: Any) -> None:
    """Refuse an unknown backend or a bad time limit, gap or thread count (``ValueError``)."""
    if backend not in BACKENDS:
        raise ValueError(f"backend: must be one of {list(BACKENDS)}, got {backend!r}")
    if not (isinstance(time_limit, (int, float)) and time_limit >= 0 and not math.isnan(time_limit)):
        raise ValueError(f"time_limit: must be a number >= 0, got {time_limit!r}")
    if not (isinstance(mip_gap, (int, float)) and 0 <= mip_gap < 1):
        raise ValueError(f"mip_gap: must be in [0, 1), got {mip_gap!r}")
    if not (isinstance(threads, int) and threads >= 1):
        raise ValueError(f"threads: must be an integer >= 1, got {threads!r}")


def solve_arrays(
    form: Formulation, *, time_limit: float, mip_gap: float = 1e-4, threads: int = 1,
    warm_start: Solution | np.ndarray | None = None, backend: str = "highs",
    progress: Progress | None = None, hooks: IncumbentHooks | None = None, **params: Any,
) -> RawSolve:
    """Solve a built formulation from a solution: the array-level core of :func:`solve`.

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
        A feasible start array (flat), a ``(start, place)`` pair
        (:data:`milp.backend.Solution`; on nodes), or ``None``; not checked here.
    backend, mip_gap, threads, progress, hooks, **params
        As for :func:`solve`.

    Returns
    -------
    RawSolve
        Status, the solver's incumbent (``start``, and ``place`` on nodes),
        the dual bound and the LP bound.

    Raises
    ------
    ValueError
        For a bad argument or backend option (``params: ...``).
    """
    check_args(backend, time_limit, mip_gap, threads)
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
            form, time_limit=time_limit, mip_gap=mip_gap, threads=threads,
            warm_start=warm_start, progress=progress, **params,
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
    inst: Instance, *, time_limit: float = 60.0, mip_gap: float = 1e-4, threads: int = 1,
    warm_start: Any = None, backend: str = "highs", progress: bool | Progress = False,
    hooks: IncumbentHooks | None = None, max_columns: int = DEFAULT_MAX_COLUMNS,
    aggregate: bool = True, cliques: bool = False, rounding: Sequence[int] = DEFAULT_ROUNDING,
    lagrangian: Any = None, fixing: bool = False, symmetry: str | None = None,
    flat_share: float = FLAT_SHARE, flat: Result | None = None, **params: Any,
) -> Result:
    """Solve the time-indexed MILP of an instance, flat or on nodes.

    The MILP alone: the automatic warm start (the ``best`` heuristic) and
    the LNS helper beside HiGHS are added above it, by
    :func:`matheuristics.solve_milp`, which ``gpusched.solve(inst, "milp")``
    and the command line run.

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
        run); checked by :func:`instances.evaluate` first. On nodes, one
        without a valid placement that is feasible on the flat pool is
        placed on the nodes (:func:`instances.capacity.place_starts`).
    backend
        ``"highs"`` (method ``milp``), ``"pulp"`` (``milp-pulp``),
        ``"cpsat"`` (``cpsat``), or ``"portfolio"`` (method ``milp``: HiGHS
        and CP-SAT in parallel, for ``threads >= 2``; see
        :func:`milp.portfolio.portfolio`).
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
        Compute a Lagrangian bound (:func:`milp.bound`; on nodes the flat
        relaxation's, valid there too) before the backend runs, within a
        tenth of the time limit: ``None`` (default) for models of 50,000
        columns or more, and afterwards (a short search) whenever the
        backend left no dual or LP bound; or a :class:`milp.Bound` found
        earlier for this instance, held as it is.
    fixing
        Reduced-cost fixing (:mod:`milp.fixing`) relative to the warm
        start's value ``V`` before the backend runs; the reduced model's
        bounds then count as ``max(V, bound)``.
    symmetry
        On nodes, the handling of identical nodes (:data:`milp.symmetry.SYMMETRY`);
        ``None``: ``"none"`` for CP-SAT, ``"fix"`` otherwise.
    flat_share
        On nodes, the share of ``time_limit`` (at most 10 s) for solving the
        flat model first: its bound bounds the node optimum, its schedule
        placed on the nodes is a warm start. ``0``: no flat solve.
    flat
        On nodes, a finished solve of the flat model (``inst.replace(nodes=None)``)
        to use instead of running one.
    **params
        Backend options. HiGHS: ``root_lp``, ``seed`` and HiGHS options by
        name (see :func:`milp.highs.solve_highs`). CP-SAT: ``seed`` and
        CP-SAT parameters by name.

    Returns
    -------
    instances.Result
        ``value`` recomputed by the checker (on nodes, with a valid
        placement); ``upper_bound`` never below it.

    Raises
    ------
    ValueError
        For a bad argument, an infeasible warm start, or a model over
        ``max_columns``.
    """
    t0 = time.perf_counter()
    check_args(backend, time_limit, mip_gap, threads)
    if "lns_helper" in params:
        raise ValueError(
            "lns_helper: the LNS helper is added above the MILP, by matheuristics.solve_milp; "
            "milp.solve takes incumbent hooks (hooks=)"
        )
    if not (isinstance(flat_share, (int, float)) and 0 <= flat_share <= 1):
        raise ValueError(f"flat_share: must be in [0, 1], got {flat_share!r}")
    if flat is not None and not inst.has_nodes:
        raise ValueError(f"flat: instance {inst.name!r} is flat; a flat solve is for nodes")
    method = METHOD_NAMES[backend]
    bar = progress if isinstance(progress, Progress) else (
        Progress(time_limit, "milp") if progress else None)
    try:
        if bar is not None:
            bar.set_phase("build")
        sym = symmetry if symmetry is not None else ("none" if backend == "cpsat" else "fix")
        form = build(inst, max_columns, aggregate=aggregate, cliques=cliques, rounding=rounding,
                     symmetry=sym)
        call = {
            "time_limit": time_limit, "mip_gap": mip_gap, "threads": threads,
            "backend": backend, "aggregate": aggregate, "cliques": cliques,
            "rounding": [int(d) for d in rounding], **params,
        }
        given = warm_start_arrays(inst, warm_start)
        warm = [] if given is None else [given]
        if inst.has_nodes:
            call.update(model="nodes", symmetry=sym, flat_share=flat_share)
            if flat is None and flat_share > 0 and time_limit > 0:
                if bar is not None:
                    bar.set_phase("flat model")
                flat = _solve_flat(inst, min(10.0, flat_share * time_limit), given, mip_gap=mip_gap,
                                   threads=threads, aggregate=aggregate, cliques=cliques,
                                   rounding=rounding)
            if flat is not None:
                start, place = place_starts(inst, flat.schedule.to_array(inst), fill=True)
                warm.append(("flat incumbent placed on the nodes", start, place))
        first = max(warm, key=lambda w: float(inst.job_values[w[1] >= 0].sum()), default=None)
        if first is not None:
            call.setdefault("warm_start", first[0])
        # -- bounds held beside the backend (milp/held.py): Lagrangian, fixing, flat model --
        if lagrangian is not None or fixing:
            call.update(lagrangian=lagrangian if isinstance(lagrangian, bool | None) else "given",
                        fixing=fixing)
        if bar is not None:
            bar.set_phase("bound")
        ws: Any = None  # a start array on a flat instance, a (start, place) pair on nodes
        if first is not None:
            ws = first[1] if first[2] is None else (first[1], first[2])
        form, held = bounds_before_solve(form, None if first is None else first[1], time_limit,
                                         time.perf_counter() - t0, lagrangian=lagrangian,
                                         fixing=fixing)
        if flat is not None and flat.status is not Status.ERROR and flat.upper_bound is not None:
            held.flat = (float(flat.upper_bound), str(flat.status))
        if held.lagrangian is not None and backend == "highs" and "root_lp" not in params:
            # the Lagrangian bound is the plain LP's; the root LP (with the rounded rows,
            # tighter) runs only when it is expected to end in its share of the time left
            from .highs import root_lp_fits

            params["root_lp"] = root_lp_fits(form.nnz, time_limit - (time.perf_counter() - t0))
        raw = solve_arrays(
            form, time_limit=max(0.0, time_limit - (time.perf_counter() - t0)), mip_gap=mip_gap,
            threads=threads, warm_start=ws, backend=backend, progress=bar, hooks=hooks, **params,
        )
        known = [float(inst.job_values[a >= 0].sum())
                 for a in (raw.start, None if first is None else first[1]) if a is not None]
        bound_after_solve(inst, held, raw.dual_bound, raw.lp_bound, lagrangian, time_limit,
                          lower=max(known) if known else None)
        return assemble(inst, method, form, raw, warm, call, t0, held)
    finally:
        if bar is not None and bar is not progress:
            bar.close()


def _solve_flat(inst: Instance, time_limit: float, given: WarmStart | None,
                **options: Any) -> Result:
    """The flat model of a node instance, solved first (from the given warm start's starts)."""
    flat_inst = inst.replace(nodes=None)
    ws: Any = None
    if given is not None:
        ws = Schedule(inst.name, {inst.jobs[j].name: int(given[1][j])
                                  for j in np.flatnonzero(given[1] >= 0)})
    return solve(flat_inst, time_limit=time_limit, warm_start=ws, **options)
