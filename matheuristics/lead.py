"""CP-SAT first on every thread, then HiGHS's parallel tree search from its schedule.

On the ``wide`` class (half-pool jobs under an inference curve, docs/milp.md) CP-SAT's
interval model finds the schedules and HiGHS proves the bound, and each needs the
cores to do it: beside each other on one core each, neither does in 60 s what it does
alone. :func:`cpsat_lead` runs CP-SAT alone for a share of the time (a
:class:`~matheuristics.portfolio.Plan`'s ``lead``); its schedule then leads HiGHS's
warm starts and its bound is held beside HiGHS's.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

import milp
from instances import Instance, Result, Status
from instances.objective import report
from milp.params import MILPParams

from .cpsat_source import CPSAT

__all__ = ["better_start", "cpsat_lead", "lead_bound"]

logger = logging.getLogger(__name__)


def cpsat_lead(inst: Instance, ws: Any, time_limit: float, threads: int,
               params: dict[str, Any]) -> Result | None:
    """CP-SAT on ``threads`` workers for ``time_limit`` s from the warm start ``ws``.

    Parameters
    ----------
    inst
        The instance.
    ws
        The warm start (a :class:`~instances.Result`, a schedule or a start array).
    time_limit
        CP-SAT's seconds.
    threads
        CP-SAT's workers.
    params
        The solve's parameters; the model's (``mip_gap``, ``seed``, formulation options)
        are passed on, HiGHS's own options are not.

    Returns
    -------
    instances.Result or None
        CP-SAT's result, named ``cpsat`` (its schedule checked, its bound CP-SAT's proof),
        or ``None`` when it ended in error.
    """
    keep = {k: v for k, v in params.items() if k in _MODEL_PARAMS}
    res = milp.solve(inst, time_limit=time_limit, threads=threads, warm_start=ws,
                     backend="cpsat", **keep)
    if res.status is Status.ERROR:
        logger.warning("CP-SAT lead on %s: %s", inst.name, res.message)
        return None
    return dataclasses.replace(res, method=CPSAT)


def better_start(inst: Instance, lead: Result | None, ws: Any) -> Any:
    """The lead's result, unless the warm start ``ws`` is a result worth more (or no lead)."""
    if lead is None:
        return ws
    if isinstance(ws, Result) and ws.status is not Status.ERROR and \
            report(inst, ws.value) > report(inst, lead.value):
        return ws
    return lead


def lead_bound(inst: Instance, lead: Result | None) -> float | None:
    """The lead's upper bound on the worth (what the model maximises), ``None`` without one."""
    if lead is None or lead.upper_bound is None:
        return None
    return report(inst, lead.upper_bound)


_MODEL_PARAMS = frozenset(
    {f.name for f in dataclasses.fields(MILPParams)}
    - {"time_limit", "threads", "backend", "backend_options"}) | {"seed"}
"""The parameters of :func:`milp.solve` any backend reads (the model's, the gap, the seed)."""
