"""What jobs held fixed outside the model use, by GPU index: the windows of the LNS on version 3.

On model version 3 the GPUs that jobs kept fixed outside the model hold are
particular GPUs, which a count (``reserved=`` of :func:`milp.build`) does not
say. :class:`FixedUse` says it: the ``gpu_milli`` each fixed job puts on each
GPU index of each node per slot (1000 for a GPU held whole), and the CPU and
memory they take per node and slot. :func:`milp.build` with ``fixed=`` then
gives the shared jobs the node's real GPU indices as slots (no relabelling:
a GPU with fixed shares is not like an empty one), charges a share on a GPU
that fixed shares already keep busy against the room they leave (``1000 - f``,
its busy column fixed at 0, since the fixed jobs already count that GPU in
the pool and node rows), forbids shares on GPUs held whole, counts the busy
GPUs in ``reserved``, and lowers the CPU and memory rows by the fixed use.

The model then decides starts, nodes and the shared jobs' GPUs; whole-GPU
jobs get GPU counts, and their indices are found after, around the GPUs
already taken (a colouring with GPUs precoloured, which a count cannot
promise: the caller checks it, :func:`matheuristics.gpus.colour_window`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from instances import Instance
from instances.capacity import Capacity
from instances.resources import FULL_GPU_MILLI

from .spans import runs

__all__ = ["FixedUse", "fits_offered", "offered_gpus"]


@dataclass(frozen=True, eq=False)
class FixedUse:
    """The use of the jobs held fixed, per node, GPU index and slot of a model's horizon.

    Attributes
    ----------
    gpu_milli
        ``(K, V, T)`` integers in ``[0, 1000]``: the ``gpu_milli`` fixed jobs put on GPU
        ``v`` of node ``k`` at slot ``t`` (1000: held whole). ``V`` is at least the
        largest node's GPUs; indices at or beyond a node's GPUs are ignored.
    cpu, memory
        ``(K, T)``: the CPU (milli) and memory (MiB) fixed jobs take per node and slot
        (jobs on whole nodes may be left out: they leave the node no GPU).
    """

    gpu_milli: np.ndarray
    cpu: np.ndarray
    memory: np.ndarray

    def check(self, node_gpus: np.ndarray, horizon: int) -> None:
        """Raise ``ValueError`` (naming the field) unless the arrays fit these nodes and horizon."""
        K = int(np.asarray(node_gpus).size)
        g = self.gpu_milli
        if g.ndim != 3 or g.shape[0] != K or g.shape[2] != horizon or (
                K and g.shape[1] < int(np.max(node_gpus))):
            raise ValueError(f"fixed.gpu_milli: expected shape ({K}, >= largest node, {horizon}), "
                             f"got {g.shape}")
        if not np.issubdtype(g.dtype, np.integer) or (g.size and (g.min() < 0 or
                                                                g.max() > FULL_GPU_MILLI)):
            raise ValueError(f"fixed.gpu_milli: must be integers in [0, {FULL_GPU_MILLI}]")
        for name in ("cpu", "memory"):
            a = getattr(self, name)
            if a.shape != (K, horizon) or (a.size and a.min() < 0):
                raise ValueError(f"fixed.{name}: expected values >= 0 of shape ({K}, {horizon}), "
                                 f"got shape {a.shape}")

    def on_nodes(self, node_gpus: np.ndarray) -> np.ndarray:
        """``(K, V, T)`` bool: the GPU exists on its node and fixed jobs use it (busy)."""
        V = self.gpu_milli.shape[1]
        exists = np.arange(V)[None, :] < np.asarray(node_gpus)[:, None]
        return (self.gpu_milli > 0) & exists[:, :, None]

    def busy(self, node_gpus: np.ndarray) -> np.ndarray:
        """``(K, T)`` GPUs of each node the fixed jobs keep busy per slot (``reserved=``)."""
        return self.on_nodes(node_gpus).sum(axis=1).astype(np.int64)

    def signature(self, k: int) -> bytes:
        """What tells node ``k``'s fixed use apart (two nodes are alike only when equal)."""
        return b"".join(np.ascontiguousarray(a[k]).tobytes()
                        for a in (self.gpu_milli, self.cpu, self.memory))


def offered_gpus(model: Capacity, reserved: np.ndarray | None) -> np.ndarray:
    """``(K, T)`` GPUs each node offers per slot: its capacity less ``reserved`` (checked)."""
    K, T = model.num_nodes, model.horizon
    full = np.repeat(model.node_cap[:, None], T, axis=1).astype(np.int64)
    if reserved is None:
        return full
    arr = np.asarray(reserved)
    if arr.shape != (K, T) or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"reserved: must be integers of shape ({K}, {T}), got "
                         f"{arr.dtype} of shape {arr.shape}")
    if arr.size and (arr.min() < 0 or np.any(arr > full)):
        k, t = np.argwhere((arr < 0) | (arr > full))[0].tolist()
        raise ValueError(f"reserved: node {k} slot {t} withholds {int(arr[k, t])} GPUs, "
                         f"not in [0, {int(full[k, t])}]")
    return full - arr.astype(np.int64)


def fits_offered(
    inst: Instance, model: Capacity, free: np.ndarray, col_job: np.ndarray,
    col_start: np.ndarray, nodes: np.ndarray,
) -> np.ndarray:
    """Per column: its job alone fits what each of its nodes offers over its run.

    ``nodes`` is each column's node positions (``-1`` padded). A one-node job
    needs ``g_j`` GPUs there, a multi-node job each of its nodes in full.
    """
    m_col, m_slot = np.nonzero(nodes >= 0)
    m_node = nodes[m_col, m_slot]
    job = col_job[m_col]
    need = np.where(model.multi[job], model.sizes[m_node], inst.gpus[job])
    idx, t = runs(col_start[m_col], inst.durations[job])
    short = free[m_node[idx], t] < need[idx]
    keep = np.ones(col_job.size, dtype=bool)
    keep[m_col[idx[short]]] = False
    return keep
