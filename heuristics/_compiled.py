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
from typing import Any, NamedTuple

import numpy as np
from numba import njit

__all__ = [
    "WIDE", "check_order", "ctz", "lexicographic_subset", "parallel_one_node",
    "serial_starts_compiled", "uncounted",
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
def parallel_one_node(
    rows: np.ndarray, order: np.ndarray, jobs: np.ndarray, start: np.ndarray, place: np.ndarray,
) -> np.ndarray:  # pragma: no cover (compiled; tested through its results)
    """The parallel scheme on one node (the pool row decides), in one call.

    At each slot ``t`` the jobs released by ``t``, not started, whose last start
    ``min(D_j, T) - p_j`` is not past, are scanned in ``order``; each one with
    ``rows[0, t : t + p] >= g`` starts at ``t`` (:func:`heuristics.profile.start_now`
    at every slot). The queue is kept in order positions, merged with each slot's
    releases; the window minima from ``t`` (``cm[k] = min rows[0, t .. t + k]``) are
    extended as the candidates need them and lowered by each start.
    """
    check_order(order, jobs.shape[1])
    T, n = rows.shape[1], order.shape[0]
    record = place.shape[0] > 0
    pos_by_release = np.argsort(jobs[2][order], kind="mergesort")
    queue = np.empty(n, dtype=np.int64)  # order positions, ascending
    merged = np.empty(n, dtype=np.int64)
    cm = np.empty(T, dtype=np.int64)
    size = 0
    nxt = 0
    for t in range(T):
        first = nxt
        while nxt < n and jobs[2, order[pos_by_release[nxt]]] <= t:
            nxt += 1
        if nxt > first:  # merge the slot's releases (in order positions) into the queue
            new = np.sort(pos_by_release[first:nxt])
            a = b = m = 0
            while a < size or b < new.shape[0]:
                if b == new.shape[0] or (a < size and queue[a] < new[b]):
                    merged[m] = queue[a]
                    a += 1
                else:
                    merged[m] = new[b]
                    b += 1
                m += 1
            queue[:m] = merged[:m]
            size = m
        known = 0
        kept = 0
        for a in range(size):
            j, g, p, _, hi = _job(order[queue[a]], jobs, T)
            if hi - p < t or start[j] >= 0:
                continue  # its last start has passed (or it ran): out of the queue for good
            while known < p:
                v = rows[0, t + known]
                cm[known] = v if known == 0 or v < cm[known - 1] else cm[known - 1]
                known += 1
            if cm[p - 1] < g:
                queue[kept] = queue[a]
                kept += 1
                continue
            for u in range(t, t + p):
                rows[0, u] -= g
            for k in range(p):  # every slot of the window lost g: its minima too
                cm[k] -= g
            known = p  # (beyond it, recomputed from cm[p - 1] and the row)
            start[j] = t
            if record:
                place[j, 0] = 0
                for e in range(1, place.shape[1]):
                    place[j, e] = -1
        size = kept
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


# The rows of a profile on K nodes (heuristics.profile.Profile.summaries): 0 the pool, 1 + k node
# k, then the summary rows below (past K), then from K + _LEVELS on the level rows: row
# K + _LEVELS + i * W + w is word w of the nodes with levels[i] GPUs free or more. Rows are
# indexed in place (a view costs reference counts), by unsigned indices where a slot is read
# (no wraparound tests).
_MAX, _NMAX, _WHOLE, _ONE, _MANY, _LEVELS = 1, 2, 3, 4, 5, 6
"""Past ``K``: the most free on one node, how many nodes have it, the GPUs of the wholly free
nodes, the pool bounded by the first (the scan of a one-node job) and by the third (of a
multi-node job), the first level row."""


class NodeTables(NamedTuple):
    """What the kernel on several nodes reads beside the rows, built once per call
    (:func:`_node_tables`; numba compiles a ``NamedTuple`` as the plain tuple it is)."""

    sizes: np.ndarray
    """``(K,)``: each node's GPUs."""
    levels: np.ndarray
    """``(L,)`` ascending: the free counts of the level rows."""
    frag: np.ndarray
    """``(K, largest + 1)``: the profile's fragmentation table (the ``frag`` rule)."""
    floor: np.ndarray
    """``(largest + 1,)``: ``v`` -> the index of the highest level ``<= v`` (or -1)."""
    of_size: np.ndarray
    """``(L, W)`` uint64: per level, the nodes whose size is at that level, as bits."""
    same: int
    """The level of the node size when all nodes have one size (the common case), else -1."""


class NodeWork(NamedTuple):
    """The kernel's scratch on several nodes, allocated once per call (:func:`_node_work`): the
    loop over the jobs allocates nothing."""

    empty: np.ndarray
    """``(W,)`` uint64: the nodes wholly free over the window tried."""
    cand: np.ndarray
    """``(W,)`` uint64: the nodes a rule scores there."""
    chosen: np.ndarray
    """``(K,)``: the nodes the job takes."""
    elig: np.ndarray
    """``(K,)``: the wholly free nodes the subset search chooses among."""
    suffix: np.ndarray
    """``(K + 1,)``: :func:`lexicographic_subset`'s bit sets."""
    reach: np.ndarray
    """``(K + 1, top + 1)`` bool (``top``: the most GPUs a job on whole nodes asks, from
    :data:`WIDE` on; else one column): :func:`lexicographic_subset`'s table."""


@njit(cache=True, nogil=True)
def _node_tables(sizes: np.ndarray, levels: np.ndarray, frag: np.ndarray, W: int
                 ) -> NodeTables:  # pragma: no cover
    """The :class:`NodeTables` of a profile's nodes, node sets in ``W`` words."""
    K = sizes.shape[0]
    L = levels.shape[0]
    largest = 0
    for k in range(K):
        largest = max(largest, sizes[k])
    floor = np.full(largest + 1, -1, dtype=np.int64)
    for i in range(L):
        for v in range(levels[i], largest + 1):
            floor[v] = i
    one = np.uint64(1)
    of_size = np.zeros((L, W), dtype=np.uint64)
    for k in range(K):
        of_size[floor[sizes[k]], k >> 6] |= one << np.uint64(k & 63)
    same = -1  # (-2: more than one level holds nodes)
    for f in range(L):
        held = False
        for w in range(W):
            held |= of_size[f, w] != np.uint64(0)
        if held:
            same = f if same == -1 else -2
    return NodeTables(sizes, levels, frag, floor, of_size, max(same, -1))


@njit(cache=True, nogil=True)
def _node_work(K: int, W: int, largest: int, order: np.ndarray, jobs: np.ndarray
               ) -> NodeWork:  # pragma: no cover
    """The :class:`NodeWork` for ``order`` on ``K`` nodes (the largest of ``largest`` GPUs)."""
    top = 0  # the most GPUs a job of the order on whole nodes asks
    for i in range(order.shape[0]):
        g = jobs[0, order[i]]
        if g > largest and g > top:
            top = g
    return NodeWork(np.empty(W, dtype=np.uint64), np.empty(W, dtype=np.uint64),
                    np.empty(K, dtype=np.int64), np.empty(K, dtype=np.int64),
                    np.empty(K + 1, dtype=np.int64),
                    np.empty((K + 1, top + 1 if top >= WIDE else 1), dtype=np.bool_))


@njit(cache=True, nogil=True, inline="always")
def _window(rows: np.ndarray, nt: NodeTables, work: NodeWork, W: int, e: int, c: int,
            p: int) -> None:  # pragma: no cover
    """One pass over the window ``c .. c + p - 1`` by the level rows: the nodes wholly free over
    it into ``work.empty`` (every job: such a node's GPUs are taken without reading it) and,
    for a one-node job (level ``e >= 0``), those with that level free throughout into
    ``work.cand`` (every node when ``e < 0``)."""
    K = nt.sizes.shape[0]
    L = nt.levels.shape[0]
    base = K + _LEVELS
    one = np.uint64(1)
    zs = nt.same
    empty, cand, of_size = work.empty, work.cand, nt.of_size
    for w in range(W):
        x = ~np.uint64(0) if w < K >> 6 else (one << np.uint64(K & 63)) - one
        if zs >= 0:
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


@njit(cache=True, nogil=True, inline="always")
def _whole_set(sizes: np.ndarray, work: NodeWork, W: int, g: int) -> int:  # pragma: no cover
    """The lexicographically smallest set of the wholly free nodes (``work.empty``) summing to
    ``g`` GPUs into ``work.chosen``; its size (0: none).

    First the greedy: the wholly free nodes in order, each that still fits; when it reaches
    ``g`` exactly it is that set (each node it takes completes, each it skips is too large),
    else :func:`lexicographic_subset` decides."""
    one = np.uint64(1)
    empty, chosen, elig = work.empty, work.chosen, work.elig
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
        return m
    m = 0
    for w in range(W):
        x = empty[w]
        while x != np.uint64(0):
            elig[m] = w * 64 + ctz(x)
            m += 1
            x &= x - one
    if m == 0:
        return 0
    return lexicographic_subset(sizes, elig, m, g, chosen, work.suffix, work.reach)


@njit(cache=True, nogil=True, inline="always")
def _rule_candidates(nt: NodeTables, work: NodeWork, W: int, e: int, exact: bool
                     ) -> None:  # pragma: no cover
    """For best-fit and frag: of the wholly free nodes only the first of each size scores (the
    others tie with it), among the sizes from level ``e`` on (past it unless ``exact``)."""
    one = np.uint64(1)
    empty, cand, of_size = work.empty, work.cand, nt.of_size
    for w in range(W):
        cand[w] &= ~empty[w]
    for f in range(e if exact else e + 1, nt.levels.shape[0]):
        for w in range(W):
            y = empty[w] & of_size[f, w]
            if y != np.uint64(0):
                cand[w] |= y & (~y + one)
                break


@njit(cache=True, nogil=True, inline="always")
def _score(rows: np.ndarray, nt: NodeTables, rule: int, k: int, free: bool, exact: bool, g: int,
           c: int, p: int) -> tuple[int, int]:  # pragma: no cover
    """Node ``k`` for ``g`` GPUs over ``c .. c + p - 1``: its least free count and
    (frag) the growth of its fragmentation. A wholly free node (``free``) is not read, nor a
    node at the job's exact level under first-fit. A room below ``g`` (``g`` not a level)
    rules the node out."""
    frag = nt.frag
    size = nt.sizes[k]
    room = size
    delta = 0
    if rule > 0 and free:
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
    return room, delta


@njit(cache=True, nogil=True, inline="always")
def _best_node(rows: np.ndarray, nt: NodeTables, work: NodeWork, W: int, rule: int, e: int,
               g: int, c: int, p: int) -> int:  # pragma: no cover
    """The node ``rule`` (0 first-fit, 1 best-fit, 2 frag) gives a one-node job of ``g`` GPUs
    at level ``e`` over ``c .. c + p - 1`` (after :func:`_window`), or -1.

    The nodes with room for ``g`` GPUs, or more when ``g`` is not a level (all nodes, each
    read, when it is below the lowest: not one of the instance's job sizes), are scored in
    node order: first-fit takes the first, best-fit stops at a node left with no room."""
    one = np.uint64(1)
    exact = e >= 0 and nt.levels[e] == g
    if rule > 0:
        _rule_candidates(nt, work, W, e, exact)
    empty, cand = work.empty, work.cand
    best = -1
    best_room = 0
    best_delta = 0
    for w in range(W):
        x = cand[w]
        while x != np.uint64(0):
            k = w * 64 + ctz(x)
            x &= x - one
            free = rule > 0 and (empty[w] >> np.uint64(k & 63)) & one != np.uint64(0)
            room, delta = _score(rows, nt, rule, k, free, exact, g, c, p)
            if room < g:
                continue
            if best < 0 or (rule == 1 and room < best_room) or (
                rule == 2 and (delta < best_delta or (delta == best_delta and room < best_room))
            ):
                best, best_room, best_delta = k, room, delta
                if rule == 0 or (rule == 1 and room == g):
                    return best
    return best


@njit(cache=True, nogil=True, inline="always")
def _fit(rows: np.ndarray, nt: NodeTables, work: NodeWork, W: int, rule: int, g: int, p: int,
         lo: int, hi: int) -> tuple[int, int]:  # pragma: no cover
    """The earliest start in ``[lo, hi - p]`` with a placement of ``g`` GPUs for ``p`` slots,
    and the number of nodes it takes (into ``work.chosen``); ``(-1, 0)`` when none.

    The scan of one summary row (the pool's room bounded by the most free on one node for a
    one-node job, by the wholly free nodes' GPUs for a multi-node one) finds the starts where
    the pool and some node have room; only there are the nodes tested."""
    K = nt.sizes.shape[0]
    many = g > nt.floor.shape[0] - 1  # (more than the largest node)
    e = -1 if many else nt.floor[g]
    c = lo - 1
    while True:
        if many:
            c = _first_fit(rows, K + _MANY, g, p, c + 1, hi)
        else:
            c = _first_fit(rows, K + _ONE, g, p, c + 1, hi)
        if c < 0:
            return -1, 0
        _window(rows, nt, work, W, e, c, p)
        if many:
            m = _whole_set(nt.sizes, work, W, g)
            if m > 0:
                return c, m
        else:
            best = _best_node(rows, nt, work, W, rule, e, g, c, p)
            if best >= 0:
                work.chosen[0] = best
                return c, 1


@njit(cache=True, nogil=True, inline="always")
def _slot_taken(rows: np.ndarray, K: int, u: np.uint64, before: int, size: int, g: int,
                last: bool) -> None:  # pragma: no cover
    """The summary rows of slot ``u`` once a node of ``size`` GPUs went down from ``before``
    free (its row already written); with ``last`` (the job's last node) the pool's ``g``
    GPUs and the rows the scan reads too."""
    r_max, r_nmax, r_whole = np.uint64(K + _MAX), np.uint64(K + _NMAX), np.uint64(K + _WHOLE)
    rows[r_whole, u] -= size if before == size else 0  # no longer wholly free
    left = rows[r_nmax, u] - (1 if before == rows[r_max, u] else 0)  # nodes with the most
    rows[r_nmax, u] = left
    if left == 0:  # it was the only node with the most free
        _recount(rows, 1, K, u, r_max, r_nmax)
    if last:
        pu = rows[0, u] - g
        rows[0, u] = pu
        rows[np.uint64(K + _ONE), u] = min(pu, rows[r_max, u])
        rows[np.uint64(K + _MANY), u] = min(pu, rows[np.uint64(K + _WHOLE), u])


@njit(cache=True, nogil=True, inline="always")
def _take_free(rows: np.ndarray, nt: NodeTables, W: int, k: int, take: int, g: int, s: int,
               p: int, last: bool) -> None:  # pragma: no cover
    """``take`` GPUs of node ``k``, wholly free over ``s .. s + p - 1``: every slot goes from its
    size to what is left, without reading it, and the levels above that lose the node."""
    K = nt.sizes.shape[0]
    size = nt.sizes[k]
    rest = size - take
    nk = np.uint64(1 + k)
    for t in range(s, s + p):
        u = np.uint64(t)
        rows[nk, u] = rest
        _slot_taken(rows, K, u, size, size, g, last)
    nbit = ~(np.int64(1) << (k & 63))
    wrow = K + _LEVELS + (k >> 6)
    floor = nt.floor
    for f in range(floor[size], floor[rest], -1):  # the levels above rest, up to size
        r = np.uint64(wrow + f * W)
        for t in range(s, s + p):
            rows[r, np.uint64(t)] &= nbit


@njit(cache=True, nogil=True, inline="always")
def _take_used(rows: np.ndarray, nt: NodeTables, W: int, k: int, take: int, g: int, s: int,
               p: int, last: bool) -> None:  # pragma: no cover
    """``take`` GPUs of node ``k`` over ``s .. s + p - 1``, slot by slot, and the levels a slot
    no longer holds lose the node there."""
    K = nt.sizes.shape[0]
    size = nt.sizes[k]
    nk = np.uint64(1 + k)
    floor, levels = nt.floor, nt.levels
    hi_f = -1  # the highest level a slot of the window held before
    lo_a = size  # the least free after
    for t in range(s, s + p):
        u = np.uint64(t)
        before = rows[nk, u]
        after = before - take
        rows[nk, u] = after
        _slot_taken(rows, K, u, before, size, g, last)
        hi_f = max(hi_f, floor[before])
        lo_a = min(lo_a, after)
    bitv = np.int64(1) << (k & 63)
    wrow = K + _LEVELS + (k >> 6)
    for f in range(hi_f, -1, -1):
        if levels[f] <= lo_a:
            break
        r = np.uint64(wrow + f * W)
        lv = levels[f]
        for t in range(s, s + p):
            u = np.uint64(t)
            rows[r, u] &= ~(bitv & -np.int64(lv > rows[nk, u]))


@njit(cache=True, nogil=True, inline="always")
def _take(rows: np.ndarray, nt: NodeTables, work: NodeWork, W: int, g: int, s: int, p: int,
          m: int) -> None:  # pragma: no cover
    """The job's ``g`` GPUs over ``s .. s + p - 1`` on its ``m`` nodes (``work.chosen``; all
    of each when more than one), node by node, keeping the summaries branch-free."""
    one = np.uint64(1)
    for e in range(m):
        k = work.chosen[e]
        take = g if m == 1 else nt.sizes[k]
        if (work.empty[k >> 6] >> np.uint64(k & 63)) & one:
            _take_free(rows, nt, W, k, take, g, s, p, e == m - 1)
        else:
            _take_used(rows, nt, W, k, take, g, s, p, e == m - 1)


def _node_kernel(one_word: bool) -> Any:
    """:func:`serial_starts_compiled` on several nodes, compiled with ``W = 1`` (at most 64
    nodes) when ``one_word``.

    The node sets are words of 64 bits; with one word the loops over words go at compile
    time (the steps are inlined), and the kernel holds fewer values in registers. Per job:
    the starts the summary rows allow (:func:`_fit`), there the AND over the window of the
    level rows (:func:`_window`), the choice of nodes (:func:`_best_node`,
    :func:`_whole_set`), then the take (:func:`_take`).
    """

    @uncounted
    def loop(rows: np.ndarray, nt: NodeTables, work: NodeWork, rule: int, order: np.ndarray,
             jobs: np.ndarray, start: np.ndarray, place: np.ndarray) -> None:  # pragma: no cover
        """The jobs one by one, the steps inlined (no reference counts here)."""
        W = 1 if one_word else (nt.sizes.shape[0] + 63) // 64  # (a constant in one word)
        T = rows.shape[1]
        record = place.shape[0] > 0
        for i in range(order.shape[0]):
            j, g, p, lo, hi = _job(order[i], jobs, T)
            if lo < 0 or hi - lo < p:
                continue
            s, m = _fit(rows, nt, work, W, rule, g, p, lo, hi)
            if s < 0:
                continue
            _take(rows, nt, work, W, g, s, p, m)
            start[j] = s
            if record:
                for e in range(place.shape[1]):
                    place[j, e] = work.chosen[e] if e < m else -1

    @njit(cache=True, nogil=True)
    def nodes(rows: np.ndarray, sizes: np.ndarray, levels: np.ndarray, frag: np.ndarray,
              rule: int, order: np.ndarray, jobs: np.ndarray, start: np.ndarray,
              place: np.ndarray) -> np.ndarray:  # pragma: no cover
        """:func:`serial_starts_compiled` on several nodes: the tables and scratch, the loop."""
        W = 1 if one_word else (sizes.shape[0] + 63) // 64
        nt = _node_tables(sizes, levels, frag, W)
        work = _node_work(sizes.shape[0], W, nt.floor.shape[0] - 1, order, jobs)
        loop(rows, nt, work, rule, order, jobs, start, place)
        return start

    return nodes


_NODES_ONE_WORD = _node_kernel(True)
_NODES = _node_kernel(False)
