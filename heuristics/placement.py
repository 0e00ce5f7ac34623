"""Placing jobs on nodes: the node profile, valid placements and the placement rules.

On an instance with nodes (the specification (docs/model.md)) a job fits from slot ``s``
when it has a valid placement for its whole run: one node with ``g`` batch
GPUs free in every slot of the run (a job of at most the largest node's
GPUs), or a set of nodes wholly free over the run whose GPUs sum to exactly
``g`` (a larger job); and in every slot the pool (``G`` less inference under
``curve``) has room for ``g`` more. :class:`NodeProfile` holds the free GPUs
per node and slot beside the pool's profile, which stays the 1-D ``free``
array of the flat decoders.

Among the placements that fit at the chosen start, a rule picks one
(:data:`PLACEMENTS`):

- ``first-fit``: the first node in node-list order (FIFO's rule);
- ``best-fit``: the node left with the least room (the smallest minimum of
  free GPUs over the run, after the job), ties by node order;
- ``frag``: the node whose use least increases the expected stranded GPUs,
  summed over the run, in the spirit of FGD (USENIX ATC 2023): a node with
  ``f`` free GPUs strands ``F(f) = f * #{jobs that cannot use f GPUs of this
  node}``, counted over the instance's jobs (a multi-node job can use a node
  only when it is wholly free); ties by best-fit, then node order.

A multi-node job always takes, among the sets of wholly free nodes summing to
``g``, the one whose sorted list of node positions is lexicographically
smallest (whole nodes leave no room to choose by).

This module is the vectorized (numpy) version; ``heuristics._compiled`` has
the compiled decoder held to it, and ``tests/reference_nodes.py`` the plain
per-slot version both are held to.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from instances import Instance
from instances.capacity import lexicographic_subset

__all__ = [
    "PLACEMENTS",
    "NodeProfile",
    "check_placement",
    "lexicographic_subset",
    "new_place",
    "node_fit",
    "node_fits_now",
    "node_occupy",
    "node_profile",
]

PLACEMENTS: tuple[str, ...] = ("first-fit", "best-fit", "frag")
"""Placement rules on nodes; their codes for the compiled decoder are the positions."""


def check_placement(placement: str) -> int:
    """The code of a placement rule, or :class:`ValueError` listing the known ones."""
    if placement not in PLACEMENTS:
        raise ValueError(
            f"placement: unknown placement rule {placement!r}; known: {', '.join(PLACEMENTS)}"
        )
    return PLACEMENTS.index(placement)


@dataclass
class NodeProfile:
    """Batch GPUs free per node and slot, with the summaries the fit search prunes by.

    Attributes
    ----------
    free
        ``(K, T)`` int64: GPUs of node ``k`` free for batch work at slot ``t``.
    sizes
        ``(K,)`` int64: each node's GPUs.
    maxfree
        ``(T,)`` int64: ``free.max(axis=0)``, the most any one node has free.
    nmax
        ``(T,)`` int64: how many nodes have ``maxfree`` free (the compiled
        decoder keeps it; the numpy one recomputes ``maxfree``).
    whole
        ``(T,)`` int64: GPUs of the nodes wholly free at ``t`` (``free == sizes``).
    multi
        ``(n,)`` bool: job larger than the largest node (takes whole nodes).
    frag
        ``(K, max size + 1)`` int64: ``F_k(f)`` of the ``frag`` rule.
    rule
        Code of the placement rule (a position in :data:`PLACEMENTS`).
    """

    free: np.ndarray
    sizes: np.ndarray
    maxfree: np.ndarray
    nmax: np.ndarray
    whole: np.ndarray
    multi: np.ndarray
    frag: np.ndarray
    rule: int

    def copy(self) -> NodeProfile:
        """A copy whose profiles can be changed independently (tables are shared)."""
        return NodeProfile(self.free.copy(), self.sizes, self.maxfree.copy(), self.nmax.copy(),
                           self.whole.copy(), self.multi, self.frag, self.rule)


def frag_table(inst: Instance) -> np.ndarray:
    """``F_k(f) = f * #{jobs j that cannot use f free GPUs of node k}`` for ``f = 0 .. size_k``.

    A job of at most the largest node's GPUs can use them when ``g_j <= f``;
    a larger job only when the node is wholly free (``f = size_k``).
    """
    sizes = inst.node_gpus
    top = int(sizes.max())
    g = np.sort(inst.gpus)
    multi = int(inst.multi_node.sum())
    f = np.arange(top + 1)
    bigger = g.size - np.searchsorted(g, f, side="right")  # jobs with g_j > f
    table = np.zeros((sizes.size, top + 1), dtype=np.int64)
    for k, size in enumerate(sizes.tolist()):
        row = f * bigger
        row[size] = size * (bigger[size] - multi)
        row[size + 1 :] = 0
        table[k] = row
    return table


def node_profile(inst: Instance, reservation: str = "curve", placement: str = "first-fit") -> NodeProfile:
    """The empty node profile of an instance with nodes (nothing placed yet).

    Each node starts with its GPUs less what the reservation withholds there
    (:meth:`instances.Instance.node_capacity`).
    """
    if not inst.has_nodes:
        raise ValueError(f"instance {inst.name!r} has no nodes")
    rule = check_placement(placement)
    cap = inst.node_capacity(reservation)  # type: ignore[arg-type]
    free = np.ascontiguousarray(np.repeat(cap[:, None], inst.horizon, axis=1), dtype=np.int64)
    sizes = np.ascontiguousarray(inst.node_gpus, dtype=np.int64)
    maxfree = free.max(axis=0)
    return NodeProfile(
        free, sizes, maxfree, (free == maxfree).sum(axis=0),
        ((free == sizes[:, None]) * sizes[:, None]).sum(axis=0),
        np.ascontiguousarray(inst.multi_node), frag_table(inst), rule,
    )


def new_place(inst: Instance) -> np.ndarray:
    """An empty placement array ``(num_jobs, max_span)`` of ``-1`` (see ``Schedule.to_placement_array``)."""
    return np.full((inst.num_jobs, inst.max_span), -1, dtype=np.int64)


def _choose(prof: NodeProfile, elig: np.ndarray, g: int, s: int, p: int) -> int:
    """The node of ``elig`` (ascending positions) the rule picks for ``g`` GPUs in ``s .. s+p-1``."""
    if prof.rule == 0 or elig.size == 1:
        return int(elig[0])
    window = prof.free[elig, s : s + p]
    room = window.min(axis=1) - g
    if prof.rule == 1:
        return int(elig[int(room.argmin())])
    rows = prof.frag[elig]
    delta = (np.take_along_axis(rows, window - g, axis=1)
             - np.take_along_axis(rows, window, axis=1)).sum(axis=1)
    return int(elig[int(np.lexsort((elig, room, delta))[0])])


def _full_windows(ok: np.ndarray, p: int) -> np.ndarray:
    """``out[..., i]``: ``ok[..., i : i + p]`` all true (windows along the last axis)."""
    c = np.zeros((*ok.shape[:-1], ok.shape[-1] + 1), dtype=np.int64)
    np.cumsum(ok, axis=-1, out=c[..., 1:])
    return (c[..., p:] - c[..., :-p]) == p


def node_fit(
    free: np.ndarray, prof: NodeProfile, j: int, g: int, p: int, lo: int, hi: int,
) -> tuple[int, list[int]]:
    """Earliest start ``s`` in ``[lo, hi - p]`` with a valid placement of job ``j``, and its nodes.

    Parameters
    ----------
    free
        The pool's free GPUs per slot (``G`` less inference and batch).
    prof
        The node profile.
    j, g, p
        The job, its GPUs and duration.
    lo, hi
        The job must start at or after ``lo`` and end by ``hi``.

    Returns
    -------
    tuple
        ``(s, nodes)``: the start and the node positions (ascending) the rule
        picks, or ``(-1, [])`` when no start fits.
    """
    if lo < 0 or hi - lo < p:
        return -1, []
    pool = _full_windows(free[lo:hi] >= g, p)
    if not prof.multi[j]:
        nodes_ok = _full_windows(prof.free[:, lo:hi] >= g, p)
        cand = np.flatnonzero(pool & nodes_ok.any(axis=0))
        if cand.size == 0:
            return -1, []
        i = int(cand[0])
        return lo + i, [_choose(prof, np.flatnonzero(nodes_ok[:, i]), g, lo + i, p)]
    whole_ok = _full_windows(prof.free[:, lo:hi] >= prof.sizes[:, None], p)
    room = (whole_ok * prof.sizes[:, None]).sum(axis=0)
    for i in np.flatnonzero(pool & (room >= g)).tolist():
        elig = np.flatnonzero(whole_ok[:, i])
        pick = lexicographic_subset(prof.sizes[elig].tolist(), g)
        if pick:
            return lo + i, elig[pick].tolist()
    return -1, []


def node_occupy(
    free: np.ndarray, prof: NodeProfile, j: int, g: int, s: int, p: int, nodes: list[int],
    place: np.ndarray | None = None,
) -> None:
    """Take job ``j``'s GPUs in slots ``s .. s+p-1`` on ``nodes`` (and the pool), in place.

    On one node the job takes ``g`` GPUs; on several, each in full. Writes the
    nodes into row ``j`` of ``place`` when given.
    """
    free[s : s + p] -= g
    if len(nodes) == 1:
        prof.free[nodes[0], s : s + p] -= g
    else:
        prof.free[nodes, s : s + p] -= prof.sizes[nodes][:, None]
    window = prof.free[:, s : s + p]
    prof.maxfree[s : s + p] = window.max(axis=0)
    prof.nmax[s : s + p] = (window == prof.maxfree[s : s + p]).sum(axis=0)
    prof.whole[s : s + p] = ((window == prof.sizes[:, None]) * prof.sizes[:, None]).sum(axis=0)
    if place is not None:
        place[j] = -1
        place[j, : len(nodes)] = nodes


def node_fits_now(
    free: np.ndarray, prof: NodeProfile, t: int, cand: np.ndarray, gpus: np.ndarray,
    dur: np.ndarray,
) -> tuple[int, list[int]]:
    """Position in ``cand`` of the first job with a valid placement from slot ``t``, and its nodes.

    The caller guarantees ``t + p <= min(D, T)`` for every candidate. One
    cumulative minimum per node answers every candidate that takes one node
    at once; a candidate that takes whole nodes is checked exactly when the
    wholly free nodes hold enough GPUs. Returns ``(-1, [])`` when none fits.
    """
    if cand.size == 0:
        return -1, []
    pool = np.minimum.accumulate(free[t:])
    node_cm = np.minimum.accumulate(prof.free[:, t:], axis=1)
    whole_cm = np.minimum.accumulate(prof.free[:, t:] >= prof.sizes[:, None], axis=1)
    g, p = gpus[cand], dur[cand]
    multi = prof.multi[cand]
    fits = (pool[p - 1] >= g) & (node_cm[:, p - 1] >= g).any(axis=0)
    hold = (pool[p - 1] >= g) & ((whole_cm[:, p - 1] * prof.sizes[:, None]).sum(axis=0) >= g)
    for k in np.flatnonzero(np.where(multi, hold, fits)).tolist():
        gk, pk = int(g[k]), int(p[k])
        if not multi[k]:
            return k, [_choose(prof, np.flatnonzero(node_cm[:, pk - 1] >= gk), gk, t, pk)]
        elig = np.flatnonzero(whole_cm[:, pk - 1])
        pick = lexicographic_subset(prof.sizes[elig].tolist(), gk)
        if pick:
            return k, elig[pick].tolist()
    return -1, []
