"""The free capacity of the one capacity model, and the fit test and occupy over it.

A :class:`Profile` is what is left of :func:`instances.capacity` while jobs
are placed: the pool's free batch GPUs per slot and each node's, in one
``int64`` array of rows (one copy copies it all). A flat instance is the case
of one node of ``G`` GPUs, which never binds (its capacity is at least the
pool's in every slot, and both lose the same GPUs), so with ``K = 1`` the
pool row alone decides: :func:`fit`, :func:`fits_now` and the compiled decoder
specialise to it, and the tests hold them to the general :func:`node_fit` and
:func:`node_fits_now`.

The hot loop of every constructive heuristic is "find the earliest slot from
which ``g`` GPUs stay free for ``p`` slots": :func:`earliest_fit` answers it
on one row with array operations over the window, never a Python loop over
slots; ``tests/reference.py`` and ``tests/reference_nodes.py`` keep plain
per-slot versions that the tests hold these to.
"""

from __future__ import annotations

import numpy as np

from instances import Instance
from instances.capacity import capacity, lexicographic_subset

from .placement import check_placement, choose, frag_table

__all__ = [
    "RESERVATIONS",
    "Profile",
    "check_reservation",
    "earliest_fit",
    "first_fits_now",
    "fit",
    "fits_now",
    "new_profile",
    "node_fit",
    "node_fits_now",
    "occupy",
]

RESERVATIONS: tuple[str, ...] = ("peak", "curve")
"""Reservation policies of the inference capacity (the specification (docs/model.md))."""

_NO_FRAG = np.zeros((1, 1), dtype=np.int64)
_NO_FRAG.flags.writeable = False


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
        the nodes; with more than one node three summary rows follow, which
        the compiled scan prunes by (``maxfree``, the most any one node has
        free; ``nmax``, how many nodes have that much; ``whole``, the GPUs of
        the wholly free nodes). One node needs none: it never binds.
    pool, free
        Views of ``rows``: ``(T,)`` the pool's row, ``(K, T)`` the nodes'.
    sizes
        ``(K,)`` int64: each node's GPUs (a flat pool: ``[G]``).
    largest
        The largest node's GPUs: a larger job takes whole nodes.
    frag
        ``(K, max size + 1)`` int64: ``F_k(f)`` of the ``frag`` rule
        (:func:`heuristics.placement.frag_table`); a dummy for other rules.
    rule
        Code of the placement rule (a position in
        :data:`heuristics.placement.PLACEMENTS`).
    """

    __slots__ = ("frag", "free", "largest", "pool", "rows", "rule", "sizes")

    def __init__(self, rows: np.ndarray, sizes: np.ndarray, frag: np.ndarray, rule: int) -> None:
        self.rows = rows
        self.sizes = sizes
        self.frag = frag
        self.rule = rule
        self.largest = int(sizes.max())
        self.pool = rows[0]
        self.free = rows[1 : sizes.shape[0] + 1]

    @property
    def num_nodes(self) -> int:
        """``K``: the nodes (1 for a flat pool)."""
        return int(self.sizes.shape[0])

    def summaries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The summary rows ``(maxfree, nmax, whole)`` of a profile of more than one node."""
        K = self.sizes.shape[0]
        return self.rows[K + 1], self.rows[K + 2], self.rows[K + 3]

    def copy(self) -> Profile:
        """A copy whose rows can be changed independently (the tables are shared)."""
        return Profile(self.rows.copy(), self.sizes, self.frag, self.rule)


def new_profile(inst: Instance, reservation: str = "curve", placement: str = "first-fit") -> Profile:
    """The empty profile of ``inst`` (nothing placed yet) under ``reservation``.

    The pool row is :attr:`instances.capacity.Capacity.pool`; each node starts
    with its capacity for batch work (``node_cap``) in every slot.
    """
    rule = check_placement(placement)
    cap = capacity(inst, check_reservation(reservation))  # type: ignore[arg-type]
    K, T = cap.num_nodes, cap.horizon
    rows = np.empty((K + 1 + (3 if K > 1 else 0), T), dtype=np.int64)
    rows[0] = cap.pool
    rows[1 : K + 1] = cap.node_cap[:, None]
    if K > 1:
        top = int(cap.node_cap.max())
        rows[K + 1] = top
        rows[K + 2] = int((cap.node_cap == top).sum())
        rows[K + 3] = int(cap.node_cap[cap.node_cap == cap.sizes].sum())
    frag = frag_table(inst, cap.sizes) if rule == 2 and K > 1 else _NO_FRAG
    return Profile(rows, cap.sizes, frag, rule)


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


def fit(prof: Profile, g: int, p: int, lo: int, hi: int) -> tuple[int, list[int]]:
    """Earliest start ``s`` in ``[lo, hi - p]`` with a valid placement of ``g`` GPUs, and its nodes.

    Returns ``(s, nodes)``, the node positions (ascending) the rule picks,
    or ``(-1, [])`` when no start fits. One node never binds, so there the
    pool row decides (:func:`earliest_fit`); :func:`node_fit` is the general case.
    """
    if prof.sizes.shape[0] > 1:
        return node_fit(prof, g, p, lo, hi)
    s = earliest_fit(prof.pool, g, p, lo, hi)
    return s, [0] if s >= 0 else []


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
    nodes into row ``j`` of ``place`` when given.
    """
    prof.pool[s : s + p] -= g
    if len(nodes) == 1:
        prof.free[nodes[0], s : s + p] -= g
    else:
        prof.free[nodes, s : s + p] -= prof.sizes[nodes][:, None]
    if prof.sizes.shape[0] > 1:
        maxfree, nmax, whole = prof.summaries()
        window = prof.free[:, s : s + p]
        maxfree[s : s + p] = window.max(axis=0)
        nmax[s : s + p] = (window == maxfree[s : s + p]).sum(axis=0)
        whole[s : s + p] = ((window == prof.sizes[:, None]) * prof.sizes[:, None]).sum(axis=0)
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
    if prof.sizes.shape[0] > 1:
        return node_fits_now(prof, t, cand, gpus, dur)
    k = first_fits_now(prof.pool, t, cand, gpus, dur)
    return k, [0] if k >= 0 else []


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
