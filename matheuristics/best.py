"""``best``: the best schedule of the fast methods and the LNS, in a bounded budget.

On an instance with nodes every phase places jobs on nodes: the list members
once per placement rule, sampling once per rule, local search with the rule of
the best sampling, and the LNS on node windows; each candidate's placement
array is kept beside its start array. On model version 3 the placement arrays
carry GPU indices and the LNS keeps them (:mod:`matheuristics.resources`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from heuristics import finish, start_value
from heuristics.backfill import conservative_starts, easy_starts
from heuristics.fifo import fifo_starts
from heuristics.flow_search import flow_local_search
from heuristics.listsched import list_starts, parallel_starts
from heuristics.placement import PLACEMENTS, check_placement, new_place
from heuristics.rules import BUILTIN_RULES, FLOW_RULES, order_by
from heuristics.search import local_search_order, sampling_order
from heuristics.stop import MaxIterations, MaxRuntime, MultipleCriteria, time_share
from instances import Instance, Result

from .held import held_search
from .params import LNSParams
from .resources import attempt, improve_wide, skip_note
from .search import lns_improve

__all__ = ["CONSTRUCTIVE_MEMBERS", "PLACED_MEMBERS", "best", "members"]

T = TypeVar("T")

logger = logging.getLogger(__name__)

CONSTRUCTIVE_MEMBERS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("fifo", {}),
    ("fifo-curve", {}),
    ("easy-peak", {}),
    ("easy-curve", {}),
    ("conservative-peak", {}),
    ("conservative-curve", {}),
    *(("list", {"rule": r}) for r in BUILTIN_RULES),
    *(("list-peak", {"rule": r}) for r in BUILTIN_RULES),
    *(("parallel", {"rule": r}) for r in BUILTIN_RULES),
)
"""The one-pass methods ``best`` runs first, as ``(method, params)``; then it
runs sampling, local search and the LNS (see :func:`best`). On an instance
with nodes the ``list``, ``list-peak`` and ``parallel`` members run once per
placement rule."""

PLACED_MEMBERS = ("list", "list-peak", "parallel")
"""The members that take a placement rule on nodes (the others place as FIFO does)."""


def _constructive(
    inst: Instance, method: str, params: dict[str, Any], place: np.ndarray | None = None,
) -> np.ndarray:
    """Start array of a member; on nodes its placement is written into ``place``."""
    rule = params.get("rule", "priority")
    placement = params.get("placement", "first-fit")
    if method in ("fifo", "fifo-curve"):
        return fifo_starts(inst, "peak" if method == "fifo" else "curve", place=place)
    if method.startswith("easy-"):
        return easy_starts(inst, method.removeprefix("easy-"), place=place)
    if method.startswith("conservative-"):
        return conservative_starts(inst, method.removeprefix("conservative-"), place=place)
    if method in ("list", "list-peak"):
        return list_starts(inst, order_by(inst, rule), "curve" if method == "list" else "peak",
                           placement=placement, place=place)
    if method == "parallel":
        return parallel_starts(inst, order_by(inst, rule), "curve", placement=placement,
                               place=place)
    raise ValueError(f"method: {method!r} is not a constructive member of best")


def members(inst: Instance, placement: str | None = None) -> list[tuple[str, dict[str, Any]]]:
    """The one-pass members ``best`` runs on ``inst``: :data:`CONSTRUCTIVE_MEMBERS`, and on
    nodes each of :data:`PLACED_MEMBERS` once per rule (``placement``, or all of
    :data:`~heuristics.placement.PLACEMENTS` when ``None``); under ``flow`` also the list
    members of :data:`~heuristics.rules.FLOW_RULES`."""
    chosen = list(CONSTRUCTIVE_MEMBERS)
    if inst.objective == "flow":
        chosen += [(m, {"rule": r}) for m in PLACED_MEMBERS for r in FLOW_RULES]
    if not inst.has_nodes:
        return chosen
    rules = PLACEMENTS if placement is None else (placement,)
    return [(m, {**p, "placement": r}) if m in PLACED_MEMBERS else (m, p)
            for m, p in chosen
            for r in (rules if m in PLACED_MEMBERS else rules[:1])]


HELD_SHARE = 0.5
"""Under ``flow`` on a flat pool: the share of ``best``'s time left after the one-pass members
that the held search takes (:func:`~matheuristics.held.held_search`)."""

FINISH_SHARE = 0.01
"""Under ``flow``: the share of ``time_limit`` kept for the final decode and check (0.3 s of
the 120 s on ITP cluster 04 whole, docs/flow.md)."""

FLOW_SEARCH_SHARE = 0.9
"""Under ``flow`` on a flat pool: the share of the time then left that the block search takes
(:func:`~heuristics.flow_search.flow_local_search`); the phases of before share the rest."""


def _flow_phases(
    inst: Instance, clock: MaxRuntime, incumbent: np.ndarray, iterations: int, seed: int,
    offer: Callable[[np.ndarray, np.ndarray | None, str], None],
) -> str:
    """``best``'s phases under ``flow`` on a flat pool (``docs/flow.md``): the held search,
    then block moves from the better schedule; each result is offered. Returns a note."""
    limit = time_share(clock, HELD_SHARE)
    if limit is not None and limit < 1.0:  # one decoding alone may take that (ITP04: 1.5 s)
        return "; no time for the held search"
    run = held_search(inst, incumbent, time_limit=limit)
    offer(run.start, None, run.name)
    base = run.start if start_value(inst, run.start) >= start_value(inst, incumbent) else incumbent
    limit = time_share(clock, FLOW_SEARCH_SHARE)
    start, tries, better = flow_local_search(
        inst, base, time_limit=limit, iterations=None if limit is not None else iterations,
        seed=seed)
    offer(start, None, f"flow search ({better} of {tries} moves improved)")
    return (f"; held search {run.calls} decoding{'s' * (run.calls != 1)}, "
            f"flow search {tries} move{'s' * (tries != 1)}")


def best(
    inst: Instance,
    *,
    time_limit: float | None = 10.0,
    passes: int = 200,
    iterations: int = 1000,
    lns_rounds: int = 100,
    seed: int = 0,
    placement: str | None = None,
) -> Result:
    """The best schedule of the fast heuristics (``curve`` reservation).

    Runs, in this order, and keeps the schedule of highest value (the first
    one on ties): every method of :data:`CONSTRUCTIVE_MEMBERS`; ``sampling``
    with ``passes`` and ``seed``; ``local-search`` with ``iterations`` and
    ``seed``, started from the sampling's best order (the same as method
    ``local-search`` with ``passes=passes``); then the large-neighbourhood
    search of :func:`matheuristics.search.lns_improve` (``lns_rounds`` windows
    re-solved by the MILP, ``seed``) from the best schedule so far, which
    never loses value (skipped when ``lns_rounds=0``). Every member's
    schedule is feasible under ``curve``, so the result is at least as good
    as each. Candidates are compared as start arrays; the one returned is
    checked by :func:`instances.evaluate`.

    On an instance with nodes (:func:`members`): the ``list``,
    ``list-peak`` and ``parallel`` members run once per placement rule;
    sampling runs once per rule (``passes`` each, its share of the time
    split evenly); local search starts from the best sampling's order with
    its rule; the LNS solves node windows (:func:`~matheuristics.search.lns_improve`
    with ``place``). Every candidate's placement array is kept beside its
    start array, and the result carries the winner's placement.

    Under ``flow`` on a flat pool, after the one-pass members: the held search
    (:func:`~matheuristics.held.held_search`, :data:`HELD_SHARE` of the time left; skipped
    under 1 s), then block moves from the better schedule
    (:func:`~heuristics.flow_search.flow_local_search`, :data:`FLOW_SEARCH_SHARE` of what
    is then left); the phases of before share the rest, and :data:`FINISH_SHARE` of
    ``time_limit`` is kept for the final check (``docs/flow.md``).

    Once a candidate runs every job, nothing later can beat it (ties keep the
    first) and the remaining phases are skipped: the result is the same.

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
    placement
        On nodes, the placement rule of every phase
        (:data:`~heuristics.placement.PLACEMENTS`); ``None`` (default): try
        each rule, keep the best. Ignored on a flat instance (a known rule
        name is still required).

    On model version 3 the same phases place jobs with GPU indices
    (:func:`heuristics.placement.new_place`), the LNS keeps them
    (:func:`matheuristics.resources.improve_wide`), and a phase that refuses
    the instance is named with its reason in ``params["skipped"]`` and the
    message (``params["phases_run"]`` counts the others): none is dropped
    silently; when every phase refuses, the LNS starts from the empty schedule.
    """
    t0 = time.perf_counter()
    # under flow the last decode and check of a large instance are kept inside the limit too
    clock = MaxRuntime(time_limit if time_limit is None or inst.objective != "flow"
                       else (1.0 - FINISH_SHARE) * time_limit)
    if placement is not None:
        check_placement(placement)
    nodes = inst.has_nodes
    v3 = nodes and inst.jobs_use_resources
    skipped: list[str] = []  # on version 3: each phase that refuses the instance, and why
    ran = 0

    def run_phase(fn: Callable[[], T], name: str) -> T | None:
        nonlocal ran
        got = attempt(fn, name, skipped) if v3 else fn()
        ran += got is not None
        return got
    rules = (placement or "first-fit",) if not nodes or placement else PLACEMENTS

    def scratch() -> np.ndarray | None:
        return new_place(inst) if nodes else None

    best_start: np.ndarray | None = None
    best_place: np.ndarray | None = None
    best_val, best_name = -1.0, ""
    every = start_value(inst, np.zeros(inst.num_jobs, dtype=np.int64))  # every job run

    def all_run() -> bool:
        """Whether the incumbent runs every job: no later phase can beat it (ties keep the first)."""
        return best_start is not None and bool((best_start >= 0).all()) and best_val >= every

    def offer(start: np.ndarray, place: np.ndarray | None, name: str) -> None:
        """Keep ``start`` (and its placement) if it beats the incumbent (the first one wins ties)."""
        nonlocal best_start, best_place, best_val, best_name
        val = start_value(inst, start)
        if val > best_val:
            best_start, best_place, best_val, best_name = start, place, val, name

    for method, params in members(inst, placement):
        if all_run():
            break
        place = scratch()
        name = method + "".join(f" {k}={v}" for k, v in params.items())
        got = run_phase(lambda: _constructive(inst, method, params, place), name)  # noqa: B023
        if got is not None:
            offer(got, place, name)
    held_note = ""
    if inst.objective == "flow" and not nodes and best_start is not None and not all_run():
        held_note = _flow_phases(inst, clock, best_start, iterations, seed, offer)
    share = time_share(clock, 0.2 / len(rules))
    order, rule, done = order_by(inst, "priority"), rules[0], 0
    sampled = -1.0
    for r in rules if not all_run() else ():
        place = scratch()
        out = run_phase(lambda: sampling_order(inst, passes=passes, time_limit=share,
                                               seed=seed, placement=r, place=place),  # noqa: B023
                        f"sampling placement={r}")
        if out is None:
            continue
        o, start, d = out
        done += d
        offer(start, place, f"sampling ({d} passes)" + (f" placement={r}" if nodes else ""))
        if start_value(inst, start) > sampled:
            order, rule, sampled = o, r, start_value(inst, start)
    place = scratch()
    moves = 0
    searched = None if all_run() else run_phase(lambda: local_search_order(
        inst, order, iterations=iterations, time_limit=time_share(clock, 0.25), seed=seed,
        placement=rule, place=place), f"local-search placement={rule}")
    if searched is not None:
        _, start, moves = searched
        offer(start, place, f"local-search ({moves} moves)" + (f" placement={rule}" if nodes else ""))
    if best_start is None:  # on version 3, when every phase refused: the empty schedule
        offer(np.full(inst.num_jobs, -1, dtype=np.int64), scratch(), "the empty schedule")
    assert best_start is not None
    windows = improved = 0
    p2: np.ndarray | None
    if lns_rounds > 0 and not all_run():
        stop = MultipleCriteria([clock, MaxIterations(lns_rounds)])
        if v3:
            assert best_place is not None
            s2, p2, windows, improved = improve_wide(inst, best_start, best_place,
                                                     params=LNSParams(seed=seed), stop=stop)
        else:
            run = lns_improve(inst, best_start, best_place, params=LNSParams(seed=seed), stop=stop)
            s2, p2, windows, improved = run.start, run.place, run.rounds, run.improved
        offer(s2, p2, f"lns ({improved} window{'s' * (improved != 1)} improved)")
    logger.debug("best: %s, value %.6g", best_name, best_val)
    call: dict[str, Any] = {"time_limit": time_limit, "passes": passes,
                            "iterations": iterations, "lns_rounds": lns_rounds, "seed": seed}
    if nodes:
        call["placement"] = placement
    if v3:
        call.update(phases_run=ran, skipped=skipped)
    return finish(
        inst, "best", best_start, reservation="curve", started_at=t0, params=call,
        place=best_place,
        message=(f"from {best_name}; sampling {done} pass{'es' * (done != 1)}, local search {moves} "
                 f"move{'s' * (moves != 1)}, lns {windows} window{'s' * (windows != 1)} ({improved} improved)"
                 + held_note + skip_note(skipped)),
    )
