"""The large-neighbourhood search: free a window, re-solve it exactly, keep what is not worse.

Each round frees the jobs of a neighbourhood (:func:`~matheuristics.windows.neighbourhood`),
solves the window they leave exactly from their current starts
(:func:`~matheuristics.subsolve.solve_window`) and takes the answer when it is worth at
least as much, so a round never loses value. The search stays on start (and placement)
arrays: no :class:`~instances.Schedule` and no run of the checker inside it; the method
that reports its schedule checks it, once. A flat instance is the case of one internal
node: its schedules carry no placement (``place`` is ``None``) and its windows need no
per-node rows. On model version 3 the search also keeps every job's GPU indices
(``idx``, :mod:`~matheuristics.gpus`), and each window sees the fixed jobs' use by index.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from heuristics import start_value
from heuristics.stop import StoppingCriterion
from instances import Instance, Status
from instances.objective import start_worth

from .gpus import index_width
from .guide import guided_instance
from .params import LNSParams
from .subsolve import TOLERANCE, Answer, solve_window
from .windows import Window, make_window, neighbourhood

__all__ = ["ROUND_MARGIN_S", "SOLVE_MARGIN_S", "Exchange", "IndexedRun", "LNSRun", "lns_improve",
           "lns_improve_indices"]

logger = logging.getLogger(__name__)

ROUND_MARGIN_S = 0.25
"""No round starts with less time left than this: room for the last solve's overhead."""

SOLVE_MARGIN_S = 0.2
"""A window MILP's limit is cut to the time left less this (HiGHS may overrun a little:
it looks at the clock between phases)."""

Exchange = Callable[[np.ndarray, "np.ndarray | None", float],
                    "tuple[np.ndarray, np.ndarray | None] | None"]
"""``exchange(start, place, value)``: the search's schedule out, a better one in, or ``None``."""

IndexedExchange = Callable[[np.ndarray, np.ndarray, np.ndarray, float],
                           "tuple[np.ndarray, np.ndarray, np.ndarray] | None"]
"""``exchange(start, place, idx, value)`` on model version 3: with the GPU indices."""


class LNSRun(NamedTuple):
    """What :func:`lns_improve` returns: the schedule's arrays, rounds done and improving."""

    start: np.ndarray
    place: np.ndarray | None
    rounds: int
    improved: int


class IndexedRun(NamedTuple):
    """What :func:`lns_improve_indices` returns: :class:`LNSRun`'s fields and the GPU indices."""

    start: np.ndarray
    place: np.ndarray
    idx: np.ndarray
    rounds: int
    improved: int


def lns_improve_indices(
    inst: Instance, start: np.ndarray, place: np.ndarray, idx: np.ndarray, *,
    stop: StoppingCriterion, params: LNSParams | None = None,
    exchange: IndexedExchange | None = None,
) -> IndexedRun:
    """:func:`lns_improve` on model version 3, where the search also keeps GPU indices.

    ``idx`` is the index array of ``start`` and ``place``
    (:func:`matheuristics.gpus.index_array`); not changed. Each window sees the
    fixed jobs' use by GPU index, CPU and memory (:mod:`~matheuristics.windows`).
    ``exchange`` is :func:`lns_improve`'s with the indices beside the pair
    (:data:`IndexedExchange`). No guide.
    """
    s, p, i, rounds, improved = _search(inst, start, place, stop=stop, params=params, idx=idx,
                                        v3=True, exchange=exchange)
    assert p is not None and i is not None
    return IndexedRun(s, p, i, rounds, improved)


@dataclass
class _Escape:
    """An escape under way: the schedule it left (its arrays and value) and its rounds left."""

    start: np.ndarray
    place: np.ndarray | None
    value: float
    rounds_left: int
    idx: np.ndarray | None = None


def lns_improve(
    inst: Instance,
    start: np.ndarray,
    place: np.ndarray | None = None,
    *,
    stop: StoppingCriterion,
    params: LNSParams | None = None,
    guide: np.ndarray | None = None,
    exchange: Exchange | None = None,
) -> LNSRun:
    """Improve a feasible ``curve`` schedule by window re-solves, until ``stop`` says so.

    Parameters
    ----------
    inst
        The instance.
    start
        A feasible start array (``-1``: not run); not changed.
    place
        On an instance with nodes, required: the placement array of ``start``
        (``Schedule.to_placement_array``'s form); not changed. Ignored on a flat instance.
    stop
        Asked before every round with the best value so far (:mod:`heuristics.stop`).
        No round starts with less than :data:`ROUND_MARGIN_S` of the time it leaves.
    params
        How windows are chosen and solved (:class:`~matheuristics.params.LNSParams`;
        ``None``: the defaults).
    guide
        A per-job run mass in ``[0, 1]`` (how much of each job an LP relaxation runs:
        :func:`~matheuristics.guide.lp_guide`). A stalled search then first *escapes*
        instead of widening: for ``escape_rounds`` rounds its windows see
        :func:`~matheuristics.guide.guided_instance` (the running jobs that the LP runs
        less than half worth ``escape_weight`` of their value), then, for half as many,
        the real instance again. If the schedule then beats the one it left (in real
        value) the search goes on from it, else from the one it left; it may escape
        again at its next stall. Without such a job, a stalled search widens.
    exchange
        Called before every round outside an escape with the current arrays and value;
        it may return better feasible arrays (found elsewhere, e.g. by a MILP beside this
        search, :class:`matheuristics.LNSHelper`), which the search continues from. Not on
        model version 3.

    Returns
    -------
    LNSRun
        The best arrays (a schedule worse than the one an escape left is never
        returned), the rounds done and the rounds that improved. Not checked here:
        the caller checks what it reports.

    Raises
    ------
    ValueError
        For a missing or misshapen ``place`` on nodes, a ``guide`` of the wrong length, or a
        version 3 instance.

    Notes
    -----
    An instance of at most ``max_jobs`` jobs is first re-solved whole; when that MILP is
    solved to optimality the schedule is optimal and the search stops. The
    measurements behind the widening and the escapes are in ``docs/milp.md``. On model
    version 3: :func:`lns_improve_indices` (a ``ValueError`` here).
    """
    if inst.has_nodes and inst.jobs_use_resources:
        raise ValueError(f"inst: {inst.name!r} is a version 3 instance, whose schedules need "
                         "GPU indices: lns_improve_indices")
    s, p, _, rounds, improved = _search(inst, start, place, stop=stop, params=params,
                                        guide=guide, exchange=exchange)
    return LNSRun(s, p, rounds, improved)


def _search(
    inst: Instance, start: np.ndarray, place: np.ndarray | None, *, stop: StoppingCriterion,
    params: LNSParams | None, guide: np.ndarray | None = None,
    exchange: Exchange | IndexedExchange | None = None, idx: np.ndarray | None = None,
    v3: bool = False,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None, int, int]:
    """The search of :func:`lns_improve` (and, with ``v3``, of :func:`lns_improve_indices`)."""
    p = LNSParams() if params is None else params
    n, T = inst.num_jobs, inst.horizon
    start = np.array(start, dtype=np.int64)
    if inst.has_nodes:
        if place is None:
            raise ValueError(f"place: required for instance {inst.name!r}, which has nodes")
        if np.shape(place) != (n, inst.max_span):
            raise ValueError(f"place: expected shape {(n, inst.max_span)}, "
                             f"got {np.shape(place)}")
        place = np.array(place, dtype=np.int64)
    else:
        place = None
    if v3:
        if not (inst.has_nodes and inst.jobs_use_resources):
            raise ValueError(f"inst: {inst.name!r} is not a version 3 instance: lns_improve")
        if idx is None or np.shape(idx) != (n, index_width(inst)):
            got = None if idx is None else np.shape(idx)
            raise ValueError(f"idx: expected shape {(n, index_width(inst))}, got {got}")
        idx = np.array(idx, dtype=np.int64)
    else:
        idx = None
    if guide is not None:
        guide = np.asarray(guide, dtype=np.float64)
        if guide.shape != (n,):
            raise ValueError(f"guide: expected {n} values, got shape {guide.shape}")
    if n == 0:
        return start, place, idx, 0, 0
    pmax = int(inst.durations.max())
    widths = [p.window] if p.window else [max(T // 4, pmax), max(T // 3, pmax)]
    rng = np.random.default_rng(p.seed)
    runnable = inst.releases + inst.durations <= inst.deadlines
    can_run = int(runnable.sum())
    # on version 3: no schedule is worth more than every job that can run (then stop)
    top = start_worth(inst, np.where(runnable, inst.releases, -1)) if v3 else np.inf
    done = improved = 0
    size = p.max_jobs  # freed jobs per window: shrinks after a window MILP is not solved
    stall = 0  # rounds since the last improvement
    half = p.escape_rounds // 2
    work = inst  # the instance the windows see: ``inst``, or a guided one during an escape
    escape: _Escape | None = None
    while True:
        left = stop.time_left()
        value = start_value(inst, start)
        if stop(value if escape is None else max(value, escape.value)) or left <= ROUND_MARGIN_S:
            break
        if value >= top - TOLERANCE * max(1.0, top):
            break
        if escape is not None:
            escape.rounds_left -= 1
            if escape.rounds_left == half:
                work, stall = inst, 0  # the guided part ends
            if value > escape.value + TOLERANCE or escape.rounds_left == 0:
                logger.debug("lns: escape ends at round %d with %.6g (left %.6g)",
                             done, value, escape.value)
                if value <= escape.value + TOLERANCE:
                    start, place, idx = escape.start, escape.place, escape.idx
                work, escape, stall = inst, None, 0
        elif guide is not None and p.stall and stall >= p.stall:
            guided = guided_instance(inst, start, guide, p.escape_weight)
            if guided is not None:
                work, stall = guided, 0
                escape = _Escape(start.copy(), None if place is None else place.copy(), value,
                                 p.escape_rounds + half, None if idx is None else idx.copy())
                logger.debug("lns: escape at round %d from %.6g", done, value)
        if exchange is not None and escape is None:
            if idx is not None:
                assert place is not None
                got = exchange(start, place, idx, start_value(inst, start))  # type: ignore[call-arg,arg-type]
                if got is not None:
                    start, place, idx = (np.array(a, dtype=np.int64) for a in got)  # type: ignore[union-attr]
                other = None
            else:
                other = exchange(start, place, start_value(inst, start))  # type: ignore[call-arg,arg-type]
            if other is not None:
                start = np.array(other[0], dtype=np.int64)
                place = None if place is None else np.array(other[1], dtype=np.int64)
        boost = 1 if not p.stall else min(3, 1 + stall // p.stall)
        a, b, freed = neighbourhood(inst, start, done, widths, size, boost, rng, p.share)
        done += 1
        if freed.size == 0:
            continue
        w = make_window(work, start, place, a, b, freed, idx)
        before = start_worth(w.sub, w.warm)  # the freed jobs' worth as they are
        ans = solve_window(w, min(p.sub_time_limit * boost, left - SOLVE_MARGIN_S), before)
        if ans.status is None:
            logger.info("lns: window [%d, %d) skipped: %s", a, b, ans.note)
            continue
        value = before if ans.start is None else start_value(w.sub, ans.start)
        if ans.start is not None and value >= before - TOLERANCE:  # ties: a new placement
            _take(start, place, w, ans, idx)
            better = value > before + TOLERANCE
            improved += better
            stall = 0 if better else stall + 1
        else:
            stall += 1
        if boost == 1:  # a widened round is meant to be hard: its outcome leaves the size alone
            solved = ans.status == Status.OPTIMAL
            size = min(p.max_jobs, size + 1) if solved else max(8, (3 * size) // 4)
        if (a == 0 and b == T and w.sub.num_jobs == can_run and ans.status == Status.OPTIMAL
                and work is inst):
            break
    if escape is not None and start_value(inst, start) <= escape.value + TOLERANCE:
        start, place, idx = escape.start, escape.place, escape.idx  # the one it left
    return start, place, idx, done, improved


def _take(start: np.ndarray, place: np.ndarray | None, w: Window, ans: Answer,
          idx: np.ndarray | None = None) -> None:
    """Write window ``w``'s answer into the search's arrays, in place."""
    assert ans.start is not None
    run = ans.start >= 0
    start[w.freed] = np.where(run, ans.start + w.a, -1)
    if place is not None:
        assert ans.place is not None
        rows = np.full((w.freed.size, place.shape[1]), -1, dtype=np.int64)
        got = ans.place if w.nodes is None else np.where(ans.place >= 0,
                                                         w.nodes[np.maximum(ans.place, 0)], -1)
        rows[:, : ans.place.shape[1]] = np.where(run[:, None], got, -1)
        place[w.freed] = rows
    if idx is not None:
        assert ans.idx is not None
        cols = np.full((w.freed.size, idx.shape[1]), -1, dtype=np.int64)
        cols[:, : ans.idx.shape[1]] = np.where(run[:, None], ans.idx, -1)
        idx[w.freed] = cols
