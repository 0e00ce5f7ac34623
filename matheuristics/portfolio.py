"""The portfolio beside HiGHS: which sources run, the hooks that run them, and the result's account.

:func:`plan` is the rule (measured, ``docs/milp.md``) that picks, for an
instance, the threads and the time, the sources beside HiGHS (the LNS,
:class:`~matheuristics.helper.LNSSource`; CP-SAT,
:class:`~matheuristics.cpsat_source.CPSATSource`) and whether the LP start
runs (:class:`~matheuristics.lpround.LPStart`: the LP relaxation beside the
warm start, its schedule a warm start). :func:`portfolio_hooks` makes the
incumbent hooks that run the sources (:class:`~matheuristics.incumbents.SharedHooks`),
and :func:`account` adds to the :class:`~instances.Result` of the solve what
the sources and the LP proved (a smaller bound, checked against the value)
and which source found the final incumbent and which proved the bound
(``params["incumbent_from"]``, ``params["bound_from"]``, and the message), read from
the fields of the solve's result (``params["incumbent"]``, ``params["warm_start"]``,
``bound_method``) and of the sources' pool, never from its message.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from heuristics.stop import StoppingCriterion
from instances import Instance, Result, Schedule, Status, evaluate
from instances.objective import integral_bound, report, report_bound
from milp.assemble import tolerance

from .cpsat_source import CPSAT, CPSATSource
from .helper import LNS, LNSHelper, LNSSource
from .incumbents import HIGHS, WARM, SharedHooks, Source
from .lpround import LP, LPStart
from .params import LNSParams

__all__ = ["CUTOFF_MARGIN", "FROM_WARM_START", "INCUMBENT", "LEAD", "LP_JOBS", "LP_MAX_JOBS",
           "SOURCES", "WIDE_JOBS_PER_GPU", "WIDE_SHARE", "Plan", "account", "choose",
           "hooks_for", "is_wide", "lp_warm_start", "named", "plan", "portfolio_hooks"]

logger = logging.getLogger(__name__)

SOURCES = (LNS, CPSAT)
"""The sources a portfolio may run beside HiGHS."""

LP_JOBS = 1000
"""From this many jobs the LP start runs (its schedule beat ``best``'s at 1,000 and 2,000 jobs,
not at 500 nor on medium; docs/milp.md) ..."""

CUTOFF_MARGIN = 0.02
"""Beside the LNS below :data:`LP_JOBS` jobs, HiGHS first searches only for schedules worth
this share more than the warm start (``milp.highs.solve_highs``'s ``cutoff``; not when the
root LP proves as much): where its tree closes, that bound is proved in a part of the time
the plain tree takes to reach it (docs/milp.md)."""

INCUMBENT = "incumbent"
"""The key of a solve's ``params`` that says where its schedule comes from (one of
:data:`milp.solver.INCUMBENT_SOURCES`); :func:`account` reads it and records
``incumbent_from`` in its place."""

FROM_WARM_START = "warm start"
"""Its value for a schedule that is a warm start's."""

LP_MAX_JOBS = 5000
"""... and below this many, where :func:`matheuristics.solve_milp`'s path at scale (the
Lagrangian bound and heuristic) takes over: the LP of 10,000 jobs takes minutes."""


@dataclass(frozen=True)
class Plan:
    """The sources beside HiGHS, CP-SAT's workers and the LP start, with the rule's reason."""

    sources: tuple[str, ...]
    cpsat_workers: int = 1
    lp: bool = False
    reason: str = ""
    cutoff: float | None = None
    """HiGHS's cutoff as a share above the warm start's value (``None``: no cutoff)."""
    lead: float = 0.0
    """The share of the time in which CP-SAT runs first on every thread
    (:func:`matheuristics.lead.cpsat_lead`; 0: none), before HiGHS's parallel search on
    every thread from its schedule."""

    def __post_init__(self) -> None:
        unknown = [s for s in self.sources if s not in SOURCES]
        if unknown:
            raise ValueError(f"sources: unknown {unknown}, expected some of {list(SOURCES)}")
        if not (isinstance(self.cpsat_workers, int) and self.cpsat_workers >= 1):
            raise ValueError(f"cpsat_workers: must be an integer >= 1, got {self.cpsat_workers!r}")
        if self.cutoff is not None and not (isinstance(self.cutoff, float) and self.cutoff >= 0):
            raise ValueError(f"cutoff: must be a share >= 0 or None, got {self.cutoff!r}")
        if not (isinstance(self.lead, float) and 0.0 <= self.lead < 1.0):
            raise ValueError(f"lead: must be a share in [0, 1), got {self.lead!r}")
        if self.lead > 0 and self.sources:
            raise ValueError(f"lead: after CP-SAT first HiGHS searches on every thread, no source "
                             f"beside it (measured worse, docs/milp.md), got {list(self.sources)}")

    def parts(self) -> list[str]:
        """What runs besides HiGHS, named: the sources, the LP start, the CP-SAT lead."""
        return [*self.sources, *(["LP start"] if self.lp else []),
                *(["CP-SAT lead"] if self.lead else [])]

    def cutoff_for(self, warm_value: float) -> float | None:
        """HiGHS's cutoff for a warm start worth ``warm_value`` (``None``: none)."""
        return None if self.cutoff is None else warm_value + self.cutoff * abs(warm_value)


WIDE_SHARE = 0.5
"""An instance is of the wide class (:func:`is_wide`) when at least this share of its batch
work (GPU-slots) is in jobs of which two do not fit beside the inference curve."""

WIDE_JOBS_PER_GPU = 8.0
"""... and it has at most this many jobs per GPU (the LNS kept the lead on ``medium`` seeds
8 and 10, with 12.4 and 12.5; the ``wide`` family has 3.75; docs/milp.md)."""

LEAD = 0.1
"""On the wide class, CP-SAT first for this share of the time (a :class:`Plan`'s ``lead``)."""


def is_wide(inst: Instance) -> bool:
    """Most batch work in jobs of which two never share a median slot (``2 g_j > G - d_t``),
    and few jobs per GPU.

    The class of issue 41 (the ``wide`` family): where two such jobs cannot run side by
    side, the time-indexed LP splits them and CP-SAT's interval model finds the schedules.
    ``G - d_t`` is taken at the median slot of the capacity the curve leaves. Measured on
    flat pools under ``value`` only, so false elsewhere.
    """
    if (inst.num_jobs == 0 or inst.has_nodes or inst.objective != "value"
            or inst.num_jobs > WIDE_JOBS_PER_GPU * inst.num_gpus):
        return False
    left = float(np.median(inst.batch_capacity()))
    g, work = inst.gpus, inst.gpus * inst.durations
    return float(work[2 * g > left].sum()) >= WIDE_SHARE * float(work.sum())


def plan(inst: Instance, threads: int, time_limit: float) -> Plan:
    """The sources to run beside HiGHS, as measured on 2 cores (``docs/milp.md``).

    One thread: none (HiGHS alone). Two: the LNS, and from :data:`LP_JOBS`
    to :data:`LP_MAX_JOBS` jobs the LP start too (where HiGHS is then not run, the
    hooks give its core to a second LNS: :meth:`SharedHooks.solver_idle`); below
    :data:`LP_JOBS`, HiGHS under the cutoff :data:`CUTOFF_MARGIN` above the warm
    start, or on the wide class (:func:`is_wide`) CP-SAT first on both threads for
    :data:`LEAD` of the time, then HiGHS's parallel search. Above two, HiGHS gets them
    all.
    """
    if threads != 2 or time_limit <= 0:
        return Plan((), reason=f"{threads} thread(s): HiGHS alone")
    if LP_JOBS <= inst.num_jobs < LP_MAX_JOBS:
        return Plan((LNS,), lp=True, reason=f"2 threads, {inst.num_jobs} >= {LP_JOBS} jobs")
    if inst.num_jobs < LP_JOBS and is_wide(inst):
        return Plan((), lead=LEAD, reason=f"2 threads, {inst.num_jobs} < {LP_JOBS} jobs, "
                    "most work in jobs two of which do not fit beside the curve")
    if inst.num_jobs < LP_JOBS:
        return Plan((LNS,), reason=f"2 threads, {inst.num_jobs} < {LP_JOBS} jobs",
                    cutoff=CUTOFF_MARGIN)
    return Plan((LNS,), reason="2 threads")


def named(names: Sequence[str]) -> Plan:
    """The plan of ``names``: sources of :data:`SOURCES`, and ``lp`` for the LP start."""
    names = tuple(names)
    return Plan(tuple(n for n in names if n != LP), lp=LP in names)


def choose(inst: Instance, threads: int, time_limit: float, lns_helper: bool | None,
           sources: Plan | None, backend: str) -> Plan:
    """The plan to run: as given, the LNS helper's flag, or the rule (HiGHS backend only)."""
    if sources is not None:
        return sources
    if lns_helper is not None:
        return Plan((LNS,) if lns_helper else ())
    return plan(inst, threads, time_limit) if backend == "highs" else Plan(())


def portfolio_hooks(
    chosen: Plan, *, seed: int = 0, mip_gap: float = 1e-4, bounds: bool = True,
    stop: StoppingCriterion | None = None, lns: LNSParams | None = None,
) -> tuple[SharedHooks, threading.Event]:
    """The hooks running ``chosen``'s sources, and the event that ends HiGHS's search early.

    The LNS alone is the :class:`~matheuristics.LNSHelper`. ``bounds=False`` where the
    model is a restriction of the instance's (reduced-cost fixing): the sources' bounds
    are then not the instance's and are not proved.
    """
    halt = threading.Event()
    if chosen.sources == (LNS,) and lns is None and stop is None:
        return LNSHelper(seed=seed), halt
    sources: list[Source] = []
    for name in chosen.sources:
        if name == LNS:
            sources.append(LNSSource(LNSParams(seed=seed) if lns is None else lns))
        else:
            sources.append(CPSATSource(workers=chosen.cpsat_workers, seed=seed, mip_gap=mip_gap,
                                       bounds=bounds))
    return SharedHooks(sources, stop=stop, halt=halt), halt


def hooks_for(chosen: Plan, params: dict[str, Any]) -> SharedHooks:
    """The hooks of ``chosen`` for :func:`milp.solve`, and ``params`` told of them.

    With CP-SAT among the sources and not the LNS, HiGHS gets the ``stop`` event
    that a proof of optimality sets, so that the one stop rule ends its search too.
    Beside the LNS it does not: HiGHS reads the event in a Python callback, which
    waits for the GIL the LNS thread holds (``docs/bounds.md``); the sources still
    stop, and HiGHS at its limit or its own proof.
    """
    hooks, halt = portfolio_hooks(chosen, seed=int(params.get("seed", 0)),
                                  mip_gap=float(params.get("mip_gap", 1e-4)),
                                  bounds=not params.get("fixing", False))
    if CPSAT in chosen.sources and LNS not in chosen.sources:
        params.setdefault("stop", halt)
    return hooks


def lp_warm_start(inst: Instance, lp: LPStart, ws: Any) -> Any:
    """The better of the LP start's schedule (checked) and the warm start ``ws`` (a Result)."""
    if lp.start is None or lp.value is None:
        return ws
    if isinstance(ws, Result) and report(inst, ws.value) >= lp.value:  # worths
        return ws
    schedule = Schedule.from_array(inst, lp.start, lp.place)
    metrics = evaluate(inst, schedule)
    return Result(method=LP, status=Status.TIME_LIMIT, schedule=schedule, value=metrics.value,
                  runtime_s=lp.seconds, metrics=metrics, message=lp.summary())


def _solve_incumbent(res: Result, backend: str) -> str:
    """Who found the incumbent of the solve ``res``, from its ``params``, the sources aside.

    Parameters
    ----------
    res
        The result of :func:`milp.solve` (or of the warm start alone when nothing
        was searched); ``params["incumbent"]`` says where its schedule comes from
        (:data:`milp.solver.INCUMBENT_SOURCES`), ``params["warm_start"]`` the
        leading warm start's name.
    backend
        The backend that ran (``highs`` or ``cpsat``).

    Returns
    -------
    str
        The leading warm start's name (:data:`~matheuristics.incumbents.WARM`
        without one) when the schedule is a warm start's, else the backend's
        name (:data:`~matheuristics.incumbents.HIGHS` for HiGHS).
    """
    if res.params.get(INCUMBENT) == FROM_WARM_START:
        return str(res.params.get("warm_start", WARM))
    return backend if backend != "highs" else HIGHS


def _highs_bound(res: Result, backend: str) -> str:
    """Who proved ``res``'s bound, from its ``bound_method``."""
    method = res.bound_method or "none"
    if method.split("+")[0] in ("dual", "lp"):
        return f"{backend}:{method}"
    return method


def account(inst: Instance, res: Result, hooks: SharedHooks | None, *, lp: LPStart | None = None,
            backend: str = "highs", mip_gap: float = 1e-4,
            more: Sequence[tuple[float, str]] = ()) -> Result:
    """``res`` with the sources' bounds and the provenance of its incumbent and its bound.

    A source's bound (CP-SAT's, the LP start's) replaces the solve's when it is smaller
    and not below the checked value; one below it is a bug, logged and left out. The
    incumbent's origin is ``highs`` (or the backend), a source's name, or the warm start's
    (``best``, ``lp`` or the one given). ``more`` are further bounds on the worth with
    their names (a CP-SAT lead's), taken as a source's. The sources hold worths (what the
    model maximises, :mod:`instances.objective`); the result's figures are in the
    objective's units.
    """
    value = report(inst, res.value)  # the worth
    tol = tolerance(inst, value)
    incumbent, bound_from = _solve_incumbent(res, backend), _highs_bound(res, backend)
    bounds: list[tuple[float, str]] = []
    pool = None if hooks is None else hooks.pool
    if pool is not None:
        _, held, origin, _ = pool.best()
        if abs(held - value) <= tol:
            incumbent = str(res.params.get("warm_start", WARM)) if origin == WARM else origin
        if math.isfinite(pool.bound):  # a solver's proof (CP-SAT's), as the solve's own
            bounds.append((integral_bound(inst, pool.bound), str(pool.bound_origin)))
    if lp is not None and lp.bound is not None:
        bounds.append((lp.bound, LP))
    bounds += [(integral_bound(inst, b), name) for b, name in more]
    notes = []
    upper = None if res.upper_bound is None else report(inst, res.upper_bound)
    method, status, moved = res.bound_method, res.status, False
    for bound, name in sorted(bounds):
        if res.status is Status.ERROR:
            break
        if bound < value - tol:
            notes.append(f"bug: {name} bound {bound!r} below the value {value!r}")
            logger.error("portfolio on %s: %s", inst.name, notes[-1])
        elif upper is None or bound < upper:
            upper, method, bound_from, moved = max(bound, value), name, name, True
            ref = upper if inst.objective == "value" else res.value  # what the gap is of
            if upper - value <= max(tol, mip_gap * abs(ref)):  # a worth gap is F's gap too
                status = Status.OPTIMAL
    lp_bound = res.lp_bound
    if lp_bound is None and lp is not None and lp.bound is not None:
        lp_bound = report_bound(inst, lp.bound)
    params = {k: v for k, v in res.params.items() if k != INCUMBENT}
    params.update(incumbent_from=incumbent, bound_from=bound_from)
    notes.append(f"incumbent from {incumbent}, bound from {bound_from}")
    if lp is not None:
        notes.insert(0, lp.summary())
    message = "; ".join([m for m in (res.message, *notes) if m])
    shown_upper = report_bound(inst, upper) if moved and upper is not None else res.upper_bound
    return dataclasses.replace(res, upper_bound=shown_upper, bound_method=method, status=status,
                               params=params, message=message, lp_bound=lp_bound)
