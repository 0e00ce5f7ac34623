"""Block moves on the serial order of a schedule: a local search for the ``flow`` objective.

A feasible schedule is the serial decoder's schedule for the order of its starts
(:func:`heuristics.held.left_shift`), so a search over orders, started there,
never loses it. :func:`flow_local_search` draws a release slot ``t``, weighted by
the waiting of the jobs released there, and moves a *block* (the jobs released in
``t .. t + d`` that wait, ``d`` up to 3 slots; half the time only those of at most
the drawn job's GPU-slots) in front of a job that starts at ``t`` or later. The
order is re-decoded by :class:`heuristics.search.OrderSearch` from the first
position changed and the move kept if the worth is not lower. Moving a block, not
a job, is what lets a burst of small jobs pass a wide job that took their GPUs:
one job alone seldom pays for the wide job's delay. The measurements are in
``docs/flow.md``.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from instances import Instance

from .held import left_shift
from .search import OrderSearch

__all__ = ["CHUNK", "flow_local_search"]

logger = logging.getLogger(__name__)


CHUNK = 512
"""Positions per chunk of the block search's decoding (:class:`OrderSearch` takes 16 at
least): a block move re-decodes hundreds of short chunks, and a call per chunk, not the
decoding, is what costs (docs/flow.md)."""


class _BlockSearch(OrderSearch):
    """:class:`OrderSearch` whose chunks hold ``chunk`` positions at least."""

    def __init__(self, inst: Instance, order: np.ndarray, chunk: int) -> None:
        self.STRIDE = chunk
        super().__init__(inst, order)


def flow_local_search(
    inst: Instance, start: np.ndarray, *, time_limit: float | None = 10.0,
    iterations: int | None = None, seed: int = 0, chunk: int = CHUNK,
) -> tuple[np.ndarray, int, int]:
    """Improve a feasible ``curve`` schedule by block moves; returns ``(start, tries, improving)``.

    Parameters
    ----------
    inst
        A flat instance (any objective; the moves are aimed at ``flow``).
    start
        A feasible start array (``-1``: not run); not changed.
    time_limit
        Seconds (``None``: no limit; then ``iterations`` is required).
    iterations
        Most moves tried (``None``: no limit).
    seed
        Seed of the moves.
    chunk
        Positions per chunk of the decoding (:data:`CHUNK`).

    Returns
    -------
    tuple
        The best start array (worth at least ``start``'s: the first decoding is a left
        shift of it), the moves tried and the moves that raised the worth.

    Raises
    ------
    ValueError
        With neither a time limit nor an iteration count, or on an instance with nodes.
    """
    if time_limit is None and iterations is None:
        raise ValueError("time_limit, iterations: give at least one")
    if inst.has_nodes:
        raise ValueError(f"inst: {inst.name!r} has nodes; the flow search is for a flat pool")
    t0 = time.perf_counter()
    n = inst.num_jobs
    g, p, r = inst.gpus, inst.durations, inst.releases
    area = g * p
    first = left_shift(inst, start)
    key = np.where(first >= 0, first, inst.horizon)
    st = _BlockSearch(inst, np.lexsort((np.arange(n), p, key)), chunk)
    rng = np.random.default_rng(seed)
    pos = np.empty(n, dtype=np.int64)
    in_block = np.zeros(n, dtype=bool)
    tries = improving = 0
    while (iterations is None or tries < iterations) and (
            time_limit is None or time.perf_counter() - t0 < time_limit):
        wait = np.where(st.start >= 0, st.start - r, 0) * inst.priorities
        waited = np.flatnonzero(wait > 0)
        if waited.size == 0:
            break
        cum = np.cumsum(wait[waited])
        j = int(waited[min(int(np.searchsorted(cum, rng.random() * cum[-1])), waited.size - 1)])
        t = int(r[j])
        block = waited[(r[waited] >= t) & (r[waited] <= t + int(rng.integers(0, 4)))]
        if rng.random() < 0.5:
            block = block[area[block] <= area[j]]
        pos[st.order] = np.arange(n)
        block = block[np.argsort(pos[block])]
        ahead = np.flatnonzero(st.start[st.order[: pos[block[0]]]] >= t)
        tries += 1
        if ahead.size == 0:
            continue
        i = int(ahead[0]) if rng.random() < 0.5 else int(ahead[rng.integers(ahead.size)])
        k = int(pos[block].max())
        seg = st.order[i : k + 1]
        in_block[block] = True
        new = st.order.copy()
        new[i : k + 1] = np.concatenate([seg[in_block[seg]], seg[~in_block[seg]]])
        in_block[block] = False
        before = st.value
        if st.try_order(new, i, k) >= before - 1e-9:
            st.commit()
            improving += st.value > before + 1e-9
    logger.debug("flow local search: %d moves, %d improving, worth %.6g", tries, improving,
                 st.value)
    return st.start.copy(), tries, improving
