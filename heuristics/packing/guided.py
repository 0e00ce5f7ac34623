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

import numpy as np
from numba import njit

from instances.packing import GPU_MILLI, PackingArrays

from ..guided import Guided, Shapes, local_score, move_score, new_state, refresh, scarcity
from .online import fits, node_types

__all__ = ["run_guided"]


@njit(cache=True)
def _loop(order: np.ndarray, pod_gpus: np.ndarray, pod_milli: np.ndarray, pod_cpu: np.ndarray,
          pod_mem: np.ndarray, pod_allowed: np.ndarray, node_gpus: np.ndarray,
          node_cpu: np.ndarray, node_mem: np.ndarray, node_model: np.ndarray, sh: Shapes,
          key: np.ndarray, keys: int) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
    n_nodes = node_gpus.shape[0]
    width = 0
    for n in range(n_nodes):
        width = max(width, node_gpus[n])
    left = np.full((n_nodes, width), -1, dtype=np.int64)
    for n in range(n_nodes):
        left[n, :node_gpus[n]] = GPU_MILLI
    st = new_state(left, node_cpu, node_mem, node_gpus, node_model, sh)
    maxleft = np.where(node_gpus > 0, GPU_MILLI, 0).astype(np.int64)
    # nodes nothing is placed on score alike within a type: score the first of each type only
    rep = node_types(node_gpus, node_model, node_cpu, node_mem)
    touched = np.zeros(n_nodes, dtype=np.bool_)
    seen = np.full(n_nodes, -1, dtype=np.int64)
    # each node's local scores per pod shape (key) and GPU, kept until the node changes
    local = np.zeros((n_nodes, keys, width))
    stamp = np.full((n_nodes, keys), -1, dtype=np.int64)
    version = np.zeros(n_nodes, dtype=np.int64)
    # the scarce loss is never negative: a move whose local score cannot beat the best is
    # not completed (the same choice, fewer sums)
    prune = sh.w_res >= 0.0
    node_of = np.full(pod_gpus.shape[0], -1, dtype=np.int64)
    gpu_mask = np.zeros(pod_gpus.shape[0], dtype=np.int64)
    for j in order:
        g, m, c = pod_gpus[j], pod_milli[j], pod_cpu[j]
        rho = scarcity(st, sh)
        best, best_gpu, best_s = -1, -1, -np.inf
        for n in range(n_nodes):
            if not fits(j, n, pod_gpus, pod_milli, pod_cpu, pod_mem, pod_allowed, node_model,
                        st.cpu, st.mem, st.full, maxleft):
                continue
            if not touched[n]:
                if seen[rep[n]] == j:
                    continue
                seen[rep[n]] = j
            model, k, row = node_model[n], key[j], st.left[n]
            fresh = stamp[n, k] != version[n]
            stamp[n, k] = version[n]
            cpu_after = st.cpu[n] - c
            if g == 1 and m < GPU_MILLI:
                for i in range(node_gpus[n]):
                    if row[i] < m:
                        continue
                    dup = False  # an earlier GPU with as much free scores the same and wins
                    for q in range(i):
                        dup |= row[q] == row[i]
                    if dup:
                        continue
                    if fresh:
                        local[n, k, i] = local_score(st, sh, n, model, 1, row[i], row[i] - m, m,
                                                     cpu_after)
                    if prune and best >= 0 and local[n, k, i] <= best_s:
                        continue
                    s = move_score(local[n, k, i], st, sh, rho, n, model, 1, row[i], row[i] - m,
                                   cpu_after)
                    if best < 0 or s > best_s:
                        best, best_gpu, best_s = n, i, s
            else:
                cnt, new = (0, GPU_MILLI) if g == 0 else (g, 0)
                if fresh:
                    local[n, k, 0] = local_score(st, sh, n, model, cnt, GPU_MILLI, new, g * m,
                                                 cpu_after)
                if prune and best >= 0 and local[n, k, 0] <= best_s:
                    continue
                s = move_score(local[n, k, 0], st, sh, rho, n, model, cnt, GPU_MILLI, new,
                               cpu_after)
                if best < 0 or s > best_s:
                    best, best_gpu, best_s = n, -1, s
        if best < 0:
            continue
        n = best
        row = st.left[n]
        mask = 0
        if g == 1 and m < GPU_MILLI:
            row[best_gpu] -= m
            mask = 1 << best_gpu
        elif g > 0:
            taken = 0
            for k in range(node_gpus[n]):
                if taken < g and row[k] == GPU_MILLI:
                    row[k] = 0
                    mask |= 1 << k
                    taken += 1
        st.cpu[n] -= c
        st.mem[n] -= pod_mem[j]
        refresh(st, n, node_gpus, node_model, sh)
        hi = 0
        for k in range(node_gpus[n]):
            hi = max(hi, row[k])
        maxleft[n] = hi
        node_of[j] = n
        gpu_mask[j] = mask
        touched[n] = True
        version[n] += 1
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
    loop = _loop
    node_of, mask = loop(np.ascontiguousarray(seq, dtype=np.int64), a.pod_gpus, a.pod_milli,
                         a.pod_cpu, a.pod_mem, a.pod_allowed, a.node_gpus, a.node_cpu, a.node_mem,
                         a.node_model, sh, key, int(key.max(initial=-1)) + 1)
    gpus = [[i for i in range(int(a.node_gpus[n])) if int(mk) >> i & 1] if n >= 0 else []
            for n, mk in zip(node_of.tolist(), mask.tolist())]
    return node_of, gpus
