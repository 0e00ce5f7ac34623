"""Solving one LNS window exactly, on arrays: the flat model first, the node model when needed.

A window (:class:`~matheuristics.windows.Window`) is solved from the freed
jobs' current starts, and its answer is kept only if it is a point of the
model it came from: no :class:`~instances.Schedule` and no checker inside the
search. The window's flat model is solved first. On a flat instance (one
internal node, whose row never binds) that is the window's model and its
answer is final. On nodes the flat model is a relaxation: its answer is placed
on what the fixed jobs leave of the nodes (:func:`place_window`) when it can
be, else the node model with the fixed jobs' GPUs withheld is solved. On
model version 3 the window's exact model is solved with the fixed jobs' use
by GPU index, CPU and memory (:func:`solve_resources`), and its whole-GPU
jobs given indices after (:func:`matheuristics.gpus.colour_window`).
"""

from __future__ import annotations

import logging
import time
from typing import Any, NamedTuple

import numpy as np

import milp
from heuristics import start_value
from instances import Instance, Status
from instances.capacity import place_starts

from .gpus import colour_window
from .windows import Window

__all__ = ["Answer", "place_window", "solve_flat", "solve_resources", "solve_window"]

logger = logging.getLogger(__name__)

TOLERANCE = 1e-9
"""Values closer than this are equal in the search's comparisons."""


class Answer(NamedTuple):
    """A window's answer: the solver's ``status`` (``None``: skip the window, ``note``
    says why), and its ``start`` and ``place`` arrays of the window's instance
    (``start`` ``None`` when the solver has no schedule; ``place`` ``None`` on a flat
    instance); on model version 3 ``idx``, the jobs' GPU indices."""

    status: Status | None
    start: np.ndarray | None
    place: np.ndarray | None
    note: str = ""
    idx: np.ndarray | None = None


def solve_flat(sub: Instance, warm: np.ndarray, time_limit: float) -> Answer:
    """Solve the flat model of ``sub`` (nodes not looked at) from ``warm`` within ``time_limit`` s.

    The status is ``None`` when the window is to be skipped (a model over the
    column cap, a solver error, an answer outside the formulation,
    :meth:`milp.Formulation.feasible`).
    """
    t0 = time.perf_counter()
    try:
        form = milp.build(sub)
    except ValueError as e:  # e.g. a model over the column cap
        return Answer(None, None, None, str(e))
    raw = milp.solve_arrays(form, time_limit=max(0.0, time_limit - (time.perf_counter() - t0)),
                            warm_start=warm, threads=1, root_lp=False)
    if raw.status in (Status.ERROR, Status.INFEASIBLE):
        return Answer(None, None, None, raw.message)
    if raw.start is not None and not form.feasible(raw.start):
        logger.warning("lns: window %s: the solver's answer violates its model", sub.name)
        return Answer(None, None, None, "the solver's answer violates the window's model")
    if raw.start is None and form.num_cols == 0:
        return Answer(raw.status, warm, None)  # no freed job can run in the window
    return Answer(raw.status, raw.start, None)


def solve_window(w: Window, time_limit: float, before: float) -> Answer:
    """Solve window ``w`` within ``time_limit`` s; ``before`` is the value of its warm start.

    The window's flat model runs first. With one node (a flat instance's
    internal one, or an instance on one node) its node row never binds, so
    the flat model is the window's model: it gets the whole time, and its
    answer is the answer (placed on the one node). With more nodes it gets
    half the time; when its answer can be placed on the nodes
    (:func:`place_window`) it is the answer, optimal for the node window when
    it is for the flat one; when it cannot, and the flat optimum does not
    beat ``before`` (so neither can the node one), the window is left as it
    is; otherwise the node model with ``w.reserved`` withheld is solved from
    the warm start with the time left.
    """
    if w.fixed is not None:
        return solve_resources(w, time_limit)
    if w.reserved is None:
        return solve_flat(w.sub, w.warm, time_limit)
    assert w.warm_place is not None
    t0 = time.perf_counter()
    one = w.sub.num_nodes == 1
    flat = solve_flat(w.sub.replace(nodes=None), w.warm, time_limit if one else 0.5 * time_limit)
    if flat.status is not None and flat.start is not None:
        value = start_value(w.sub, flat.start)
        if value >= before - TOLERANCE:
            placed = place_window(w.sub, w.reserved, flat.start, w.warm_place)
            if placed is not None:
                return Answer(flat.status, flat.start, placed)
            if flat.status == Status.OPTIMAL and value <= before + TOLERANCE:
                return Answer(flat.status, w.warm, w.warm_place)
    return _solve_nodes(w, max(0.0, time_limit - (time.perf_counter() - t0)))


def _solve_nodes(w: Window, time_limit: float) -> Answer:
    """The node model of window ``w`` from its warm start, within ``time_limit`` s."""
    t0 = time.perf_counter()
    assert w.warm_place is not None
    try:
        form = milp.build(w.sub, aggregate=False, reserved=w.reserved)
    except ValueError as e:  # e.g. a model over the column cap
        return Answer(None, None, None, str(e))
    if form.num_x == 0:  # no freed job can run in the window: nothing changes
        return Answer(Status.OPTIMAL, w.warm, w.warm_place)
    raw = _solve(form, (w.warm, w.warm_place), time_limit - (time.perf_counter() - t0), w.sub.name)
    if isinstance(raw, Answer):
        return raw
    if not form.feasible(raw.start, raw.place):
        logger.warning("lns: window %s: the solver's answer violates its model", w.sub.name)
        return Answer(None, None, None, "the solver's answer violates the window's model")
    return Answer(raw.status, raw.start, raw.place)


def _solve(form: Any, warm: Any, time_left: float, name: str) -> Any:
    """The window's MILP from ``warm`` (one thread): its raw answer, or an :class:`Answer` why not."""
    try:
        raw = milp.solve_arrays(form, time_limit=max(0.0, time_left), mip_gap=1e-4, threads=1,
                                warm_start=warm, root_lp=False)
    except ValueError as e:  # a warm start the model has no column for (a bug upstream)
        logger.warning("lns: window %s: %s", name, e)
        return Answer(None, None, None, str(e))
    if raw.status in (Status.ERROR, Status.INFEASIBLE):
        return Answer(None, None, None, raw.message)
    if raw.start is None or raw.place is None:
        return Answer(raw.status, None, None)
    return raw


def solve_resources(w: Window, time_limit: float) -> Answer:
    """A version 3 window: its exact model with the fixed jobs' use (:mod:`milp.fixed`).

    Solved from the warm start (the freed jobs where they are, a point of the
    model); the answer's whole-GPU jobs then get GPU indices around the fixed
    jobs' (:func:`~matheuristics.gpus.colour_window`). When they cannot, the
    window keeps its warm start (status ``None`` if the solver found better:
    the round is skipped, with the reason).
    """
    t0 = time.perf_counter()
    assert w.fixed is not None and w.warm_place is not None and w.warm_gpu is not None
    keep = Answer(Status.OPTIMAL, w.warm, w.warm_place, idx=w.warm_idx)
    try:
        form = milp.build(w.sub, aggregate=False, fixed=w.fixed)
    except ValueError as e:  # e.g. a model over the column cap
        return Answer(None, None, None, str(e))
    if form.num_x == 0:
        return keep
    raw = _solve(form, (w.warm, w.warm_place, w.warm_gpu),
                 time_limit - (time.perf_counter() - t0), w.sub.name)
    if isinstance(raw, Answer):
        return raw
    gpu = raw.gpu if raw.gpu is not None else np.full(w.sub.num_jobs, -1, dtype=np.int64)
    if not form.feasible(raw.start, raw.place, gpu if form.has_slots else None):
        logger.warning("lns: window %s: the solver's answer violates its model", w.sub.name)
        return Answer(None, None, None, "the solver's answer violates the window's model")
    idx = colour_window(w.sub, w.fixed, raw.start, raw.place, gpu, w.warm_idx)
    if idx is None:
        return Answer(None, None, None, "no GPU indices for the answer around the fixed jobs'")
    return Answer(raw.status, raw.start, raw.place, idx=idx)


def place_window(
    sub: Instance, reserved: np.ndarray, start: np.ndarray, keep: np.ndarray | None = None,
) -> np.ndarray | None:
    """A placement of every run job of ``start`` on what ``reserved`` leaves of the nodes, or ``None``.

    Greedy, in order of start (larger jobs first at equal starts): a job keeps
    its row of ``keep`` (a placement array) when it is there and still has
    room, else a one-node job takes the node with the least room left over
    its run (best fit), a multi-node job the lexicographically smallest set
    of nodes wholly free over its run. ``None`` when some job finds no room
    (the greedy is not complete: a placement may exist all the same): the
    window's form of :func:`instances.capacity.place_starts`, the one greedy.
    """
    out, place = place_starts(sub, start, reserved=reserved, keep=keep)
    return place if np.array_equal(out, start) else None
