"""The free capacity of the one capacity model, and the fit test and occupy over it.

A :class:`Profile` is what is left of :func:`instances.capacity` while jobs
are placed: the pool's free batch GPUs per slot and each node's, in one
``int64`` array of rows (one copy copies it all). A flat instance is the case
of one node of ``G`` GPUs, which never binds (its capacity is at least the
pool's in every slot, and both lose the same GPUs), so with ``K = 1`` the
pool row alone decides: :func:`fit`, :func:`fits_now` and the compiled decoder
specialise to it, and the tests hold them to the general :func:`node_fit` and
:func:`node_fits_now`.

A :class:`Profile` is the count model's :class:`heuristics.engine.CapacityState`
(model versions 1 and 2): its methods are the fit, take, start-now and
serial decoder the time methods call; version 3 has its own state
(:class:`heuristics.shares.SharesProfile`), and
:func:`heuristics.engine.new_profile` picks one.

The hot loop of every constructive heuristic is "find the earliest slot from
which ``g`` GPUs stay free for ``p`` slots": :func:`earliest_fit` answers it
on one row with array operations over the window, never a Python loop over
slots; ``tests/reference.py`` and ``tests/reference_nodes.py`` keep plain
per-slot versions that the tests hold these to.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from instances import Instance
from instances.capacity import Capacity, capacity, lexicographic_subset

from .memo import memo
from .placement import check_placement, choose, frag_table
from .schemes import parallel_loop

__all__ = [
    "RESERVATIONS",
    "Profile",
    "check_reservation",
    "compiled_decoder",
    "counts_profile",
    "earliest_fit",
    "first_fits_now",
    "fit",
    "fits_now",
    "hinted_fit",
    "new_counts_profile",
    "node_fit",
    "node_fits_now",
    "occupy",
    "serial_starts_numpy",
    "start_now",
]

logger = logging.getLogger(__name__)

RESERVATIONS: tuple[str, ...] = ("peak", "curve")
"""Reservation policies of the inference capacity (the specification (docs/model.md))."""

_NO_FRAG = np.zeros((1, 1), dtype=np.int64)
_NO_FRAG.flags.writeable = False
_ONE_LEVEL = np.ones(1, dtype=np.int64)
_ONE_LEVEL.flags.writeable = False
_MEMO_BYTES = 4 * 2**20
"""The largest empty profile's rows kept per instance (a larger one is built at each call)."""

Hint = dict[tuple[int, int], tuple[int, int]]
"""What :func:`hinted_fit` keeps of earlier answers on one row."""


def check_reservation(reservation: str) -> str:
    """Return ``reservation`` or raise :class:`ValueError` naming it."""
    if reservation not in RESERVATIONS:
        raise ValueError(f"reservation: must be 'peak' or 'curve', got {reservation!r}")
    return reservation


class Profile:
    """Batch GPUs free per slot in the pool and on each node, with the rule that places jobs.

    Attributes
    ----------
    rows
        ``(R, T)`` int64, the whole state: row 0 the pool, rows ``1 .. K``
        the nodes, then summary rows the compiled decoder prunes by
        (:meth:`summaries`). One node is row 0 alone: it never binds, and
        loses what the pool loses, so its row is the pool's plus ``offset``.
    stale
        Whether the summary rows lag behind the node rows: :func:`occupy`
        leaves them (the numpy fit tests read the node rows), and
        :meth:`refresh` brings them up to date for the compiled decoder.
    pool, free
        ``(T,)`` the pool's row and ``(K, T)`` the nodes' (views of ``rows``;
        one node's, a new array).
    offset
        One node: its capacity less the pool's, per slot (``None`` for more).
    sizes
        ``(K,)`` int64: each node's GPUs (a flat pool: ``[G]``).
    largest
        The largest node's GPUs: a larger job takes whole nodes.
    levels
        ``(L,)`` int64, ascending: the free counts the summaries keep the
        nodes of as bits (the GPUs of the one-node jobs and the node sizes;
        each level a node crosses is a bit to clear, so no other).
    frag
        ``(K, max size + 1)`` int64: ``F_k(f)`` of the ``frag`` rule
        (:func:`heuristics.placement.frag_table`); a dummy for other rules.
    rule
        Code of the placement rule (a position in
        :data:`heuristics.placement.PLACEMENTS`).
    """

    __slots__ = ("frag", "largest", "levels", "offset", "pool", "rows", "rule", "sizes", "stale")

    def __init__(
        self, rows: np.ndarray, sizes: np.ndarray, levels: np.ndarray, frag: np.ndarray, rule: int,
        stale: bool = True, offset: np.ndarray | None = None,
    ) -> None:
        self.rows = rows
        self.sizes = sizes
        self.levels = levels
        self.frag = frag
        self.rule = rule
        self.offset = offset
        self.largest = int(sizes.max())
        self.pool = rows[0]
        self.stale = stale and sizes.shape[0] > 1
        self.refresh()

    @property
    def free(self) -> np.ndarray:
        """``(K, T)``: each node's free GPUs per slot."""
        if self.offset is not None:
            return (self.pool + self.offset)[None, :]
        return self.rows[1 : self.sizes.shape[0] + 1]

    @property
    def num_nodes(self) -> int:
        """``K``: the nodes (1 for a flat pool)."""
        return int(self.sizes.shape[0])

    def summaries(self) -> tuple[np.ndarray, ...]:
        """The summary rows of a profile of more than one node, per slot.

        ``maxfree``: the most any one node has free; ``nmax``: how many nodes
        have that much; ``whole``: the GPUs of the wholly free nodes;
        ``fit_one``, ``fit_many``: the pool's free GPUs bounded by ``maxfree``
        and by ``whole`` (what the scan for a one-node and a multi-node job
        reads); ``bits``: ``(L, W, T)``, row ``i`` the nodes with
        ``levels[i]`` GPUs free or more as bits (node ``k`` is bit ``k % 64``
        of word ``k // 64``), so a window's AND is the set of nodes with room
        for that many GPUs over it.
        """
        K = self.sizes.shape[0]
        bits = self.rows[K + 6 :].reshape(self.levels.shape[0], -(-K // 64), self.rows.shape[1])
        return (*self.rows[K + 1 : K + 6], bits)

    def like(self, rows: np.ndarray) -> Profile:
        """A profile of these ``rows`` with this one's nodes, levels and rule."""
        prof = object.__new__(Profile)
        prof.rows, prof.sizes, prof.levels, prof.frag = rows, self.sizes, self.levels, self.frag
        prof.rule, prof.largest, prof.stale, prof.offset = self.rule, self.largest, self.stale, self.offset
        prof.pool = rows[0]
        return prof

    def copy(self) -> Profile:
        """A copy whose rows can be changed independently (the tables are shared)."""
        return self.like(self.rows.copy())

    def refresh(self) -> None:
        """Bring the summary rows up to date with the pool and node rows (see :attr:`stale`)."""
        if not self.stale or self.offset is not None:  # (one node keeps no summaries)
            self.stale = False
            return
        maxfree, nmax, whole, fit_one, fit_many, bits = self.summaries()
        np.max(self.free, axis=0, out=maxfree)
        np.sum(self.free == maxfree, axis=0, out=nmax)
        np.sum((self.free == self.sizes[:, None]) * self.sizes[:, None], axis=0, out=whole)
        np.minimum(self.pool, maxfree, out=fit_one)
        np.minimum(self.pool, whole, out=fit_many)
        bits[:] = _words(self.free >= self.levels[:, None, None], 1)
        self.stale = False

    def decode(self, order: Any, jobs: Any, start: np.ndarray | None = None,
               place: np.ndarray | None = None, *, fifo: bool = False) -> np.ndarray:
        """The serial decoder on this state (:meth:`heuristics.engine.CapacityState.decode`).

        The compiled kernel when numba is importable and ``start`` and
        ``place`` are writable ``int64``, else :func:`serial_starts_numpy` (the
        same starts). ``fifo`` decodes one job at a time from the last start.
        """
        jobs = np.asarray(jobs, dtype=np.int64)
        if start is None:
            start = np.full(jobs.shape[1], -1, dtype=np.int64)
        if not fifo:
            return _serial(self, order, jobs, start, place)
        jobs = jobs.copy()  # each job's release raised to the last start, one job at a time
        release = jobs[2].copy()
        one = np.empty(1, dtype=np.int64)
        s_last = 0
        for j in np.asarray(order, dtype=np.int64).reshape(-1).tolist():
            jobs[2, j], one[0] = max(int(release[j]), s_last), j
            _serial(self, one, jobs, start, place)
            if start[j] >= 0:
                s_last = int(start[j])
        return start

    def earliest(self, j: int, g: int, p: int, lo: int, hi: int) -> tuple[int, list[int]]:
        """:func:`fit`: the earliest start and the node positions the rule picks."""
        return fit(self, g, p, lo, hi)

    def take(self, j: int, g: int, p: int, s: int, where: list[int],
             place: np.ndarray | None = None) -> None:
        """:func:`occupy` job ``j`` on the nodes ``where`` from ``s`` on."""
        occupy(self, g, s, p, where, place, j)

    def parallel(self, order: Any, jobs: np.ndarray, start: np.ndarray,
                 place: np.ndarray | None = None) -> np.ndarray:
        """The parallel scheme on this state (:func:`heuristics.schemes.parallel_loop`); on one
        node, compiled in one call when numba is importable (``benchmarks/bench_engine.py``)."""
        if self.offset is not None and compiled_decoder() is not None and _kernel_ready(start) \
                and (place is None or _kernel_ready(place)):
            from ._compiled import parallel_one_node
            return parallel_one_node(  # type: ignore[no-any-return]
                self.rows, np.asarray(order, dtype=np.int64).reshape(-1),
                np.ascontiguousarray(jobs, dtype=np.int64), start,
                _NO_PLACE if place is None else place)
        return parallel_loop(self, order, jobs, start, place)

    def start_now(self, t: int, cand: np.ndarray, jobs: np.ndarray, start: np.ndarray,
                  place: np.ndarray | None = None, also: Profile | None = None) -> int:
        """:func:`start_now` with the jobs as :func:`heuristics.decoder.job_arrays` rows; how
        many started."""
        return len(start_now(self, t, cand, jobs[0], jobs[1], start, place, also))


def new_counts_profile(inst: Instance, reservation: str = "curve",
                       placement: str = "first-fit") -> Profile:
    """The empty count state of a version 1-2 instance (nothing placed yet) under ``reservation``.

    The pool row is :attr:`instances.capacity.Capacity.pool`; each node starts
    with its capacity for batch work (``node_cap``) in every slot
    (:func:`heuristics.engine.new_profile` picks this state or version 3's).
    """
    rule = check_placement(placement)
    check_reservation(reservation)
    proto = memo(inst, f"{reservation} profile {rule}", lambda: _kept_profile(inst, reservation, rule))
    return proto.copy() if proto is not None else _empty_profile(inst, reservation, rule)


def _kept_profile(inst: Instance, reservation: str, rule: int) -> Profile | None:
    """The empty profile kept per instance to copy, its rows read-only (``None``: too large to keep)."""
    prof = _empty_profile(inst, reservation, rule)
    if prof.rows.nbytes > _MEMO_BYTES:
        return None
    _readonly(prof.rows)
    return prof


def _empty_profile(inst: Instance, reservation: str, rule: int) -> Profile:
    """:func:`new_profile`'s profile of a version 2 instance, built."""
    cap = memo(inst, reservation, lambda: capacity(inst, reservation))  # type: ignore[arg-type]
    K, T = cap.num_nodes, cap.horizon
    if K == 1:
        offset = _readonly(cap.node_cap[0] - cap.pool)
        return Profile(cap.pool[None, :].copy(), cap.sizes, _ONE_LEVEL, _NO_FRAG, rule, False, offset)
    levels = np.union1d(cap.sizes, inst.gpus[~inst.multi_node]).astype(np.int64)
    rows = _empty_rows(cap, levels, (K + 6 + levels.size * -(-K // 64), T))
    frag = memo(inst, "frag", lambda: frag_table(inst, cap.sizes)) if rule == 2 else _NO_FRAG
    return Profile(rows, cap.sizes, levels, frag, rule, stale=False)


def _empty_rows(cap: Capacity, levels: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """The rows of a profile of several nodes with nothing placed (see :class:`Profile`)."""
    K = cap.num_nodes
    rows = np.empty(shape, dtype=np.int64)
    rows[0] = cap.pool
    rows[1 : K + 1] = cap.node_cap[:, None]
    top = int(cap.node_cap.max())  # the summaries of nodes each at its capacity in every slot
    rows[K + 1] = top
    rows[K + 2] = int((cap.node_cap == top).sum())
    rows[K + 3] = int(cap.node_cap[cap.node_cap == cap.sizes].sum())
    rows[K + 4 : K + 6] = np.minimum(cap.pool, rows[K + 1 : K + 4 : 2])
    rows[K + 6 :] = _words(cap.node_cap >= levels[:, None], 1).reshape(-1, 1)
    return rows


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def counts_profile(prof: Any) -> Profile:
    """``prof`` itself, known to be a :class:`Profile` (GPU counts, model versions 1 and 2).

    Raises
    ------
    TypeError
        For any other state: a version 3 one's fit and occupy are
        :mod:`heuristics.shares`'s.
    """
    if not isinstance(prof, Profile):
        raise TypeError(f"prof: {type(prof).__name__} is not a Profile (GPU counts); a version 3 "
                        "profile (heuristics.shares.SharesProfile) has the fit, occupy and "
                        "serial_starts of heuristics.shares")
    return prof


def _words(flags: np.ndarray, axis: int = 0) -> np.ndarray:
    """Booleans as int64 words along ``axis`` (``K`` long, ``ceil(K / 64)`` words; flag ``k`` bit ``k % 64``)."""
    flags = np.moveaxis(flags, axis, 0)
    K = flags.shape[0]
    bits = np.zeros((-(-K // 64) * 64, *flags.shape[1:]), dtype=np.int64)
    bits[:K] = flags
    bits = bits.reshape(-1, 64, *flags.shape[1:]) << np.arange(64).reshape(64, *[1] * (flags.ndim - 1))
    return np.moveaxis(np.bitwise_or.reduce(bits, axis=1), 0, axis)


def earliest_fit(free: np.ndarray, g: int, p: int, lo: int, hi: int) -> int:
    """Earliest start ``s`` in ``[lo, hi - p]`` with ``free[s:s+p] >= g`` on one row, or ``-1``.

    Parameters
    ----------
    free
        Free GPUs per slot.
    g, p
        GPUs and duration (slots) of the block.
    lo, hi
        The block must start at or after ``lo`` and end at or before ``hi``.
    """
    n = hi - lo
    if n < p or lo < 0:
        return -1
    ok = free[lo:hi] >= g
    if p == 1:
        k = int(ok.argmax())
        return lo + k if ok[k] else -1
    c = np.empty(n + 1, dtype=np.int64)
    c[0] = 0
    np.cumsum(ok, out=c[1:])
    full = (c[p:] - c[:-p]) == p
    k = int(full.argmax())
    return lo + k if full[k] else -1


def _full_windows(ok: np.ndarray, p: int) -> np.ndarray:
    """``out[..., i]``: ``ok[..., i : i + p]`` all true (windows along the last axis)."""
    c = np.zeros((*ok.shape[:-1], ok.shape[-1] + 1), dtype=np.int64)
    np.cumsum(ok, axis=-1, out=c[..., 1:])
    return (c[..., p:] - c[..., :-p]) == p


def fit(
    prof: Profile, g: int, p: int, lo: int, hi: int, hint: Hint | None = None,
) -> tuple[int, list[int]]:
    """Earliest start ``s`` in ``[lo, hi - p]`` with a valid placement of ``g`` GPUs, and its nodes.

    Returns ``(s, nodes)``, the node positions (ascending) the rule picks,
    or ``(-1, [])`` when no start fits. One node never binds, so there the
    pool row decides (:func:`earliest_fit`, or :func:`hinted_fit` with a
    ``hint`` of this profile); :func:`node_fit` is the general case.
    """
    counts_profile(prof)  # (a version 3 state from an untyped caller: TypeError)
    if prof.sizes.shape[0] > 1:
        return node_fit(prof, g, p, lo, hi)
    s = earliest_fit(prof.pool, g, p, lo, hi) if hint is None else hinted_fit(
        prof.pool, g, p, lo, hi, hint)
    return s, [0] if s >= 0 else []


def hinted_fit(free: np.ndarray, g: int, p: int, lo: int, hi: int, hint: Hint) -> int:
    """:func:`earliest_fit` on a row that only shrinks between calls.

    The earliest fit of a block ``(g, p)`` from a slot ``lo`` can then only
    move later: ``hint[(g, p)] = (lo, s)`` keeps the last answer (``s`` found
    ignoring the deadline, ``-1`` for none), and a later query from
    ``lo' >= lo`` starts its search at ``max(lo', s)``. The window at the
    search's first slot is tested alone first (the common hit). Use a fresh
    ``hint`` for each row.
    """
    h = hint.get((g, p))
    a = lo
    if h is not None and h[0] <= lo:
        if h[1] < 0:
            return -1
        a = max(a, h[1])
    if a + p > hi:
        return -1
    s = a if free[a : a + p].min() >= g else earliest_fit(free, g, p, a + 1, free.shape[0])
    hint[(g, p)] = (lo, s)
    return s if s >= 0 and s + p <= hi else -1


def node_fit(prof: Profile, g: int, p: int, lo: int, hi: int) -> tuple[int, list[int]]:
    """:func:`fit` over the pool row and every node row (any number of nodes)."""
    if lo < 0 or hi - lo < p:
        return -1, []
    pool = _full_windows(prof.pool[lo:hi] >= g, p)
    if g <= prof.largest:
        nodes_ok = _full_windows(prof.free[:, lo:hi] >= g, p)
        cand = np.flatnonzero(pool & nodes_ok.any(axis=0))
        if cand.size == 0:
            return -1, []
        i = int(cand[0])
        return lo + i, [choose(prof.rule, prof.free, prof.frag, np.flatnonzero(nodes_ok[:, i]),
                               g, lo + i, p)]
    whole_ok = _full_windows(prof.free[:, lo:hi] >= prof.sizes[:, None], p)
    room = (whole_ok * prof.sizes[:, None]).sum(axis=0)
    for i in np.flatnonzero(pool & (room >= g)).tolist():
        elig = np.flatnonzero(whole_ok[:, i])
        pick = lexicographic_subset(prof.sizes[elig].tolist(), g)
        if pick:
            return lo + i, elig[pick].tolist()
    return -1, []


def occupy(
    prof: Profile, g: int, s: int, p: int, nodes: list[int], place: np.ndarray | None = None,
    j: int = -1,
) -> None:
    """Take ``g`` GPUs in slots ``s .. s+p-1`` of the pool and of ``nodes``, in place.

    On one node the job takes ``g`` GPUs; on several, each in full. Writes the
    nodes into row ``j`` of ``place`` when given. The summary rows go stale
    (:attr:`Profile.stale`).
    """
    counts_profile(prof)  # (a version 3 state from an untyped caller: TypeError)
    if prof.offset is not None:  # one node: its row follows the pool's
        prof.pool[s : s + p] -= g
    else:
        prof.pool[s : s + p] -= g
        if len(nodes) == 1:
            prof.free[nodes[0], s : s + p] -= g
        else:
            prof.free[nodes, s : s + p] -= prof.sizes[nodes][:, None]
        prof.stale = True
    if place is not None:
        place[j] = -1
        place[j, : len(nodes)] = nodes


def first_fits_now(
    free: np.ndarray, t: int, cand: np.ndarray, gpus: np.ndarray, dur: np.ndarray
) -> int:
    """Position in ``cand`` of the first job with ``free[t:t+p] >= g`` on one row, or ``-1``.

    The caller guarantees ``t + p <= min(D, T)`` for every candidate. One
    cumulative minimum of the row from ``t`` answers every candidate at once.
    """
    if cand.size == 0:
        return -1
    cm = np.minimum.accumulate(free[t:])
    ok = cm[dur[cand] - 1] >= gpus[cand]
    k = int(ok.argmax())
    return k if ok[k] else -1


def fits_now(
    prof: Profile, t: int, cand: np.ndarray, gpus: np.ndarray, dur: np.ndarray,
) -> tuple[int, list[int]]:
    """Position in ``cand`` of the first job with a valid placement from slot ``t``, and its nodes.

    Returns ``(-1, [])`` when none fits. One node never binds, so there the
    pool row decides (:func:`first_fits_now`); :func:`node_fits_now` is the
    general case.
    """
    counts_profile(prof)  # (a version 3 state from an untyped caller: TypeError)
    if prof.sizes.shape[0] > 1:
        return node_fits_now(prof, t, cand, gpus, dur)
    k = first_fits_now(prof.pool, t, cand, gpus, dur)
    return k, [0] if k >= 0 else []


def start_now(
    prof: Profile, t: int, cand: np.ndarray, gpus: np.ndarray, dur: np.ndarray,
    start: np.ndarray, place: np.ndarray | None = None, also: Profile | None = None,
) -> list[int]:
    """Start at slot ``t``, in the order of ``cand``, every job that fits now; returns them.

    Each job that has a valid placement from ``t`` in ``prof`` (the profile
    left by the jobs started before it) takes it there, and in ``also`` when
    given (EASY tests the profile that holds the head's reservation and
    takes from both); its start and nodes go into ``start`` and ``place``.
    """
    counts = counts_profile(prof)  # (a version 3 state from an untyped caller: TypeError)
    started = []
    pos = 0
    while pos < cand.size:
        k, ks = fits_now(counts, t, cand[pos:], gpus, dur)
        if k < 0:
            break
        j = int(cand[pos + k])
        g, p = int(gpus[j]), int(dur[j])
        occupy(counts, g, t, p, ks, None if also is not None else place, j)
        if also is not None:
            occupy(also, g, t, p, ks, place, j)
        start[j] = t
        started.append(j)
        pos += k + 1
    return started


def node_fits_now(
    prof: Profile, t: int, cand: np.ndarray, gpus: np.ndarray, dur: np.ndarray,
) -> tuple[int, list[int]]:
    """:func:`fits_now` over the pool row and every node row (any number of nodes).

    The caller guarantees ``t + p <= min(D, T)`` for every candidate. One
    cumulative minimum per node answers every candidate that takes one node
    at once; a candidate that takes whole nodes is checked exactly when the
    wholly free nodes hold enough GPUs.
    """
    if cand.size == 0:
        return -1, []
    pool = np.minimum.accumulate(prof.pool[t:])
    node_cm = np.minimum.accumulate(prof.free[:, t:], axis=1)
    whole_cm = np.minimum.accumulate(prof.free[:, t:] >= prof.sizes[:, None], axis=1)
    g, p = gpus[cand], dur[cand]
    multi = g > prof.largest
    fits = (pool[p - 1] >= g) & (node_cm[:, p - 1] >= g).any(axis=0)
    hold = (pool[p - 1] >= g) & ((whole_cm[:, p - 1] * prof.sizes[:, None]).sum(axis=0) >= g)
    for k in np.flatnonzero(np.where(multi, hold, fits)).tolist():
        gk, pk = int(g[k]), int(p[k])
        if not multi[k]:
            elig = np.flatnonzero(node_cm[:, pk - 1] >= gk)
            return k, [choose(prof.rule, prof.free, prof.frag, elig, gk, t, pk)]
        elig = np.flatnonzero(whole_cm[:, pk - 1])
        pick = lexicographic_subset(prof.sizes[elig].tolist(), gk)
        if pick:
            return k, elig[pick].tolist()
    return -1, []


_NO_PLACE = np.empty((0, 1), dtype=np.int64)
_COMPILED: list[Any] = []


def compiled_decoder() -> Any:
    """The numba decoder of the count model, or ``None`` when numba is not importable (looked up once)."""
    if not _COMPILED:
        try:
            from ._compiled import serial_starts_compiled
        except ImportError as exc:
            logger.info("numba not available (%s): serial decoder runs in numpy", exc)
            _COMPILED.append(None)
        else:
            _COMPILED.append(serial_starts_compiled)
    return _COMPILED[0]


def _serial(prof: Profile, order: Any, jobs: np.ndarray, start: np.ndarray,
            place: np.ndarray | None) -> np.ndarray:
    """:meth:`Profile.decode` without ``fifo``: the compiled kernel or the numpy decoder."""
    kernel = _COMPILED[0] if _COMPILED else compiled_decoder()
    if kernel is not None and _kernel_ready(start) and (place is None or _kernel_ready(place)):
        prof.refresh()
        return kernel(  # type: ignore[no-any-return]
            prof.rows, prof.sizes, prof.levels, prof.frag, prof.rule,
            np.asarray(order, dtype=np.int64).reshape(-1),
            jobs, start, _NO_PLACE if place is None else place)
    return serial_starts_numpy(prof, order, jobs, start, place)


def _kernel_ready(a: np.ndarray) -> bool:
    """Whether the compiled decoder can write ``a`` (writable, contiguous ``int64``)."""
    return a.dtype == np.int64 and a.flags.c_contiguous and a.flags.writeable


def serial_starts_numpy(prof: Profile, order: Any, jobs: Any,
                        start: np.ndarray | None = None,
                        place: np.ndarray | None = None) -> np.ndarray:
    """The count model's serial decoder in numpy only: :func:`fit` and :func:`occupy` job by job.

    The vectorized decoder, used when numba is not installed (and the
    reference the compiled kernel is held to); same parameters and result as
    :func:`heuristics.decoder.serial_starts`.
    """
    counts = counts_profile(prof)
    gpus, dur, rel, dl = (np.asarray(c).tolist() for c in jobs)
    n = len(gpus)
    if start is None:
        start = np.full(n, -1, dtype=np.int64)
    T = counts.pool.shape[0]
    hint: Hint = {}
    for j in np.asarray(order, dtype=np.int64).reshape(-1).tolist():
        if not -n <= j < n:
            raise IndexError(f"order: job index {j} out of range for {n} jobs")
        g, p = gpus[j], dur[j]
        s, ks = fit(counts, g, p, rel[j], min(dl[j], T), hint)
        if s >= 0:
            occupy(counts, g, s, p, ks, place, j)
            start[j] = s
    return start
