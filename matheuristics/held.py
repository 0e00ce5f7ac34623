"""Flow schedules from the Lagrangian search: the held scheme at the prices the bound finds.

:func:`heuristics.held.held_starts` turns slot prices into a schedule under
``flow``; :func:`held_search` finds the prices with :func:`milp.bound` (the
Volume search) and runs the held scheme at its first prices, every ``every``
iterations as the search's primal heuristic (the best worth so far is the
search's step target) and at the search's best prices; the best schedule seen
is returned with the bound of those prices. One call gives a schedule and a
certified lower bound on its flow (``docs/flow.md``).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

import milp
from heuristics.held import held_starts
from heuristics.results import start_value
from instances import Instance

__all__ = ["HeldRun", "held_search"]

logger = logging.getLogger(__name__)


class HeldRun(NamedTuple):
    """What :func:`held_search` returns.

    ``start``: the best start array seen (the incumbent's when nothing beat it);
    ``name``: what gave it; ``bound``: the search's :class:`milp.Bound` (an upper
    bound on the worth, certified by its multipliers; ``None`` when the time limit
    left no room for the search after the first decoding); ``calls``: held decodings run.
    """

    start: np.ndarray
    name: str
    bound: milp.Bound | None
    calls: int


@dataclass
class _Best:
    """The best schedule the search's decodings have seen."""

    value: float
    start: np.ndarray
    name: str = "incumbent"
    calls: int = 0


def held_search(
    inst: Instance, incumbent: np.ndarray, *, time_limit: float | None, every: int = 100,
    multipliers: np.ndarray | None = None,
) -> HeldRun:
    """Search slot prices for the bound and decode the held scheme at them as it goes.

    Parameters
    ----------
    inst
        A flat instance (the held scheme places no nodes).
    incumbent
        A feasible start array: the target of the first steps, returned when no held
        schedule beats it.
    time_limit
        Seconds for the whole (``None``: until the search converges): the search gets what
        is left after one decoding, less the time of one more, for the decoding at the
        search's best prices that ends it.
    every
        Iterations between two held decodings during the search.
    multipliers
        Starting prices (default: :func:`milp.bound`'s own).

    Returns
    -------
    HeldRun
    """
    if inst.has_nodes:
        raise ValueError(f"inst: {inst.name!r} has nodes; the held scheme is for a flat pool")
    t0 = time.perf_counter()
    best = _Best(start_value(inst, incumbent), np.asarray(incumbent, dtype=np.int64))

    def decode(lam: np.ndarray) -> None:
        start, name = held_starts(inst, lam)
        best.calls += 1
        value = start_value(inst, start)
        if value > best.value:
            best.value, best.start, best.name = value, start, name

    lam0 = np.zeros(inst.horizon) if multipliers is None else np.asarray(multipliers, float)
    decode(lam0)  # the first decoding, outside the search: it says what one costs
    cost = time.perf_counter() - t0
    first = [True]

    def primal(lam: np.ndarray) -> float:
        if first[0]:  # the search's first call is at lam0, decoded already
            first[0] = False
        else:
            decode(lam)
        return best.value

    limit = None if time_limit is None else time_limit - 2.0 * cost
    if limit is not None and limit <= 0.0:  # no room for a search and a second decoding
        logger.debug("held search: one decoding (%.1f s), no time for the search", cost)
        return HeldRun(best.start, best.name, None, best.calls)
    bound = milp.bound(inst, "lagrangian", time_limit=limit, primal=primal,
                       max_iter=10**6, heuristic_every=every, multipliers=multipliers)
    decode(np.asarray(bound.multipliers))  # the search's best prices
    logger.debug("held search: %d decodings, best %s, %.1f s", best.calls, best.name,
                 time.perf_counter() - t0)
    return HeldRun(best.start, best.name, bound, best.calls)
