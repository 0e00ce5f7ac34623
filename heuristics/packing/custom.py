"""The packing loop under a user's placement rule (section 14 of the specification), plain and compiled.

Each pod in turn: the nodes it fits (model, CPU, memory, and ``gpus`` wholly
free GPUs or one GPU with room for its share), the rule's scores over them
(:func:`heuristics.scoring.choose_node`), the GPUs it takes
(:func:`heuristics.scoring.choose_gpus`), or it fails. A rule compiled with
numba runs inside :func:`run_compiled`, one compiled call for the whole
list, with no Python call per pod; a plain rule is called once per pod
with read-only views of the state.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import njit

from instances.packing import GPU_MILLI, PackingArrays

from ..placement_rules import PlacementRule
from ..scoring import choose_gpus, choose_node, rule_error
from ..view import JobView, NodeView, readonly

__all__ = ["CompiledJob", "run_compiled", "run_plain"]



class CompiledJob(NamedTuple):
    """The job as a compiled rule sees it: :class:`heuristics.view.JobView` without strings.

    ``gpu_models`` is a boolean array over ``view.models`` (the models the
    job accepts; all true for any); ``name`` is left out.
    """

    index: int
    gpus: int
    gpu_milli: int
    cpu_milli: int
    memory_mib: int
    gpu_models: np.ndarray
    duration: int
    release: int
    priority: float


def _empty_state(a: PackingArrays) -> tuple[np.ndarray, ...]:
    width = int(a.node_gpus.max(initial=0))
    left = np.full((a.node_gpus.size, width), -1, dtype=np.int64)
    left[np.arange(width)[None, :] < a.node_gpus[:, None]] = GPU_MILLI
    return left, a.node_cpu.copy(), a.node_mem.copy()


def _fits(a: PackingArrays, j: int, left: np.ndarray, cpu: np.ndarray, mem: np.ndarray,
          out: np.ndarray) -> np.ndarray:
    g, m = int(a.pod_gpus[j]), int(a.pod_milli[j])
    np.logical_and(a.pod_allowed[j][a.node_model], cpu >= a.pod_cpu[j], out=out)
    out &= mem >= a.pod_mem[j]
    if g == 1 and m < GPU_MILLI:
        out &= (left >= m).any(axis=1)
    elif g > 0:
        out &= (left == GPU_MILLI).sum(axis=1) >= g
    return out


def run_plain(entry: PlacementRule, a: PackingArrays, names: tuple[str, ...],
              models: tuple[tuple[str, ...], ...], seq: np.ndarray) -> tuple[np.ndarray, list[list[int]]]:
    """Place the pods of ``seq`` with a plain Python rule.

    Returns
    -------
    node_of, gpus
        Per pod: its node (-1: failed or not in ``seq``) and its GPU indices.
    """
    left, cpu, mem = _empty_state(a)
    fits = np.zeros(a.node_gpus.size, dtype=np.bool_)
    view = NodeView(readonly(a.node_gpus), readonly(a.node_cpu), readonly(a.node_mem),
                    readonly(a.node_model), readonly(left), readonly(cpu), readonly(mem),
                    readonly(fits), a.models, -1)
    node_of = np.full(a.pod_gpus.size, -1, dtype=np.int64)
    taken: list[list[int]] = [[] for _ in range(a.pod_gpus.size)]
    for j in seq.tolist():
        _fits(a, j, left, cpu, mem, fits)
        job = JobView(j, names[j], int(a.pod_gpus[j]), int(a.pod_milli[j]), int(a.pod_cpu[j]),
                      int(a.pod_mem[j]), models[j] or None)
        n = choose_node(entry, view, job) if fits.any() else -1
        if n < 0:
            continue
        gpus = choose_gpus(entry, view, job, n)
        left[n, gpus] -= GPU_MILLI if job.gpu_milli >= GPU_MILLI else job.gpu_milli
        cpu[n] -= job.cpu_milli
        mem[n] -= job.memory_mib
        node_of[j] = n
        taken[j] = gpus
    return node_of, taken


@njit(cache=True)
def _compiled_loop(score: Any, seq: np.ndarray, pod_gpus: np.ndarray, pod_milli: np.ndarray,
                   pod_cpu: np.ndarray, pod_mem: np.ndarray, pod_allowed: np.ndarray,
                   node_gpus: np.ndarray, node_cpu: np.ndarray, node_mem: np.ndarray,
                   node_model: np.ndarray, models: Any) -> tuple[np.ndarray, np.ndarray, int]:
    # pragma: no cover (compiled; held to run_plain in the tests)
    # returns the pods' nodes and GPU masks, and the first pod whose scores had the wrong
    # length (-1: none), since compiled code cannot raise a message naming the pod
    n_nodes = node_gpus.shape[0]
    width = 0
    for n in range(n_nodes):
        width = max(width, node_gpus[n])
    left = np.full((n_nodes, width), -1, dtype=np.int64)
    for n in range(n_nodes):
        left[n, :node_gpus[n]] = GPU_MILLI
    cpu = node_cpu.copy()
    mem = node_mem.copy()
    full = node_gpus.copy()  # wholly free GPUs of each node
    most = np.where(node_gpus > 0, GPU_MILLI, 0)  # the most free milli on one GPU of each node
    fits = np.zeros(n_nodes, dtype=np.bool_)
    node_of = np.full(pod_gpus.shape[0], -1, dtype=np.int64)
    mask = np.zeros(pod_gpus.shape[0], dtype=np.int64)
    for j in seq:
        g, m = pod_gpus[j], pod_milli[j]
        shared = g == 1 and m < GPU_MILLI
        anyfit = False
        for n in range(n_nodes):
            ok = (pod_allowed[j, node_model[n]] & (cpu[n] >= pod_cpu[j]) & (mem[n] >= pod_mem[j])
                  & ((g == 0) | (shared & (most[n] >= m)) | (~shared & (full[n] >= g))))
            fits[n] = ok
            anyfit = anyfit | ok
        if not anyfit:
            continue
        view = NodeView(node_gpus, node_cpu, node_mem, node_model, left, cpu, mem, fits,
                        models, -1)
        job = CompiledJob(j, g, m, pod_cpu[j], pod_mem[j], pod_allowed[j], 0, 0, 1.0)
        scores = score(view, job)
        if scores.shape[0] != n_nodes:
            return node_of, mask, j
        best, best_s = -1, -np.inf
        for n in range(n_nodes):
            s = scores[n]
            if fits[n] and s > best_s:  # NaN and -inf never compare greater
                best, best_s = n, s
        if best < 0:
            continue
        n = best
        bits = 0
        if shared:
            i_best = -1
            for i in range(node_gpus[n]):
                if left[n, i] >= m and (i_best < 0 or left[n, i] < left[n, i_best]):
                    i_best = i
            left[n, i_best] -= m
            bits = 1 << i_best
        elif g > 0:
            taken = 0
            for i in range(node_gpus[n]):
                if taken < g and left[n, i] == GPU_MILLI:
                    left[n, i] = 0
                    bits |= 1 << i
                    taken += 1
        cpu[n] -= pod_cpu[j]
        mem[n] -= pod_mem[j]
        count, hi = 0, 0
        for i in range(node_gpus[n]):
            count += left[n, i] == GPU_MILLI
            hi = max(hi, left[n, i])
        full[n], most[n] = count, hi
        node_of[j] = n
        mask[j] = bits
    return node_of, mask, -1


def run_compiled(entry: PlacementRule, a: PackingArrays, names: tuple[str, ...],
                 seq: np.ndarray) -> tuple[np.ndarray, list[list[int]]]:
    """Place the pods of ``seq`` with a numba-compiled rule, in one compiled call.

    Raises
    ------
    ValueError
        Naming the rule and the pod, when the rule's scores have the wrong
        length or a ``+inf``, or the rule does not compile for the view.
    """
    loop: Any = _compiled_loop
    try:
        node_of, mask, bad = loop(entry.score, np.ascontiguousarray(seq, dtype=np.int64),
                                        a.pod_gpus, a.pod_milli, a.pod_cpu, a.pod_mem,
                                        a.pod_allowed, a.node_gpus, a.node_cpu, a.node_mem,
                                        a.node_model, a.models)
    except Exception as exc:  # a typing error inside the user's compiled rule
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"placement: rule {entry.name!r} does not run compiled on the view "
                         f"({type(exc).__name__}: {first})") from exc
    if bad >= 0:
        job = JobView(int(bad), names[bad], int(a.pod_gpus[bad]), int(a.pod_milli[bad]),
                      int(a.pod_cpu[bad]), int(a.pod_mem[bad]), None)
        raise rule_error(entry, job, "returned scores of the wrong length, expected one per "
                                     f"node ({a.node_gpus.size},)")
    taken = [[i for i in range(int(a.node_gpus[n])) if int(mask[j]) >> i & 1] if n >= 0 else []
             for j, n in enumerate(node_of.tolist())]
    return node_of, taken
