"""``lns``: sampling and local search, then time windows re-solved exactly by the MILP.

The method composes the pieces below it: the heuristics' order search for a
start, :func:`~matheuristics.search.lns_improve` (windows of
:mod:`~matheuristics.windows`, solved by :mod:`~matheuristics.subsolve`, with the
LP guide of :mod:`~matheuristics.guide`) for the rest of the budget, and one
check of the schedule it returns.
"""

from __future__ import annotations

import time
from typing import Any

from heuristics import finish, start_value
from heuristics.placement import PLACEMENTS, check_placement, new_place
from heuristics.rules import order_by
from heuristics.search import local_search_order, sampling_order
from heuristics.stop import MaxIterations, MaxRuntime, MultipleCriteria, time_share
from instances import Instance, Result
from instances.resources import uses_resources

from .guide import lp_guide
from .params import LNSParams
from .resources import candidates, empty, finish_indices, improve, skip_note
from .search import lns_improve

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

    On model version 3 the start is the better of methods ``sampling`` and
    ``local-search`` run by name (each within a quarter of the time; one
    that refuses the instance is named in ``params["skipped"]``; neither: the
    empty schedule), and the windows keep GPU indices
    (:mod:`matheuristics.resources`). No LP guide there.
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
    if inst.has_nodes and uses_resources(inst):
        given = {} if placement is None else {"placement": placement}
        skipped: list[str] = []
        found = candidates(inst, [("sampling", {"passes": passes, "time_limit": q, "seed": seed,
                                                 **given}),
                                  ("local-search", {"iterations": iterations, "time_limit": q,
                                                    "seed": seed, "passes": passes, **given})],
                           skipped)
        first = max(found, key=lambda c: c.value, default=empty(inst))
        got, done, better = improve(inst, first, params=params,
                                    stop=MultipleCriteria([clock, MaxIterations(rounds)]))
        return finish_indices(
            inst, "lns", got if got.value > first.value else first, started_at=t0,
            params={**call, "skipped": skipped},
            message=(f"from {first.name}; {done} window{'s' * (done != 1)}, {better} improved"
                     + skip_note(skipped)))
    rules = (placement or "first-fit",) if not inst.has_nodes or placement else PLACEMENTS
    order, rule = order_by(inst, "priority"), rules[0]
    if passes > 0:
        best_val = -1.0
        for r in rules:
            o, st, _ = sampling_order(inst, passes=passes, time_limit=None if q is None
                                      else q / len(rules), seed=seed, placement=r)
            if start_value(inst, st) > best_val:
                order, rule, best_val = o, r, start_value(inst, st)
    place = new_place(inst) if inst.has_nodes else None
    _, start, _ = local_search_order(inst, order, iterations=iterations, time_limit=q, seed=seed,
                                     placement=rule, place=place)
    guide = lp_guide(inst, time_share(clock, 0.1)) if guided and rounds > GUIDED_ROUNDS else None
    run = lns_improve(inst, start, place, params=params, guide=guide,
                      stop=MultipleCriteria([clock, MaxIterations(rounds)]))
    return finish(
        inst, "lns", run.start, reservation="curve", started_at=t0, params=call, place=run.place,
        message=(f"{run.rounds} window{'s' * (run.rounds != 1)}, {run.improved} improved"
                 + ("" if guide is None else ", LP-guided")
                 + (f", placement {rule}" if inst.has_nodes else "")),
    )
