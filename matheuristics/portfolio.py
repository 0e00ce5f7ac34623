"""The portfolio beside HiGHS: which sources run, the hooks that run them, and the result's account.

:func:`plan` is the rule (measured, ``docs/milp.md``) that picks the sources
beside HiGHS for an instance, the threads and the time: the LNS
(:class:`~matheuristics.helper.LNSSource`), CP-SAT
(:class:`~matheuristics.cpsat_source.CPSATSource`) and the LP-guided
schedule (:class:`~matheuristics.lpround.LPSource`). :func:`portfolio_hooks`
makes the incumbent hooks that run them (:class:`~matheuristics.incumbents.SharedHooks`),
and :func:`account` adds to the :class:`~instances.Result` of the solve what
the sources proved (a smaller bound, which is checked against the value) and
which source found the final incumbent and which proved the bound
(``params["incumbent_from"]``, ``params["bound_from"]``, and the message).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from heuristics.stop import StoppingCriterion
from instances import Instance, Result, Status
from milp.assemble import tolerance

from .cpsat_source import CPSAT, CPSATSource
from .helper import LNS, LNSSource
from .incumbents import HIGHS, WARM, SharedHooks, Source
from .lpround import LP, LPSource
from .params import LNSParams

__all__ = ["LP_JOBS", "SOURCES", "Plan", "account", "named", "plan", "portfolio_hooks"]

logger = logging.getLogger(__name__)

SOURCES = (LNS, CPSAT, LP)
"""The sources a portfolio may run beside HiGHS."""

LP_JOBS = 1000
"""From this many jobs the LP-guided schedule runs beside HiGHS (docs/milp.md)."""


@dataclass(frozen=True)
class Plan:
    """The sources beside HiGHS and CP-SAT's workers, with the rule's reason."""

    sources: tuple[str, ...]
    cpsat_workers: int = 1
    reason: str = ""

    def __post_init__(self) -> None:
        unknown = [s for s in self.sources if s not in SOURCES]
        if unknown:
            raise ValueError(f"sources: unknown {unknown}, expected some of {list(SOURCES)}")
        if not (isinstance(self.cpsat_workers, int) and self.cpsat_workers >= 1):
            raise ValueError(f"cpsat_workers: must be an integer >= 1, got {self.cpsat_workers!r}")


def plan(inst: Instance, threads: int, time_limit: float) -> Plan:
    """The sources to run beside HiGHS, as measured on 2 cores (``docs/milp.md``).

    One thread: none (HiGHS alone). Two: the LNS, and from :data:`LP_JOBS`
    jobs the LP-guided schedule too. Above two, HiGHS gets them all (its
    parallel tree search).
    """
    if threads != 2 or time_limit <= 0:
        return Plan((), reason=f"{threads} thread(s): HiGHS alone")
    if inst.num_jobs >= LP_JOBS:
        return Plan((LNS, LP), reason=f"2 threads, {inst.num_jobs} >= {LP_JOBS} jobs: LNS and LP")
    return Plan((LNS,), reason="2 threads: LNS beside HiGHS")


def portfolio_hooks(
    chosen: Plan, *, seed: int = 0, mip_gap: float = 1e-4, bounds: bool = True,
    stop: StoppingCriterion | None = None, lns: LNSParams | None = None,
) -> tuple[SharedHooks, threading.Event]:
    """The hooks running ``chosen``'s sources, and the event that ends HiGHS's search early.

    ``bounds=False`` where the model is a restriction of the instance's (reduced-cost
    fixing): the sources' bounds are then not the instance's and are not proved.
    """
    sources: list[Source] = []
    for name in chosen.sources:
        if name == LNS:
            sources.append(LNSSource(LNSParams(seed=seed) if lns is None else lns))
        elif name == CPSAT:
            sources.append(CPSATSource(workers=chosen.cpsat_workers, seed=seed, mip_gap=mip_gap,
                                       bounds=bounds))
        else:
            sources.append(LPSource(bounds=bounds))
    halt = threading.Event()
    return SharedHooks(sources, stop=stop, halt=halt), halt


def _highs_bound(res: Result, backend: str) -> str:
    """Who proved ``res``'s bound, from its ``bound_method``."""
    method = res.bound_method or "none"
    if method.split("+")[0] in ("dual", "lp"):
        return f"{backend}:{method}"
    return method


def account(inst: Instance, res: Result, hooks: SharedHooks | None, *, backend: str = "highs",
            mip_gap: float = 1e-4) -> Result:
    """``res`` with the sources' bounds and the provenance of its incumbent and its bound.

    A source's bound (CP-SAT's, the LP's) replaces the solve's when it is smaller and
    not below the checked value; one below it is a bug, logged and left out.
    """
    inst_value = res.value
    incumbent, bound_from = backend if backend != "highs" else HIGHS, _highs_bound(res, backend)
    notes = []
    upper, method, status = res.upper_bound, res.bound_method, res.status
    if "incumbent from the warm start" in res.message:
        incumbent = WARM
    pool = None if hooks is None else hooks.pool
    if pool is not None:
        _, value, origin, _ = pool.best()
        tol = tolerance(inst, max(value, inst_value))
        if abs(value - inst_value) <= tol:
            incumbent = origin
        bound = pool.bound
        if math.isfinite(bound) and res.status is not Status.ERROR:
            if bound < inst_value - tol:
                notes.append(f"bug: {pool.bound_origin} bound {bound!r} below the value {inst_value!r}")
                logger.error("portfolio: %s", notes[-1])
            elif upper is None or bound < upper:
                upper, method = max(bound, inst_value), pool.bound_origin
                bound_from = str(pool.bound_origin)
                if upper - inst_value <= max(tol, mip_gap * abs(upper)):
                    status = Status.OPTIMAL
    params = {**res.params, "incumbent_from": incumbent, "bound_from": bound_from}
    notes.append(f"incumbent from {incumbent}, bound from {bound_from}")
    message = "; ".join([m for m in (res.message, *notes) if m])
    return dataclasses.replace(res, upper_bound=upper, bound_method=method, status=status,
                               params=params, message=message)



def named(sources: Sequence[str]) -> tuple[str, ...]:
    """``sources`` checked against :data:`SOURCES`."""
    return Plan(tuple(sources)).sources
