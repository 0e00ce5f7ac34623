"""The packing loops' state: the nodes, the pods and what is free, as named tuples of arrays.

The built-in loop (:mod:`.online`), the loop under a user's rule (:mod:`.custom`)
and ``guided``'s (:mod:`.guided`) read one cluster (:class:`Nodes`) and one pod
list (:class:`Pods`), keep one free state (:class:`Free`) and one record of the
nodes nothing was placed on (:class:`Types`). numba compiles a ``NamedTuple`` of
arrays as the plain tuple it is (a field read is a constant index), so each
compiled function takes these few states instead of a dozen loose arrays. The
steps every loop shares live here too: whether a pod fits a node
(:func:`fits`, :func:`fits_all`), whether a node can be left unscored
(:func:`scored_alike`) and the taking of a node's GPUs, CPU and memory
(:func:`take`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from instances.packing import GPU_MILLI, PackingArrays

__all__ = ["Free", "Need", "Nodes", "Pods", "Types", "empty_free", "fits", "fits_all",
           "gpu_lists", "need_of", "new_types", "node_types", "nodes_of", "pods_of", "scored_alike",
           "take"]


class Nodes(NamedTuple):
    """The cluster, fixed over a run (``K`` nodes, ``int64``; the packing's arrays)."""

    gpus: np.ndarray
    """``(K,)``: each node's GPUs."""
    cpu: np.ndarray
    """``(K,)``: each node's CPU milli."""
    mem: np.ndarray
    """``(K,)``: each node's memory MiB."""
    model: np.ndarray
    """``(K,)``: each node's GPU model, a column of :attr:`Pods.allowed`."""


class Pods(NamedTuple):
    """The pods, fixed over a run (``P`` pods; the packing's arrays)."""

    gpus: np.ndarray
    """``(P,)``: GPUs asked (a share when 1 and :attr:`milli` below 1000)."""
    milli: np.ndarray
    """``(P,)``: milli of each GPU asked (1000: whole GPUs; 0 with no GPU)."""
    cpu: np.ndarray
    """``(P,)``: CPU milli."""
    mem: np.ndarray
    """``(P,)``: memory MiB."""
    allowed: np.ndarray
    """``(P, models)`` bool: whether pod ``j`` may run on model ``m``."""


class Free(NamedTuple):
    """What is free on each node now; :func:`take` changes it as pods are placed."""

    left: np.ndarray
    """``(K, width)``: each GPU's free milli, -1 past the node's GPUs."""
    cpu: np.ndarray
    """``(K,)``: free CPU milli."""
    mem: np.ndarray
    """``(K,)``: free memory MiB."""
    full: np.ndarray
    """``(K,)``: wholly free GPUs."""
    most: np.ndarray
    """``(K,)``: the most free milli on one GPU (0 on a node without GPUs)."""


class Types(NamedTuple):
    """The nodes nothing was placed on, by type: they score alike within a type."""

    rep: np.ndarray
    """``(K,)``: each node's type, as the type's first node (:func:`node_types`)."""
    touched: np.ndarray
    """``(K,)`` bool: whether a pod was placed on the node."""
    seen: np.ndarray
    """``(K,)``: per type (by :attr:`rep`), the last pod that scored one of its untouched
    nodes (-1: none)."""


def nodes_of(a: PackingArrays) -> Nodes:
    """The cluster of the packing arrays ``a``."""
    return Nodes(a.node_gpus, a.node_cpu, a.node_mem, a.node_model)


def pods_of(a: PackingArrays) -> Pods:
    """The pods of the packing arrays ``a``."""
    return Pods(a.pod_gpus, a.pod_milli, a.pod_cpu, a.pod_mem, a.pod_allowed)


def empty_free(a: PackingArrays) -> Free:
    """The free state of ``a``'s nodes with nothing placed (arrays of its own)."""
    width = int(a.node_gpus.max(initial=0))
    left = np.full((a.node_gpus.size, width), -1, dtype=np.int64)
    left[np.arange(width)[None, :] < a.node_gpus[:, None]] = GPU_MILLI
    most = np.where(a.node_gpus > 0, GPU_MILLI, 0).astype(np.int64)
    return Free(left, a.node_cpu.copy(), a.node_mem.copy(), a.node_gpus.copy(), most)


def gpu_lists(nodes: Nodes, node_of: np.ndarray, mask: np.ndarray) -> list[list[int]]:
    """Each pod's GPU indices from its node and bit mask (bit ``i``: GPU ``i``; none if unplaced)."""
    return [[i for i in range(int(nodes.gpus[n])) if int(m) >> i & 1] if n >= 0 else []
            for n, m in zip(node_of.tolist(), mask.tolist())]


class Need(NamedTuple):
    """What one pod asks, read once before the nodes are scanned (:func:`need_of`)."""

    gpus: int
    """GPUs (0: none)."""
    milli: int
    """Milli of each GPU (1000: whole GPUs)."""
    cpu: int
    """CPU milli."""
    mem: int
    """Memory MiB."""
    allowed: np.ndarray
    """``(models,)`` bool: the node models it may run on."""


@njit(cache=True, inline="always")
def need_of(pods: Pods, j: int) -> Need:  # pragma: no cover (compiled)
    """Pod ``j``'s :class:`Need`."""
    return Need(pods.gpus[j], pods.milli[j], pods.cpu[j], pods.mem[j], pods.allowed[j])


@njit(cache=True, inline="always")
def fits(need: Need, nodes: Nodes, free: Free, n: int) -> bool:  # pragma: no cover
    """Whether a pod of ``need`` fits node ``n``: its model allowed, free CPU and memory covering
    it, and ``gpus`` wholly free GPUs (whole GPUs) or one GPU with ``milli`` free (a share)."""
    # branch-free: the short-circuit form ran a hundred times slower under numba
    g, m = need.gpus, need.milli
    shared = (g == 1) & (m < GPU_MILLI)
    gpu_ok = (g == 0) | (shared & (free.most[n] >= m)) | (~shared & (free.full[n] >= g))
    return (need.allowed[nodes.model[n]] & (free.cpu[n] >= need.cpu) & (free.mem[n] >= need.mem)
            & gpu_ok)


@njit(cache=True)
def fits_all(need: Need, nodes: Nodes, free: Free,
             out: np.ndarray) -> bool:  # pragma: no cover (compiled)
    """:func:`fits` of a pod of ``need`` on every node, into ``out``; whether any node fits."""
    # one pass for the amounts, the loop chosen by the kind of GPU need, then one for the
    # model: the passes vectorise (2.5 times faster than fits() node by node into out)
    cpu, mem, c, me = free.cpu, free.mem, need.cpu, need.mem
    g, m = need.gpus, need.milli
    if g == 1 and m < GPU_MILLI:
        most = free.most
        for n in range(out.shape[0]):
            out[n] = (cpu[n] >= c) & (mem[n] >= me) & (most[n] >= m)
    elif g == 0:
        for n in range(out.shape[0]):
            out[n] = (cpu[n] >= c) & (mem[n] >= me)
    else:
        full = free.full
        for n in range(out.shape[0]):
            out[n] = (cpu[n] >= c) & (mem[n] >= me) & (full[n] >= g)
    allowed, model = need.allowed, nodes.model
    some = False
    for n in range(out.shape[0]):
        ok = out[n] & allowed[model[n]]
        out[n] = ok
        some |= ok
    return some


@njit(cache=True)
def node_types(nodes: Nodes) -> np.ndarray:  # pragma: no cover (compiled)
    """Each node's type representative: the first node of equal GPUs, model, CPU and memory.

    Nodes nothing is placed on score alike within a type, and ties go to the earliest: the
    loops score the first of each type only.
    """
    n_nodes = nodes.gpus.shape[0]
    rep = np.arange(n_nodes)
    for n in range(n_nodes):
        for q in range(n):
            if rep[q] == q and nodes.gpus[q] == nodes.gpus[n] and nodes.model[q] == nodes.model[n] \
                    and nodes.cpu[q] == nodes.cpu[n] and nodes.mem[q] == nodes.mem[n]:
                rep[n] = q
                break
    return rep


@njit(cache=True)
def new_types(nodes: Nodes) -> Types:  # pragma: no cover (compiled)
    """:class:`Types` of a cluster nothing is placed on."""
    n_nodes = nodes.gpus.shape[0]
    return Types(node_types(nodes), np.zeros(n_nodes, dtype=np.bool_),
                 np.full(n_nodes, -1, dtype=np.int64))


@njit(cache=True, inline="always")
def scored_alike(types: Types, n: int, j: int) -> bool:  # pragma: no cover (compiled)
    """Whether pod ``j`` may leave node ``n`` unscored: nothing is placed on it and an earlier
    untouched node of its type was scored for ``j`` (the same score; ties go to the earliest).
    Marks ``n``'s type as scored for ``j`` otherwise: call it on the nodes ``j`` fits, in order."""
    if types.touched[n]:
        return False
    if types.seen[types.rep[n]] == j:
        return True
    types.seen[types.rep[n]] = j
    return False


@njit(cache=True)
def take(free: Free, n: int, bits: int, milli: int, cpu: int,
         mem: int) -> None:  # pragma: no cover (compiled)
    """Place a pod on node ``n``: ``milli`` off each GPU of the bit mask ``bits``, ``cpu`` and
    ``mem`` off the node; its wholly free GPUs and most free milli counted again."""
    row = free.left[n]
    count, hi = 0, 0
    for i in range(row.shape[0]):
        if bits >> i & 1:
            row[i] -= milli
        count += row[i] == GPU_MILLI
        hi = max(hi, row[i])
    free.cpu[n] -= cpu
    free.mem[n] -= mem
    free.full[n], free.most[n] = count, hi
