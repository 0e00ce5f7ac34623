"""The online placement loop: each pod, in turn, to the best-scoring node it fits, or dropped.

A pod fits a node iff the node's model is allowed, free CPU and memory cover
it, and it finds ``gpus`` fully free GPUs (whole GPUs) or one GPU with at least
``gpu_milli`` free (a share). Among the nodes it fits, the highest score wins
and ties go to the earliest node in the packing's order. On the chosen node a
whole-GPU pod takes the lowest-indexed fully free GPUs; a share takes the GPU
of its policy: FGD's own choice, a random one with room (``random``), the
lowest-indexed one with room (``firstfit``), else the one with the least room
that fits (the simulator's best-fit default). ``random`` draws its node
uniformly among those the pod fits. The whole run is one compiled call.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from instances.packing import GPU_MILLI
from instances.packing.frag import node_frag_shapes

from .scores import bestfit_score, clustering_score, dotprod_score, fgd_score, packing_score

__all__ = ["POLICY_CODES", "fits", "fits_all", "run_online"]

POLICY_CODES: dict[str, int] = {
    "random": 0, "dotprod": 1, "clustering": 2, "packing": 3, "bestfit": 4, "fgd": 5,
    "first-fit": 6,
}
"""Policy name -> the code the compiled loop dispatches on."""

RANDOM, DOTPROD, CLUSTERING, PACKING, BESTFIT, FGD, FIRSTFIT = range(7)


@njit(cache=True, inline="always")
def fits(j: int, n: int, pod_gpus: np.ndarray, pod_milli: np.ndarray, pod_cpu: np.ndarray,
          pod_mem: np.ndarray, pod_allowed: np.ndarray, node_model: np.ndarray,
          cpu: np.ndarray, mem: np.ndarray, full: np.ndarray,
          maxleft: np.ndarray) -> bool:  # pragma: no cover (compiled)
    # branch-free: the short-circuit form ran a hundred times slower under numba
    g, m = pod_gpus[j], pod_milli[j]
    shared = (g == 1) & (m < GPU_MILLI)
    gpu_ok = (g == 0) | (shared & (maxleft[n] >= m)) | (~shared & (full[n] >= g))
    return pod_allowed[j, node_model[n]] & (cpu[n] >= pod_cpu[j]) & (mem[n] >= pod_mem[j]) & gpu_ok


@njit(cache=True)
def node_types(node_gpus: np.ndarray, node_model: np.ndarray, node_cpu: np.ndarray,
               node_mem: np.ndarray) -> np.ndarray:  # pragma: no cover (compiled)
    """Each node's type representative: the first node of equal GPUs, model, CPU and memory.

    Nodes nothing is placed on score alike within a type, and ties go to the earliest: the
    loops score the first of each type only.
    """
    n_nodes = node_gpus.shape[0]
    rep = np.arange(n_nodes)
    for n in range(n_nodes):
        for q in range(n):
            if rep[q] == q and node_gpus[q] == node_gpus[n] and node_model[q] == node_model[n] \
                    and node_cpu[q] == node_cpu[n] and node_mem[q] == node_mem[n]:
                rep[n] = q
                break
    return rep


@njit(cache=True)
def fits_all(j: int, pod_gpus: np.ndarray, pod_milli: np.ndarray, pod_cpu: np.ndarray,
             pod_mem: np.ndarray, pod_allowed: np.ndarray, node_model: np.ndarray,
             cpu: np.ndarray, mem: np.ndarray, full: np.ndarray, maxleft: np.ndarray,
             out: np.ndarray) -> bool:  # pragma: no cover (compiled)
    """:func:`fits` of pod ``j`` on every node, into ``out``; whether any node fits."""
    some = False
    for n in range(out.shape[0]):
        out[n] = fits(j, n, pod_gpus, pod_milli, pod_cpu, pod_mem, pod_allowed, node_model,
                      cpu, mem, full, maxleft)
        some |= out[n]
    return some


@njit(cache=True)
def run_online(policy: int, order: np.ndarray, pod_gpus: np.ndarray, pod_milli: np.ndarray,
               pod_cpu: np.ndarray, pod_mem: np.ndarray, pod_allowed: np.ndarray,
               node_gpus: np.ndarray, node_cpu: np.ndarray, node_mem: np.ndarray,
               node_model: np.ndarray, t_cpu: np.ndarray, t_milli: np.ndarray,
               t_gpus: np.ndarray, t_allowed: np.ndarray, t_freq: np.ndarray,
               u_node: np.ndarray, u_gpu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # pragma: no cover (compiled; held to the reference loop in the tests)
    """Place the pods of ``order`` one by one with ``policy`` (a :data:`POLICY_CODES` value).

    Returns
    -------
    node_of, gpu_mask
        Per pod (packing index): its node (-1 if it failed or is not in
        ``order``) and its GPUs as a bit mask (bit ``i``: GPU ``i``).
    """
    n_nodes = node_gpus.shape[0]
    width = 0
    for n in range(n_nodes):
        width = max(width, node_gpus[n])
    left = np.zeros((n_nodes, width), dtype=np.int64)
    for n in range(n_nodes):
        left[n, :node_gpus[n]] = GPU_MILLI
    cpu = node_cpu.copy()
    mem = node_mem.copy()
    full = node_gpus.copy()
    total = node_gpus * GPU_MILLI
    maxleft = np.full(n_nodes, GPU_MILLI, dtype=np.int64)
    klass = np.zeros((n_nodes, width + 1), dtype=np.int64)  # pods per class: 0 share, g whole
    classes = np.zeros(n_nodes, dtype=np.int64)
    frag = np.zeros(n_nodes)
    # FGD's fragmentation of each node and its per-shape counts (kept as the node changes)
    kept = n_nodes if policy == FGD else 0
    shape_room = np.zeros((kept, t_cpu.shape[0]), dtype=np.int64)
    shape_short = np.zeros((kept, t_cpu.shape[0]), dtype=np.int64)
    if policy == FGD:
        for n in range(n_nodes):
            frag[n] = node_frag_shapes(cpu[n], left[n, :node_gpus[n]], node_model[n], t_cpu,
                                       t_milli, t_gpus, t_allowed, t_freq, shape_room[n],
                                       shape_short[n])
    # the nodes nothing is placed on score alike within a type: each pod scores the first
    rep = node_types(node_gpus, node_model, node_cpu, node_mem)
    touched = np.zeros(n_nodes, dtype=np.bool_)
    seen = np.full(n_nodes, -1, dtype=np.int64)  # (the pod that last scored a type's first)
    node_of = np.full(pod_gpus.shape[0], -1, dtype=np.int64)
    gpu_mask = np.zeros(pod_gpus.shape[0], dtype=np.int64)
    for j in order:
        g, m, c = pod_gpus[j], pod_milli[j], pod_cpu[j]
        shared = g == 1 and m < GPU_MILLI
        best, best_score, best_gpu = -1, -1, -1
        if policy == RANDOM:
            count = 0
            for n in range(n_nodes):
                if fits(j, n, pod_gpus, pod_milli, pod_cpu, pod_mem, pod_allowed, node_model,
                         cpu, mem, full, maxleft):
                    count += 1
            if count > 0:
                pick = min(int(u_node[j] * count), count - 1)
                for n in range(n_nodes):
                    if fits(j, n, pod_gpus, pod_milli, pod_cpu, pod_mem, pod_allowed,
                             node_model, cpu, mem, full, maxleft):
                        if pick == 0:
                            best = n
                            break
                        pick -= 1
        else:
            for n in range(n_nodes):
                if not fits(j, n, pod_gpus, pod_milli, pod_cpu, pod_mem, pod_allowed,
                             node_model, cpu, mem, full, maxleft):
                    continue
                if policy == FIRSTFIT:
                    best = n
                    break
                if not touched[n]:
                    if seen[rep[n]] == j:
                        continue
                    seen[rep[n]] = j
                gpu = -1
                if policy == DOTPROD:
                    s = dotprod_score(cpu[n], total[n], c, g * m)
                elif policy == BESTFIT:
                    s = bestfit_score(cpu[n], total[n], c, g * m)
                elif policy == CLUSTERING:
                    k = 0 if shared else g
                    s = clustering_score(total[n], klass[n, k] if k <= width else 0, classes[n], g)
                elif policy == PACKING:
                    s = packing_score(left[n, :node_gpus[n]], full[n], g, m)
                else:
                    s, gpu = fgd_score(left[n, :node_gpus[n]], cpu[n], node_model[n], frag[n],
                                       g, m, c, shape_room[n], shape_short[n], t_cpu,
                                       t_milli, t_gpus, t_allowed, t_freq)
                if s > best_score:
                    best, best_score, best_gpu = n, s, gpu
        if best < 0:
            continue
        n = best
        row = left[n, :node_gpus[n]]
        mask = 0
        if shared:
            i = -1
            if policy == FGD:
                i = best_gpu
            elif policy == RANDOM:
                room = 0
                for k in range(row.shape[0]):
                    if row[k] >= m:
                        room += 1
                pick = min(int(u_gpu[j] * room), room - 1)
                for k in range(row.shape[0]):
                    if row[k] >= m:
                        if pick == 0:
                            i = k
                            break
                        pick -= 1
            else:
                for k in range(row.shape[0]):
                    if row[k] >= m and (i < 0 or (policy != FIRSTFIT and row[k] < row[i])):
                        i = k
            if row[i] == GPU_MILLI:
                full[n] -= 1
            row[i] -= m
            mask = 1 << i
        elif g > 0:
            taken = 0
            for k in range(row.shape[0]):
                if taken < g and row[k] == GPU_MILLI:
                    row[k] = 0
                    mask |= 1 << k
                    taken += 1
            full[n] -= g
        cpu[n] -= c
        mem[n] -= pod_mem[j]
        total[n] -= g * m
        hi = 0
        for k in range(row.shape[0]):
            hi = max(hi, row[k])
        maxleft[n] = hi
        if g > 0:
            k = 0 if shared else g
            if klass[n, k] == 0:
                classes[n] += 1
            klass[n, k] += 1
        if policy == FGD:
            frag[n] = node_frag_shapes(cpu[n], row, node_model[n], t_cpu, t_milli, t_gpus,
                                       t_allowed, t_freq, shape_room[n], shape_short[n])
        node_of[j] = n
        gpu_mask[j] = mask
        touched[n] = True
    return node_of, gpu_mask
