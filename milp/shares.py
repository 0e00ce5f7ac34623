"""Model version 3 in the one build: shared jobs on GPU slots, busy GPUs, the per-GPU, CPU and
memory rows, and the relaxations (docs/resources-milp.md).

The count model. A whole-GPU job keeps its columns (group, placement,
start) and its counts on a node, as in version 2. A shared job's placement
is one of its node's **GPU slots** ``(k, v)``, ``v < c_k`` (``c_k`` the GPUs
node ``k`` offers batch work), and a binary **busy** column ``b[k, v, t]``
exists for each slot and slot of time a shared column covers:

    per GPU   sum_{shared on (k, v) covering t} m_j x  <=  1000 b[k, v, t]
    pool      sum_{whole} g_j x + sum_{k, v} b[k, v, t]  <=  G - sum_s d_s[t]
    node k    sum_{whole on k} (g_j, or g_k for whole nodes) x + sum_v b[k, v, t]  <=  c_k
    CPU       sum_{one-node jobs on k covering t} cpu_j x  <=  C_k   (memory the same)

It is exact. A schedule maps to the model with its shared GPUs as slots.
Back, on each node the items are the whole-GPU jobs (``g_j`` GPUs over
their run) and the maximal runs of each busy slot (one GPU over an
interval: shared jobs that overlap on a slot must share a GPU); the node
rows say that at every slot the items need at most ``c_k`` GPUs, and items
that are intervals with such a load can be given fixed GPUs ``0 .. c_k - 1``
(interval graphs are perfect; taken in order of start, each item finds the
lowest free GPUs: :func:`milp.gpus.gpu_indices`). A job on whole nodes
holds every GPU of each, so no other job is on that node meanwhile; the CPU
and memory rows leave it out (its share fits each node alone, as its
placements say: :func:`instances.capacity.fits_alone`).

Symmetry. The slots of a node are interchangeable: relabelled in order of
the first shared job (instance order) on each, slot ``v``'s first job is
preceded by ``v`` shared jobs on the node, so a shared job gets only the
slots ``v <= r`` with ``r`` the number of shared jobs before it that have a
column on the node (:func:`gpu_slots`; :func:`canonical_gpu` relabels a
schedule so). Identical nodes also need equal models, CPU and memory.

Relaxations (:data:`RELAXATIONS`), each an upper bound: ``fluid`` (a shared
job's ``gpu_milli / 1000`` counts against its node and the pool, slots
dropped: a GPU busy with shares carries at most 1000), ``nodes`` (that on
the version 2 node model: models, CPU and memory dropped) and ``flat``
(the pool row alone, on ``a_j``).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from instances import Instance, Node
from instances.resources import FULL_GPU_MILLI, resources, uses_resources

from .fixed import FixedUse
from .spans import node_load, runs

__all__ = ["RELAXATIONS", "busy_columns", "canonical_gpu", "gpu_slots", "gpu_twin",
           "node_kinds", "relaxed_views", "resource_rows", "room_on_gpus"]

RELAXATIONS: dict[str, str] = {
    "exact": "the model itself (on version 3: GPU slots, busy GPUs, CPU and memory)",
    "fluid": "a shared job's gpu_milli / 1000 counts against its node and the pool; slots dropped",
    "nodes": "the version 2 node model on the fluid amounts (models, CPU and memory dropped)",
    "flat": "the flat model on the fluid amounts a_j (nodes dropped)",
}
"""The models :func:`milp.build` builds (``relax=``): the exact one and its relaxations."""


def gpu_twin(inst: Instance) -> Instance:
    """The instance's GPUs alone: its nodes and jobs without the version 3 fields (version 2)."""
    if not uses_resources(inst):
        return inst
    jobs = tuple(replace(j, gpu_milli=FULL_GPU_MILLI, gpu_models=None, cpu_milli=0, memory_mib=0)
                 for j in inst.jobs)
    nodes = tuple(Node(n.name, n.gpus) for n in inst.nodes or ())
    return inst.replace(jobs=jobs, nodes=nodes)


def relaxed_views(inst: Instance, relax: str) -> tuple[Instance, Instance]:
    """``(capacity view, placement view)`` of ``inst`` for the model ``relax``.

    The capacity view is a version 1 or 2 instance of the same GPUs (flat
    for ``flat``); the placement view is the instance whose
    :func:`instances.capacity.job_placements` the model uses: ``inst``
    itself (models, CPU and memory) for ``exact`` and ``fluid``.

    Raises
    ------
    ValueError
        For an unknown ``relax``.
    """
    if relax not in RELAXATIONS:
        raise ValueError(f"relax: must be one of {list(RELAXATIONS)}, got {relax!r}")
    twin = gpu_twin(inst)
    if relax == "flat" and twin.has_nodes:
        twin = twin.replace(nodes=None)
    return twin, inst if relax in ("exact", "fluid") else twin


def node_kinds(inst: Instance) -> list[tuple[object, ...]] | None:
    """Per node what, besides its GPUs, makes it differ: model, CPU, memory (``None`` on version 2)."""
    if not uses_resources(inst):
        return None
    return [(n.model, n.cpu_milli, n.memory_mib) for n in inst.nodes or ()]


def gpu_slots(
    col_group: np.ndarray, col_start: np.ndarray, col_place: np.ndarray,
    placements: list[tuple[int, ...]], members: tuple[np.ndarray, ...], shared: np.ndarray,
    slots: np.ndarray, fix: bool, num_jobs: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[tuple[int, ...]], np.ndarray]:
    """The shared groups' columns moved from their node to its GPU slots.

    Parameters
    ----------
    col_group, col_start, col_place, placements
        The columns so far (a shared group's placements are single nodes).
    members
        Each group's jobs; ``shared[g]``: group ``g`` is shared.
    slots
        ``(K,)`` GPU slots per node (the GPUs it offers batch work).
    fix
        Keep only slots ``v <= r`` (the symmetry reduction of the module notes),
        ``r`` taken for a group's last member.

    Returns
    -------
    tuple
        The columns (sorted by group, placement, start again), the placements
        with the slots ``(k,)`` appended in order of ``(k, v)``, and each
        placement's slot label (``-1`` for the others).
    """
    K = slots.size
    sc = shared[col_group]
    node_of = np.array([q[0] for q in placements], dtype=np.int64)
    on = np.zeros((len(members), K), dtype=bool)
    on[col_group[sc], node_of[col_place[sc]]] = True
    job_on = np.zeros((num_jobs, K), dtype=np.int64)
    for k in np.flatnonzero(shared).tolist():
        job_on[members[k]] = on[k]
    rank = np.cumsum(job_on, axis=0) - 1  # shared jobs before j with a column on the node
    last = np.array([int(m[-1]) for m in members], dtype=np.int64)
    cols = np.flatnonzero(sc)
    k_of = node_of[col_place[cols]]
    labels = np.minimum(rank[last[col_group[cols]], k_of] + 1, slots[k_of]) if fix else slots[k_of]
    top = np.zeros(K, dtype=np.int64)
    np.maximum.at(top, k_of, labels)
    first = len(placements)
    offset = first + np.concatenate([[0], np.cumsum(top)])[:-1]
    new_places = placements + [(k,) for k in range(K) for _ in range(int(top[k]))]
    place_gpu = np.concatenate([np.full(first, -1, dtype=np.int64)]
                               + [np.arange(int(t), dtype=np.int64) for t in top])
    rep = np.repeat(cols, labels)
    v = np.arange(rep.size, dtype=np.int64) - np.repeat(np.cumsum(labels) - labels, labels)
    whole = np.flatnonzero(~sc)
    g = np.concatenate([col_group[whole], col_group[rep]])
    s = np.concatenate([col_start[whole], col_start[rep]])
    p = np.concatenate([col_place[whole], offset[node_of[col_place[rep]]] + v])
    order = np.lexsort((s, p, g))
    return g[order], s[order], p[order], new_places, place_gpu


def busy_columns(
    col_place: np.ndarray, col_start: np.ndarray, col_p: np.ndarray, col_milli: np.ndarray,
    place_gpu: np.ndarray, place_node: np.ndarray, T: int, first_col: int,
) -> tuple[np.ndarray, tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """The busy columns, the per-GPU rows and the busy columns' entries in the pool and node rows.

    Returns
    -------
    tuple
        ``busy`` (``(nb, 2)``: the slot's placement index and the time slot
        of each busy column, ascending), the per-GPU rows ``(row, column,
        value)`` (``m_j`` per shared column, ``-1000`` for the busy column)
        and the entries ``(column, key, 1)`` in the capacity rows' keys
        (``t`` for the pool, ``(1 + k) T + t`` for node ``k``).
    """
    sc = np.flatnonzero(place_gpu[col_place] >= 0)
    idx, t = runs(col_start[sc], col_p[sc])
    key = col_place[sc][idx] * T + t
    uniq, inv = np.unique(key, return_inverse=True)
    nb = uniq.size
    busy = np.stack([uniq // T, uniq % T], axis=1)
    bcol = first_col + np.arange(nb, dtype=np.int64)
    milli = (np.concatenate([inv, np.arange(nb, dtype=np.int64)]),
             np.concatenate([sc[idx], bcol]),
             np.concatenate([col_milli[sc][idx].astype(np.float64), np.full(nb, -FULL_GPU_MILLI, float)]))
    node = place_node[busy[:, 0]]
    cap = (np.concatenate([bcol, bcol]), np.concatenate([busy[:, 1], (1 + node) * T + busy[:, 1]]),
           np.ones(2 * nb))
    return busy, milli, cap


def room_on_gpus(fixed: FixedUse, node: np.ndarray, gpu: np.ndarray, start: np.ndarray,
                 dur: np.ndarray, milli: np.ndarray) -> np.ndarray:
    """Per column, whether its share fits beside the fixed use of its GPU over its run.

    ``node`` and ``gpu`` are each column's node and GPU (``-1``: not a shared
    column, always kept), ``milli`` its ``gpu_milli``.
    """
    keep = np.ones(node.size, dtype=bool)
    sc = np.flatnonzero(gpu >= 0)
    idx, t = runs(start[sc], dur[sc])
    over = fixed.gpu_milli[node[sc][idx], gpu[sc][idx], t] + milli[sc][idx] > FULL_GPU_MILLI
    keep[sc[idx[over]]] = False
    return keep


def resource_rows(
    inst: Instance, rep: np.ndarray, col_group: np.ndarray, col_start: np.ndarray,
    col_p: np.ndarray, nodes: np.ndarray, size: np.ndarray, multi: np.ndarray,
    used: dict[str, np.ndarray] | None = None,
) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """The CPU and memory rows of the nodes that state them, where they can bind.

    ``nodes`` is each column's node positions (``-1`` padded), ``size`` each
    group's copies. Jobs on whole nodes are left out (module notes).
    ``used`` (``"cpu"``, ``"memory"``: ``(K, T)``) is taken by jobs held fixed
    outside the model, and lowers each row's right-hand side.

    Returns
    -------
    list
        Per resource (``"cpu"``, ``"memory"``) with a row: its name, the rows'
        keys ``k T + t`` (ascending), and the entries ``(key, column, value)``
        and the rows' right-hand sides.
    """
    res = resources(inst)
    K, T = inst.num_nodes, inst.horizon
    one = (nodes[:, 1] < 0 if nodes.shape[1] > 1 else np.ones(nodes.shape[0], dtype=bool))
    one &= ~multi[rep[col_group]]
    out = []
    for name, need_j, cap in (("cpu", res.job_cpu, res.node_cpu),
                              ("memory", res.job_memory, res.node_memory)):
        node = nodes[:, 0]
        need = need_j[rep[col_group]]
        sel = np.flatnonzero(one & (need > 0) & np.isfinite(cap[np.maximum(node, 0)]))
        if sel.size == 0:
            continue
        load = node_load(K, T, col_group[sel] * K + node[sel], col_start[sel], col_p[sel],
                         need[sel] * size[col_group[sel]])
        left = np.repeat(cap[:, None], T, axis=1)
        if used is not None:
            left = left - used[name]
        binding = (load > left).reshape(-1)
        idx, t = runs(col_start[sel], col_p[sel])
        key = node[sel][idx] * T + t
        keep = binding[key]
        keys = np.flatnonzero(binding)
        if keys.size == 0:
            continue
        out.append((name, keys, key[keep], sel[idx][keep], need[sel][idx][keep].astype(float),
                    left.reshape(-1)[keys]))
    return out


def canonical_gpu(start: np.ndarray, place: np.ndarray, gpu: np.ndarray, num_nodes: int) -> np.ndarray:
    """The shared jobs' slot labels relabelled per node in order of the first job on each.

    ``gpu[j]`` is shared job ``j``'s GPU (or slot) on its node ``place[j, 0]``,
    ``-1`` for the others; jobs not run are ignored. The result keeps the
    symmetry reduction's columns (:func:`gpu_slots`) and the same schedule
    up to the GPUs' names.
    """
    out = np.full(start.shape[0], -1, dtype=np.int64)
    seen: dict[tuple[int, int], int] = {}
    count = np.zeros(num_nodes, dtype=np.int64)
    for j in np.flatnonzero((start >= 0) & (gpu >= 0)).tolist():
        k = int(place[j, 0])
        key = (k, int(gpu[j]))
        if key not in seen:
            seen[key] = int(count[k])
            count[k] += 1
        out[j] = seen[key]
    return out
