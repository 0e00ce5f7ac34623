"""The serial list decoder compiled with numba (optional).

One call places a whole order on a :class:`heuristics.profile.Profile`'s
rows: for each job, a scan of its window that counts the consecutive slots
with room and stops at the first run of ``p``, then takes the GPUs. Plain
loops, compiled, so no per-job call overhead. With one node (a flat pool)
the pool row alone decides, as in :func:`heuristics.profile.fit`; with more,
the scan prunes by the summary rows and the nodes are tested only at the
starts that pass it (a kernel compiled for node sets of one word, up to 64
nodes, and one for any number). :func:`heuristics.decoder.serial_starts_numpy` is the
vectorized version it is held to, and what runs when numba is not installed.

Importing this module raises :class:`ImportError` when numba is missing;
:mod:`heuristics.decoder` imports it lazily (on first use) and falls back to
the numpy decoder then. ``cache=True`` keeps the machine code on disk, so
only the first process after an install pays the compilation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit

__all__ = [
    "WIDE", "check_order", "ctz", "lexicographic_subset", "serial_starts_compiled", "uncounted",
]

uncounted: Callable[[Any], Any] = njit(cache=True, nogil=True, _nrt=False)  # type: ignore[call-overload]
"""``njit`` without numba's reference counts (its private ``_nrt=False`` flag): for code that
allocates nothing, called once per job with many arrays (each counted on entry and exit
otherwise, two atomic operations apiece); heuristics/_shares_fit.py says where it pays."""

WIDE = 62
"""From this many GPUs on, :func:`lexicographic_subset` keeps its suffix sums in a table
(``reach``) rather than in one ``int64`` bit set per position."""


_DE_BRUIJN = 0x03F79D71B4CA8B09
_CTZ = np.zeros(64, dtype=np.int64)
for _i in range(64):
    _CTZ[((1 << _i) * _DE_BRUIJN % 2**64) >> 58] = _i


@njit(cache=True, nogil=True)
def ctz(x: np.uint64) -> int:  # pragma: no cover
    """The position of the lowest set bit of ``x`` (not 0), by a de Bruijn multiplication."""
    return _CTZ[((x & (~x + np.uint64(1))) * np.uint64(_DE_BRUIJN)) >> np.uint64(58)]  # type: ignore[no-any-return]


@njit(cache=True, nogil=True)
def lexicographic_subset(
    sizes: np.ndarray, elig: np.ndarray, m: int, g: int, out: np.ndarray, suffix: np.ndarray,
    reach: np.ndarray,
) -> int:  # pragma: no cover
    """Lexicographically smallest subset of ``elig[:m]`` whose ``sizes`` sum to ``g``.

    Writes the chosen node positions into ``out`` and returns their count
    (0 when no subset sums to ``g``). Suffix subset sums say whether a target
    is still reachable from a position on: one ``int64`` bit set per position
    (``suffix``, ``m + 1`` long) when ``g <`` :data:`WIDE`, else rows of ``reach``
    (``(m + 1, g + 1)`` or larger); both are scratch space the caller owns, so
    no call allocates.
    """
    wide = g >= WIDE
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


@njit(cache=True, nogil=True, inline="always")
def _job(i: int, jobs: np.ndarray, T: int) -> tuple[int, int, int, int, int]:  # pragma: no cover
    """Job ``i`` (``-n <= i < n``): its index, GPUs, duration, release and end by (at most ``T``)."""
    j = i + jobs.shape[1] if i < 0 else i
    return j, jobs[0, j], jobs[1, j], jobs[2, j], min(jobs[3, j], T)


@njit(cache=True, nogil=True, inline="always")
def _first_fit(rows: np.ndarray, r: int, g: int, p: int, t: int, hi: int) -> int:  # pragma: no cover
    """The earliest start ``s >= t`` with ``rows[r, s : s + p] >= g`` and ``s + p <= hi``, or ``-1``."""
    run = 0
    while t < hi:
        if rows[r, np.uint64(t)] >= g:  # (an unsigned index: no wraparound test)
            run += 1
        else:
            run = 0
        if run >= p:
            return t - p + 1
        t += 1
    return -1


@njit(cache=True, nogil=True)
def _recount(rows: np.ndarray, first: int, K: int, u: int | np.uint64, r_max: int | np.uint64,
             r_nmax: int | np.uint64) -> None:  # pragma: no cover
    """Set rows ``r_max`` (the most free on one node) and ``r_nmax`` (how many nodes have it) of
    slot ``u`` from the node rows ``first .. first + K - 1`` (the only node with the most lost
    some)."""
    mx = 0
    cm = 0
    for q in range(K):
        f = rows[first + q, u]
        if f > mx:
            mx = f
            cm = 1
        elif f == mx:
            cm += 1
    rows[r_max, u] = mx
    rows[r_nmax, u] = cm


@njit(cache=True, nogil=True, inline="always")
def check_order(order: np.ndarray, n: int) -> None:  # pragma: no cover
    """Raise IndexError unless every index of ``order`` is in ``[-n, n)`` (every decoder's test)."""
    for i in range(order.shape[0]):
        if order[i] < -n or order[i] >= n:
            raise IndexError("order: job index out of range")


@njit(cache=True, nogil=True)
def _one_node(
    rows: np.ndarray, order: np.ndarray, jobs: np.ndarray, start: np.ndarray, place: np.ndarray,
) -> np.ndarray:  # pragma: no cover
    """:func:`serial_starts_compiled` on one node, which never binds: the pool row decides."""
    T = rows.shape[1]
    record = place.shape[0] > 0
    for i in range(order.shape[0]):
        j, g, p, lo, hi = _job(order[i], jobs, T)
        if lo < 0 or hi - lo < p:
            continue
        s = _first_fit(rows, 0, g, p, lo, hi)
        if s >= 0:
            for t in range(s, s + p):
                rows[0, t] -= g
            start[j] = s
            if record:
                place[j, 0] = 0
                for e in range(1, place.shape[1]):
                    place[j, e] = -1
    return start


@njit(cache=True, nogil=True)
def serial_starts_compiled(
    rows: np.ndarray,
    sizes: np.ndarray,
    levels: np.ndarray,
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
    nodes unless ``place`` has no rows; ``start`` is returned. ``sizes``,
    ``levels`` and ``frag`` are the profile's (:class:`heuristics.profile.Profile`).

    Raises
    ------
    IndexError
        If ``order`` holds an index outside ``[-n, n)``.
    """
    check_order(order, jobs.shape[1])
    if sizes.shape[0] == 1:
        return _one_node(rows, order, jobs, start, place)
    if sizes.shape[0] <= 64:
        return _NODES_ONE_WORD(rows, sizes, levels, frag, rule, order, jobs, start, place)
    return _NODES(rows, sizes, levels, frag, rule, order, jobs, start, place)


def _node_kernel(one_word: bool) -> Any:
    """The kernel on several nodes, compiled with ``W = 1`` (at most 64 nodes) when ``one_word``.

    The node sets are words of 64 bits; with one word the loops over words
    go at compile time, and the kernel holds fewer values in registers.
    """

    @njit(cache=True, nogil=True)
    def _nodes(
        rows: np.ndarray, sizes: np.ndarray, levels: np.ndarray, frag: np.ndarray, rule: int,
        order: np.ndarray, jobs: np.ndarray, start: np.ndarray, place: np.ndarray,
    ) -> np.ndarray:  # pragma: no cover
        """:func:`serial_starts_compiled` on several nodes.

        The scan of one summary row (the pool's room bounded by ``maxfree`` for a
        one-node job, by ``whole`` for a multi-node one) finds the starts where
        the pool and some node have room. There the AND over the window of the
        level rows gives the nodes with room for the job as bits, and only those
        are scored, in node order: a node wholly free over the window without
        reading it, and only the first of its size (the others tie with it).
        A wholly free node's GPUs are taken without reading it either (each
        slot goes from its size to what is left).
        """
        K = sizes.shape[0]
        T = rows.shape[1]
        L = levels.shape[0]
        W = 1 if one_word else (K + 63) // 64  # (a constant in the one-word kernel)
        # rows: 0 the pool, 1 + k node k, then K + 1 maxfree, K + 2 nmax, K + 3 whole, K + 4 fit_one,
        # K + 5 fit_many (heuristics.profile.Profile.summaries), indexed in place (no views)
        r_max, r_nmax, r_whole = np.uint64(K + 1), np.uint64(K + 2), np.uint64(K + 3)
        r_one, r_many = np.uint64(K + 4), np.uint64(K + 5)
        base = K + 6  # rows[base + i * W + w]: word w of the nodes with levels[i] GPUs free or more
        largest = 0
        for k in range(K):
            largest = max(largest, sizes[k])
        floor = np.full(largest + 1, -1, dtype=np.int64)  # v: the index of the highest level <= v (or -1)
        for i in range(L):
            for v in range(levels[i], largest + 1):
                floor[v] = i
        one = np.uint64(1)
        of_size = np.zeros((L, W), dtype=np.uint64)  # level i: the nodes of that size, as bits
        for k in range(K):
            of_size[floor[sizes[k]], k >> 6] |= one << np.uint64(k & 63)
        zs = -1  # the level of the node size when all nodes have one size (the common case)
        for f in range(L):
            held = False
            for w in range(W):
                held |= of_size[f, w] != np.uint64(0)
            if held:
                zs = f if zs == -1 else -2
        one_size = zs >= 0
        zs = max(zs, 0)
        elig = np.empty(K, dtype=np.int64)
        chosen = np.empty(K, dtype=np.int64)
        suffix = np.empty(K + 1, dtype=np.int64)
        empty = np.empty(W, dtype=np.uint64)  # the nodes wholly free over a window
        cand = np.empty(W, dtype=np.uint64)  # the nodes a rule scores
        top = 0
        for i in range(order.shape[0]):
            g = jobs[0, order[i]]
            if g > largest and g > top:
                top = g
        reach = np.empty((K + 1, top + 1 if top >= WIDE else 1), dtype=np.bool_)
        record = place.shape[0] > 0
        for i in range(order.shape[0]):
            j, g, p, lo, hi = _job(order[i], jobs, T)
            if lo < 0 or hi - lo < p:
                continue
            many = g > largest
            s = -1
            nchosen = 0
            c = lo - 1
            while True:  # the starts with p slots where the pool and the nodes have room
                if many:
                    c = _first_fit(rows, K + 5, g, p, c + 1, hi)
                else:
                    c = _first_fit(rows, K + 4, g, p, c + 1, hi)
                if c < 0:
                    break
                # one pass over the window: the nodes wholly free over it (every job: the GPUs of such
                # a node are taken without reading it) and, for a one-node job, those with room for g
                e = -1 if many else floor[g]
                for w in range(W):
                    x = ~np.uint64(0) if w < K >> 6 else (one << np.uint64(K & 63)) - one
                    if one_size:
                        y = of_size[zs, w]
                        rz = np.uint64(base + zs * W + w)
                        if e < 0:
                            for t in range(c, c + p):
                                y &= np.uint64(rows[rz, np.uint64(t)])
                        else:
                            re = np.uint64(base + e * W + w)
                            for t in range(c, c + p):
                                u = np.uint64(t)
                                x &= np.uint64(rows[re, u])
                                y &= np.uint64(rows[rz, u])
                        empty[w] = y
                    else:
                        empty[w] = 0
                        for f in range(L):
                            y = of_size[f, w]
                            if y != np.uint64(0):
                                for t in range(c, c + p):
                                    y &= np.uint64(rows[base + f * W + w, t])
                                empty[w] |= y
                        if e >= 0:
                            for t in range(c, c + p):
                                x &= np.uint64(rows[base + e * W + w, t])
                    cand[w] = x
                if many:
                    # first the greedy: the wholly free nodes in order, each that still fits; when it
                    # reaches g exactly it is the lexicographically smallest subset (each node it
                    # takes completes, each it skips is too large), else the subset search decides
                    rest = g
                    m = 0
                    for w in range(W):
                        x = empty[w]
                        while x != np.uint64(0) and rest > 0:
                            k = w * 64 + ctz(x)
                            x &= x - one
                            if sizes[k] <= rest:
                                chosen[m] = k
                                m += 1
                                rest -= sizes[k]
                    if rest == 0:
                        nchosen = m
                    else:
                        m = 0
                        for w in range(W):
                            x = empty[w]
                            while x != np.uint64(0):
                                elig[m] = w * 64 + ctz(x)
                                m += 1
                                x &= x - one
                        if m == 0:
                            continue
                        nchosen = lexicographic_subset(sizes, elig, m, g, chosen, suffix, reach)
                        if nchosen == 0:
                            continue
                else:
                    # the nodes with room for g GPUs, or more when g is not a level (all nodes, each
                    # read, when it is below the lowest: not one of the instance's job sizes)
                    exact = e >= 0 and levels[e] == g
                    if rule > 0:
                        for w in range(W):
                            cand[w] &= ~empty[w]
                    if rule > 0:  # and of the wholly free nodes of size >= g, the first of each size
                        for f in range(e if exact else e + 1, L):
                            for w in range(W):
                                y = empty[w] & of_size[f, w]
                                if y != np.uint64(0):
                                    cand[w] |= y & (~y + one)
                                    break
                    best = -1
                    best_room = 0
                    best_delta = 0
                    stop = False
                    for w in range(W):  # the candidates in node order
                        x = cand[w]
                        while x != np.uint64(0) and not stop:
                            k = w * 64 + ctz(x)
                            x &= x - one
                            size = sizes[k]
                            room = size  # least free count over the window
                            delta = 0
                            if rule > 0 and (empty[w] >> np.uint64(k & 63)) & one:  # wholly free: not read
                                if rule == 2:
                                    delta = p * (frag[k, size - g] - frag[k, size])
                            elif rule > 0 or not exact:
                                rk = np.uint64(1 + k)
                                if rule == 2:  # (a slot with f < g drops the node: its term is not used)
                                    fk = np.uint64(k)
                                    for t in range(c, c + p):
                                        f = rows[rk, np.uint64(t)]
                                        room = min(room, f)
                                        delta += frag[fk, np.uint64(max(f - g, 0))] - frag[fk, np.uint64(f)]
                                else:
                                    for t in range(c, c + p):
                                        room = min(room, rows[rk, np.uint64(t)])
                                if room < g:
                                    continue  # (g not a level: a node with less room than it needs)
                            if best < 0 or (rule == 1 and room < best_room) or (
                                rule == 2 and (delta < best_delta or (delta == best_delta and room < best_room))
                            ):
                                best, best_room, best_delta = k, room, delta
                                # first-fit takes the first; best-fit stops at a node left with no room
                                stop = rule == 0 or (rule == 1 and room == g)
                        if stop:
                            break
                    if best < 0:
                        continue
                    chosen[0] = best
                    nchosen = 1
                s = c
                break
            if s < 0:
                continue
            for e in range(nchosen):  # take the GPUs, node by node, keeping the summaries branch-free
                k = chosen[e]
                size = sizes[k]
                take = g if nchosen == 1 else size
                nk = np.uint64(1 + k)
                last = e == nchosen - 1
                bitv = np.int64(1) << (k & 63)
                wrow = base + (k >> 6)
                if (empty[k >> 6] >> np.uint64(k & 63)) & one:  # wholly free: every slot goes size -> rest
                    rest = size - take
                    for t in range(s, s + p):
                        u = np.uint64(t)  # (unsigned indices: no wraparound tests)
                        rows[nk, u] = rest
                        rows[r_whole, u] -= size
                        left = rows[r_nmax, u] - (1 if rows[r_max, u] == size else 0)
                        rows[r_nmax, u] = left
                        if left == 0:
                            _recount(rows, 1, K, u, r_max, r_nmax)
                        if last:
                            pu = rows[0, u] - g
                            rows[0, u] = pu
                            rows[r_one, u] = min(pu, rows[r_max, u])
                            rows[r_many, u] = min(pu, rows[r_whole, u])
                    nbit = ~bitv
                    for f in range(floor[size], floor[rest], -1):  # the levels above rest, up to size
                        r = np.uint64(wrow + f * W)
                        for t in range(s, s + p):
                            rows[r, np.uint64(t)] &= nbit
                    continue
                hi_f = -1  # the highest level a slot of the window held before
                lo_a = size  # the least free after
                for t in range(s, s + p):
                    u = np.uint64(t)
                    before = rows[nk, u]
                    after = before - take
                    rows[nk, u] = after
                    rows[r_whole, u] -= size if before == size else 0  # no longer wholly free
                    left = rows[r_nmax, u] - (1 if before == rows[r_max, u] else 0)  # nodes with the most
                    rows[r_nmax, u] = left
                    if left == 0:  # it was the only node with the most free
                        _recount(rows, 1, K, u, r_max, r_nmax)
                    if last:  # the pool, and the rows the scan reads
                        pu = rows[0, u] - g
                        rows[0, u] = pu
                        rows[r_one, u] = min(pu, rows[r_max, u])
                        rows[r_many, u] = min(pu, rows[r_whole, u])
                    hi_f = max(hi_f, floor[before])
                    lo_a = min(lo_a, after)
                for f in range(hi_f, -1, -1):  # the levels a slot no longer holds
                    if levels[f] <= lo_a:
                        break
                    r = np.uint64(wrow + f * W)
                    lv = levels[f]
                    for t in range(s, s + p):
                        u = np.uint64(t)
                        rows[r, u] &= ~(bitv & -np.int64(lv > rows[nk, u]))
            start[j] = s
            if record:
                for e in range(place.shape[1]):
                    place[j, e] = chosen[e] if e < nchosen else -1
        return start

    return _nodes


_NODES_ONE_WORD = _node_kernel(True)
_NODES = _node_kernel(False)
