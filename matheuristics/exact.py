"""The MILP as users run it by name: warm-started by ``best``, with a portfolio beside HiGHS.

:func:`milp.solve` takes a warm start and incumbent hooks as they are given;
:func:`solve_milp` resolves ``warm_start="auto"`` (the ``best`` heuristic
within a small share of the time limit) and the sources beside HiGHS (the
LNS, CP-SAT, the LP-guided schedule: :mod:`matheuristics.portfolio`, chosen
by its measured rule unless named) and hands both to it. This is what
``gpusched.solve(inst, "milp")`` and ``gpusched solve --method milp`` run.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import milp
from instances import Instance, Result, Status
from instances.objective import report
from milp.highs import ROOT_LP_SHARE
from milp.progress import Progress

from .best import best
from .cpsat_source import CPSAT
from .lead import better_start, cpsat_lead, lead_bound
from .lpround import LPStart
from .portfolio import (
    FROM_WARM_START,
    INCUMBENT,
    Plan,
    account,
    choose,
    hooks_for,
    lp_warm_start,
    named,
)

__all__ = ["SCALE_JOBS", "WARM_START_BUDGET", "WARM_START_SHARE", "solve_milp",
           "warm_start_schedule"]

WARM_START_SHARE = 0.1
"""Largest share of the time limit the automatic warm start may spend ..."""

WARM_START_BUDGET = 10.0
"""... and at most this many seconds."""


def warm_start_schedule(inst: Instance, time_limit: float) -> Result | None:
    """The ``best`` heuristic's result within ``min(10 s, 10% of time_limit)``.

    On an instance with nodes too: ``best`` places every candidate on the
    nodes (all placement rules). ``None`` when ``time_limit`` leaves no time
    (``<= 0``).
    """
    if time_limit <= 0:
        return None
    return best(inst, time_limit=min(WARM_START_BUDGET, WARM_START_SHARE * time_limit))


SCALE_JOBS = 5000
"""From this many jobs, :func:`solve_milp` also tries the Lagrangian heuristic as warm start."""


def _at_scale(inst: Instance, time_limit: float, ws: Result | None) -> tuple[Any, Any]:
    """At scale: the better of ``ws`` and the Lagrangian heuristic, and the bound found for it.

    The Volume search (within :data:`milp.bound.LAGRANGIAN_SHARE` of the limit, capped at
    20 s, as :func:`milp.solve` would spend on it) targets the warm start's value; its
    multipliers then give the Lagrangian heuristic's schedule, and the bound is handed to
    :func:`milp.solve`, which holds it instead of searching again.
    """
    from milp.bound import LAGRANGIAN_SHARE

    from .lagrangian import lagrangian

    b = milp.bound(inst, "lagrangian", time_limit=min(20.0, LAGRANGIAN_SHARE * time_limit),
                   lower=None if ws is None else report(inst, ws.value))
    cand = lagrangian(inst, bound=b)
    return (cand if ws is None or cand.signed_value > ws.signed_value else ws), b


def _every_job_runs(inst: Instance, ws: Any) -> bool:
    """Whether the warm start ``ws`` (a Result) runs every job: under ``value`` nothing is left
    to search (under ``flow`` when they start still counts)."""
    return isinstance(ws, Result) and inst.objective == "value" and bool((ws.schedule.to_array(inst) >= 0).all())


def _every_job(ws: Result, backend: str) -> Result:
    """The answer when the warm start runs every job: optimal, its checked value the bound (the
    sum of the values)."""
    return dataclasses.replace(
        ws, method=milp.METHOD_NAMES[backend], status=Status.OPTIMAL,
        upper_bound=ws.value, bound_method="sum-of-values",
        params={"warm_start": ws.method, INCUMBENT: FROM_WARM_START},
        message=f"not searched: every job runs in the warm start; incumbent from the warm start "
                f"({ws.method})")


def solve_milp(
    inst: Instance,
    *,
    time_limit: float = 60.0,
    threads: int = 1,
    warm_start: Any = "auto",
    lns_helper: bool | None = None,
    sources: Plan | tuple[str, ...] | list[str] | None = None,
    backend: str = "highs",
    progress: bool = False,
    **params: Any,
) -> Result:
    """:func:`milp.solve` with the automatic warm start and the LNS helper.

    Parameters
    ----------
    inst
        The instance.
    time_limit
        Wall-clock seconds for everything, the warm start included.
    threads
        Threads in all. With the LNS helper, HiGHS gets one and the LNS the other.
    warm_start
        ``"auto"`` (default: :func:`warm_start_schedule`; from :data:`SCALE_JOBS`
        jobs the Lagrangian heuristic's schedule when it is better, its bound
        held by :func:`milp.solve`), or what
        :func:`milp.solve` takes (``None``, a Schedule, a Result, a start array).
    lns_helper
        ``True``: the LNS alone beside HiGHS (:class:`~matheuristics.LNSHelper`);
        ``False``: nothing beside it. ``None`` (default): ``sources`` decides.
    sources
        What runs beside HiGHS (HiGHS backend; needs a warm start), trading
        incumbents with it and with each other: names of
        :data:`matheuristics.portfolio.SOURCES` (``lns``, ``cpsat``), and ``lp``
        for the LP start (with ``warm_start="auto"``: the LP relaxation solved
        beside the warm start, :class:`~matheuristics.lpround.LPStart`, the
        better of its schedule and ``best``'s leading, its bound held); or a
        :class:`~matheuristics.portfolio.Plan` (with CP-SAT's workers, or a
        ``lead``: CP-SAT first on every thread, then HiGHS's parallel search).
        ``None`` (default): :func:`matheuristics.portfolio.plan`'s measured rule.
        On an instance with nodes too.
    backend
        As for :func:`milp.solve`.
    progress
        Show a progress bar over the whole solve, the warm start included.
    **params
        Passed to :func:`milp.solve` (``mip_gap``, ``seed``, HiGHS options...).

    Returns
    -------
    instances.Result
        As :func:`milp.solve`'s, with ``runtime_s`` and ``params`` those of
        the whole call (``time_limit``, ``threads`` and ``lns_helper`` as given,
        ``sources`` as run, ``incumbent_from`` and ``bound_from``: the source of
        the final incumbent and of the bound), and the upper bound the smaller
        of HiGHS's and the sources' (:func:`matheuristics.portfolio.account`).

    Raises
    ------
    ValueError
        For a bad argument (``lns_helper`` or ``sources`` with a backend other
        than HiGHS, both given, or an unknown source).
    """
    t0 = time.perf_counter()
    if lns_helper is not None and backend != "highs":
        raise ValueError(f"lns_helper: only the highs backend runs the LNS helper, not {backend!r}")
    if sources is not None and lns_helper is not None:
        raise ValueError("sources: give sources or lns_helper, not both")
    if sources is not None and not isinstance(sources, Plan):
        sources = named(sources)
    if sources is not None and sources.sources and backend != "highs":
        raise ValueError(f"sources: only the highs backend runs sources beside it, not {backend!r}")
    if not (isinstance(time_limit, (int, float)) and time_limit >= 0):
        raise ValueError(f"time_limit: must be a number >= 0, got {time_limit!r}")
    chosen = choose(inst, threads, time_limit, lns_helper, sources, backend)
    alone = None  # what of the plan does not run, and why
    if params.get("reservation", "curve") == "peak" and chosen.parts():
        if lns_helper or (sources is not None and sources.parts()):
            raise ValueError(f"sources: none runs beside HiGHS under the peak reservation "
                             f"({inst.name!r}): the sources search curve schedules")
        alone = (f"HiGHS alone under the peak reservation (the rule's {chosen.parts()} not "
                 f"run: they search curve schedules)")
        chosen = Plan((), reason=alone)
    elif inst.has_nodes and inst.jobs_use_resources and (
            chosen.lp or CPSAT in chosen.sources or chosen.lead):
        if sources is not None and (sources.lp or CPSAT in sources.sources or sources.lead):
            raise ValueError(f"sources: on model version 3 ({inst.name!r}) only the LNS runs "
                             "beside HiGHS (CP-SAT's hints and the LP start are pairs without "
                             "GPU indices)")
        kept = tuple(s for s in chosen.sources if s != CPSAT)
        dropped = [x for x in chosen.parts() if x not in kept]
        alone = (f"on model version 3 only the LNS runs beside HiGHS (the rule's {dropped} "
                 f"not run: no GPU indices)")
        chosen = Plan(kept, reason=alone)
    auto = isinstance(warm_start, str) and warm_start == "auto"
    # the LP beside the warm start: the two share the cores, then the better schedule leads
    lp = LPStart(inst, ROOT_LP_SHARE * time_limit) if chosen.lp and auto and time_limit > 0 else None
    bar = Progress(time_limit, "milp") if progress else None
    lead: Result | None = None  # CP-SAT's result where it runs first (the plan's lead)
    proved: Result | None = None  # the lead, where it proved its schedule optimal
    try:
        ws: Any = warm_start
        if auto:
            if bar is not None:
                bar.set_phase("warm start")
            ws = warm_start_schedule(inst, time_limit)
        if lp is not None:
            if bar is not None:
                bar.set_phase("LP")
            ws = lp_warm_start(inst, lp.result(), ws)
            if lp.bound is not None:
                params.setdefault("root_lp", False)  # solved already
        if (isinstance(warm_start, str) and inst.nodes is None and inst.num_jobs >= SCALE_JOBS
                and "lagrangian" not in params and time_limit > 0):
            ws, params["lagrangian"] = _at_scale(inst, time_limit, ws)
        if (chosen.lead > 0 and ws is not None and time_limit > 0
                and not (auto and _every_job_runs(inst, ws))):
            if bar is not None:
                bar.set_phase("CP-SAT lead")
            lead = cpsat_lead(inst, ws, chosen.lead * time_limit, threads, params)
            ws = better_start(inst, lead, ws)
            if threads > 1:
                params.setdefault("parallel", "on")  # HiGHS's parallel tree search
        if lead is not None and lead.status is Status.OPTIMAL:
            proved = lead  # nothing left for HiGHS; the answer is the method's, CP-SAT's proof
            hooks, res = None, dataclasses.replace(lead, method=milp.METHOD_NAMES[backend])
        elif auto and params.get("reservation", "curve") == "curve" and _every_job_runs(inst, ws):
            # nothing to search: the bound is the sum of the values
            hooks, res = None, _every_job(ws, backend)
        else:
            hooks = hooks_for(chosen, params) if chosen.sources and ws is not None else None
            if hooks is not None and isinstance(ws, Result) and ws.status is not Status.ERROR:
                cutoff = chosen.cutoff_for(ws.value)
                if cutoff is not None:
                    params.setdefault("cutoff", cutoff)
            res = milp.solve(
                inst, time_limit=max(0.0, time_limit - (time.perf_counter() - t0)),
                threads=threads, warm_start=ws, backend=backend,
                progress=bar if bar is not None else False, hooks=hooks, **params,
            )
    finally:
        if bar is not None:
            bar.close()
    bound = None if proved is not None else lead_bound(inst, lead)  # held beside HiGHS's
    res = account(inst, res, hooks, lp=lp,
                  backend="cpsat" if backend == "cpsat" or proved is not None else "highs",
                  mip_gap=float(params.get("mip_gap", 1e-4)),
                  more=[] if bound is None else [(bound, CPSAT)])
    call = dict(res.params)
    call.pop("stop", None)  # the portfolio's event, not a parameter
    call["time_limit"] = time_limit
    source = call.pop("warm_start", None)
    if lns_helper is not None:
        call["lns_helper"] = lns_helper
    call["sources"] = list(chosen.sources) if hooks is not None else []
    if alone is not None:
        call["sources_not_run"] = alone
    call["lp_start"] = lp is not None
    if source is not None:
        call["warm_start"] = source
    message = res.message if alone is None else f"{res.message}; {alone}"
    return dataclasses.replace(res, params=call, runtime_s=time.perf_counter() - t0,
                               message=message)

