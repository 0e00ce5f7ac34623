"""The serial list decoder compiled with numba (optional).

One call places a whole order on a :class:`heuristics.profile.Profile`'s
rows: for each job, a scan of its window that counts the consecutive slots
with room and stops at the first run of ``p``, then takes the GPUs. Plain
loops, compiled, so no per-job call overhead. With one node (a flat pool)
the pool row alone decides, as in :func:`heuristics.profile.fit`; with more,
the scan prunes by the summary rows and the nodes are tested only at the
starts that pass it. :func:`heuristics.decoder.serial_starts_numpy` is the
vectorized version it is held to, and what runs when numba is not installed.

Importing this module raises :class:`ImportError` when numba is missing;
:mod:`heuristics.decoder` imports it lazily (on first use) and falls back to
the numpy decoder then. ``cache=True`` keeps the machine code on disk, so
only the first process after an install pays the compilation.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["serial_starts_compiled"]


@njit(cache=True, nogil=True)
def _lexicographic_subset(
    sizes: np.ndarray, elig: np.ndarray, m: int, g: int, out: np.ndarray, suffix: np.ndarray,
    reach: np.ndarray,
) -> int:  # pragma: no cover
    """Lexicographically smallest subset of ``elig[:m]`` whose ``sizes`` sum to ``g``.

    Writes the chosen node positions into ``out`` and returns their count
    (0 when no subset sums to ``g``). Suffix subset sums say whether a target
    is still reachable from a position on: one ``int64`` bit set per position
    (``suffix``, ``m + 1`` long) when ``g < 62``, else rows of ``reach``
    (``(m + 1, g + 1)`` or larger); both are scratch space the caller owns, so
    no call allocates.
    """
    wide = g >= 62
    if wide:
        for v in range(g + 1):
            reach[m, v] = v == 0
        for i in range(m - 1, -1, -1):
            a = sizes[elig[i]]
            for v in range(g + 1):
                reach[i, v] = reach[i + 1, v] or (v >= a and reach[i + 1, v - a])
        if not reach[0, g]:
            return 0
    else:
        mask = (np.int64(1) << (g + 1)) - 1
        suffix[m] = 1
        for i in range(m - 1, -1, -1):
            suffix[i] = (suffix[i + 1] | (suffix[i + 1] << sizes[elig[i]])) & mask
        if not (suffix[0] >> g) & 1:
            return 0
    rest = g
    c = 0
    for i in range(m):
        if rest == 0:
            break
        a = sizes[elig[i]]
        if a <= rest and (reach[i + 1, rest - a] if wide else (suffix[i + 1] >> (rest - a)) & 1):
            out[c] = elig[i]
            c += 1
            rest -= a
    return c


@njit(cache=True, nogil=True)
def _one_node(rows: np.ndarray, g: int, p: int, lo: int, hi: int) -> int:  # pragma: no cover
    """Earliest start of ``g`` GPUs for ``p`` slots in ``[lo, hi)`` on one node, taken; or ``-1``.

    The node never binds (its capacity is at least the pool's and both lose
    the same GPUs), so the scan reads the pool row alone.
    """
    pool = rows[0]
    run = 0
    for t in range(lo, hi):
        if pool[t] >= g:
            run += 1
            if run >= p:
                s = t - p + 1
                node = rows[1]
                for u in range(s, s + p):
                    pool[u] -= g
                    node[u] -= g
                return s
        else:
            run = 0
    return -1


@njit(cache=True, nogil=True)
def serial_starts_compiled(
    rows: np.ndarray,
    sizes: np.ndarray,
    frag: np.ndarray,
    rule: int,
    order: np.ndarray,
    jobs: np.ndarray,
    start: np.ndarray,
    place: np.ndarray,
) -> np.ndarray:  # pragma: no cover (compiled; tested through its results)
    """Serial schedule generation over ``order`` on a profile's ``rows`` (all arrays ``int64``).

    Job ``j`` (``jobs`` rows: GPUs, duration, release, end-by) starts at the
    earliest ``s`` in ``[rel[j], min(dl[j], T) - p]`` from which it has a
    valid placement for its whole run and the pool has room; the rule
    ``rule`` (0 first-fit, 1 best-fit, 2 frag) picks the node of a one-node
    job, a multi-node job takes the lexicographically smallest set of wholly
    free nodes. A job that fits nowhere keeps ``start[j]``. ``rows`` and
    ``start`` are updated in place, and row ``j`` of ``place`` receives the
    nodes unless ``place`` has no rows; ``start`` is returned.

    With several nodes a scan over the slots, as tight as the one-node scan,
    keeps the run of slots where the pool and ``maxfree`` (one node) or
    ``whole`` (whole nodes) have room, and the nodes are tested only at the
    starts that pass it: one pass over each node's window gives both whether
    it fits and its least free count (best-fit stops at a node left with no
    room, which no later node beats). ``nmax`` spares most recomputations of
    the maximum.

    Raises
    ------
    IndexError
        If ``order`` holds an index outside ``[-n, n)``.
    """
    K = sizes.shape[0]
    T = rows.shape[1]
    n = jobs.shape[1]
    for i in range(order.shape[0]):
        if order[i] < -n or order[i] >= n:
            raise IndexError("order: job index out of range")
    record = place.shape[0] > 0
    if K == 1:
        for i in range(order.shape[0]):
            j = order[i] + n if order[i] < 0 else order[i]
            p = jobs[1, j]
            lo = jobs[2, j]
            hi = min(jobs[3, j], T)
            if lo < 0 or hi - lo < p:
                continue
            s = _one_node(rows, jobs[0, j], p, lo, hi)
            if s >= 0:
                start[j] = s
                if record:
                    place[j, 0] = 0
                    for e in range(1, place.shape[1]):
                        place[j, e] = -1
        return start
    pool = rows[0]
    node_free = rows[1 : K + 1]
    maxfree = rows[K + 1]
    nmax = rows[K + 2]
    whole = rows[K + 3]
    largest = 0
    for k in range(K):
        largest = max(largest, sizes[k])
    elig = np.empty(K, dtype=np.int64)
    chosen = np.empty(K, dtype=np.int64)
    suffix = np.empty(K + 1, dtype=np.int64)
    top = 0
    for i in range(order.shape[0]):
        g = jobs[0, order[i]]
        if g > largest and g > top:
            top = g
    reach = np.empty((K + 1, top + 1 if top >= 62 else 1), dtype=np.bool_)
    for i in range(order.shape[0]):
        j = order[i] + n if order[i] < 0 else order[i]
        g = jobs[0, j]
        p = jobs[1, j]
        lo = jobs[2, j]
        hi = min(jobs[3, j], T)
        if lo < 0 or hi - lo < p:
            continue
        many = g > largest
        s = -1
        nchosen = 0
        run = 0
        t = lo
        while t < hi:
            # the next start with a run of p slots where the pool and the nodes have room;
            # the arrays are indexed by name in each branch (an array chosen into a variable
            # per job made this loop several times slower)
            c = -1
            while t < hi:
                if many:
                    if pool[t] >= g and whole[t] >= g:
                        run += 1
                    else:
                        run = 0
                elif pool[t] >= g and maxfree[t] >= g:
                    run += 1
                else:
                    run = 0
                if run >= p:
                    c = t - p + 1
                    break
                t += 1
            if c < 0:
                break
            t += 1
            if many:
                m = 0
                for k in range(K):
                    ok = True
                    for u in range(c, c + p):
                        if node_free[k, u] < sizes[k]:
                            ok = False
                            break
                    if ok:
                        elig[m] = k
                        m += 1
                if m == 0:
                    continue
                nchosen = _lexicographic_subset(sizes, elig, m, g, chosen, suffix, reach)
                if nchosen == 0:
                    continue
            else:
                best = -1
                best_room = 0
                best_delta = 0
                for k in range(K):
                    if sizes[k] < g:
                        continue
                    room = sizes[k]  # least free count over the window
                    delta = 0
                    ok = True
                    for u in range(c, c + p):
                        f = node_free[k, u]
                        if f < g:
                            ok = False
                            break
                        if f < room:
                            room = f
                        if rule == 2:
                            delta += frag[k, f - g] - frag[k, f]
                    if not ok:
                        continue
                    if rule == 0:
                        best = k
                        break
                    if best < 0 or (rule == 1 and room < best_room) or (
                        rule == 2 and (delta < best_delta or (delta == best_delta and room < best_room))
                    ):
                        best, best_room, best_delta = k, room, delta
                        if rule == 1 and room == g:
                            break  # no room left: no later node leaves less, ties go to the first
                if best < 0:
                    continue
                chosen[0] = best
                nchosen = 1
            s = c
            break
        if s < 0:
            continue
        for u in range(s, s + p):
            pool[u] -= g
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
        if record:
            for e in range(place.shape[1]):
                place[j, e] = chosen[e] if e < nchosen else -1
    return start
