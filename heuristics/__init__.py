"""Fast scheduling policies, one registry: ``solve(inst, name, **params)``.

Every method is a function ``(instance, **params) -> Result`` registered in
:data:`METHODS`; every schedule it returns has passed :func:`instances.evaluate`
with the reservation the method used enforced.

- ``fifo``, ``fifo-curve``: the baseline (PROBLEM.md section 3), peak / curve reservation;
- ``easy-peak``, ``easy-curve``, ``conservative-peak``, ``conservative-curve``:
  backfilling on the FIFO queue (:mod:`heuristics.backfill`);
- ``list``, ``list-peak``: serial list scheduling with ``rule=`` one of :data:`RULES`;
- ``parallel``: the parallel (time-stepping) scheme, ``rule=``;
- ``sampling``: biased random sampling of lists (``passes``, ``time_limit``, ``seed``);
- ``local-search``: insert and swap moves on the list (``iterations``, ``time_limit``, ``seed``);
- ``lns``: time windows re-solved exactly by :func:`milp.solve` (``rounds``, ``time_limit``, ...);
- ``best``: all of the above in one budget (``time_limit=10`` s by default).

The search methods are deterministic for a given ``seed`` while their count
budgets, not the clock, end them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from typing import Any

from instances import Instance, Result

# the submodules stay reachable by their names (``heuristics.lns.lns_improve``);
# the methods are reached through the registry
from . import backfill, best, fifo, listsched, lns, rules, search
from .rules import RULES

__all__ = [
    "DESCRIPTIONS", "METHODS", "RULES", "backfill", "best", "fifo", "listsched", "lns",
    "register", "rules", "search", "solve",
]

logger = logging.getLogger(__name__)

Method = Callable[..., Result]

METHODS: dict[str, Method] = {}
"""Method name -> ``(instance, **params) -> Result``."""

DESCRIPTIONS: dict[str, str] = {}
"""Method name -> one-line description."""


def register(name: str, fn: Method, description: str) -> None:
    """Add a method to the registry under ``name``."""
    if name in METHODS:
        raise ValueError(f"method: {name!r} is already registered")
    METHODS[name] = fn
    DESCRIPTIONS[name] = description


def solve(inst: Instance, method: str, **params: Any) -> Result:
    """Run a heuristic by name.

    Parameters
    ----------
    inst
        The instance.
    method
        A key of :data:`METHODS`.
    **params
        The method's parameters (``rule=``, ``seed=``, ``passes=`` ...).

    Raises
    ------
    ValueError
        For an unknown method or parameter, or a parameter of the wrong type.
    """
    fn = METHODS.get(method)
    if fn is None:
        raise ValueError(f"method: unknown heuristic {method!r}; known: {', '.join(METHODS)}")
    try:
        result = fn(inst, **params)
    except TypeError as e:
        if "unexpected keyword argument" in str(e):
            raise ValueError(f"params: {e}") from None
        if params:  # a parameter of the wrong type, e.g. passes="many"
            raise ValueError(
                f"params: {method} rejected {sorted(params)} ({e})"
            ) from e
        raise
    logger.debug("%s", result.summary())
    return result


register("fifo", partial(fifo.fifo, reservation="peak"), "FIFO in arrival order under peak reservation (the baseline)")
register("fifo-curve", partial(fifo.fifo, reservation="curve"), "FIFO in arrival order under curve reservation (ablation)")
register("easy-peak", partial(backfill.easy, reservation="peak"), "EASY backfilling, FIFO queue, peak reservation")
register("easy-curve", partial(backfill.easy, reservation="curve"), "EASY backfilling, FIFO queue, curve reservation")
register(
    "conservative-peak", partial(backfill.conservative, reservation="peak"),
    "conservative backfilling, FIFO queue, peak reservation",
)
register(
    "conservative-curve", partial(backfill.conservative, reservation="curve"),
    "conservative backfilling, FIFO queue, curve reservation",
)
register(
    "list", partial(listsched.list_schedule, reservation="curve"),
    "serial list scheduling, earliest fit, curve reservation (rule=priority|value|area|...)",
)
register(
    "list-peak", partial(listsched.list_schedule, reservation="peak"),
    "serial list scheduling, earliest fit, peak reservation (rule=...)",
)
register("parallel", listsched.parallel_schedule, "parallel (time-stepping) list scheduling (rule=...)")
register("sampling", search.sampling, "multi-pass biased random sampling of lists (passes=, time_limit=, seed=)")
register(
    "local-search", search.local_search,
    "insert/swap local search over the list, serial decoder (iterations=, time_limit=, seed=)",
)
register(
    "lns", lns.lns,
    "sampling + local search, then windows re-solved exactly by the MILP "
    "(time_limit=, rounds=, seed=, guided=)",
)
register("best", best.best, "best of the fast methods within a budget (time_limit=10 s by default)")
