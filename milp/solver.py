"""``milp.solve``: build, hand to a backend, check, and bound honestly; flat or on nodes.

:func:`solve` builds the one formulation (:func:`milp.build`: on a flat
instance the flat model, on nodes the node model), holds the bounds beside
the backend (:mod:`milp.held`; on nodes also the flat model's, from a short
solve of it first, whose incumbent placed on the nodes is a warm start too;
on model version 3 a relaxation's, the fluid model by default), runs the
backend through :func:`milp.core.solve_arrays`, and returns what
:func:`milp.assemble.assemble` makes of it: the best checked schedule and a
bound never below it. Its options are one :class:`~milp.params.MILPParams`;
the steps are the functions below, in the order :func:`solve` runs them.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from instances import Instance, Result, Schedule, Status
from instances.capacity import place_starts
from instances.objective import report, start_worth
from instances.resources import shares_gpus, uses_resources

from .assemble import assemble
from .backend import IncumbentHooks, RawSolve
from .builder import build
from .core import BACKENDS, HOOK_BACKENDS, METHOD_BACKENDS, METHOD_NAMES, check_args, solve_arrays
from .formulation import Formulation
from .held import HeldBounds, bound_after_solve, bounds_before_solve
from .params import FLAT_SHARE, MILPParams
from .progress import Progress
from .relaxation import Relaxed, relaxed_warm_start
from .relaxation import relaxation as solve_relaxation
from .warm import WarmStart, warm_start_arrays
from .wide import with_window_rows

__all__ = ["BACKENDS", "FLAT_SHARE", "HOOK_BACKENDS", "INCUMBENT_SOURCES", "METHOD_BACKENDS",
           "METHOD_NAMES", "MILPParams", "check_args", "solve", "solve_arrays"]

logger = logging.getLogger(__name__)

INCUMBENT_SOURCES = ("solver", "warm start", "empty schedule")
"""Where the schedule of a :func:`solve` result comes from (``Result.params["incumbent"]``):
the backend (its incumbent, or one the hooks handed it), a warm start (given, or found
before the backend ran: the flat model's, a relaxation's), or none of them."""


def solve(
    inst: Instance, params: MILPParams | None = None, *, warm_start: Any = None,
    progress: bool | Progress = False, hooks: IncumbentHooks | None = None,
    flat: Result | None = None, relaxed: Relaxed | None = None, **options: Any,
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
    params
        The options (:class:`~milp.params.MILPParams`: time limit, gap,
        threads, backend, formulation, bounds, backend options); default
        ``MILPParams()``.
    warm_start
        ``None`` (default), a :class:`~instances.Schedule`, a
        :class:`~instances.Result` or a per-job start array (``-1``: not
        run); checked by :func:`instances.evaluate` first. On nodes, one
        without a valid placement that is feasible on the flat pool is
        placed on the nodes (:func:`instances.capacity.place_starts`). Under
        ``reservation="peak"`` one that breaks the peak reservation is left
        out (said in the message).
    progress
        Show a progress bar with incumbent, bound and gap: ``True`` for one
        over this call, or a :class:`~milp.progress.Progress` the caller made
        earlier (and closes).
    hooks
        :class:`~milp.IncumbentHooks` run beside the search, trading
        incumbents with it (HiGHS backend; HiGHS then runs on one thread).
    flat
        On nodes, a finished solve of the flat model (``inst.replace(nodes=None)``)
        to use instead of running one (not on model version 3).
    relaxed
        On model version 3, a finished :func:`milp.relaxation` to hold
        instead of running one.
    **options
        Options over ``params``, by name: a field of
        :class:`~milp.params.MILPParams` (``time_limit=``, ``mip_gap=``,
        ``threads=``, ``backend=``, ``max_columns=``, ``aggregate=``,
        ``cliques=``, ``rounding=``, ``lagrangian=``, ``fixing=``,
        ``symmetry=``, ``flat_share=``, ``relaxation=``, ``reservation=``), any
        other name a backend option (HiGHS: ``root_lp``, ``seed``, ``cutoff``
        and HiGHS options; CP-SAT: ``seed`` and CP-SAT parameters).
        ``lagrangian=`` may also be a :class:`milp.Bound` found earlier for
        this instance, held as it is.

    Returns
    -------
    instances.Result
        ``value`` recomputed by the checker (on nodes, with a valid
        placement); ``upper_bound`` never below it. ``params`` records the
        options, and ``params["incumbent"]`` where the schedule comes from
        (one of :data:`INCUMBENT_SOURCES`).

    Raises
    ------
    ValueError
        For a bad option (naming it), an infeasible warm start, or a model
        over ``max_columns``.

    Notes
    -----
    On nodes the flat model is solved first within ``flat_share`` of the time
    (at most 10 s): its bound bounds the node optimum, its schedule placed on
    the nodes is a warm start. On model version 3 a relaxation takes its place
    (``relaxation``), its bound held (named by its kind) and, for the fluid
    one, its point given GPU slots first fit a warm start too. Under
    ``reservation="peak"`` the model is :func:`milp.build`'s under it and the
    schedule is checked with the reservation enforced; the flat solve first is
    under ``peak`` too and its schedule not placed, and the bounds held under
    ``curve`` stay valid (every ``peak`` schedule is a ``curve`` one).
    """
    t0 = time.perf_counter()
    p, given_bound = _options(params, options)
    v3 = _check_inputs(inst, p, flat, relaxed)
    bar = progress if isinstance(progress, Progress) else (
        Progress(p.time_limit, "milp") if progress else None)
    try:
        setup = _setup(inst, p, warm_start, bar)
        if v3:
            relaxed = _relaxation_first(inst, p, setup, relaxed, bar)
        elif inst.has_nodes:
            flat = _flat_first(inst, p, setup, flat, bar)
        first = _lead_warm_start(inst, setup)
        lagrangian = p.lagrangian if given_bound is None else given_bound
        form, held = _hold_bounds(p, setup, first, lagrangian, flat, relaxed, t0, bar)
        raw = _run_backend(p, form, held, first, hooks, t0, bar)
        return _finish(inst, p, setup, form, raw, first, held, lagrangian, t0)
    finally:
        if bar is not None and bar is not progress:
            bar.close()


@dataclass
class _Setup:
    """What the steps before the backend hand on.

    Attributes
    ----------
    form
        The model built (before any reduced-cost fixing).
    call
        The options recorded in the result's ``params``, completed step by step.
    notes
        Notes for the result's message, before the backend's.
    given
        The warm start given, as arrays (``None``: none, or left out).
    warm
        Every warm start of the backend: the given one, and those the steps
        before it find (the flat model's, a relaxation's).
    """

    form: Formulation
    call: dict[str, Any]
    notes: list[str]
    given: WarmStart | None
    warm: list[WarmStart]


def _options(params: MILPParams | None, options: dict[str, Any]) -> tuple[MILPParams, Any]:
    """The params of a call: ``options`` over ``params``, and a Lagrangian bound given.

    Parameters
    ----------
    params
        The params given, or ``None`` for the defaults.
    options
        :func:`solve`'s keyword options.

    Returns
    -------
    tuple
        The :class:`MILPParams`, and the :class:`milp.Bound` given as
        ``lagrangian=`` (``None``: none; a ``lagrangian`` that is ``True``,
        ``False`` or ``None`` is the option).

    Raises
    ------
    ValueError
        For a bad option, naming it.
    """
    given_bound = None
    if not isinstance(options.get("lagrangian"), bool | None):
        options = dict(options)
        given_bound = options.pop("lagrangian")
    return MILPParams.from_mapping(options, base=params), given_bound


def _check_inputs(inst: Instance, p: MILPParams, flat: Result | None,
                  relaxed: Relaxed | None) -> bool:
    """Refuse a flat solve or a relaxation given (or asked for) where it has no place.

    Parameters
    ----------
    inst
        The instance.
    p
        The options (``relaxation``).
    flat, relaxed
        :func:`solve`'s ``flat`` and ``relaxed``.

    Returns
    -------
    bool
        Whether ``inst`` is a version 3 instance (its resources modelled).

    Raises
    ------
    ValueError
        ``flat`` for a flat or version 3 instance; ``relaxed`` or
        ``relaxation`` for an instance not of version 3.
    """
    if flat is not None and not inst.has_nodes:
        raise ValueError(f"flat: instance {inst.name!r} is flat; a flat solve is for nodes")
    v3 = uses_resources(inst)
    if flat is not None and v3:
        raise ValueError(f"flat: instance {inst.name!r} is a version 3 instance; its "
                         "relaxations are milp.relaxation's (relaxed=)")
    if (p.relaxation is not None or relaxed is not None) and not v3:
        raise ValueError(f"relaxation: instance {inst.name!r} is not a version 3 instance")
    return v3


def _symmetry(p: MILPParams) -> str:
    """The handling of identical nodes: ``p.symmetry``, else ``"none"`` for CP-SAT, ``"fix"``."""
    if p.symmetry is not None:
        return p.symmetry
    return "none" if p.backend == "cpsat" else "fix"


def _setup(inst: Instance, p: MILPParams, warm_start: Any, bar: Progress | None) -> _Setup:
    """Build the model, start the record of the call and check the warm start given.

    Parameters
    ----------
    inst
        The instance.
    p
        The options.
    warm_start
        :func:`solve`'s ``warm_start``.
    bar
        The progress bar, or ``None``.

    Returns
    -------
    _Setup
        The model, the record (the options of :meth:`MILPParams.call`, and the
        reservation under ``peak``), and the warm start as arrays; one that
        breaks the peak reservation is left out, with a note.

    Raises
    ------
    ValueError
        For a model over ``max_columns`` or an infeasible warm start.
    """
    if bar is not None:
        bar.set_phase("build")
    form = build(inst, p.max_columns, aggregate=p.aggregate, cliques=p.cliques,
                 rounding=p.rounding, symmetry=_symmetry(p), reservation=p.reservation)
    if p.windows:
        form = with_window_rows(form)
    call = p.call()
    if p.windows:
        call["windows"] = form.stats.get("window_rows", 0)
    notes: list[str] = []
    peak = p.reservation == "peak"
    if peak:
        call["reservation"] = p.reservation
    given = warm_start_arrays(inst, warm_start)
    if given is not None and peak and not form.feasible(*given[1:]):
        notes.append(f"warm start ({given[0]}) left out: it breaks the peak reservation")
        given = None
    return _Setup(form, call, notes, given, [] if given is None else [given])


def _relaxation_first(inst: Instance, p: MILPParams, setup: _Setup, relaxed: Relaxed | None,
                      bar: Progress | None) -> Relaxed | None:
    """On model version 3: solve the relaxation first (unless given) and take its warm start.

    Parameters
    ----------
    inst
        The instance (version 3).
    p
        The options (``relaxation``, ``flat_share`` and the limits).
    setup
        The steps so far; its record gets the model, symmetry, flat share and
        relaxation, its warm starts the relaxation's point when it is one.
    relaxed
        :func:`solve`'s ``relaxed``: a relaxation solved earlier, or ``None``.
    bar
        The progress bar, or ``None``.

    Returns
    -------
    Relaxed or None
        The relaxation to hold the bound of: the one given, the one solved
        within ``flat_share`` of the time limit (at most 10 s), or ``None``.
    """
    kind = p.relaxation or ("fluid" if shares_gpus(inst) else "flat")
    setup.call.update(model="resources", symmetry=_symmetry(p), flat_share=p.flat_share,
                      relaxation=kind)
    if relaxed is None and p.flat_share > 0 and p.time_limit > 0:
        if bar is not None:
            bar.set_phase(f"{kind} model")
        given = setup.given
        relaxed = solve_relaxation(
            inst, kind, time_limit=min(10.0, p.flat_share * p.time_limit), mip_gap=p.mip_gap,
            threads=p.threads, warm_start=None if given is None else tuple(given[1:]),
            aggregate=p.aggregate, cliques=p.cliques, rounding=p.rounding)
    if relaxed is not None:
        setup.warm += relaxed_warm_start(setup.form, relaxed)
    return relaxed


def _flat_first(inst: Instance, p: MILPParams, setup: _Setup, flat: Result | None,
                bar: Progress | None) -> Result | None:
    """On nodes (versions 1 and 2): solve the flat model first (unless given), place its schedule.

    Parameters
    ----------
    inst
        The instance (with nodes).
    p
        The options (``flat_share``, the limits, the formulation, the reservation).
    setup
        The steps so far; its record gets the model, symmetry and flat share,
        its warm starts the flat incumbent placed on the nodes (not under ``peak``).
    flat
        :func:`solve`'s ``flat``: a flat solve finished earlier, or ``None``.
    bar
        The progress bar, or ``None``.

    Returns
    -------
    Result or None
        The flat solve to hold the bound of: the one given, the one run within
        ``flat_share`` of the time limit (at most 10 s), or ``None``.
    """
    setup.call.update(model="nodes", symmetry=_symmetry(p), flat_share=p.flat_share)
    if flat is None and p.flat_share > 0 and p.time_limit > 0:
        if bar is not None:
            bar.set_phase("flat model")
        flat = _solve_flat(inst, min(10.0, p.flat_share * p.time_limit), setup.given, p)
    if flat is not None and p.reservation != "peak":
        start, place = place_starts(inst, flat.schedule.to_array(inst), fill=True)
        setup.warm.append(("flat incumbent placed on the nodes", start, place))
    return flat


def _solve_flat(inst: Instance, time_limit: float, given: WarmStart | None,
                p: MILPParams) -> Result:
    """The flat model of a node instance, solved first (from the given warm start's starts).

    Parameters
    ----------
    inst
        The instance with nodes.
    time_limit
        Seconds for the flat solve.
    given
        The warm start given, as arrays, or ``None``.
    p
        The node solve's options: the flat solve takes its gap, threads,
        formulation and reservation, and the defaults otherwise.

    Returns
    -------
    instances.Result
        :func:`solve`'s result on ``inst.replace(nodes=None)``.
    """
    flat_inst = inst.replace(nodes=None)
    ws: Any = None
    if given is not None:
        ws = Schedule(inst.name, {inst.jobs[j].name: int(given[1][j])
                                  for j in np.flatnonzero(given[1] >= 0)})
    options = MILPParams(time_limit=time_limit, mip_gap=p.mip_gap, threads=p.threads,
                         aggregate=p.aggregate, cliques=p.cliques, rounding=p.rounding,
                         reservation=p.reservation)
    return solve(flat_inst, options, warm_start=ws)


def _lead_warm_start(inst: Instance, setup: _Setup) -> WarmStart | None:
    """The warm start handed to the backend: the one of the highest value (the first of ties).

    Parameters
    ----------
    inst
        The instance.
    setup
        The steps so far; its record gets the leading warm start's label.

    Returns
    -------
    WarmStart or None
        The leading warm start, or ``None`` without one.
    """
    first = max(setup.warm, key=lambda w: start_worth(inst, w[1]), default=None)
    if first is not None:
        setup.call.setdefault("warm_start", first[0])
    return first


def _hold_bounds(p: MILPParams, setup: _Setup, first: WarmStart | None, lagrangian: Any,
                 flat: Result | None, relaxed: Relaxed | None, t0: float,
                 bar: Progress | None) -> tuple[Formulation, HeldBounds]:
    """The bounds held beside the backend (:mod:`milp.held`): Lagrangian, fixing, flat model.

    Parameters
    ----------
    p
        The options (``fixing``, the time limit).
    setup
        The steps so far; its record gets ``lagrangian`` and ``fixing`` when
        either is asked for.
    first
        The leading warm start (fixing is relative to its value), or ``None``.
    lagrangian
        ``p.lagrangian``, or the :class:`milp.Bound` given.
    flat, relaxed
        The flat solve and the relaxation, whose bounds are held (when they have one).
    t0
        :func:`solve`'s start (``time.perf_counter``).
    bar
        The progress bar, or ``None``.

    Returns
    -------
    tuple
        The model to solve (reduced by fixing, or ``setup.form``) and the bounds held.
    """
    if lagrangian is not None or p.fixing:
        setup.call.update(lagrangian=lagrangian if isinstance(lagrangian, bool | None) else "given",
                          fixing=p.fixing)
    if bar is not None:
        bar.set_phase("bound")
    form, held = bounds_before_solve(setup.form, None if first is None else first[1],
                                     p.time_limit, time.perf_counter() - t0,
                                     lagrangian=lagrangian, fixing=p.fixing)
    if flat is not None and flat.status is not Status.ERROR and flat.upper_bound is not None:
        held.flat = (report(setup.form.instance, float(flat.upper_bound)),  # a worth
                     str(flat.status))
    if relaxed is not None and relaxed.upper_bound is not None:
        held.relaxed = (float(relaxed.upper_bound), str(relaxed.status), relaxed.kind)
    return form, held


def _run_backend(p: MILPParams, form: Formulation, held: HeldBounds, first: WarmStart | None,
                 hooks: IncumbentHooks | None, t0: float, bar: Progress | None) -> RawSolve:
    """Hand the model to the backend (:func:`milp.core.solve_arrays`) for the time left.

    Parameters
    ----------
    p
        The options (limits, backend and its options).
    form
        The model.
    held
        The bounds held: with a Lagrangian bound, HiGHS runs its root LP (the
        rounded rows, tighter than the plain LP's) only when it is expected to
        end in its share of the time left, unless ``root_lp`` is given.
    first
        The leading warm start, or ``None``: a start array on a flat instance,
        a ``(start, place)`` pair (and GPU slots on version 3) on nodes.
    hooks
        :func:`solve`'s incumbent hooks, or ``None``.
    t0
        :func:`solve`'s start (``time.perf_counter``).
    bar
        The progress bar, or ``None``.

    Returns
    -------
    RawSolve
        The backend's answer, unchecked.
    """
    ws: Any = None
    if first is not None:
        ws = first[1] if first[2] is None else tuple(first[1:])
    backend_options = dict(p.backend_options)
    if held.lagrangian is not None and p.backend == "highs" and "root_lp" not in backend_options:
        from .highs import root_lp_fits

        backend_options["root_lp"] = root_lp_fits(form.nnz,
                                                  p.time_limit - (time.perf_counter() - t0))
    return solve_arrays(
        form, time_limit=max(0.0, p.time_limit - (time.perf_counter() - t0)),
        mip_gap=p.mip_gap, threads=p.threads, warm_start=ws, backend=p.backend, progress=bar,
        hooks=hooks, **backend_options,
    )


def _finish(inst: Instance, p: MILPParams, setup: _Setup, form: Formulation, raw: RawSolve,
            first: WarmStart | None, held: HeldBounds, lagrangian: Any, t0: float) -> Result:
    """The result: a last Lagrangian search if no bound is held, the checked schedule, the notes.

    Parameters
    ----------
    inst
        The instance.
    p
        The options.
    setup
        The steps before the backend (record, notes, warm starts).
    form
        The model solved.
    raw
        The backend's answer.
    first
        The leading warm start, or ``None`` (its value bounds the Lagrangian search's target).
    held
        The bounds held, completed here (:func:`milp.held.bound_after_solve`).
    lagrangian
        ``p.lagrangian``, or the :class:`milp.Bound` given.
    t0
        :func:`solve`'s start (``time.perf_counter``).

    Returns
    -------
    instances.Result
        :func:`milp.assemble.assemble`'s result, the notes before its message and
        ``params["incumbent"]`` the source of its schedule.
    """
    known = [start_worth(inst, a)
             for a in (raw.start, None if first is None else first[1]) if a is not None]
    bound_after_solve(inst, held, raw.dual_bound, raw.lp_bound, lagrangian, p.time_limit,
                      lower=max(known) if known else None)
    res = assemble(inst, METHOD_NAMES[p.backend], form, raw, setup.warm, setup.call, t0, held,
                   reservation=p.reservation)
    notes = setup.notes
    message = "; ".join([*notes, res.message] if res.message else notes) if notes else res.message
    params = {**res.params, "incumbent": _incumbent_source(inst, res, raw, setup.warm)}
    return replace(res, message=message, params=params)


def _incumbent_source(inst: Instance, res: Result, raw: RawSolve, warm: list[WarmStart]) -> str:
    """Where the schedule of ``res`` comes from, one of :data:`INCUMBENT_SOURCES`.

    The solver's when its starts are those of the backend's incumbent or of a
    further one it handed over (:attr:`RawSolve.alternatives`), which wins a tie
    (as in :func:`milp.assemble.assemble`); else a warm start's when they are
    one's; else the empty schedule's.

    Parameters
    ----------
    inst
        The instance.
    res
        The assembled result.
    raw
        The backend's answer.
    warm
        The warm starts checked beside it.

    Returns
    -------
    str
        ``"solver"``, ``"warm start"`` or ``"empty schedule"``.
    """
    start = res.schedule.to_array(inst)
    solver = [raw.start] if raw.start is not None else []
    solver += [sol[0] for sol in raw.alternatives]
    if any(np.array_equal(s, start) for s in solver):
        return "solver"
    if any(np.array_equal(w[1], start) for w in warm):
        return "warm start"
    return "empty schedule"
