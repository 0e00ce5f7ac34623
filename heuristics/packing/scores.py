"""The node scores of FGD's six policies, compiled (integers 0..100, higher wins).

Each rule follows the simulator's score plugin of the same name (facts of
``hkust-adsl/kubernetes-scheduler-simulator``, ``pkg/simulator/plugin``):

- ``dotprod``: ``100 (1 - (cpu_free cpu / 128000^2 + gpu_free gpu / 8000^2) / 2)``,
  free and asked resources normalised by the largest node (128 cores, 8 GPUs):
  the node whose free resources align least with the pod's wins;
- ``clustering``: a quarter of 100 scaled by how full the node's GPUs are,
  plus 75 where the node holds only pods of the pod's class (share, 1-GPU,
  2-GPU, ...), 50 where it holds that class among others, 25 on an empty node;
- ``packing``: 50..100 for a share on a partly used GPU (less free milli,
  more), 33..50 for fully free GPUs of a used node, 0..33 for an empty node;
- ``bestfit``: ``100 (1 - ((cpu_free - cpu) / 128000 + (gpu_free - gpu) / 8000) / 2)``;
- ``fgd``: ``100 sigmoid((frag_before - frag_after) / 1000)`` with FGD's
  fragmentation (:func:`instances.packing.node_frag`); for a share, the GPU
  that scores best.

Go truncates float scores toward zero and divides integers toward zero; so do
these. ``random`` and ``firstfit`` need no score (see :mod:`.online`). FGD's
score reads the node as a :class:`FragNode` and the target workload as a
:class:`Target` (named tuples: numba compiles them as plain tuples).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from instances.packing import GPU_MILLI
from instances.packing.frag import moved_frag

__all__ = ["MAX_CPU", "MAX_GPU", "FragNode", "Target", "bestfit_score", "clustering_score",
           "dotprod_score", "equal_earlier", "fgd_node_score", "fgd_node_share_gpu", "fgd_score",
           "fgd_share_gpu", "packing_score", "trunc_div"]

MAX_CPU = 128000.0
"""CPU milli of the largest node, FGD's normalisation of the CPU dimension."""

MAX_GPU = 8000.0
"""GPU milli of an 8-GPU node, FGD's normalisation of the GPU dimension."""


class Target(NamedTuple):
    """FGD's target workload by shape (``S`` shapes), the pods fragmentation is measured for
    (:class:`instances.packing.TargetWorkload`'s arrays)."""

    cpu: np.ndarray
    """``(S,)``: each shape's CPU milli."""
    milli: np.ndarray
    """``(S,)``: each shape's milli per GPU."""
    gpus: np.ndarray
    """``(S,)``: each shape's GPUs."""
    allowed: np.ndarray
    """``(S, models)`` bool: the node models each shape may use."""
    freq: np.ndarray
    """``(S,)``: each shape's frequency (summing to one)."""


class FragNode(NamedTuple):
    """One node as FGD's score reads it: its free amounts and its fragmentation's parts."""

    left: np.ndarray
    """``(its GPUs,)``: each GPU's free milli."""
    cpu: int
    """Free CPU milli."""
    model: int
    """Its GPU model (a column of :attr:`Target.allowed`)."""
    frag: float
    """Its fragmentation now (:func:`instances.packing.frag.node_frag_shapes`)."""
    room: np.ndarray
    """``(S,)``: per shape, the GPUs with its milli free (from the same call)."""
    short: np.ndarray
    """``(S,)``: per shape, the idle milli of the other GPUs (from the same call)."""


@njit(cache=True, inline="always")
def trunc_div(a: int, b: int) -> int:  # pragma: no cover (compiled)
    """Integer division toward zero (Go's ``/``), ``b > 0``."""
    return a // b if a >= 0 else -((-a) // b)


@njit(cache=True, inline="always")
def _clip(score: int) -> int:  # pragma: no cover (compiled)
    return 0 if score < 0 else (100 if score > 100 else score)


@njit(cache=True)
def dotprod_score(cpu_free: int, gpu_free: int, cpu: int, request: int) -> int:  # pragma: no cover
    """DotProd (merged GPU dimension, normalised by the largest node)."""
    dot = 0.0
    dot += (cpu_free / MAX_CPU) * (cpu / MAX_CPU)
    dot += (gpu_free / MAX_GPU) * (request / MAX_GPU)
    return _clip(int(100.0 * (1.0 - dot / 2.0)))


@njit(cache=True)
def bestfit_score(cpu_free: int, gpu_free: int, cpu: int, request: int) -> int:  # pragma: no cover
    """BestFit: the least CPU and GPU left over after the pod, half weight each."""
    s = 0.0
    s += (cpu_free - cpu) / MAX_CPU * 0.5
    s += (gpu_free - request) / MAX_GPU * 0.5
    return _clip(int((1.0 - s) * 100.0))


@njit(cache=True)
def clustering_score(gpu_free: int, same_class: int, classes: int,
                     gpus: int) -> int:  # pragma: no cover
    """GpuClustering: ``same_class`` pods of the pod's class among ``classes`` classes."""
    if gpus == 0:
        return 0
    base = trunc_div(25 * (8000 - gpu_free), 8000)
    if same_class > 0:
        bonus = 75 if classes == 1 else 50
    else:
        bonus = 25 if classes == 0 else 0
    return _clip(base + bonus)


@njit(cache=True)
def packing_score(left: np.ndarray, full: int, gpus: int, milli: int) -> int:  # pragma: no cover
    """GpuPacking on a node whose GPUs have ``left`` milli free (``full`` of them whole)."""
    if gpus == 0:
        return 0
    n = left.shape[0]
    if full == n:
        return max(33 - full, full)
    if milli == GPU_MILLI:  # whole GPUs: only fully free ones qualify
        return max(50 - gpus, 33)
    best = -1  # a share: the GPU with the least room that still fits (the first of equals)
    for i in range(n):
        if left[i] >= milli and (best < 0 or left[i] < left[best]):
            best = i
    if left[best] == GPU_MILLI:
        return max(50 - 1, 33)
    return max(100 - (left[best] * 100 // GPU_MILLI) // 10, 50)


@njit(cache=True)
def _sigmoid_score(before: float, after: float) -> int:  # pragma: no cover
    x = (before - after) / 1000.0
    return _clip(int(1.0 / (1.0 + np.exp(-x)) * 100.0))


@njit(cache=True, nogil=True, inline="always")
def equal_earlier(left: np.ndarray, ok: np.ndarray, by_room: bool, i: int) -> bool:
    # pragma: no cover
    """Whether a GPU before ``i`` that may take the share (``by_room``: any; else ``ok`` below
    0) has ``left[i]`` free: it scores the same and wins the tie, so ``i`` need not be scored."""
    for k in range(i):  # noqa: SIM110 (a generator does not compile under numba here)
        if left[k] == left[i] and (by_room or ok[k] < 0):
            return True
    return False


@njit(cache=True, inline="always")
def fgd_node_share_gpu(node: FragNode, ok: np.ndarray, by_room: bool, milli: int, cpu: int,
                       target: Target) -> tuple[int, int]:  # pragma: no cover
    """FGD's GPU for a share of ``milli`` (and ``cpu`` CPU milli) on ``node``: the best score,
    and its GPU, over the GPUs that may take it (``node.left`` at least ``milli`` when
    ``by_room``, else ``ok`` below 0), each scored on the node after it; (-1, -1) when none
    may. :func:`~instances.packing.frag.moved_frag` measures each GPU's move in one pass over
    the shapes, from the node's ``room`` and ``short``."""
    left, after_cpu = node.left, node.cpu - cpu
    score, gpu = -1, -1
    for i in range(left.shape[0]):
        if (left[i] < milli) if by_room else (ok[i] >= 0):
            continue
        if equal_earlier(left, ok, by_room, i):
            continue
        s = _sigmoid_score(node.frag, moved_frag(after_cpu, left, 1, left[i], left[i] - milli,
                                                 node.model, target.cpu, target.milli,
                                                 target.gpus, target.allowed, target.freq,
                                                 node.room, node.short))
        if gpu < 0 or s > score:
            score, gpu = s, i
    return score, gpu


@njit(cache=True)
def fgd_node_score(node: FragNode, gpus: int, milli: int, cpu: int,
                   target: Target) -> tuple[int, int]:  # pragma: no cover
    """FGD's score of placing a pod of ``gpus`` GPUs of ``milli`` and ``cpu`` CPU milli on
    ``node``, and for a share the GPU chosen (-1 otherwise); a whole-GPU pod takes ``gpus``
    wholly free GPUs (the node has them)."""
    if gpus == 1 and milli < GPU_MILLI:
        return fgd_node_share_gpu(node, node.left, True, milli, cpu, target)
    after = moved_frag(node.cpu - cpu, node.left, gpus, GPU_MILLI, 0, node.model, target.cpu,
                       target.milli, target.gpus, target.allowed, target.freq, node.room,
                       node.short)
    return _sigmoid_score(node.frag, after), -1


# the loose forms heuristics._shares_rules calls (the version 3 rules, outside the packing
# loops): each builds the named states and calls the form above, until that module does
@njit(cache=True, inline="always")
def fgd_share_gpu(left: np.ndarray, ok: np.ndarray, by_room: bool, milli: int, after_cpu: int,
                  model: int, before: float, room: np.ndarray, short: np.ndarray,
                  t_cpu: np.ndarray, t_milli: np.ndarray, t_gpus: np.ndarray,
                  t_allowed: np.ndarray, t_freq: np.ndarray) -> tuple[int, int]:
    # pragma: no cover
    """:func:`fgd_node_share_gpu` with the node's CPU after the share (``after_cpu``) and the
    arrays unpacked."""
    return fgd_node_share_gpu(FragNode(left, after_cpu, model, before, room, short), ok,
                              by_room, milli, 0, Target(t_cpu, t_milli, t_gpus, t_allowed, t_freq))


@njit(cache=True)
def fgd_score(left: np.ndarray, cpu_free: int, model: int, before: float, gpus: int,
              milli: int, cpu: int, room: np.ndarray, short: np.ndarray, t_cpu: np.ndarray,
              t_milli: np.ndarray, t_gpus: np.ndarray, t_allowed: np.ndarray,
              t_freq: np.ndarray) -> tuple[int, int]:  # pragma: no cover
    """:func:`fgd_node_score` with the arrays unpacked."""
    return fgd_node_score(FragNode(left, cpu_free, model, before, room, short), gpus, milli, cpu,
                          Target(t_cpu, t_milli, t_gpus, t_allowed, t_freq))
