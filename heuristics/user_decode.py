"""List scheduling under a user's placement rule: the serial and the parallel schemes (section 14).

The same schemes as :mod:`heuristics.listsched`, over :class:`~heuristics.free_state.FreeState`:
a job starts at the earliest slot from which the rule picks a node for it
(:func:`heuristics.scoring.choose_node` on the view of that start); a start
where no node fits, or where the rule rules every fitting node out, is
passed over (the job waits). A job larger than the largest node takes whole
nodes as with the built-in rules. The rule is called from Python once per
start tried.
"""

from __future__ import annotations

import numpy as np

from instances import Instance

from .free_state import FreeState
from .placement_rules import PlacementRule
from .scoring import choose_gpus, choose_node
from .view import JobView

__all__ = ["parallel_starts", "serial_starts"]


def _record(place: np.ndarray | None, j: int, nodes: list[int], gpus: list[int],
            span: int) -> None:
    if place is None:
        return
    place[j] = -1
    place[j, : len(nodes)] = nodes
    if place.shape[1] > span and len(nodes) == 1:
        place[j, span: span + len(gpus)] = gpus


def _try(state: FreeState, entry: PlacementRule, job: JobView, s: int,
         place: np.ndarray | None, span: int) -> bool:
    """Place ``job`` from ``s`` if the rule picks a node there; whether it did."""
    j = job.index
    if state.multi[j]:
        nodes = state.whole_nodes(job, s)
        if not nodes:
            return False
        state.take(job, s, nodes, [])
        _record(place, j, nodes, [], span)
        return True
    view = state.view(job, s)
    if not view.fits.any():
        return False
    k = choose_node(entry, view, job)
    if k < 0:
        return False
    gpus = choose_gpus(entry, view, job, k) if state.shares is not None else []
    state.take(job, s, [k], gpus)
    _record(place, j, [k], gpus, span)
    return True


def serial_starts(inst: Instance, order: np.ndarray, entry: PlacementRule, reservation: str,
                  place: np.ndarray | None) -> np.ndarray:
    """Start array (``-1``: not run) of the serial scheme under ``entry``; nodes into ``place``."""
    entry = entry.for_instance(inst)
    state = FreeState(inst, reservation)
    start = np.full(inst.num_jobs, -1, dtype=np.int64)
    last = inst.deadlines - inst.durations
    for j in np.asarray(order, dtype=np.int64).tolist():
        job = state.job(j)
        for s in range(int(inst.releases[j]), int(last[j]) + 1):
            if _try(state, entry, job, s, place, inst.max_span):
                start[j] = s
                break
    return start


def parallel_starts(inst: Instance, order: np.ndarray, entry: PlacementRule, reservation: str,
                    place: np.ndarray | None) -> np.ndarray:
    """Start array of the parallel (time-stepping) scheme under ``entry``."""
    entry = entry.for_instance(inst)
    state = FreeState(inst, reservation)
    start = np.full(inst.num_jobs, -1, dtype=np.int64)
    order = np.asarray(order, dtype=np.int64)
    rel, last = inst.releases[order], (inst.deadlines - inst.durations)[order]
    jobs = [state.job(j) for j in range(inst.num_jobs)]
    for t in range(inst.horizon):
        for j in order[(start[order] < 0) & (rel <= t) & (last >= t)].tolist():
            if _try(state, entry, jobs[j], t, place, inst.max_span):
                start[j] = t
    return start
