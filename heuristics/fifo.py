"""The FIFO baseline, exactly as the specification (docs/model.md) defines it (section 8 on nodes)."""

from __future__ import annotations

import time

import numpy as np

from instances import Instance, Result

from ._core import earliest_fit, finish, occupy
from .placement import new_place, node_fit, node_occupy, node_profile

__all__ = ["fifo", "fifo_starts"]


def fifo_starts(
    inst: Instance, reservation: str = "peak", *, place: np.ndarray | None = None
) -> np.ndarray:
    """FIFO start slots (``-1`` for rejected jobs).

    Jobs are taken by (release, position in the job list). Each starts at the
    earliest slot ``s >= max(r_j, S_last)`` from which it fits for its whole
    duration and ends by ``min(D_j, T)``; ``S_last`` is the start of the last
    job placed. A job that fits nowhere is rejected and leaves ``S_last`` as it
    was.

    On an instance with nodes, "fits" means "has a valid placement for the
    whole run", and the placement is the first in node-list order: a job of
    at most the largest node's GPUs takes the first node with room; a larger
    one, among the sets of wholly free nodes whose GPUs sum to ``g_j``, the
    one whose sorted node positions are lexicographically smallest. Under
    ``peak`` each node offers its GPUs less what the reservation withholds
    there; under ``curve`` its GPUs, and the pool keeps room for inference.

    Parameters
    ----------
    place
        On an instance with nodes, the placement array to fill (see
        :func:`heuristics.placement.new_place`).
    """
    free = inst.batch_capacity(reservation)  # type: ignore[arg-type]
    start = np.full(inst.num_jobs, -1, dtype=np.int64)
    order = np.argsort(inst.releases, kind="stable")
    gpus, dur, rel, dl = inst.gpus, inst.durations, inst.releases, inst.deadlines
    nodes = node_profile(inst, reservation, "first-fit") if inst.has_nodes else None
    s_last = 0
    for j in order.tolist():
        g, p, lo = int(gpus[j]), int(dur[j]), max(int(rel[j]), s_last)
        if nodes is None:
            s = earliest_fit(free, g, p, lo, int(dl[j]))
            if s >= 0:
                occupy(free, s, g, p)
        else:
            s, ks = node_fit(free, nodes, j, g, p, lo, int(dl[j]))
            if s >= 0:
                node_occupy(free, nodes, j, g, s, p, ks, place)
        if s >= 0:
            start[j] = s
            s_last = s
    return start


def fifo(inst: Instance, *, reservation: str = "peak") -> Result:
    """FIFO in arrival order; ``peak`` reservation by default (the baseline).

    Parameters
    ----------
    reservation
        ``"peak"`` (method ``fifo``) or ``"curve"`` (method ``fifo-curve``).
    """
    t0 = time.perf_counter()
    place = new_place(inst) if inst.has_nodes else None
    start = fifo_starts(inst, reservation, place=place)
    name = "fifo" if reservation == "peak" else "fifo-curve"
    return finish(inst, name, start, reservation=reservation, started_at=t0, place=place)
