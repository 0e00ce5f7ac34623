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
these. ``random`` and ``firstfit`` need no score (see :mod:`.online`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from instances.packing import GPU_MILLI
from instances.packing.frag import moved_frag

__all__ = ["MAX_CPU", "MAX_GPU", "bestfit_score", "clustering_score", "dotprod_score",
           "equal_earlier", "fgd_score", "fgd_share_gpu", "packing_score", "trunc_div"]

MAX_CPU = 128000.0
"""CPU milli of the largest node, FGD's normalisation of the CPU dimension."""

MAX_GPU = 8000.0
"""GPU milli of an 8-GPU node, FGD's normalisation of the GPU dimension."""


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
def fgd_share_gpu(left: np.ndarray, ok: np.ndarray, by_room: bool, milli: int, after_cpu: int,
                  model: int, before: float, room: np.ndarray, short: np.ndarray,
                  t_cpu: np.ndarray, t_milli: np.ndarray, t_gpus: np.ndarray,
                  t_allowed: np.ndarray, t_freq: np.ndarray) -> tuple[int, int]:
    # pragma: no cover
    """FGD's GPU for a share of ``milli``: the best score, and its GPU, over the GPUs that may
    take it (``left`` at least ``milli`` when ``by_room``, else ``ok`` below 0), each scored on
    the node after it; (-1, -1) when none may. ``room``, ``short``: the per-shape counts of
    ``left`` (:func:`instances.packing.frag.node_frag_shapes`), from which
    :func:`~instances.packing.frag.moved_frag` measures each GPU's move in one pass over the
    shapes."""
    n = left.shape[0]
    score, gpu = -1, -1
    for i in range(n):
        if (left[i] < milli) if by_room else (ok[i] >= 0):
            continue
        if equal_earlier(left, ok, by_room, i):
            continue
        s = _sigmoid_score(before, moved_frag(after_cpu, left, 1, left[i], left[i] - milli,
                                              model, t_cpu, t_milli, t_gpus, t_allowed,
                                              t_freq, room, short))
        if gpu < 0 or s > score:
            score, gpu = s, i
    return score, gpu


@njit(cache=True)
def fgd_score(left: np.ndarray, cpu_free: int, model: int, before: float, gpus: int,
              milli: int, cpu: int, room: np.ndarray, short: np.ndarray, t_cpu: np.ndarray,
              t_milli: np.ndarray, t_gpus: np.ndarray, t_allowed: np.ndarray,
              t_freq: np.ndarray) -> tuple[int, int]:  # pragma: no cover
    """FGD: the score and, for a share, the GPU chosen (-1 otherwise).

    ``room`` and ``short`` are the per-shape counts of ``left``
    (:func:`instances.packing.frag.node_frag_shapes`); a whole-GPU pod takes
    ``gpus`` wholly free GPUs (the node has them).
    """
    after_cpu = cpu_free - cpu
    if gpus == 1 and milli < GPU_MILLI:
        return fgd_share_gpu(left, left, True, milli, after_cpu, model, before, room, short,
                             t_cpu, t_milli, t_gpus, t_allowed, t_freq)
    after = moved_frag(after_cpu, left, gpus, GPU_MILLI, 0, model, t_cpu, t_milli, t_gpus,
                       t_allowed, t_freq, room, short)
    return _sigmoid_score(before, after), -1
