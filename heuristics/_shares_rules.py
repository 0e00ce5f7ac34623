"""FGD's six placement policies as rules of the version 3 decoder, compiled (docs/packing-time.md).

The earliest start with a valid placement does not depend on the rule (a rule
only chooses among the nodes that have one there), so :func:`find` asks
:func:`heuristics._shares_fit.find` for it and then scores, at that start,
every node with a valid placement by the packing policy's own score
(:mod:`heuristics.packing.scores`, the one copy of each), read on the node's
**run state**: each GPU's least free milli over the run and the least free
CPU over the run (what the node has free throughout). The highest score wins,
ties to the earliest node. Codes (after :data:`heuristics.placement.PLACEMENTS`):
3 ``random``, 4 ``dotprod``, 5 ``clustering``, 6 ``packing``, 7 ``bestfit``,
8 ``fgd``.

- ``clustering`` reads the classes of the jobs running on the node at any
  slot of the run: rows appended to the state (:func:`aux_rows`), per node and
  class (0 a share, ``g`` whole GPUs), the jobs of that class running there
  per slot; :func:`note` keeps them after each placement.
- ``random`` draws the node uniformly among those with a valid placement and
  a share's GPU among those it may take, with the draws ``u_node[j]``,
  ``u_gpu[j]`` of :func:`heuristics.packing.place` (the state's last row
  holds the seed).
- ``fgd``'s workload is FGD's target workload over the instance's one-node
  jobs with fixed frequencies (``freq``), not the jobs still to place.

A whole-GPU job takes its lowest-indexed GPUs free for the run; a share takes
FGD's GPU (``fgd``), a random one (``random``) or the one left with the least
room over the run (the others), among the GPUs it may take. A job on whole
nodes takes the kernel's lexicographic set under every rule.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from instances.packing.frag import node_frag_shapes

from ._compiled import uncounted
from ._shares_decode import serial_decoder
from ._shares_fit import find as kernel_find
from ._shares_fit import lowest_free, node_fail, read_gpus, repeat_of_class
from ._shares_state import FULL, SharesArrays, layout
from .packing.scores import (
    bestfit_score,
    clustering_score,
    dotprod_score,
    fgd_score,
    fgd_share_gpu,
    packing_score,
)

__all__ = ["FIRST", "aux_base", "decode", "find", "note"]

FIRST = 3
"""Code of the first policy rule; codes below are the kernel's own rules."""

RANDOM, DOTPROD, CLUSTERING, PACKING, BESTFIT, FGD = range(FIRST, FIRST + 6)


@njit(cache=True, nogil=True)
def aux_base(rows: np.ndarray, st: SharesArrays) -> int:  # pragma: no cover (compiled)
    """First of the clustering rows (``K * (largest + 1)`` of them, before the seed row)."""
    K = st.sizes.shape[0]
    return rows.shape[0] - 1 - K * (st.largest[0] + 1)


@njit(cache=True, nogil=True)
def note(rows: np.ndarray, st: SharesArrays, rule: int, j: int, g: int, s: int, p: int,
         nodes: np.ndarray, nn: int) -> None:  # pragma: no cover (compiled)
    """Count job ``j`` (one node, from slot ``s`` for ``p`` slots) in the clustering rows."""
    if rule != CLUSTERING or nn != 1:
        return
    W1 = st.largest[0] + 1
    q = 0 if st.job_milli[j] < FULL else g
    r = aux_base(rows, st) + nodes[0] * W1 + q
    for u in range(s, s + p):
        rows[r, u] += 1


@njit(cache=True, nogil=True)
def _classes(rows: np.ndarray, st: SharesArrays, k: int, q: int, c: int, p: int) -> tuple[int, int]:
    # pragma: no cover (compiled)
    """Jobs of class ``q`` on node ``k`` at some slot of the run (the most at one slot), and
    how many classes run there at some slot of it."""
    W1 = st.largest[0] + 1
    r0 = aux_base(rows, st) + k * W1
    same, classes = 0, 0
    for e in range(W1):
        most = 0
        for u in range(c, c + p):
            most = max(most, rows[r0 + e, u])
        if most > 0:
            classes += 1
        if e == q:
            same = most
    return same, classes


@njit(cache=True, nogil=True)
def _score(rows: np.ndarray, st: SharesArrays, rule: int, j: int, g: int, k: int, c: int, p: int,
           gmin: np.ndarray, ok: np.ndarray, freq: np.ndarray, left: np.ndarray,
           room: np.ndarray,
           short: np.ndarray) -> tuple[int, int]:  # pragma: no cover (compiled)
    """The policy's score of node ``k``'s run state, and FGD's GPU for a share (else -1);
    ``room``, ``short``: scratch of the workload's shapes."""
    goff, milli, cpu, model = st.gpu_offset, st.job_milli, st.job_cpu, st.node_model
    t_cpu, t_milli, t_gpus, t_allowed = st.shape_cpu, st.shape_milli, st.shape_gpus, st.shape_models
    K: int = st.sizes.shape[0]
    CP = layout(K, goff[K])[2]
    ng = goff[k + 1] - goff[k]
    m, cj = milli[j], cpu[j]
    cmin = rows[CP + k, c]
    for u in range(c, c + p):
        cmin = min(cmin, rows[CP + k, u])
    total = 0
    full = 0
    for i in range(ng):
        total += gmin[i]
        full += gmin[i] == FULL
    if rule == DOTPROD:
        return dotprod_score(cmin, total, cj, g * m), -1
    if rule == BESTFIT:
        return bestfit_score(cmin, total, cj, g * m), -1
    if rule == CLUSTERING:
        same, classes = _classes(rows, st, k, 0 if m < FULL else g, c, p)
        return clustering_score(total, same, classes, g), -1
    if rule == PACKING:  # a share scores on the GPUs it may take (the others offer it nothing)
        for i in range(ng):
            left[i] = gmin[i] if (m == FULL or ok[i] < 0) else 0
        return packing_score(left[:ng], full, g, m), -1
    before = node_frag_shapes(cmin, gmin[:ng], model[k], t_cpu, t_milli, t_gpus, t_allowed, freq,
                              room, short)
    takeable = True
    for i in range(ng):
        if m < FULL and gmin[i] >= m and ok[i] >= 0:
            takeable = False
    if m == FULL or takeable:
        return fgd_score(gmin[:ng], cmin, model[k], before, g, m, cj, room, short, t_cpu,
                         t_milli, t_gpus, t_allowed, freq)
    # some GPU with room is refused (the pool has no GPU to make busy at a slot of the run):
    # FGD's choice among the GPUs the share may take, each scored by fgd_score on the state
    # after it (as a change of no GPUs: the same sigmoid of the same fragmentation)
    return fgd_share_gpu(gmin[:ng], ok, False, m, cmin - cj, model[k], before, room, short,
                         t_cpu, t_milli, t_gpus, t_allowed, freq)


@uncounted
def find(rows: np.ndarray, st: SharesArrays, rule: int, j: int, g: int, p: int, lo: int, hi: int,
         nodes: np.ndarray, gpus: np.ndarray, scratch: np.ndarray, u_node: np.ndarray,
         u_gpu: np.ndarray, freq: np.ndarray) -> tuple[int, int, int]:  # pragma: no cover
    """:func:`heuristics._shares_fit.find` under a policy rule (module notes).

    ``scratch``: :func:`heuristics._shares_fit.new_scratch`.
    """
    s, nn, ngp = kernel_find(rows, st, 0, j, g, p, lo, hi, nodes, gpus, scratch)
    if s < 0 or g > st.largest[0]:
        return s, nn, ngp
    sizes, goff, elig = st.sizes, st.gpu_offset, st.eligible
    milli, cpu, mem = st.job_milli, st.job_cpu, st.job_memory
    K: int = sizes.shape[0]
    GB = layout(K, goff[K])[4]
    m, cj, mj = milli[j], cpu[j], mem[j]
    gmin, ok, left, cand = scratch[0], scratch[1], scratch[3], scratch[4]
    cap, cls = st.node_cap, st.node_class
    seen = cand  # (random keeps its candidates here; the others the classes already scored)
    if rule != RANDOM:
        for k in range(K):
            seen[cls[k]] = 0
    best, best_score, best_gpu, count = -1, -1, -1, 0
    for k in range(K):
        if not elig[j, k] or node_fail(rows, K, k, s, p, m == FULL, g, m, cj, mj) >= 0:
            continue
        if rule != RANDOM and repeat_of_class(rows, cap, cls, seen, k, s, p):
            continue  # of the untouched nodes, the first of a class scores for all (ties: earliest)
        ng = goff[k + 1] - goff[k]
        if read_gpus(rows, GB + goff[k], ng, s, p, m, True, gmin, ok, ng) < g:
            continue
        if rule == RANDOM:
            cand[count] = k
            count += 1
            continue
        score, gpu = _score(rows, st, rule, j, g, k, s, p, gmin, ok, freq, left,
                            scratch[5], scratch[6])
        if score > best_score:
            best, best_score, best_gpu = k, score, gpu
    if rule == RANDOM:
        best = cand[min(int(u_node[j] * count), count - 1)]
    k = best
    ng = goff[k + 1] - goff[k]
    read_gpus(rows, GB + goff[k], ng, s, p, m, True, gmin, ok, ng)
    nodes[0] = k
    if m == FULL:
        return s, 1, lowest_free(ok, ng, g, gpus)
    gpu = best_gpu if rule == FGD else -1
    if rule == RANDOM:
        room = 0
        for i in range(ng):
            room += ok[i] < 0
        pick = min(int(u_gpu[j] * room), room - 1)
        for i in range(ng):
            if ok[i] < 0:
                if pick == 0:
                    gpu = i
                    break
                pick -= 1
    elif gpu < 0:  # best fit: the least room over the run, the first of equals
        for i in range(ng):
            if ok[i] < 0 and (gpu < 0 or gmin[i] < gmin[gpu]):
                gpu = i
    gpus[0] = gpu
    return s, 1, 1


@njit(cache=True, nogil=True, inline="always")
def _find(rows: np.ndarray, st: SharesArrays, rule: int, j: int, g: int, p: int, lo: int, hi: int,
          nodes: np.ndarray, gpus: np.ndarray, scratch: np.ndarray,
          extra: tuple) -> tuple[int, int, int]:  # pragma: no cover
    return find(rows, st, rule, j, g, p, lo, hi, nodes, gpus, scratch, extra[0], extra[1],
                extra[2])


@njit(cache=True, nogil=True, inline="always")
def _note(rows: np.ndarray, st: SharesArrays, rule: int, j: int, g: int, s: int, p: int,
          nodes: np.ndarray, nn: int, extra: tuple) -> None:  # pragma: no cover
    note(rows, st, rule, j, g, s, p, nodes, nn)


# (no hint: the start a rule's find returns is the kernel's, but the hint is the kernel's own)
_SERIAL = serial_decoder(_find, _note, False)


@njit(cache=True, nogil=True)
def decode(rows: np.ndarray, st: SharesArrays, rule: int, order: np.ndarray, jobs: np.ndarray,
           start: np.ndarray, place: np.ndarray, span: int, fifo: bool, u_node: np.ndarray,
           u_gpu: np.ndarray, freq: np.ndarray) -> np.ndarray:  # pragma: no cover
    """:func:`heuristics._shares_decode.decode` under a policy rule (the serial decoder).

    Raises
    ------
    IndexError
        If ``order`` holds an index outside ``[-n, n)``.
    """
    return _SERIAL(rows, st, rule, order, jobs, start, place, span, fifo, (u_node, u_gpu, freq))
