"""The placement rules: which node a job takes among those where it fits.

A job takes a placement for its whole run (:mod:`instances.capacity`): one
node with ``g`` batch GPUs free in every slot of the run (a job of at most the
largest node's GPUs), or a set of nodes wholly free over the run whose GPUs
sum to exactly ``g`` (a larger job). Among the nodes that fit a one-node job
at the chosen start, a rule picks one (:data:`PLACEMENTS`):

- ``first-fit``: the first node in node-list order (FIFO's rule);
- ``best-fit``: the node left with the least room (the smallest minimum of
  free GPUs over the run, after the job), ties by node order;
- ``frag``: the node whose use least increases the expected stranded GPUs,
  summed over the run, in the spirit of FGD (USENIX ATC 2023): a node with
  ``f`` free GPUs strands ``F(f) = f * #{jobs that cannot use f GPUs of this
  node}``, counted over the instance's jobs (a multi-node job can use a node
  only when it is wholly free); ties by best-fit, then node order.

A multi-node job always takes the set of wholly free nodes whose sorted
positions are lexicographically smallest
(:func:`instances.capacity.lexicographic_subset`). A flat pool is one node,
where every rule picks it. ``heuristics._compiled`` applies the same rules in
the compiled decoder; ``tests/reference_nodes.py`` is the plain version both
are held to.
"""

from __future__ import annotations

import numpy as np

from instances import Instance
from instances.capacity import lexicographic_subset

from .placement_rules import BUILTIN_TIME

__all__ = ["PLACEMENTS", "check_placement", "choose", "frag_table", "lexicographic_subset", "new_place",
           "place_width"]

PLACEMENTS: tuple[str, ...] = BUILTIN_TIME
"""Placement rules on nodes (entries of :data:`heuristics.placement_rules.PLACEMENT_RULES`);
their codes for the compiled decoder are the positions."""


def check_placement(placement: str) -> int:
    """The code of a placement rule, or :class:`ValueError` listing the known ones."""
    if placement not in PLACEMENTS:
        raise ValueError(
            f"placement: unknown placement rule {placement!r}; known: {', '.join(PLACEMENTS)}"
        )
    return PLACEMENTS.index(placement)


def frag_table(inst: Instance, sizes: np.ndarray) -> np.ndarray:
    """``F_k(f) = f * #{jobs j that cannot use f free GPUs of node k}`` for ``f = 0 .. size_k``.

    A job of at most the largest node's GPUs can use them when ``g_j <= f``;
    a larger job only when the node is wholly free (``f = size_k``). Columns
    past a node's size are 0.
    """
    top = int(sizes.max())
    g = np.sort(inst.gpus)
    f = np.arange(top + 1)
    bigger = g.size - np.searchsorted(g, f, side="right")  # jobs with g_j > f
    table = np.where(f <= sizes[:, None], f * bigger, 0)
    table[np.arange(sizes.size), sizes] = sizes * (bigger[sizes] - int(inst.multi_node.sum()))
    return np.ascontiguousarray(table, dtype=np.int64)


def place_width(inst: Instance) -> tuple[int, int]:
    """``(span, width)`` of a placement row: nodes in ``[0, span)``, on model version 3 the GPU
    indices after.

    ``span`` is :attr:`Instance.max_span`. On version 3 the GPU columns hold
    the indices a one-node job takes on its node (ascending, ``-1`` padded),
    as many as the largest one-node job's GPUs; a job on whole nodes lists
    none (it holds them all). Versions 1 and 2 have none (``width == span``).
    """
    if not inst.jobs_use_resources:
        return inst.max_span, inst.max_span
    one = inst.gpus[~inst.multi_node]
    return inst.max_span, inst.max_span + int(one.max(initial=1))


def new_place(inst: Instance) -> np.ndarray:
    """An empty placement array ``(num_jobs, width)`` of ``-1`` (:func:`place_width`; see
    ``Schedule.to_placement_array``): the nodes, and on model version 3 the GPU indices."""
    return np.full((inst.num_jobs, place_width(inst)[1]), -1, dtype=np.int64)


def choose(
    rule: int, free: np.ndarray, frag: np.ndarray, elig: np.ndarray, g: int, s: int, p: int,
) -> int:
    """The node of ``elig`` (ascending positions) that ``rule`` picks for ``g`` GPUs in ``s .. s+p-1``.

    ``free`` is the ``(K, T)`` node part of a profile, ``frag`` its
    :func:`frag_table` (read by ``frag`` only).
    """
    if rule == 0 or elig.size == 1:
        return int(elig[0])
    window = free[elig, s : s + p]
    room = window.min(axis=1) - g
    if rule == 1:
        return int(elig[int(room.argmin())])
    rows = frag[elig]
    delta = (np.take_along_axis(rows, window - g, axis=1)
             - np.take_along_axis(rows, window, axis=1)).sum(axis=1)
    return int(elig[int(np.lexsort((elig, room, delta))[0])])
