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
from ..scoring import choose_gpus, choose_node, default_gpus, rule_error
from ..view import JobView, NodeView, readonly
from .online import fits_all

__all__ = ["CompiledJob", "CompiledRuleError", "run_compiled", "run_plain"]



class CompiledJob(NamedTuple):
    """The job as a compiled rule sees it: :class:`heuristics.view.JobView` without strings.

    ``gpu_models`` is a boolean array over ``view.models`` (the models the
    job accepts; all true for any); ``name`` is left out.
    """

    index: int  # type: ignore[assignment]  # the name section 14 gives it
    gpus: int
    gpu_milli: int
    cpu_milli: int
    memory_mib: int
    gpu_models: np.ndarray
    duration: int
    release: int
    priority: float


def _empty_state(a: PackingArrays) -> tuple[np.ndarray, ...]:
    """``left`` (each GPU's free milli, -1 past a node's GPUs), free CPU and memory, and per
    node its wholly free GPUs and the most free milli on one GPU (what :func:`.online.fits` reads)."""
    width = int(a.node_gpus.max(initial=0))
    left = np.full((a.node_gpus.size, width), -1, dtype=np.int64)
    left[np.arange(width)[None, :] < a.node_gpus[:, None]] = GPU_MILLI
    most = np.where(a.node_gpus > 0, GPU_MILLI, 0).astype(np.int64)
    return left, a.node_cpu.copy(), a.node_mem.copy(), a.node_gpus.copy(), most


@njit(cache=True)
def _charge(n: int, milli: int, cpu_milli: int, memory_mib: int, gpus: np.ndarray,
            left: np.ndarray, cpu: np.ndarray, mem: np.ndarray, full: np.ndarray,
            most: np.ndarray) -> int:  # pragma: no cover (compiled)
    """Place a pod on node ``n``'s GPUs ``gpus``; its GPUs as a bit mask."""
    bits = 0
    for i in gpus:
        left[n, i] -= milli
        bits |= 1 << i
    cpu[n] -= cpu_milli
    mem[n] -= memory_mib
    count, hi = 0, 0
    for i in range(left.shape[1]):
        count += left[n, i] == GPU_MILLI
        hi = max(hi, left[n, i])
    full[n], most[n] = count, hi
    return bits


def run_plain(entry: PlacementRule, a: PackingArrays, names: tuple[str, ...],
              models: tuple[tuple[str, ...], ...], seq: np.ndarray) -> tuple[np.ndarray, list[list[int]]]:
    """Place the pods of ``seq`` with a plain Python rule.

    Returns
    -------
    node_of, gpus
        Per pod: its node (-1: failed or not in ``seq``) and its GPU indices.
    """
    left, cpu, mem, full, most = state = _empty_state(a)
    fits = np.zeros(a.node_gpus.size, dtype=np.bool_)
    view = NodeView(readonly(a.node_gpus), readonly(a.node_cpu), readonly(a.node_mem),
                    readonly(a.node_model), readonly(left), readonly(cpu), readonly(mem),
                    readonly(fits), a.models, -1)
    node_of = np.full(a.pod_gpus.size, -1, dtype=np.int64)
    taken: list[list[int]] = [[] for _ in range(a.pod_gpus.size)]
    for j in seq.tolist():
        if not fits_all(j, a.pod_gpus, a.pod_milli, a.pod_cpu, a.pod_mem, a.pod_allowed,
                        a.node_model, cpu, mem, full, most, fits):
            continue
        job = JobView(j, names[j], int(a.pod_gpus[j]), int(a.pod_milli[j]), int(a.pod_cpu[j]),
                      int(a.pod_mem[j]), models[j] or None)
        n = choose_node(entry, view, job)
        if n < 0:
            continue
        gpus = choose_gpus(entry, view, job, n)
        _charge(n, job.gpu_milli if job.gpus else 0, job.cpu_milli, job.memory_mib,
                np.array(gpus, dtype=np.int64), *state)
        node_of[j] = n
        taken[j] = gpus
    return node_of, taken


@njit(cache=True)
def _compiled_loop(score: Any, seq: np.ndarray, pod_gpus: np.ndarray, pod_milli: np.ndarray,
                   pod_cpu: np.ndarray, pod_mem: np.ndarray, pod_allowed: np.ndarray,
                   node_gpus: np.ndarray, node_cpu: np.ndarray, node_mem: np.ndarray,
                   node_model: np.ndarray, models: Any, left: np.ndarray, cpu: np.ndarray,
                   mem: np.ndarray, full: np.ndarray,
                   most: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    # pragma: no cover (compiled; held to run_plain in the tests)
    # returns the pods' nodes and GPU masks, and the first pod whose scores had the wrong
    # length (-1: none), since compiled code cannot raise a message naming the pod
    n_nodes = node_gpus.shape[0]
    fits = np.zeros(n_nodes, dtype=np.bool_)
    node_of = np.full(pod_gpus.shape[0], -1, dtype=np.int64)
    mask = np.zeros(pod_gpus.shape[0], dtype=np.int64)
    for j in seq:
        if not fits_all(j, pod_gpus, pod_milli, pod_cpu, pod_mem, pod_allowed, node_model, cpu,
                        mem, full, most, fits):
            continue
        g, m = pod_gpus[j], pod_milli[j]
        view = NodeView(node_gpus, node_cpu, node_mem, node_model, left, cpu, mem, fits,
                        models, -1)
        job = CompiledJob(j, g, m, pod_cpu[j], pod_mem[j], pod_allowed[j], 0, 0, 1.0)
        scores = score(view, job)
        if scores.shape[0] != n_nodes:
            return node_of, mask, j
        best, best_s = -1, -np.inf
        for n in range(n_nodes):
            if fits[n] and scores[n] > best_s:  # NaN and -inf never compare greater
                best, best_s = n, scores[n]
        if best < 0:
            continue
        gpus = default_gpus(left[best], g, m)
        mask[j] = _charge(best, m if g else 0, pod_cpu[j], pod_mem[j], gpus, left, cpu, mem,
                          full, most)
        node_of[j] = best
    return node_of, mask, -1


class CompiledRuleError(ValueError):
    """A compiled rule failed inside the compiled loop, which cannot say on which pod."""


def run_compiled(entry: PlacementRule, a: PackingArrays, names: tuple[str, ...],
                 seq: np.ndarray) -> tuple[np.ndarray, list[list[int]]]:
    """Place the pods of ``seq`` with a numba-compiled rule, in one compiled call.

    Raises
    ------
    ValueError
        Naming the rule and the pod when the rule's scores have the wrong
        length; naming the rule when it does not compile for the view or raises.
    """
    loop: Any = _compiled_loop
    try:
        node_of, mask, bad = loop(entry.score, np.ascontiguousarray(seq, dtype=np.int64),
                                  a.pod_gpus, a.pod_milli, a.pod_cpu, a.pod_mem, a.pod_allowed,
                                  a.node_gpus, a.node_cpu, a.node_mem, a.node_model, a.models,
                                  *_empty_state(a))
    except Exception as exc:  # a typing error inside the user's compiled rule
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CompiledRuleError(f"placement: rule {entry.name!r} does not run compiled on the "
                                f"view ({type(exc).__name__}: {first})") from exc
    if bad >= 0:
        job = JobView(int(bad), names[bad], int(a.pod_gpus[bad]), int(a.pod_milli[bad]),
                      int(a.pod_cpu[bad]), int(a.pod_mem[bad]), None)
        raise rule_error(entry, job, "returned scores of the wrong length, expected one per "
                                     f"node ({a.node_gpus.size},)")
    taken = [[i for i in range(int(a.node_gpus[n])) if int(mask[j]) >> i & 1] if n >= 0 else []
             for j, n in enumerate(node_of.tolist())]
    return node_of, taken
