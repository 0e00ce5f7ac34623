"""FGD's fragmentation measure and its target workload (Weng et al., USENIX ATC 2023).

The **target workload** is the most frequent pod shapes (CPU milli, GPU milli,
GPU count, models) of a packing's pods, taken one shape at a time from the
most frequent down until they cover 95% of the pods; their frequencies are
then renormalised to sum to one. Ties in frequency go to the larger shape
(CPU, then GPU milli, then GPU count, then the models), as the simulator
sorts them.

A node's **fragmentation** is the expected idle GPU milli the next pod, drawn
from the target workload, cannot use: for each shape, all of the node's idle
GPU milli when the shape asks no GPU, is not allowed on the node's model,
lacks CPU or lacks GPUs with room; otherwise the idle milli on the GPUs that
have less free milli than the shape asks. :func:`_shape_frag` is the one place
this rule is written (:func:`node_frag` sums it over the shapes; the FGD policy
and the metrics both call it; :func:`moved_frag` is the same sum after a job
takes some GPUs, from per-shape counts of the node before).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .model import Packing

__all__ = ["COVERAGE", "TargetWorkload", "moved_frag", "node_frag", "node_frag_shapes",
           "nodes_frag", "target_workload"]

COVERAGE = 0.95
"""Share of the pods the target workload's shapes cover (the simulator's default)."""


@dataclass(frozen=True)
class TargetWorkload:
    """The shapes of the target workload, by index (all arrays read-only).

    Attributes
    ----------
    cpu, milli, gpus
        CPU milli, GPU milli per GPU and GPU count of each shape (``int64``).
    allowed
        ``(shapes, models)`` booleans over the packing's node models.
    freq
        Renormalised frequency of each shape (sums to one).
    count
        Pods of each shape in the packing.
    models
        Each shape's ``gpu_models`` (empty: any).
    """

    cpu: np.ndarray
    milli: np.ndarray
    gpus: np.ndarray
    allowed: np.ndarray
    freq: np.ndarray
    count: np.ndarray
    models: tuple[tuple[str, ...], ...]

    def __len__(self) -> int:
        return int(self.cpu.shape[0])


def _ro(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def target_workload(packing: Packing, coverage: float = COVERAGE) -> TargetWorkload:
    """The target workload of ``packing``'s pods.

    Raises
    ------
    ValueError
        If ``coverage`` is not in ``(0, 1]`` or the packing has no pods.
    """
    if not 0 < coverage <= 1:
        raise ValueError(f"coverage: must be in (0, 1], got {coverage!r}")
    if not packing.pods:
        raise ValueError("pods: a target workload needs at least one pod")
    counts: dict[tuple[int, int, int, tuple[str, ...]], int] = {}
    for p in packing.pods:
        key = (p.cpu_milli, p.gpu_milli, p.gpus, p.gpu_models)
        counts[key] = counts.get(key, 0) + 1
    # most frequent first; ties: the larger shape first (CPU, GPU milli, GPUs, models)
    ranked = sorted(counts.items(), key=lambda kv: (kv[1], kv[0][:3], "|".join(kv[0][3])),
                    reverse=True)
    need, total, taken = coverage * len(packing.pods), 0, 0
    while total < need:
        total += ranked[taken][1]
        taken += 1
    chosen = ranked[:taken]
    node_models = packing.arrays.models
    allowed = np.ones((taken, len(node_models)), dtype=np.bool_)
    for s, ((_, _, _, models), _) in enumerate(chosen):
        if models:
            allowed[s] = [m in models for m in node_models]
    count = np.array([c for _, c in chosen], dtype=np.int64)
    return TargetWorkload(
        cpu=_ro(np.array([k[0] for k, _ in chosen], dtype=np.int64)),
        milli=_ro(np.array([k[1] for k, _ in chosen], dtype=np.int64)),
        gpus=_ro(np.array([k[2] for k, _ in chosen], dtype=np.int64)),
        allowed=_ro(allowed),
        freq=_ro(count / count.sum()),
        count=_ro(count),
        models=tuple(k[3] for k, _ in chosen),
    )


@njit(cache=True, nogil=True, inline="always")
def _shape_frag(freq: float, m: int, allowed: bool, cpu_ok: bool, room: int, need: int,
                short: int, idle: int) -> float:  # pragma: no cover (compiled)
    """One shape's term of :func:`node_frag`: its frequency times the idle milli it cannot use
    (the milli short of it on a node it can use: ``room`` GPUs of ``need`` have its milli)."""
    usable = (m > 0) & allowed & cpu_ok & (room >= need)
    return freq * (usable * short + (1 - usable) * idle)


@njit(cache=True, nogil=True, inline="always")
def _shape_counts(gpu_left: np.ndarray, m: int) -> tuple[int, int]:  # pragma: no cover
    """The GPUs with ``m`` milli free or more, and the idle milli of the others (branch-free:
    numba runs it many times faster so)."""
    room = 0
    short = 0
    for i in range(gpu_left.shape[0]):
        fits = gpu_left[i] >= m
        room += fits
        short += gpu_left[i] * (1 - fits)
    return room, short


@njit(cache=True, nogil=True, inline="always")
def node_frag(cpu_left: int, gpu_left: np.ndarray, model: int, t_cpu: np.ndarray,
              t_milli: np.ndarray, t_gpus: np.ndarray, t_allowed: np.ndarray,
              t_freq: np.ndarray) -> float:  # pragma: no cover (compiled; tested via results)
    """Fragmented GPU milli of one node (``gpu_left``: free milli of each of its GPUs).

    Inlined into its callers: called as a function of its own, the version 3 ``frag``
    pass loaded from numba's cache ran about 2x slower than freshly compiled
    (docs/resources-heuristics.md).
    """
    idle = gpu_left.sum()
    if idle == 0:
        return 0.0
    frag = 0.0
    for s in range(t_cpu.shape[0]):
        room, short = _shape_counts(gpu_left, t_milli[s])
        frag += _shape_frag(t_freq[s], t_milli[s], t_allowed[s, model], cpu_left >= t_cpu[s],
                            room, t_gpus[s], short, idle)
    return frag


@njit(cache=True, nogil=True, inline="always")
def node_frag_shapes(cpu_left: int, gpu_left: np.ndarray, model: int, t_cpu: np.ndarray,
                     t_milli: np.ndarray, t_gpus: np.ndarray, t_allowed: np.ndarray,
                     t_freq: np.ndarray, room: np.ndarray,
                     short: np.ndarray) -> float:  # pragma: no cover (compiled)
    """:func:`node_frag`, leaving per shape in ``room`` the GPUs with its milli free and in
    ``short`` the idle milli of the others (what :func:`moved_frag` starts from)."""
    idle = gpu_left.sum()
    frag = 0.0
    for s in range(t_cpu.shape[0]):
        room[s], short[s] = _shape_counts(gpu_left, t_milli[s])
        frag += _shape_frag(t_freq[s], t_milli[s], t_allowed[s, model], cpu_left >= t_cpu[s],
                            room[s], t_gpus[s], short[s], idle)
    return 0.0 if idle == 0 else frag


@njit(cache=True, nogil=True, inline="always")
def moved_frag(cpu_left: int, gpu_left: np.ndarray, n: int, old: int, new: int, model: int,
               t_cpu: np.ndarray, t_milli: np.ndarray, t_gpus: np.ndarray,
               t_allowed: np.ndarray, t_freq: np.ndarray, room: np.ndarray,
               short: np.ndarray) -> float:  # pragma: no cover (compiled)
    """:func:`node_frag` of the node once ``n`` of its GPUs with ``old`` milli free have ``new``
    (``cpu_left``: after the job), from :func:`node_frag_shapes`'s ``room`` and ``short`` of
    the node before: one pass over the shapes, not over the shapes and the GPUs (the same
    terms, so the same value)."""
    idle = gpu_left.sum() - n * (old - new)
    if idle == 0:
        return 0.0
    frag = 0.0
    for s in range(t_cpu.shape[0]):
        m = t_milli[s]
        was = old >= m
        now = new >= m
        frag += _shape_frag(t_freq[s], m, t_allowed[s, model], cpu_left >= t_cpu[s],
                            room[s] + n * (now - was), t_gpus[s],
                            short[s] + n * (new * (1 - now) - old * (1 - was)), idle)
    return frag


@njit(cache=True, nogil=True)
def nodes_frag(cpu_left: np.ndarray, gpu_left: np.ndarray, node_gpus: np.ndarray,
               node_model: np.ndarray, t_cpu: np.ndarray, t_milli: np.ndarray,
               t_gpus: np.ndarray, t_allowed: np.ndarray,
               t_freq: np.ndarray) -> np.ndarray:  # pragma: no cover (compiled)
    """:func:`node_frag` of every node (``gpu_left``: ``(nodes, max GPUs)``)."""
    out = np.zeros(cpu_left.shape[0])
    for n in range(cpu_left.shape[0]):
        out[n] = node_frag(cpu_left[n], gpu_left[n, :node_gpus[n]], node_model[n], t_cpu,
                           t_milli, t_gpus, t_allowed, t_freq)
    return out
