"""``lns``: sampling and local search, then time windows re-solved exactly by the MILP.

The method composes the pieces below it: the heuristics' order search for a
start, :func:`~matheuristics.search.lns_improve` (windows of
:mod:`~matheuristics.windows`, solved by :mod:`~matheuristics.subsolve`, with the
LP guide of :mod:`~matheuristics.guide`) for the rest of the budget, and one
check of the schedule it returns.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from heuristics import finish, start_value
from heuristics.placement import PLACEMENTS, check_placement, new_place
from heuristics.rules import order_by
from heuristics.search import local_search_order, sampling_order
from heuristics.stop import MaxIterations, MaxRuntime, MultipleCriteria, time_share
from instances import Instance, Result

from .guide import lp_guide
from .params import LNSParams
from .resources import attempt, improve_wide, skip_note
from .search import lns_improve

T = TypeVar("T")

__all__ = ["GUIDED_ROUNDS", "lns"]

GUIDED_ROUNDS = 220
"""The LNS gets the LP guide only with more rounds than this: room for a stall (40
rounds) and a whole escape after it (120 + 60)."""


def lns(
    inst: Instance,
    *,
    time_limit: float | None = 10.0,
    rounds: int = 50,
    window: int | None = None,
    max_jobs: int = 40,
    sub_time_limit: float = 1.0,
    passes: int = 100,
    iterations: int = 1000,
    seed: int = 0,
    guided: bool = True,
    placement: str | None = None,
) -> Result:
    """LNS with exact window re-solves, from a sampled and locally improved list.

    The start: :func:`~heuristics.search.sampling_order` (``passes``), then
    :func:`~heuristics.search.local_search_order` (``iterations``), each with
    at most a quarter of ``time_limit``; then :func:`~matheuristics.search.lns_improve`
    with the rest (``rounds`` windows of ``window`` slots, at most ``max_jobs`` freed
    jobs, ``sub_time_limit`` seconds each: :class:`~matheuristics.params.LNSParams`).
    Deterministic for a seed when every window MILP is solved to optimality within
    its limit.

    On an instance with nodes, sampling and local search place jobs by
    ``placement`` (:data:`heuristics.placement.PLACEMENTS`); ``None``
    (default) samples with each rule in turn (``passes`` each, the quarter of
    the time shared) and goes on with the best one's rule. The windows are
    solved on the nodes. Ignored on a flat instance (a known rule name is
    still required).

    ``guided`` (default): when ``rounds`` is over :data:`GUIDED_ROUNDS` (not with the
    default 50), the LNS gets the LP relaxation's run masses as ``guide``
    (:func:`~matheuristics.guide.lp_guide`, solved in at most a tenth of the time
    left) and escapes from a stall.

    On model version 3 the placements carry GPU indices and the windows keep
    them (:func:`matheuristics.resources.improve_wide`); a phase that refuses
    the instance is named with its reason in ``params["skipped"]`` (the LNS
    then starts from what ran, or the empty schedule). No LP guide there.
    """
    t0 = time.perf_counter()
    clock = MaxRuntime(time_limit)
    params = LNSParams(window=window, max_jobs=max_jobs, sub_time_limit=sub_time_limit,
                       seed=seed)
    if placement is not None:
        check_placement(placement)
    q = None if time_limit is None else 0.25 * time_limit
    call: dict[str, Any] = {
        "time_limit": time_limit, "rounds": rounds, "window": window, "max_jobs": max_jobs,
        "sub_time_limit": sub_time_limit, "passes": passes, "iterations": iterations,
        "seed": seed, "guided": guided,
    }
    if inst.has_nodes:
        call["placement"] = placement
    v3 = inst.has_nodes and inst.jobs_use_resources
    skipped: list[str] = []

    def run_phase(fn: Callable[[], T], name: str) -> T | None:
        return attempt(fn, name, skipped) if v3 else fn()

    rules = (placement or "first-fit",) if not inst.has_nodes or placement else PLACEMENTS
    order, rule = order_by(inst, "priority"), rules[0]
    if passes > 0:
        best_val = -1.0
        for r in rules:
            got = run_phase(lambda: sampling_order(
                inst, passes=passes, time_limit=None if q is None else q / len(rules), seed=seed,
                placement=r), f"sampling placement={r}")  # noqa: B023
            if got is not None and start_value(inst, got[1]) > best_val:
                order, rule, best_val = got[0], r, start_value(inst, got[1])
    place = new_place(inst) if inst.has_nodes else None
    searched = run_phase(lambda: local_search_order(
        inst, order, iterations=iterations, time_limit=q, seed=seed, placement=rule,
        place=place), f"local-search placement={rule}")
    start = np.full(inst.num_jobs, -1, dtype=np.int64) if searched is None else searched[1]
    if searched is None and place is not None:
        place[:] = -1
    stop = MultipleCriteria([clock, MaxIterations(rounds)])
    guide = None
    out_place: np.ndarray | None
    if v3:
        assert place is not None
        out_start, out_place, done, better = improve_wide(inst, start, place, params=params,
                                                          stop=stop)
        call["skipped"] = skipped
    else:
        if guided and rounds > GUIDED_ROUNDS:
            guide = lp_guide(inst, time_share(clock, 0.1))
        run = lns_improve(inst, start, place, params=params, guide=guide, stop=stop)
        out_start, out_place, done, better = run.start, run.place, run.rounds, run.improved
    return finish(
        inst, "lns", out_start, reservation="curve", started_at=t0, params=call, place=out_place,
        message=(f"{done} window{'s' * (done != 1)}, {better} improved" + skip_note(skipped)
                 + ("" if guide is None else ", LP-guided")
                 + (f", placement {rule}" if inst.has_nodes else "")),
    )
