"""``milp.solve``: build, hand to a backend, check, and bound honestly; flat or on nodes.

:func:`solve` builds the one formulation (:func:`milp.build`: on a flat
instance the flat model, on nodes the node model), holds the bounds beside
the backend (:mod:`milp.held`; on nodes also the flat model's, from a short
solve of it first, whose incumbent placed on the nodes is a warm start too;
on model version 3 a relaxation's, the fluid model by default), runs the
backend through :func:`milp.core.solve_arrays`, and returns what
:func:`milp.assemble.assemble` makes of it: the best checked schedule and a
bound never below it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from instances import Instance, Result, Schedule, Status
from instances.arrays import Reservation
from instances.capacity import place_starts
from instances.resources import shares_gpus, uses_resources

from .assemble import assemble
from .backend import IncumbentHooks
from .builder import build
from .core import BACKENDS, HOOK_BACKENDS, METHOD_BACKENDS, METHOD_NAMES, check_args, solve_arrays
from .formulation import DEFAULT_MAX_COLUMNS, DEFAULT_ROUNDING
from .held import bound_after_solve, bounds_before_solve
from .progress import Progress
from .relaxation import Relaxed, relaxed_warm_start
from .relaxation import relaxation as solve_relaxation
from .warm import WarmStart, warm_start_arrays

__all__ = ["BACKENDS", "FLAT_SHARE", "HOOK_BACKENDS", "METHOD_BACKENDS", "METHOD_NAMES",
           "check_args", "solve", "solve_arrays"]

logger = logging.getLogger(__name__)


FLAT_SHARE = 0.1
"""On nodes, the share of :func:`solve`'s time limit the flat solve first may take (at most 10 s)."""


def solve(
    inst: Instance, *, time_limit: float = 60.0, mip_gap: float = 1e-4, threads: int = 1,
    warm_start: Any = None, backend: str = "highs", progress: bool | Progress = False,
    hooks: IncumbentHooks | None = None, max_columns: int = DEFAULT_MAX_COLUMNS,
    aggregate: bool = True, cliques: bool = False, rounding: Sequence[int] = DEFAULT_ROUNDING,
    lagrangian: Any = None, fixing: bool = False, symmetry: str | None = None,
    flat_share: float = FLAT_SHARE, flat: Result | None = None,
    relaxation: str | None = None, relaxed: Relaxed | None = None,
    reservation: Reservation = "curve", **params: Any,
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
        to use instead of running one (not on model version 3).
    relaxation
        On model version 3, the relaxation solved first in place of the flat
        model (``flat_share`` of the time, at most 10 s), its bound held
        (named by its kind): a key of :data:`milp.shares.RELAXATIONS`;
        ``None``: ``"fluid"`` with shared jobs (its point, given GPU slots
        first fit, is a warm start too), ``"flat"`` otherwise.
    relaxed
        On model version 3, a finished :func:`milp.relaxation` to hold
        instead of running one.
    reservation
        ``"curve"`` (default) or ``"peak"``: the model of :func:`milp.build` under it (the
        pool row at ``G - P``, each node its GPUs less those peak withholds there, by
        index on version 3), and the schedule checked under it with the reservation
        enforced. Under ``peak`` a warm start that breaks the peak reservation is left
        out (said in the message), the flat solve first (on nodes) is under ``peak``
        too and its schedule not placed, and the bounds held under ``curve`` (the
        Lagrangian, a relaxation's) stay valid: every ``peak`` schedule is a ``curve`` one.
    **params
        Backend options. HiGHS: ``root_lp``, ``seed``, ``cutoff`` (a probe whose
        closed tree proves a bound) and HiGHS options by name (see
        :func:`milp.highs.solve_highs`). CP-SAT: ``seed`` and
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
    if reservation not in ("curve", "peak"):
        raise ValueError(f"reservation: must be 'curve' or 'peak', got {reservation!r}")
    peak = reservation == "peak"
    if "lns_helper" in params:
        raise ValueError(
            "lns_helper: the LNS helper is added above the MILP, by matheuristics.solve_milp; "
            "milp.solve takes incumbent hooks (hooks=)"
        )
    if not (isinstance(flat_share, (int, float)) and 0 <= flat_share <= 1):
        raise ValueError(f"flat_share: must be in [0, 1], got {flat_share!r}")
    if flat is not None and not inst.has_nodes:
        raise ValueError(f"flat: instance {inst.name!r} is flat; a flat solve is for nodes")
    v3 = uses_resources(inst)
    if flat is not None and v3:
        raise ValueError(f"flat: instance {inst.name!r} is a version 3 instance; its "
                         "relaxations are milp.relaxation's (relaxed=)")
    if (relaxation is not None or relaxed is not None) and not v3:
        raise ValueError(f"relaxation: instance {inst.name!r} is not a version 3 instance")
    method = METHOD_NAMES[backend]
    bar = progress if isinstance(progress, Progress) else (
        Progress(time_limit, "milp") if progress else None)
    try:
        if bar is not None:
            bar.set_phase("build")
        sym = symmetry if symmetry is not None else ("none" if backend == "cpsat" else "fix")
        form = build(inst, max_columns, aggregate=aggregate, cliques=cliques, rounding=rounding,
                     symmetry=sym, reservation=reservation)
        call = {
            "time_limit": time_limit, "mip_gap": mip_gap, "threads": threads,
            "backend": backend, "aggregate": aggregate, "cliques": cliques,
            "rounding": [int(d) for d in rounding], **params,
        }
        notes: list[str] = []
        if peak:
            call["reservation"] = reservation
        given = warm_start_arrays(inst, warm_start)
        if given is not None and peak and not form.feasible(*given[1:]):
            notes.append(f"warm start ({given[0]}) left out: it breaks the peak reservation")
            given = None
        warm = [] if given is None else [given]
        if v3:
            kind = relaxation or ("fluid" if shares_gpus(inst) else "flat")
            call.update(model="resources", symmetry=sym, flat_share=flat_share, relaxation=kind)
            if relaxed is None and flat_share > 0 and time_limit > 0:
                if bar is not None:
                    bar.set_phase(f"{kind} model")
                relaxed = solve_relaxation(
                    inst, kind, time_limit=min(10.0, flat_share * time_limit), mip_gap=mip_gap,
                    threads=threads, warm_start=None if given is None else tuple(given[1:]),
                    aggregate=aggregate, cliques=cliques, rounding=rounding)
            if relaxed is not None:
                warm += relaxed_warm_start(form, relaxed)
        elif inst.has_nodes:
            call.update(model="nodes", symmetry=sym, flat_share=flat_share)
            if flat is None and flat_share > 0 and time_limit > 0:
                if bar is not None:
                    bar.set_phase("flat model")
                flat = _solve_flat(inst, min(10.0, flat_share * time_limit), given, mip_gap=mip_gap,
                                   threads=threads, aggregate=aggregate, cliques=cliques,
                                   rounding=rounding, reservation=reservation)
            if flat is not None and not peak:
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
            ws = first[1] if first[2] is None else tuple(first[1:])
        form, held = bounds_before_solve(form, None if first is None else first[1], time_limit,
                                         time.perf_counter() - t0, lagrangian=lagrangian,
                                         fixing=fixing)
        if flat is not None and flat.status is not Status.ERROR and flat.upper_bound is not None:
            held.flat = (float(flat.upper_bound), str(flat.status))
        if relaxed is not None and relaxed.upper_bound is not None:
            held.relaxed = (float(relaxed.upper_bound), str(relaxed.status), relaxed.kind)
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
        res = assemble(inst, method, form, raw, warm, call, t0, held, reservation=reservation)
        if notes:
            res = replace(res, message="; ".join([*notes, res.message] if res.message else notes))
        return res
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
