"""``guided`` on a packing in one compiled loop (section 17 of the specification).

The rule is :class:`heuristics.guided.Guided`; this loop keeps its state
from pod to pod (each node's fragmentation, stranded milli and hosting
counts change only where a pod went) instead of rebuilding it from the view
for every pod, and scores one node of each type among the nodes nothing was
placed on (they score alike and ties go to the earliest). The tests hold it
to the rule run through the plain loop of :mod:`.custom`, placement for
placement.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import njit

from instances.packing import GPU_MILLI, PackingArrays

from ..guided import (
    Guided,
    GuidedState,
    Shapes,
    local_score,
    move_score,
    new_state,
    refresh,
    scarcity,
)
from .state import (
    Free,
    Nodes,
    Pods,
    Types,
    empty_free,
    fits,
    gpu_lists,
    need_of,
    new_types,
    nodes_of,
    pods_of,
    scored_alike,
    take,
)

__all__ = ["run_guided"]


class Keys(NamedTuple):
    """Each node's local scores per pod shape, kept until the node changes."""

    key: np.ndarray
    """``(P,)``: each pod's shape (equal GPUs, milli and CPU)."""
    local: np.ndarray
    """``(K, shapes, width)``: the local score of a shape on a node, per GPU (a share) or at 0."""
    stamp: np.ndarray
    """``(K, shapes)``: the node's :attr:`version` the local scores were computed at (-1: never)."""
    version: np.ndarray
    """``(K,)``: how many pods were placed on the node."""


@njit(cache=True)
def _scored_node(pods: Pods, j: int, nodes: Nodes, free: Free, st: GuidedState, sh: Shapes,
                 types: Types, keys: Keys) -> tuple[int, int]:  # pragma: no cover
    """The node of the highest score pod ``j`` fits (ties to the earliest) and, for a share,
    its GPU; (-1, -1) when it fits none."""
    g, m, c = pods.gpus[j], pods.milli[j], pods.cpu[j]
    need = need_of(pods, j)
    rho = scarcity(st, sh)
    # the scarce loss is never negative: a move whose local score cannot beat the best is
    # not completed (the same choice, fewer sums)
    prune = sh.w_res >= 0.0
    best, best_gpu, best_s = -1, -1, -np.inf
    for n in range(nodes.gpus.shape[0]):
        if not fits(need, nodes, free, n):
            continue
        if scored_alike(types, n, j):
            continue
        model, k, row = nodes.model[n], keys.key[j], st.left[n]
        fresh = keys.stamp[n, k] != keys.version[n]
        keys.stamp[n, k] = keys.version[n]
        cpu_after = st.cpu[n] - c
        if g == 1 and m < GPU_MILLI:
            for i in range(nodes.gpus[n]):
                if row[i] < m:
                    continue
                dup = False  # an earlier GPU with as much free scores the same and wins
                for q in range(i):
                    dup |= row[q] == row[i]
                if dup:
                    continue
                if fresh:
                    keys.local[n, k, i] = local_score(st, sh, n, model, 1, row[i], row[i] - m, m,
                                                      cpu_after)
                if prune and best >= 0 and keys.local[n, k, i] <= best_s:
                    continue
                s = move_score(keys.local[n, k, i], st, sh, rho, n, model, 1, row[i],
                               row[i] - m, cpu_after)
                if best < 0 or s > best_s:
                    best, best_gpu, best_s = n, i, s
        else:
            cnt, new = (0, GPU_MILLI) if g == 0 else (g, 0)
            if fresh:
                keys.local[n, k, 0] = local_score(st, sh, n, model, cnt, GPU_MILLI, new, g * m,
                                                  cpu_after)
            if prune and best >= 0 and keys.local[n, k, 0] <= best_s:
                continue
            s = move_score(keys.local[n, k, 0], st, sh, rho, n, model, cnt, GPU_MILLI, new,
                           cpu_after)
            if best < 0 or s > best_s:
                best, best_gpu, best_s = n, -1, s
    return best, best_gpu


@njit(cache=True)
def _loop(order: np.ndarray, nodes: Nodes, pods: Pods, free: Free, sh: Shapes,
          keys: Keys) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
    # guided's state over the free state (the same arrays: taking a pod changes both)
    st = new_state(free.left, free.cpu, free.mem, nodes.gpus, nodes.model, sh)
    free = Free(st.left, st.cpu, st.mem, st.full, free.most)
    # nodes nothing is placed on score alike within a type: score the first of each type only
    types = new_types(nodes)
    node_of = np.full(pods.gpus.shape[0], -1, dtype=np.int64)
    gpu_mask = np.zeros(pods.gpus.shape[0], dtype=np.int64)
    for j in order:
        n, gpu = _scored_node(pods, j, nodes, free, st, sh, types, keys)
        if n < 0:
            continue
        g, m = pods.gpus[j], pods.milli[j]
        mask = 0
        if g == 1 and m < GPU_MILLI:
            mask = 1 << gpu
        elif g > 0:  # the lowest-indexed wholly free GPUs
            taken = 0
            for k in range(nodes.gpus[n]):
                if taken < g and st.left[n, k] == GPU_MILLI:
                    mask |= 1 << k
                    taken += 1
        take(free, n, mask, m, pods.cpu[j], pods.mem[j])
        refresh(st, n, nodes.gpus, nodes.model, sh)
        node_of[j] = n
        gpu_mask[j] = mask
        types.touched[n] = True
        keys.version[n] += 1
    return node_of, gpu_mask


def run_guided(rule: Guided, a: PackingArrays, seq: np.ndarray) -> tuple[np.ndarray, list[list[int]]]:
    """Place the pods of ``seq`` with ``rule`` (bound to the packing's workload), in one compiled call.

    Returns
    -------
    node_of, gpus
        Per pod: its node (-1: failed or not in ``seq``) and its GPU indices.
    """
    sh = rule.shapes(a.models)
    shape = np.stack([a.pod_gpus, a.pod_milli, a.pod_cpu], axis=1)
    _, key = np.unique(shape, axis=0, return_inverse=True)
    key = np.ascontiguousarray(key.reshape(-1), dtype=np.int64)
    n_nodes, shapes, width = a.node_gpus.size, int(key.max(initial=-1)) + 1, int(a.node_gpus.max(initial=0))
    keys = Keys(key, np.zeros((n_nodes, shapes, width)), np.full((n_nodes, shapes), -1, np.int64),
                np.zeros(n_nodes, np.int64))
    nodes = nodes_of(a)
    loop: Any = _loop
    node_of, mask = loop(np.ascontiguousarray(seq, dtype=np.int64), nodes, pods_of(a),
                         empty_free(a), sh, keys)
    return node_of, gpu_lists(nodes, node_of, mask)
