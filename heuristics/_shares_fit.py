"""The compiled fit of model version 3 (shared GPUs, models, CPU, memory): where a job may start.

:func:`find` gives the earliest start with a valid placement of a job on the
state (:mod:`heuristics._shares_state`: the rows, and the instance's arrays)
and the placement there, by the kernel's own rules (first-fit, best-fit,
frag). The node and level rows summarise the GPU rows: a start is tried only
where the level rows name an eligible node at every slot, a node only where
its own rows allow it for the whole run (:func:`node_fail`), and then its
GPUs are read (:func:`read_gpus`). ``tests/oracles/reference_v3.py`` is the
plain version these are held to; the policy rules
(:mod:`heuristics._shares_rules`) score the nodes at the start found here.

The search here and the occupy (:mod:`heuristics._shares_take`) are inlined
into the decoders' per-job loops (:mod:`heuristics._shares_decode`), which
are compiled without numba's reference counts
(:func:`~heuristics._compiled.uncounted`): a function inlined into a counted
loop, or called with the state's tuple of arrays, counts a reference to each
array on entry and exit, two atomic operations per array per job (nearly half
of a first-fit pass, docs/resources-heuristics.md). So nothing here
allocates; the scratch (:func:`new_scratch`) and the arrays read outlive the
loop.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from instances.packing.frag import moved_frag, node_frag_shapes

from ._compiled import WIDE, ctz, lexicographic_subset
from ._shares_state import FULL, SharesArrays, counts_of, layout
from .packing.scores import equal_earlier

__all__ = [
    "find", "host_fail", "lowest_free", "new_scratch", "node_fail", "read_gpus", "repeat_of_class",
]

UNREAD = 2**62  # (a room best-fit has not read, or has ruled out)


@njit(cache=True, nogil=True)
def _scan(rows: np.ndarray, C: int, info: np.ndarray, kind: int, lev: int, g: int, p: int,
          c: int, hi: int, elig: np.ndarray, j: int) -> int:  # pragma: no cover
    """Earliest ``s >= c``, ``s + p <= hi``, where at every slot the pool has room and some node
    job ``j`` may use (``elig[j]``, as words) has the job's level (kind 0: ``g`` wholly free
    GPUs; 1: a partly used GPU with room for the share, or a wholly free GPU where the pool has
    one; 2: the wholly free nodes' GPUs, the cluster row ``C``, at least ``g``). Arrays are
    indexed in place, never sliced: a view costs two atomic reference counts."""
    BB, LW, W = info[0], info[1], info[3]
    row = BB + (lev if kind == 0 else LW + lev) * W
    run = 0
    t = c
    while t < hi:
        if kind == 2:
            ok = rows[0, t] >= g and rows[C, t] >= g
        else:
            ok = False
            if kind == 1 or rows[0, t] >= g:
                free = kind == 1 and rows[0, t] >= 1
                for w in range(W):
                    x = rows[row + w, t]
                    if free:
                        x |= rows[BB + w, t]  # (whole-GPU level 0 is 1 GPU)
                    if x & elig[j, w] != 0:
                        ok = True
                        break
        run = run + 1 if ok else 0
        if run >= p:
            return t - p + 1
        t += 1
    return -1


@njit(cache=True, nogil=True, inline="always")
def _candidates(rows: np.ndarray, info: np.ndarray, kind: int, lev: int, c: int, p: int,
                elig: np.ndarray, j: int, acc: np.ndarray, visit: np.ndarray) -> tuple[int, int]:
    # pragma: no cover
    """The nodes (ascending, into ``visit``) the level rows let a one-node job in over
    ``c .. c+p-1`` (level ``lev``; a share also on a wholly free GPU where the pool has one),
    their number, and the next start to try. ANDed from the window's end back: when no node
    is left at slot ``u``, no start up to ``u`` fits, so ``(0, u + 1)``."""
    BB, LW, W = info[0], info[1], info[3]
    row = BB + (lev if kind == 0 else LW + lev) * W
    for w in range(W):
        acc[w] = elig[j, w]
    for u in range(c + p - 1, c - 1, -1):
        left = np.int64(0)
        for w in range(W):
            x = rows[row + w, u]
            if kind == 1 and rows[0, u] >= 1:
                x |= rows[BB + w, u]  # (whole-GPU level 0 is 1 GPU)
            acc[w] &= x
            left |= acc[w]
        if left == 0:
            return 0, u + 1
    nv = 0
    one = np.uint64(1)
    for w in range(W):
        x = np.uint64(acc[w])
        while x != np.uint64(0):
            visit[nv] = w * 64 + ctz(x)
            nv += 1
            x &= x - one
    return nv, c + 1


@njit(cache=True, nogil=True)
def node_fail(rows: np.ndarray, K: int, k: int, c: int, p: int, whole: bool, g: int, m: int,
               cj: int, mj: int) -> int:  # pragma: no cover
    """The first slot of ``c .. c+p-1`` where node ``k``'s rows refuse the job, or ``-1``."""
    gpus = -1
    for u in range(c, c + p):
        if whole:
            if rows[1 + k, u] < g:
                gpus = u
                break
        elif rows[1 + K + k, u] < m and (rows[1 + k, u] < 1 or rows[0, u] < 1):
            gpus = u
            break
    host = host_fail(rows, K, k, c, p if gpus < 0 else gpus - c, cj, mj)  # (before ``gpus``)
    return host if host >= 0 else gpus


@njit(cache=True, nogil=True, inline="always")
def host_fail(rows: np.ndarray, K: int, k: int, c: int, p: int, cj: int, mj: int) -> int:
    # pragma: no cover
    """The first slot of ``c .. c+p-1`` where node ``k`` lacks the job's CPU or memory, or
    ``-1``: all :func:`node_fail` asks of a node the level rows let in (they say the GPUs)."""
    if cj <= 0 and mj <= 0:
        return -1
    for u in range(c, c + p):
        if rows[1 + 2 * K + k, u] < cj or rows[1 + 3 * K + k, u] < mj:
            return u
    return -1


@njit(cache=True, nogil=True)
def read_gpus(rows: np.ndarray, r0: int, ng: int, c: int, p: int, m: int, every: bool,
               gmin: np.ndarray, ok: np.ndarray, enough: int) -> int:  # pragma: no cover
    """Per GPU of a node (rows ``r0 ..``): its least free milli over the run and whether the job
    may take it (whole: free throughout; shared: room for ``m`` throughout, the pool having a GPU
    where it would become busy): ``ok[i]`` is ``-1`` if so, else the first slot where it may
    not. Returns how many may; ``every``: read the whole run of each; the GPUs after the
    ``enough``-th that may are left unread (``ok`` past the run)."""
    count = 0
    for i in range(ng):
        if count >= enough:
            ok[i] = c + p
            continue
        r = r0 + i
        least = FULL
        ok[i] = -1
        for u in range(c, c + p):
            f = rows[r, u]
            if f < least:
                least = f
            if ok[i] < 0 and (f < m or (m < FULL and f == FULL and rows[0, u] < 1)):
                ok[i] = u
                if not every:
                    break
        gmin[i] = least
        count += 1 if ok[i] < 0 else 0
    return count


@njit(cache=True, nogil=True)
def _retry(ok: np.ndarray, ng: int, g: int, have: int) -> int:  # pragma: no cover
    """The earliest start a node may fit ``g`` GPUs from, when ``have`` of them fit from here:
    past the ``(g - have)``-th earliest slot where one of the others failed."""
    need = g - have
    best = -1
    for i in range(ng):  # the least failing slot v with need GPUs failing at or before it
        v = ok[i]
        if v < 0 or (best >= 0 and v >= best):
            continue
        count = 0
        for q in range(ng):
            if 0 <= ok[q] <= v:
                count += 1
        if count >= need:
            best = v
    return best + 1


@njit(cache=True, nogil=True)
def _node_room(rows: np.ndarray, r: int, c: int, p: int) -> int:  # pragma: no cover
    """The least free milli of a node (its row ``r``: summed over its GPUs) over ``c .. c+p-1``."""
    least = rows[r, c]
    for u in range(c + 1, c + p):
        least = min(least, rows[r, u])
    return least


@njit(cache=True, nogil=True, inline="always")
def lowest_free(ok: np.ndarray, ng: int, g: int, gpus: np.ndarray) -> int:  # pragma: no cover
    """Put in ``gpus`` the ``g`` lowest-indexed of a node's ``ng`` GPUs free for the whole run
    (``ok`` below 0, as :func:`read_gpus` leaves it); returns how many."""
    taken = 0
    for i in range(ng):
        if ok[i] < 0 and taken < g:
            gpus[taken] = i
            taken += 1
    return taken


@njit(cache=True, nogil=True, inline="always")
def repeat_of_class(rows: np.ndarray, cap: np.ndarray, cls: np.ndarray, seen: np.ndarray, k: int,
                    c: int, p: int) -> bool:  # pragma: no cover
    """Whether node ``k`` is untouched over slots ``c .. c+p-1`` after an untouched node of its
    class (``seen``), which scores the same: skip it. The first one marks its class."""
    for u in range(c, c + p):
        if rows[1 + k, u] != cap[k]:
            return False
    if seen[cls[k]]:
        return True
    seen[cls[k]] = 1
    return False


@njit(cache=True, nogil=True)
def new_scratch(st: SharesArrays) -> np.ndarray:  # pragma: no cover
    """The scratch of :func:`find`: int64 ``(7 + r, max(K, largest node, frag shapes) + 1)``,
    rows 0-6 zeros and from row 7 on the table of :func:`_whole_nodes` (as bytes), sized for
    the largest job on whole nodes (``st.largest[1]`` GPUs) when it asks
    :data:`~heuristics._compiled.WIDE` or more."""
    K, wide = st.sizes.shape[0], st.largest[1]
    width = max(K, st.largest[0], st.shape_cpu.shape[0]) + 1
    table = (K + 1) * (wide + 1) if wide >= WIDE else 1
    return np.zeros((7 + -(-table // (8 * width)), width), dtype=np.int64)


@njit(cache=True, nogil=True, inline="always")
def _whole_nodes(sizes: np.ndarray, nodes: np.ndarray, nn: int, g: int, chosen: np.ndarray,
                 tmp: np.ndarray, scratch: np.ndarray) -> int:  # pragma: no cover
    """:func:`~heuristics._compiled.lexicographic_subset` of ``nodes[:nn]`` summing to ``g``, its
    table (when ``g`` is :data:`~heuristics._compiled.WIDE` or more) in rows 7 on of ``scratch``
    (:func:`new_scratch`): the search allocates nothing, so it runs without reference counts."""
    n, w = (nn + 1, g + 1) if g >= WIDE else (1, 1)
    reach = scratch[7:].reshape(-1).view(np.bool_)[: n * w].reshape(n, w)
    return lexicographic_subset(sizes, nodes, nn, g, chosen, tmp, reach)


class _Ask(NamedTuple):
    """What a job asks of a search (numba compiles it as a tuple of integers)."""

    j: int
    """The job."""
    g: int
    """Its GPUs."""
    p: int
    """Its run (slots)."""
    m: int
    """Its ``gpu_milli`` (:data:`FULL`: whole GPUs)."""
    cpu: int
    """Its ``cpu_milli``."""
    mem: int
    """Its ``memory_mib``."""
    kind: int
    """The level rows it is scanned by (:func:`_scan`; 2: it takes whole nodes)."""
    level: int
    """Its level in those rows."""


class _Work(NamedTuple):
    """The rows of :func:`new_scratch` a search works in (views, made once per search)."""

    nxt: np.ndarray
    """Per node, the earliest start it may fit from."""
    gmin: np.ndarray
    """Per GPU of the node read, its least free milli over the run (then the nodes of the
    whole-node set chosen)."""
    tmp: np.ndarray
    """Best-fit's room per candidate (:data:`UNREAD`: not read, or ruled out); the subset
    search's bit sets."""
    ok: np.ndarray
    """Per GPU of the node read: ``-1`` if the job may take it, else the first slot it may not."""
    seen: np.ndarray
    """Per node class: an untouched node of it was scored at this start."""
    scratch: np.ndarray
    """The whole scratch (frag's rows 5 and 6, the subset search's table from row 7)."""
    nodes: np.ndarray
    """:func:`find`'s ``nodes``: the candidates at a start, then the nodes taken."""
    gpus: np.ndarray
    """:func:`find`'s ``gpus``: the GPUs taken (first the words of the level rows' AND)."""
    counts: np.ndarray
    """Frag: the jobs still to place per workload shape (:func:`counts_of`; else ``nodes``)."""


@njit(cache=True, nogil=True, inline="always")
def find(rows: np.ndarray, st: SharesArrays, rule: int, j: int, g: int, p: int, lo: int, hi: int,
         nodes: np.ndarray, gpus: np.ndarray, scratch: np.ndarray) -> tuple[int, int, int]:
    # pragma: no cover
    """Earliest start ``s`` in ``[lo, hi - p]`` with a valid placement of job ``j``, and the placement.

    Returns ``(s, number of nodes, number of GPU indices)``; ``nodes`` and
    ``gpus`` receive them (the GPU indices local to the one node; none for
    whole nodes). ``(-1, 0, 0)`` when no start fits. ``rule``: 0 first-fit,
    1 best-fit, 2 frag (on the workload of the jobs still to place).
    ``scratch``: :func:`new_scratch`.

    Best-fit and frag score every node with room, but of the nodes nothing
    runs on over the run (all the GPUs they offer wholly free) only the first
    of each class (``cls``: equal GPUs, GPUs offered, model, CPU and memory):
    the others score the same, and ties go to the earlier node.
    """
    if lo < 0 or hi - lo < p:
        return -1, 0, 0
    K: int = st.sizes.shape[0]
    m = st.job_milli[j]
    kind = 2 if g > st.largest[0] else (0 if m == FULL else 1)
    c = _scan(rows, layout(K, st.gpu_offset[K])[5], st.level_info, kind, st.job_level[j], g, p,
              lo, hi, st.eligible_words, j)
    if c < 0:  # (the common rejection, before the rest is unpacked)
        return -1, 0, 0
    ask = _Ask(j, g, p, m, st.job_cpu[j], st.job_memory[j], kind, st.job_level[j])
    counts = counts_of(rows, st) if rule == 2 else nodes  # (a view: made only where read)
    work = _Work(scratch[0], scratch[1], scratch[2], scratch[3], scratch[4], scratch, nodes, gpus,
                 counts)
    return _search(rows, st, rule, ask, lo, c, hi, work)


@njit(cache=True, nogil=True, inline="always")
def _search(rows: np.ndarray, st: SharesArrays, rule: int, ask: _Ask, lo: int, c: int, hi: int,
            work: _Work) -> tuple[int, int, int]:  # pragma: no cover
    """:func:`find` from ``c``, the first start the level rows allow: the nodes tried at each
    start (:func:`_on_whole_nodes`, :func:`_on_one_node`), the next start from the earliest
    any node may fit from (``work.nxt``)."""
    K: int = st.sizes.shape[0]
    C = layout(K, st.gpu_offset[K])[5]
    for k in range(K):
        work.nxt[k] = lo
    while True:
        if ask.kind == 2:
            got, nextc = _on_whole_nodes(rows, st, ask, c, hi, work)
            if got > 0:
                return c, got, 0
        else:  # the nodes the level rows let in (into nodes; gpus as the AND's words): of the
            # others nothing is known, so c + 1 next
            nv, nextc = _candidates(rows, st.level_info, ask.kind, ask.level, c, ask.p,
                                    st.eligible_words, ask.j, work.gpus, work.nodes)
            best, best_gpu, nextc = _on_one_node(rows, st, rule, ask, c, nv, nextc, work)
            if best >= 0:
                return _placed(rows, st, rule, ask, c, best, best_gpu, work)
        c = max(c + 1, nextc)
        if c + ask.p > hi:
            return -1, 0, 0
        c = _scan(rows, C, st.level_info, ask.kind, ask.level, ask.g, ask.p, c, hi,
                  st.eligible_words, ask.j)
        if c < 0:
            return -1, 0, 0


@njit(cache=True, nogil=True, inline="always")
def _on_whole_nodes(rows: np.ndarray, st: SharesArrays, ask: _Ask, c: int, hi: int,
                    work: _Work) -> tuple[int, int]:  # pragma: no cover
    """A job on whole nodes at ``c``: the lexicographically smallest set of eligible nodes
    wholly free over the run summing to its GPUs, into ``work.nodes``, its size (0: none), and
    the next start to try. A node that fails from a slot on is not tried before the slot
    after it (``work.nxt``)."""
    K: int = st.sizes.shape[0]
    sizes, cap, nxt, nodes = st.sizes, st.node_cap, work.nxt, work.nodes
    nextc = hi
    nn = 0
    for k in range(K):
        if not st.eligible[ask.j, k]:
            continue
        if nxt[k] > c:
            nextc = min(nextc, nxt[k])
            continue
        if cap[k] < sizes[k]:
            nxt[k] = hi
            continue
        u = node_fail(rows, K, k, c, ask.p, True, sizes[k], FULL, 0, 0)
        if u >= 0:
            nxt[k] = u + 1
            nextc = min(nextc, u + 1)
            continue
        nodes[nn] = k  # wholly free over the run
        nn += 1
    if nn == 0:
        return 0, nextc
    chosen = work.gmin
    got = _whole_nodes(sizes, nodes, nn, ask.g, chosen, work.tmp, work.scratch)
    if got > 0:
        for e in range(got):
            nodes[e] = chosen[e]
        return got, nextc
    for e in range(nn):  # no set sums to g here: try later
        nxt[nodes[e]] = c + 1
    return 0, min(nextc, c + 1)


@njit(cache=True, nogil=True, inline="always")
def _on_one_node(rows: np.ndarray, st: SharesArrays, rule: int, ask: _Ask, c: int, nv: int,
                 nextc: int, work: _Work) -> tuple[int, int, int]:  # pragma: no cover
    """A one-node job at ``c`` on the ``nv`` candidates in ``work.nodes``: the node the rule
    takes (-1: none), the GPU of a share there (-1: the first that may take it), and the next
    start to try (at most ``nextc``). Per node: skipped before ``work.nxt``, and (best-fit,
    frag) when untouched after an untouched node of its class; its CPU and memory; its GPUs
    (first-fit takes the first that fits, frag scores each) or (best-fit) its room alone,
    the GPUs read after, best room first (:func:`_least_room`)."""
    K: int = st.sizes.shape[0]
    GB = layout(K, st.gpu_offset[K])[4]
    cap, cls, goff = st.node_cap, st.node_class, st.gpu_offset
    g, p, m = ask.g, ask.p, ask.m
    nxt, gmin, tmp, ok, seen, nodes = work.nxt, work.gmin, work.tmp, work.ok, work.seen, work.nodes
    every = rule == 2  # (frag measures every GPU; best-fit reads only those that fit)
    lazy = rule == 1  # best-fit: rooms first, GPUs read best room first
    if rule > 0:
        for k in range(K):
            seen[cls[k]] = 0
    if lazy:
        for q in range(nv):
            tmp[q] = UNREAD
    best = -1
    best_gpu = -1
    best_room = 0
    best_delta = 0.0
    for q in range(nv):
        k = nodes[q]
        if nxt[k] > c:
            nextc = min(nextc, nxt[k])
            continue
        if rule > 0:  # a node untouched over the run: the first of its class only
            # (repeat_of_class written out: called here, the pass runs about 2x slower)
            untouched = True
            for u in range(c, c + p):
                if rows[1 + k, u] != cap[k]:
                    untouched = False
                    break
            if untouched:
                if seen[cls[k]]:
                    continue
                seen[cls[k]] = 1
        u = host_fail(rows, K, k, c, p, ask.cpu, ask.mem)  # (its GPUs: the level rows let it in)
        if u >= 0:
            nxt[k] = u + 1
            nextc = min(nextc, u + 1)
            continue
        if lazy:
            tmp[q] = _node_room(rows, GB - K + k, c, p) - g * m
            continue
        ng = goff[k + 1] - goff[k]
        have = read_gpus(rows, GB + goff[k], ng, c, p, m, every, gmin, ok, ng if every else g)
        if have < g:
            nxt[k] = max(c + 1, _retry(ok, ng, g, have))
            nextc = min(nextc, nxt[k])
            continue
        if rule == 0:
            return k, -1, nextc
        room = _node_room(rows, GB - K + k, c, p) - g * m
        gpu = -1  # (only frag scores here: best-fit reads its nodes below)
        delta = 0.0
        if rule == 2:
            gpu, delta = _frag_growth(rows, st, ask, k, ng, c, work)
        if best < 0 or (rule == 2 and (
                delta < best_delta or (delta == best_delta and room < best_room))):
            best, best_gpu, best_room, best_delta = k, gpu, room, delta
    if lazy:
        return _least_room(rows, st, ask, c, nv, nextc, work)
    return best, best_gpu, nextc


@njit(cache=True, nogil=True, inline="always")
def _frag_growth(rows: np.ndarray, st: SharesArrays, ask: _Ask, k: int, ng: int, c: int,
                 work: _Work) -> tuple[int, float]:  # pragma: no cover
    """Frag on node ``k`` (its ``ng`` GPUs read: ``work.gmin``, ``work.ok``): the growth of its
    fragmentation for the jobs still to place (``work.counts``) when the job runs there over
    ``c .. c + p - 1``, and for a share FGD's choice of GPU (the least growth after it)."""
    K: int = st.sizes.shape[0]
    CP = layout(K, st.gpu_offset[K])[2]
    model, t_cpu, t_milli = st.node_model[k], st.shape_cpu, st.shape_milli
    t_gpus, t_allowed = st.shape_gpus, st.shape_models
    gmin, ok, scratch, counts = work.gmin, work.ok, work.scratch, work.counts
    m, cj = ask.m, ask.cpu
    cmin = rows[CP + k, c]
    for u in range(c, c + ask.p):
        cmin = min(cmin, rows[CP + k, u])
    before = node_frag_shapes(cmin, gmin[:ng], model, t_cpu, t_milli, t_gpus, t_allowed, counts,
                              scratch[5], scratch[6])
    if m == FULL:  # (g GPUs wholly free over the run go to 0)
        return -1, moved_frag(cmin - cj, gmin[:ng], ask.g, FULL, 0, model, t_cpu, t_milli, t_gpus,
                              t_allowed, counts, scratch[5], scratch[6]) - before
    gpu = -1  # FGD's choice of GPU for a share: the least fragmentation after it
    delta = 0.0
    for i in range(ng):
        if ok[i] >= 0:
            continue
        if equal_earlier(gmin, ok, False, i):  # (it measures the same)
            continue
        d = moved_frag(cmin - cj, gmin[:ng], 1, gmin[i], gmin[i] - m, model, t_cpu, t_milli,
                       t_gpus, t_allowed, counts, scratch[5], scratch[6]) - before
        if gpu < 0 or d < delta or (d == delta and gmin[i] < gmin[gpu]):
            gpu, delta = i, d
    return gpu, delta


@njit(cache=True, nogil=True, inline="always")
def _least_room(rows: np.ndarray, st: SharesArrays, ask: _Ask, c: int, nv: int, nextc: int,
                work: _Work) -> tuple[int, int, int]:  # pragma: no cover
    """Best-fit's choice among the candidates whose rooms :func:`_on_one_node` read
    (``work.tmp``): the least room first (ties: the earlier node) whose GPUs take the job,
    as :func:`_on_one_node` returns it."""
    K: int = st.sizes.shape[0]
    GB = layout(K, st.gpu_offset[K])[4]
    goff = st.gpu_offset
    g, m = ask.g, ask.m
    nxt, gmin, tmp, ok = work.nxt, work.gmin, work.tmp, work.ok
    while True:
        qb = -1
        for q in range(nv):
            if tmp[q] < UNREAD and (qb < 0 or tmp[q] < tmp[qb]):
                qb = q
        if qb < 0:
            return -1, -1, nextc
        k = work.nodes[qb]
        ng = goff[k + 1] - goff[k]
        have = read_gpus(rows, GB + goff[k], ng, c, ask.p, m, False, gmin, ok,
                         ng if m < FULL else g)
        if have < g:
            nxt[k] = max(c + 1, _retry(ok, ng, g, have))
            nextc = min(nextc, nxt[k])
            tmp[qb] = UNREAD
            continue
        best_gpu = -1
        if m < FULL:  # the GPU left with the least room over the run
            for i in range(ng):
                if ok[i] < 0 and (best_gpu < 0 or gmin[i] < gmin[best_gpu]):
                    best_gpu = i
        return k, best_gpu, nextc


@njit(cache=True, nogil=True, inline="always")
def _placed(rows: np.ndarray, st: SharesArrays, rule: int, ask: _Ask, c: int, k: int,
            best_gpu: int, work: _Work) -> tuple[int, int, int]:  # pragma: no cover
    """:func:`find`'s answer for a one-node job on node ``k`` at ``c``: the node into
    ``work.nodes``, its GPUs into ``work.gpus`` (a share: ``best_gpu``, or the first that may
    take it)."""
    K: int = st.sizes.shape[0]
    GB = layout(K, st.gpu_offset[K])[4]
    ng = st.gpu_offset[k + 1] - st.gpu_offset[k]
    ok = work.ok
    if rule == 2:  # (frag read other nodes after it; the others stopped right there)
        read_gpus(rows, GB + st.gpu_offset[k], ng, c, ask.p, ask.m, False, work.gmin, ok, ask.g)
    work.nodes[0] = k
    if ask.m < FULL:
        if best_gpu < 0:
            for i in range(ng):
                if ok[i] < 0:
                    best_gpu = i
                    break
        work.gpus[0] = best_gpu
        return c, 1, 1
    return c, 1, lowest_free(ok, ng, ask.g, work.gpus)
