"""The FIFO baseline, exactly as the specification (docs/model.md) defines it (section 8 on nodes)."""

from __future__ import annotations

import time

import numpy as np

from instances import Instance, Result

from .decoder import job_arrays
from .engine import new_profile
from .placement import new_place
from .results import finish
from .rules import fifo_order

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
    On model version 3 (section 12) a placement also names GPU indices (the
    lowest with room) and charges shares, CPU and memory.

    Parameters
    ----------
    place
        On an instance with nodes, the placement array to fill (see
        :func:`heuristics.placement.new_place`).
    """
    prof = new_profile(inst, reservation, "first-fit")  # any model version
    return prof.decode(fifo_order(inst), job_arrays(inst), None, place, fifo=True)


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
