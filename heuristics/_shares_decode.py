"""The compiled decoders of model version 3 over the fit (:mod:`heuristics._shares_fit`) and occupy
(:mod:`heuristics._shares_take`).

:func:`decode` is the serial decoder (and FIFO), :func:`start_now` the start of
every job that fits at one slot (the parallel scheme, EASY's backfill).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ._compiled import check_order, uncounted
from ._shares_fit import find, new_scratch
from ._shares_state import SharesArrays, counts_of
from ._shares_take import take

__all__ = ["decode", "record", "serial_decoder", "start_now", "workspace"]


@njit(cache=True, nogil=True)
def record(place: np.ndarray, j: int, span: int, nodes: np.ndarray, nn: int, gpus: np.ndarray,
            ngp: int) -> None:  # pragma: no cover
    for e in range(place.shape[1]):
        place[j, e] = -1
    for e in range(nn):
        place[j, e] = nodes[e]
    for e in range(ngp):
        place[j, span + e] = gpus[e]


@njit(cache=True, nogil=True, inline="always")
def workspace(rows: np.ndarray, st: SharesArrays, place: np.ndarray) -> tuple:  # pragma: no cover
    """What every decoder on the state ``rows``, ``st`` works with: the scratch, nodes and GPUs
    arrays of a search, each job's shape, the jobs still to place per shape, each job's kind,
    and whether ``place`` is to be filled (it has rows)."""
    scratch = new_scratch(st)
    width = scratch.shape[1]
    return (scratch, np.empty(width, dtype=np.int64),
            np.empty(width, dtype=np.int64), st.job_shape, counts_of(rows, st), st.job_kind,
            place.shape[0] > 0)


def serial_decoder(choose: Any, after: Any, hinted: bool) -> Any:
    """The serial decoder's loop, compiled over a chooser (one loop for every rule).

    ``choose(rows, st, rule, j, g, p, lo, hi, nodes, gpus, scratch, extra)`` is a
    ``find`` (the earliest start and the placement there); ``after(rows, st, rule, j,
    g, s, p, nodes, nn, extra)`` runs once a job is taken; ``extra`` is the rule's
    own arrays. ``hinted``: skip ahead on the last search of the job's kind, valid
    when the start found depends on the state only (it only shrinks while decoding).
    """

    @uncounted
    def loop(rows: np.ndarray, st: SharesArrays, rule: int, order: np.ndarray, jobs: np.ndarray,
             start: np.ndarray, place: np.ndarray, span: int, fifo: bool, extra: tuple,
             work: tuple, memo: np.ndarray) -> None:  # pragma: no cover
        """The jobs one by one, the fit and the occupy inlined (no reference counts here)."""
        n = jobs.shape[1]
        T = rows.shape[1]
        scratch, nodes, gpus, shape, counts, kinds, keep = work
        last = 0
        for i in range(order.shape[0]):
            j = order[i] + n if order[i] < 0 else order[i]
            g, p, lo, hi = jobs[0, j], jobs[1, j], jobs[2, j], min(jobs[3, j], T)
            if shape[j] >= 0:  # (the kernel's frag workload travels with the state)
                counts[shape[j]] -= 1
            if fifo:
                lo = max(lo, last)
            a = lo
            if hinted:
                # a start no job of this kind had from a slot on is had by none later:
                # search from past it (v2's hinted fit, on kinds)
                q = kinds[j]
                if memo[q, 0] >= 0 and lo >= memo[q, 0] and memo[q, 2] == p and memo[q, 3] == g:
                    if memo[q, 4] >= 0:
                        a = max(lo, memo[q, 4])
                    elif hi <= memo[q, 1]:
                        continue
                    else:
                        a = max(lo, memo[q, 1] - p + 1)
            s, nn, ngp = choose(rows, st, rule, j, g, p, a, hi, nodes, gpus, scratch, extra)
            if hinted:
                q = kinds[j]
                memo[q, 0], memo[q, 1], memo[q, 2], memo[q, 3], memo[q, 4] = lo, hi, p, g, s
            if s < 0:
                continue
            take(rows, st, j, g, s, p, nodes, nn, gpus, ngp)
            after(rows, st, rule, j, g, s, p, nodes, nn, extra)
            start[j] = s
            last = s
            if keep:
                record(place, j, span, nodes, nn, gpus, ngp)

    @njit(cache=True, nogil=True)
    def run(rows: np.ndarray, st: SharesArrays, rule: int, order: np.ndarray, jobs: np.ndarray,
            start: np.ndarray, place: np.ndarray, span: int, fifo: bool,
            extra: tuple) -> np.ndarray:  # pragma: no cover
        check_order(order, jobs.shape[1])
        # jobs of one kind ask the same of every node (GPUs, share, CPU, memory, models); per
        # kind, the last search: from, end by, duration, GPUs, and the earliest start (-1: none)
        memo = np.full((st.num_kinds[0] if hinted else 0, 5), -1, dtype=np.int64)
        loop(rows, st, rule, order, jobs, start, place, span, fifo, extra,
             workspace(rows, st, place), memo)
        return start

    return run


@njit(cache=True, nogil=True, inline="always")
def _find(rows: np.ndarray, st: SharesArrays, rule: int, j: int, g: int, p: int, lo: int, hi: int,
          nodes: np.ndarray, gpus: np.ndarray, scratch: np.ndarray,
          extra: tuple) -> tuple[int, int, int]:  # pragma: no cover
    return find(rows, st, rule, j, g, p, lo, hi, nodes, gpus, scratch)


@njit(cache=True, nogil=True, inline="always")
def _nothing(rows: np.ndarray, st: SharesArrays, rule: int, j: int, g: int, s: int, p: int,
             nodes: np.ndarray, nn: int, extra: tuple) -> None:  # pragma: no cover
    pass


_SERIAL = serial_decoder(_find, _nothing, True)


@njit(cache=True, nogil=True)
def decode(rows: np.ndarray, st: SharesArrays, rule: int, order: np.ndarray, jobs: np.ndarray,
           start: np.ndarray, place: np.ndarray, span: int, fifo: bool) -> np.ndarray:
    # pragma: no cover
    """Place the jobs of ``order`` one by one at their earliest fit (the serial decoder).

    ``fifo``: each start at or after the last start placed (section 3's FIFO).
    ``jobs``: rows GPUs, duration, release, end-by. Row ``j`` of ``place``
    (when it has rows) gets the nodes, then from column ``span`` the GPUs.
    Each job is counted off the jobs still to place when it is reached.

    Raises
    ------
    IndexError
        If ``order`` holds an index outside ``[-n, n)``.
    """
    return _SERIAL(rows, st, rule, order, jobs, start, place, span, fifo, ())


@njit(cache=True, nogil=True)
def start_now(rows: np.ndarray, also: np.ndarray, st: SharesArrays, rule: int, t: int,
              cand: np.ndarray, jobs: np.ndarray, start: np.ndarray, place: np.ndarray,
              span: int) -> int:  # pragma: no cover
    """Start at ``t``, in the order of ``cand``, every job with a valid placement from ``t`` in
    ``rows`` (the state left by those started before it); each also occupies ``also`` when it
    has rows (EASY: ``rows`` holds the head's reservation). A job started is counted off the
    jobs still to place. Returns how many started."""
    return _start_now(rows, also, st, rule, t, cand, jobs, start, place, span,
                      workspace(rows, st, place), counts_of(also, st) if also.shape[0] > 0
                      else np.empty(0, dtype=np.int64),
                      np.full(st.num_kinds[0], -1, dtype=np.int64))


@uncounted
def _start_now(rows: np.ndarray, also: np.ndarray, st: SharesArrays, rule: int, t: int,
               cand: np.ndarray, jobs: np.ndarray, start: np.ndarray, place: np.ndarray,
               span: int, work: tuple, also_counts: np.ndarray,
               refused: np.ndarray) -> int:  # pragma: no cover
    """:func:`start_now`'s loop (no reference counts); ``refused``: per kind, a duration
    refused at ``t``."""
    T = rows.shape[1]
    scratch, nodes, gpus, shape, counts, kinds, keep = work
    started = 0
    for i in range(cand.shape[0]):
        j = cand[i]
        g, p = jobs[0, j], jobs[1, j]
        if t + p > min(jobs[3, j], T) or refused[kinds[j]] == p:
            continue  # (the state only shrinks: a kind refused at t stays refused)
        s, nn, ngp = find(rows, st, rule, j, g, p, t, t + p, nodes, gpus, scratch)
        if s < 0:
            refused[kinds[j]] = p
            continue
        take(rows, st, j, g, t, p, nodes, nn, gpus, ngp)
        if also.shape[0] > 0:
            take(also, st, j, g, t, p, nodes, nn, gpus, ngp)
        if shape[j] >= 0:
            counts[shape[j]] -= 1
            if also.shape[0] > 0:
                also_counts[shape[j]] -= 1
        start[j] = t
        started += 1
        if keep:
            record(place, j, span, nodes, nn, gpus, ngp)
    return started
