"""``best``: the best schedule of the fast methods and the LNS, in a bounded budget."""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np

from heuristics._core import finish, start_value
from heuristics.backfill import conservative_starts, easy_starts
from heuristics.fifo import fifo_starts
from heuristics.listsched import list_starts, parallel_starts
from heuristics.rules import RULES, order_by
from heuristics.search import local_search_order, sampling_order
from instances import Instance, Result

from .lns import lns_improve

__all__ = ["CONSTRUCTIVE_MEMBERS", "best"]

logger = logging.getLogger(__name__)

CONSTRUCTIVE_MEMBERS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("fifo", {}),
    ("fifo-curve", {}),
    ("easy-peak", {}),
    ("easy-curve", {}),
    ("conservative-peak", {}),
    ("conservative-curve", {}),
    *(("list", {"rule": r}) for r in RULES),
    *(("list-peak", {"rule": r}) for r in RULES),
    *(("parallel", {"rule": r}) for r in RULES),
)
"""The one-pass methods ``best`` runs first, as ``(method, params)``; then it
runs sampling, local search and the LNS (see :func:`best`)."""


def _constructive(inst: Instance, method: str, params: dict[str, Any]) -> np.ndarray:
    rule = params.get("rule", "priority")
    if method in ("fifo", "fifo-curve"):
        return fifo_starts(inst, "peak" if method == "fifo" else "curve")
    if method.startswith("easy-"):
        return easy_starts(inst, method.removeprefix("easy-"))
    if method.startswith("conservative-"):
        return conservative_starts(inst, method.removeprefix("conservative-"))
    if method in ("list", "list-peak"):
        return list_starts(inst, order_by(inst, rule), "curve" if method == "list" else "peak")
    if method == "parallel":
        return parallel_starts(inst, order_by(inst, rule), "curve")
    raise ValueError(f"method: {method!r} is not a constructive member of best")


def best(
    inst: Instance,
    *,
    time_limit: float | None = 10.0,
    passes: int = 200,
    iterations: int = 1000,
    lns_rounds: int = 100,
    seed: int = 0,
) -> Result:
    """The best schedule of the fast heuristics (``curve`` reservation).

    Runs, in this order, and keeps the schedule of highest value (the first
    one on ties): every method of :data:`CONSTRUCTIVE_MEMBERS`; ``sampling``
    with ``passes`` and ``seed``; ``local-search`` with ``iterations`` and
    ``seed``, started from the sampling's best order (the same as method
    ``local-search`` with ``passes=passes``); then the large-neighbourhood
    search of :func:`matheuristics.lns.lns_improve` (``lns_rounds`` windows
    re-solved by the MILP, ``seed``) from the best schedule so far, which
    never loses value (skipped when ``lns_rounds=0``). Every member's
    schedule is feasible under ``curve``, so the result is at least as good
    as each. Candidates are compared as start arrays; the one returned is
    checked by :func:`instances.evaluate`.

    Budget: the one-pass members always run (milliseconds to a few hundred
    on the largest families); sampling may use up to 20% of the rest of
    ``time_limit``, local search up to 25% of what then remains, and the LNS
    whatever is left (each window MILP at most 1 s, cut to the time left).
    With the defaults the whole method stays within 10 s, plus one decode
    and one check. Deterministic for a seed when the count budgets
    (``passes``, ``iterations``, ``lns_rounds``) end each phase before the
    clock does and every window MILP is solved to optimality.

    Parameters
    ----------
    time_limit
        Seconds for the whole method (default 10); ``None`` for no limit.
    passes
        Sampling passes (default 200).
    iterations
        Local-search moves (default 1000).
    lns_rounds
        LNS windows (default 100; 0 switches the LNS off).
    seed
        Seed of sampling and local search.
    """
    t0 = time.perf_counter()

    def left() -> float | None:
        return None if time_limit is None else max(0.0, time_limit - (time.perf_counter() - t0))

    best_start: np.ndarray | None = None
    best_val, best_name = -1.0, ""

    def offer(start: np.ndarray, name: str) -> None:
        """Keep ``start`` if it beats the incumbent (the first one wins ties)."""
        nonlocal best_start, best_val, best_name
        val = start_value(inst, start)
        if val > best_val:
            best_start, best_val, best_name = start, val, name

    for method, params in CONSTRUCTIVE_MEMBERS:
        offer(_constructive(inst, method, params),
              method + "".join(f" {k}={v}" for k, v in params.items()))
    rest = left()
    order, start, done = sampling_order(
        inst, passes=passes, time_limit=None if rest is None else 0.2 * rest, seed=seed
    )
    offer(start, f"sampling ({done} passes)")
    rest = left()
    _, start, moves = local_search_order(
        inst, order, iterations=iterations, time_limit=None if rest is None else 0.25 * rest,
        seed=seed,
    )
    offer(start, f"local-search ({moves} moves)")
    assert best_start is not None
    windows = improved = 0
    if lns_rounds > 0:
        start, windows, improved = lns_improve(
            inst, best_start, time_limit=left(), rounds=lns_rounds, seed=seed
        )
        offer(start, f"lns ({improved} windows improved)")
    logger.debug("best: %s, value %.6g", best_name, best_val)
    return finish(
        inst, "best", best_start, reservation="curve", started_at=t0,
        params={"time_limit": time_limit, "passes": passes, "iterations": iterations,
                "lns_rounds": lns_rounds, "seed": seed},
        message=(f"from {best_name}; sampling {done} passes, local search {moves} moves, "
                 f"lns {windows} windows ({improved} improved)"),
    )
