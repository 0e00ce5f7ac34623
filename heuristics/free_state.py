"""The free amounts per slot that a user's placement rule sees in time (section 14 of the specification).

Built from the one capacity model (:func:`instances.capacity.capacity`):
the pool row (busy GPUs free per slot), and per node either free GPU counts
(model versions 1 and 2, where a job needs a count on one node) or each
GPU's free milli with the node's free CPU and memory (version 3, where a job
holds GPU indices). :meth:`FreeState.view` gives the amounts free
throughout a run from a start, as the rule's :class:`~heuristics.view.NodeView`,
with ``fits`` exactly the placements the checker accepts (at a slot where
the pool row has no GPU left, an idle GPU is inference's: it shows 0 free);
:meth:`FreeState.take` charges a placement.
"""

from __future__ import annotations

import numpy as np

from instances import Instance
from instances.capacity import UNLIMITED, capacity, lexicographic_subset
from instances.resources import FULL_GPU_MILLI

from .view import NO_LIMIT, JobView, NodeView, readonly

__all__ = ["FreeState"]


class FreeState:
    """Free capacity per slot under one reservation, for placing jobs one at a time.

    Parameters
    ----------
    inst
        An instance (flat: one node of ``G`` GPUs).
    reservation
        ``"curve"`` or ``"peak"``.
    """

    def __init__(self, inst: Instance, reservation: str = "curve") -> None:
        cap = capacity(inst, reservation)  # type: ignore[arg-type]
        T, K = cap.horizon, cap.num_nodes
        self.inst = inst
        self.sizes = np.asarray(cap.sizes, dtype=np.int64)
        self.multi = np.asarray(cap.multi)
        self.pool = np.array(cap.pool, dtype=np.int64)
        self.width = int(self.sizes.max())
        self.exists = np.arange(self.width)[None, :] < self.sizes[:, None]
        self.shares = cap.shares
        nodes = inst.nodes or ()
        self.models = tuple(dict.fromkeys(n.model for n in nodes if n.model is not None))
        code = {m: i for i, m in enumerate(self.models)}
        self.model = np.array([-1 if n.model is None else code[n.model] for n in nodes] or [-1],
                              dtype=np.int64)
        if cap.shares is None:  # versions 1-2: counts
            self.node_free = np.repeat(np.asarray(cap.node_cap, dtype=np.int64)[:, None], T, axis=1)
            self.cpu_cap = np.full(K, NO_LIMIT, dtype=np.int64)
            self.mem_cap = self.cpu_cap
        else:  # version 3: every GPU's milli, CPU and memory
            sh = cap.shares
            self.gpu_free = np.repeat(sh.gpu_milli[:, None], T, axis=1)
            self.offset = np.asarray(sh.gpu_offset)
            self.cpu_cap = np.where(sh.node_cpu >= UNLIMITED, NO_LIMIT, sh.node_cpu)
            self.mem_cap = np.where(sh.node_memory >= UNLIMITED, NO_LIMIT, sh.node_memory)
            self.cpu = np.repeat(self.cpu_cap[:, None], T, axis=1)
            self.mem = np.repeat(self.mem_cap[:, None], T, axis=1)
            self.gpu_node = np.repeat(np.arange(K), self.sizes)
            self.gpu_local = np.arange(int(self.offset[-1])) - self.offset[self.gpu_node]

    def job(self, j: int) -> JobView:
        """The :class:`JobView` of job ``j``."""
        job = self.inst.jobs[j]
        milli = self.shares.job_milli[j] if self.shares is not None else FULL_GPU_MILLI
        cpu = self.shares.job_cpu[j] if self.shares is not None else 0
        mem = self.shares.job_memory[j] if self.shares is not None else 0
        models = getattr(job, "gpu_models", None)
        return JobView(j, job.name, int(job.gpus), int(milli), int(cpu), int(mem),
                       tuple(models) if models is not None else None, int(job.duration),
                       int(job.release), float(job.priority))

    def view(self, job: JobView, s: int) -> NodeView:
        """The nodes as free throughout ``s .. s + duration - 1``, with ``fits`` for ``job``."""
        w = slice(s, s + job.duration)
        pool_room = int(self.pool[w].min())
        if self.shares is None:
            free = self.node_free[:, w].min(axis=1)
            gpu = np.where(np.arange(self.width)[None, :] < free[:, None], FULL_GPU_MILLI, 0)
            gpu = np.where(self.exists, gpu, -1)
            cpu_free, mem_free = self.cpu_cap, self.mem_cap
            fits = (free >= job.gpus) & (pool_room >= job.gpus)
        else:
            free_w = self.gpu_free[:, w]
            if pool_room < 1:  # at a slot the pool has no GPU left, an idle GPU is inference's
                free_w = np.where((free_w >= FULL_GPU_MILLI) & (self.pool[w] < 1)[None, :], 0,
                                  free_w)
            least = free_w.min(axis=1)
            gpu = np.full((self.sizes.size, self.width), -1, dtype=np.int64)
            gpu[self.gpu_node, self.gpu_local] = least
            cpu_free = self.cpu[:, w].min(axis=1)
            mem_free = self.mem[:, w].min(axis=1)
            fits = (self.shares.eligible[job.index] & (cpu_free >= job.cpu_milli)
                    & (mem_free >= job.memory_mib))
            if job.gpus == 1 and job.gpu_milli < FULL_GPU_MILLI:
                room = least >= job.gpu_milli
                fits &= np.bincount(self.gpu_node[room], minlength=self.sizes.size) > 0
            else:
                fits &= ((gpu >= FULL_GPU_MILLI).sum(axis=1) >= job.gpus) & (pool_room >= job.gpus)
        if self.multi[job.index]:
            fits = np.zeros_like(fits)  # whole nodes: the rule is not asked (see whole_nodes)
        return NodeView(readonly(self.sizes), readonly(self.cpu_cap), readonly(self.mem_cap),
                        readonly(self.model), readonly(gpu), readonly(cpu_free),
                        readonly(mem_free), readonly(fits), self.models, s)

    def whole_nodes(self, job: JobView, s: int) -> list[int]:
        """For a job larger than the largest node: the lexicographically smallest set of nodes
        wholly free over the run whose GPUs sum to its own, or ``[]``."""
        w = slice(s, s + job.duration)
        if int(self.pool[w].min()) < job.gpus:
            return []
        if self.shares is None:
            whole = self.node_free[:, w].min(axis=1) == self.sizes
        else:
            idle = self.gpu_free[:, w].min(axis=1) >= FULL_GPU_MILLI
            whole = (np.bincount(self.gpu_node[idle], minlength=self.sizes.size) == self.sizes)
            whole &= self.shares.eligible[job.index]
        nodes = np.flatnonzero(whole)
        pick = lexicographic_subset(self.sizes[nodes].tolist(), job.gpus)
        return nodes[pick].tolist() if pick else []

    def take(self, job: JobView, s: int, nodes: list[int], gpus: list[int]) -> None:
        """Charge ``job`` from ``s`` on ``nodes`` (one node: its GPU indices ``gpus``)."""
        w = slice(s, s + job.duration)
        self.pool[w] -= job.gpus
        if self.shares is None:
            self.node_free[nodes, w] -= self.sizes[nodes][:, None] if len(nodes) > 1 else job.gpus
            return
        if len(nodes) > 1:  # whole nodes: every GPU, nothing of their CPU and memory to others
            for k in nodes:
                self.gpu_free[self.offset[k]:self.offset[k + 1], w] = 0
            return
        k = nodes[0]
        rows = self.offset[k] + np.asarray(gpus, dtype=np.int64)
        if job.gpus == 1 and job.gpu_milli < FULL_GPU_MILLI:
            idle = self.gpu_free[rows[0], w] >= FULL_GPU_MILLI
            self.pool[w] += job.gpus - idle  # the pool counts a GPU busy once
            self.gpu_free[rows[0], w] -= job.gpu_milli
        else:
            self.gpu_free[rows, w] -= FULL_GPU_MILLI
        self.cpu[k, w] -= job.cpu_milli
        self.mem[k, w] -= job.memory_mib
