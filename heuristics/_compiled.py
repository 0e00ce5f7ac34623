"""The serial list decoder compiled with numba (optional).

One call places a whole order: for each job, a scan of its window that
counts the consecutive slots with ``g`` GPUs free and stops at the first run
of ``p``, then takes the GPUs. Plain loops, compiled, so no per-job call
overhead; :func:`heuristics._core.serial_starts_numpy` is the vectorized
version it is held to, and what runs when numba is not installed.

Importing this module raises :class:`ImportError` when numba is missing;
:func:`heuristics._core.serial_starts` imports it lazily (on first use) and
falls back to the numpy decoder then. ``cache=True`` keeps the machine code
on disk, so only the first process after an install pays the compilation.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["serial_starts_compiled", "serial_starts_nodes_compiled"]


@njit(cache=True, nogil=True)
def serial_starts_compiled(
    free: np.ndarray,
    order: np.ndarray,
    gpus: np.ndarray,
    dur: np.ndarray,
    rel: np.ndarray,
    dl: np.ndarray,
    start: np.ndarray,
) -> np.ndarray:  # pragma: no cover (compiled; tested through its results)
    """Serial schedule generation over ``order`` (all arrays ``int64``).

    Job ``j`` starts at the earliest ``s`` in ``[rel[j], min(dl[j], T) - p]``
    with ``free[s:s+p] >= g``; a job that fits nowhere keeps ``start[j]``.
    ``free`` and ``start`` are updated in place; ``start`` is returned.
    """
    T = free.shape[0]
    for i in range(order.shape[0]):
        j = order[i]
        g = gpus[j]
        p = dur[j]
        lo = rel[j]
        hi = min(dl[j], T)
        if lo < 0 or hi - lo < p:
            continue
        run = 0
        s = -1
        for t in range(lo, hi):
            if free[t] >= g:
                run += 1
                if run >= p:
                    s = t - p + 1
                    break
            else:
                run = 0
        if s >= 0:
            for t in range(s, s + p):
                free[t] -= g
            start[j] = s
    return start


@njit(cache=True, nogil=True)
def _lexicographic_subset(sizes: np.ndarray, elig: np.ndarray, m: int, g: int, out: np.ndarray) -> int:  # pragma: no cover
    """Lexicographically smallest subset of ``elig[:m]`` whose ``sizes`` sum to ``g``.

    Writes the chosen node positions into ``out`` and returns their count
    (0 when no subset sums to ``g``).
    """
    reach = np.zeros((m + 1, g + 1), dtype=np.bool_)
    reach[m, 0] = True
    for i in range(m - 1, -1, -1):
        a = sizes[elig[i]]
        for v in range(g + 1):
            reach[i, v] = reach[i + 1, v] or (v >= a and reach[i + 1, v - a])
    if not reach[0, g]:
        return 0
    rest = g
    c = 0
    for i in range(m):
        if rest == 0:
            break
        a = sizes[elig[i]]
        if a <= rest and reach[i + 1, rest - a]:
            out[c] = elig[i]
            c += 1
            rest -= a
    return c


@njit(cache=True, nogil=True)
def serial_starts_nodes_compiled(
    free: np.ndarray,
    node_free: np.ndarray,
    sizes: np.ndarray,
    maxfree: np.ndarray,
    nmax: np.ndarray,
    whole: np.ndarray,
    multi: np.ndarray,
    frag: np.ndarray,
    rule: int,
    order: np.ndarray,
    gpus: np.ndarray,
    dur: np.ndarray,
    rel: np.ndarray,
    dl: np.ndarray,
    start: np.ndarray,
    place: np.ndarray,
) -> np.ndarray:  # pragma: no cover (compiled; tested through its results)
    """Serial schedule generation on nodes (``heuristics.placement`` is the numpy version).

    Job ``j`` starts at the earliest ``s`` in ``[rel[j], min(dl[j], T) - p]``
    from which it has a valid placement for its whole run and the pool
    ``free`` has room; the rule ``rule`` (0 first-fit, 1 best-fit, 2 frag)
    picks the node of a one-node job, a multi-node job takes the
    lexicographically smallest set of wholly free nodes. A scan over the
    slots keeps the run of slots where the pool and ``maxfree`` (one node) or
    ``whole`` (whole nodes) have room, and tests the nodes only at the
    starts that pass it; ``nmax`` (how many nodes have ``maxfree``) spares
    most recomputations of the maximum. Every array is updated in place;
    ``start`` is returned, ``place`` row ``j`` receives the nodes.
    """
    K, T = node_free.shape
    elig = np.empty(K, dtype=np.int64)
    chosen = np.empty(K, dtype=np.int64)
    for i in range(order.shape[0]):
        j = order[i]
        g = gpus[j]
        p = dur[j]
        lo = rel[j]
        hi = min(dl[j], T)
        if lo < 0 or hi - lo < p:
            continue
        run = 0
        s = -1
        nchosen = 0
        many = multi[j]
        room_at = whole if many else maxfree  # one node with g free, or whole nodes holding g
        for t in range(lo, hi):
            if free[t] >= g and room_at[t] >= g:
                run += 1
            else:
                run = 0
            if run < p:
                continue
            c = t - p + 1
            m = 0
            for k in range(K):
                need = sizes[k] if many else g
                ok = True
                for u in range(c, c + p):
                    if node_free[k, u] < need:
                        ok = False
                        break
                if ok:
                    elig[m] = k
                    m += 1
                    if rule == 0 and not many:
                        break  # first fit: the first node with room is the one
            if m == 0:
                continue
            if many:
                nchosen = _lexicographic_subset(sizes, elig, m, g, chosen)
                if nchosen == 0:
                    continue
            else:
                best = elig[0]
                if rule != 0 and m > 1:
                    best_delta = 0
                    best_room = -1
                    for e in range(m):
                        k = elig[e]
                        room = node_free[k, c]
                        delta = 0
                        for u in range(c, c + p):
                            f = node_free[k, u]
                            if f < room:
                                room = f
                            if rule == 2:
                                delta += frag[k, f - g] - frag[k, f]
                        room -= g
                        if best_room < 0 or (
                            (rule == 1 and room < best_room)
                            or (rule == 2 and (delta < best_delta
                                               or (delta == best_delta and room < best_room)))
                        ):
                            best, best_room, best_delta = k, room, delta
                chosen[0] = best
                nchosen = 1
            s = c
            break
        if s < 0:
            continue
        for u in range(s, s + p):
            free[u] -= g
        for e in range(nchosen):
            k = chosen[e]
            take = g if nchosen == 1 else sizes[k]
            for u in range(s, s + p):
                before = node_free[k, u]
                node_free[k, u] = before - take
                if before == sizes[k]:
                    whole[u] -= before  # no longer wholly free
                if before == maxfree[u]:
                    if nmax[u] > 1:  # another node still has that much
                        nmax[u] -= 1
                    else:
                        mx = 0
                        cm = 0
                        for q in range(K):
                            f = node_free[q, u]
                            if f > mx:
                                mx = f
                                cm = 1
                            elif f == mx:
                                cm += 1
                        maxfree[u] = mx
                        nmax[u] = cm
        start[j] = s
        for e in range(place.shape[1]):
            place[j, e] = chosen[e] if e < nchosen else -1
    return start
