"""The online placement loop: each pod, in turn, to the best-scoring node it fits, or dropped.

A pod fits a node iff the node's model is allowed, free CPU and memory cover
it, and it finds ``gpus`` fully free GPUs (whole GPUs) or one GPU with at least
``gpu_milli`` free (a share). Among the nodes it fits, the highest score wins
and ties go to the earliest node in the packing's order. On the chosen node a
whole-GPU pod takes the lowest-indexed fully free GPUs; a share takes the GPU
of its policy: FGD's own choice, a random one with room (``random``), the
lowest-indexed one with room (``firstfit``), else the one with the least room
that fits (the simulator's best-fit default). ``random`` draws its node
uniformly among those the pod fits. The whole run is one compiled call over
the states of :mod:`.state` (the nodes, the pods, what is free), FGD's target
workload (:class:`.scores.Target`), ``random``'s draws (:class:`Draws`) and what
the scores read beyond the free state (:class:`Kept`), one step per function:
the node (:func:`_best_node`, :func:`_random_node`), then the GPUs and the
state's update (:func:`_place`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from instances.packing import GPU_MILLI
from instances.packing.frag import node_frag_shapes

from .scores import (
    FragNode,
    Target,
    bestfit_score,
    clustering_score,
    dotprod_score,
    fgd_node_score,
    packing_score,
)
from .state import Free, Need, Nodes, Pods, Types, fits, need_of, new_types, scored_alike, take

__all__ = ["POLICY_CODES", "Draws", "Kept", "run_online"]

POLICY_CODES: dict[str, int] = {
    "random": 0, "dotprod": 1, "clustering": 2, "packing": 3, "bestfit": 4, "fgd": 5,
    "first-fit": 6,
}
"""Policy name -> the code the compiled loop dispatches on."""

RANDOM, DOTPROD, CLUSTERING, PACKING, BESTFIT, FGD, FIRSTFIT = range(7)


class Draws(NamedTuple):
    """``random``'s uniform draws in [0, 1), one per pod (packing index)."""

    node: np.ndarray
    """``(P,)``: picks the node among those the pod fits."""
    gpu: np.ndarray
    """``(P,)``: picks a share's GPU among those with room."""


class Kept(NamedTuple):
    """What the policies' scores read beyond :class:`.state.Free`, kept as nodes change."""

    total: np.ndarray
    """``(K,)``: free milli summed over each node's GPUs."""
    klass: np.ndarray
    """``(K, width + 1)``: pods per class on each node (0: shares, ``g``: ``g`` whole GPUs)."""
    classes: np.ndarray
    """``(K,)``: classes present on each node."""
    frag: np.ndarray
    """``(K,)``: FGD's fragmentation of each node (``fgd`` only; zeros otherwise)."""
    room: np.ndarray
    """``(K, S)``: FGD's per-shape counts of each node (``fgd`` only; no rows otherwise)."""
    short: np.ndarray
    """``(K, S)``: the same (:func:`instances.packing.frag.node_frag_shapes`)."""


@njit(cache=True)
def _kept(policy: int, nodes: Nodes, free: Free, target: Target) -> Kept:  # pragma: no cover
    """:class:`Kept` of the free state ``free`` (FGD's parts measured under ``fgd`` only)."""
    n_nodes = nodes.gpus.shape[0]
    rows = n_nodes if policy == FGD else 0
    kept = Kept(nodes.gpus * GPU_MILLI, np.zeros((n_nodes, free.left.shape[1] + 1), np.int64),
                np.zeros(n_nodes, np.int64), np.zeros(n_nodes),
                np.zeros((rows, target.cpu.shape[0]), np.int64),
                np.zeros((rows, target.cpu.shape[0]), np.int64))
    for n in range(rows):
        kept.frag[n] = _frag(n, nodes, free, kept, target)
    return kept


@njit(cache=True, inline="always")
def _frag(n: int, nodes: Nodes, free: Free, kept: Kept, target: Target) -> float:
    # pragma: no cover
    """FGD's fragmentation of node ``n``, its per-shape counts left in ``kept``."""
    return node_frag_shapes(free.cpu[n], free.left[n, :nodes.gpus[n]], nodes.model[n],
                            target.cpu, target.milli, target.gpus, target.allowed, target.freq,
                            kept.room[n], kept.short[n])


@njit(cache=True)
def _random_node(need: Need, nodes: Nodes, free: Free, u: float) -> int:  # pragma: no cover
    """``random``'s node for a pod of ``need``: the one the draw ``u`` picks among those it fits."""
    count = 0
    for n in range(nodes.gpus.shape[0]):
        if fits(need, nodes, free, n):
            count += 1
    if count == 0:
        return -1
    pick = min(int(u * count), count - 1)
    for n in range(nodes.gpus.shape[0]):
        if fits(need, nodes, free, n):
            if pick == 0:
                return n
            pick -= 1
    return -1


@njit(cache=True)
def _best_node(policy: int, pods: Pods, j: int, nodes: Nodes, free: Free, kept: Kept,
               target: Target, types: Types) -> tuple[int, int]:  # pragma: no cover
    """The node of the highest score pod ``j`` fits (ties to the earliest; ``first-fit``: the
    first it fits), and ``fgd``'s GPU for a share; (-1, -1) when it fits none."""
    need = need_of(pods, j)
    g, m, c = need.gpus, need.milli, need.cpu
    k = 0 if (g == 1 and m < GPU_MILLI) else g  # the pod's class (clustering)
    best, best_score, best_gpu = -1, -1, -1
    for n in range(nodes.gpus.shape[0]):
        if not fits(need, nodes, free, n):
            continue
        if policy == FIRSTFIT:
            return n, -1
        if scored_alike(types, n, j):
            continue
        # the score, inline: a call through one score function taking the states ran 1.5 to
        # 2 times slower under numba
        gpu = -1
        if policy == DOTPROD:
            s = dotprod_score(free.cpu[n], kept.total[n], c, g * m)
        elif policy == BESTFIT:
            s = bestfit_score(free.cpu[n], kept.total[n], c, g * m)
        elif policy == CLUSTERING:
            same = kept.klass[n, k] if k < kept.klass.shape[1] else 0
            s = clustering_score(kept.total[n], same, kept.classes[n], g)
        elif policy == PACKING:
            s = packing_score(free.left[n, :nodes.gpus[n]], free.full[n], g, m)
        else:
            s, gpu = fgd_node_score(FragNode(free.left[n, :nodes.gpus[n]], free.cpu[n],
                                             nodes.model[n], kept.frag[n], kept.room[n],
                                             kept.short[n]), g, m, c, target)
        if s > best_score:
            best, best_score, best_gpu = n, s, gpu
    return best, best_gpu


@njit(cache=True)
def _share_gpu(policy: int, row: np.ndarray, m: int, fgd_gpu: int,
               u: float) -> int:  # pragma: no cover
    """The GPU of ``row`` (free milli) a share of ``m`` takes under ``policy``: FGD's, the one
    the draw ``u`` picks among those with room (``random``), the lowest-indexed with room
    (``first-fit``), else the one with the least room that fits (the first of equals)."""
    if policy == FGD:
        return fgd_gpu
    i = -1
    if policy == RANDOM:
        room = 0
        for k in range(row.shape[0]):
            if row[k] >= m:
                room += 1
        pick = min(int(u * room), room - 1)
        for k in range(row.shape[0]):
            if row[k] >= m:
                if pick == 0:
                    return k
                pick -= 1
        return i
    for k in range(row.shape[0]):
        if row[k] >= m and (i < 0 or (policy != FIRSTFIT and row[k] < row[i])):
            i = k
    return i


@njit(cache=True)
def _place(policy: int, pods: Pods, j: int, nodes: Nodes, free: Free, kept: Kept,
           target: Target, n: int, gpu: int, u: float) -> int:  # pragma: no cover
    """Place pod ``j`` on node ``n`` (a share on ``gpu`` under ``fgd``): the free state and
    :class:`Kept` follow; its GPUs as a bit mask."""
    g, m = pods.gpus[j], pods.milli[j]
    row = free.left[n, :nodes.gpus[n]]
    mask = 0
    if g == 1 and m < GPU_MILLI:
        mask = 1 << _share_gpu(policy, row, m, gpu, u)
    elif g > 0:  # the lowest-indexed wholly free GPUs
        taken = 0
        for k in range(row.shape[0]):
            if taken < g and row[k] == GPU_MILLI:
                mask |= 1 << k
                taken += 1
    take(free, n, mask, m, pods.cpu[j], pods.mem[j])
    kept.total[n] -= g * m
    if g > 0:
        k = 0 if (g == 1 and m < GPU_MILLI) else g
        if kept.klass[n, k] == 0:
            kept.classes[n] += 1
        kept.klass[n, k] += 1
    if policy == FGD:
        kept.frag[n] = _frag(n, nodes, free, kept, target)
    return mask


@njit(cache=True)
def run_online(policy: int, order: np.ndarray, nodes: Nodes, pods: Pods, free: Free,
               target: Target, draws: Draws) -> tuple[np.ndarray, np.ndarray]:
    # pragma: no cover (compiled; held to the reference loop in the tests)
    """Place the pods of ``order`` one by one with ``policy`` (a :data:`POLICY_CODES` value),
    from the free state ``free`` (changed in place); ``target``: FGD's workload (``fgd``),
    ``draws``: ``random``'s.

    Returns
    -------
    node_of, gpu_mask
        Per pod (packing index): its node (-1 if it failed or is not in
        ``order``) and its GPUs as a bit mask (bit ``i``: GPU ``i``).
    """
    kept = _kept(policy, nodes, free, target)
    # the nodes nothing is placed on score alike within a type: each pod scores the first
    types = new_types(nodes)
    node_of = np.full(pods.gpus.shape[0], -1, dtype=np.int64)
    gpu_mask = np.zeros(pods.gpus.shape[0], dtype=np.int64)
    for j in order:
        if policy == RANDOM:
            n, gpu = _random_node(need_of(pods, j), nodes, free, draws.node[j]), -1
        else:
            n, gpu = _best_node(policy, pods, j, nodes, free, kept, target, types)
        if n < 0:
            continue
        gpu_mask[j] = _place(policy, pods, j, nodes, free, kept, target, n, gpu, draws.gpu[j])
        node_of[j] = n
        types.touched[n] = True
    return node_of, gpu_mask
