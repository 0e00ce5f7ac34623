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

from instances.packing import PackingArrays

from ..placement_rules import PlacementRule
from ..scoring import choose_gpus, choose_node, default_gpus, rule_error
from ..view import JobView, NodeView, readonly
from .state import (
    Free,
    Nodes,
    Pods,
    empty_free,
    fits_all,
    gpu_lists,
    need_of,
    nodes_of,
    pods_of,
    take,
)

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


def run_plain(entry: PlacementRule, a: PackingArrays, names: tuple[str, ...],
              models: tuple[tuple[str, ...], ...], seq: np.ndarray) -> tuple[np.ndarray, list[list[int]]]:
    """Place the pods of ``seq`` with a plain Python rule.

    Returns
    -------
    node_of, gpus
        Per pod: its node (-1: failed or not in ``seq``) and its GPU indices.
    """
    nodes, pods, free = nodes_of(a), pods_of(a), empty_free(a)
    fits = np.zeros(a.node_gpus.size, dtype=np.bool_)
    view = NodeView(readonly(a.node_gpus), readonly(a.node_cpu), readonly(a.node_mem),
                    readonly(a.node_model), readonly(free.left), readonly(free.cpu),
                    readonly(free.mem), readonly(fits), a.models, -1)
    node_of = np.full(a.pod_gpus.size, -1, dtype=np.int64)
    taken: list[list[int]] = [[] for _ in range(a.pod_gpus.size)]
    for j in seq.tolist():
        if not fits_all(need_of(pods, j), nodes, free, fits):
            continue
        job = JobView(j, names[j], int(a.pod_gpus[j]), int(a.pod_milli[j]), int(a.pod_cpu[j]),
                      int(a.pod_mem[j]), models[j] or None)
        n = choose_node(entry, view, job)
        if n < 0:
            continue
        gpus = choose_gpus(entry, view, job, n)
        take(free, n, sum(1 << i for i in gpus), job.gpu_milli if job.gpus else 0,
             job.cpu_milli, job.memory_mib)
        node_of[j] = n
        taken[j] = gpus
    return node_of, taken


@njit(cache=True)
def _compiled_loop(score: Any, seq: np.ndarray, nodes: Nodes, pods: Pods, models: Any,
                   free: Free) -> tuple[np.ndarray, np.ndarray, int]:
    # pragma: no cover (compiled; held to run_plain in the tests)
    # returns the pods' nodes and GPU masks, and the first pod whose scores had the wrong
    # length (-1: none), since compiled code cannot raise a message naming the pod
    n_nodes = nodes.gpus.shape[0]
    fits = np.zeros(n_nodes, dtype=np.bool_)
    node_of = np.full(pods.gpus.shape[0], -1, dtype=np.int64)
    mask = np.zeros(pods.gpus.shape[0], dtype=np.int64)
    for j in seq:
        if not fits_all(need_of(pods, j), nodes, free, fits):
            continue
        g, m = pods.gpus[j], pods.milli[j]
        view = NodeView(nodes.gpus, nodes.cpu, nodes.mem, nodes.model, free.left, free.cpu,
                        free.mem, fits, models, -1)
        job = CompiledJob(j, g, m, pods.cpu[j], pods.mem[j], pods.allowed[j], 0, 0, 1.0)
        scores = score(view, job)
        if scores.shape[0] != n_nodes:
            return node_of, mask, j
        best, best_s = -1, -np.inf
        for n in range(n_nodes):
            if fits[n] and scores[n] > best_s:  # NaN and -inf never compare greater
                best, best_s = n, scores[n]
        if best < 0:
            continue
        bits = 0
        for i in default_gpus(free.left[best], g, m):
            bits |= 1 << i
        take(free, best, bits, m if g else 0, pods.cpu[j], pods.mem[j])
        mask[j] = bits
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
    nodes = nodes_of(a)
    try:
        node_of, mask, bad = loop(entry.score, np.ascontiguousarray(seq, dtype=np.int64), nodes,
                                  pods_of(a), a.models, empty_free(a))
    except Exception as exc:  # a typing error inside the user's compiled rule
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CompiledRuleError(f"placement: rule {entry.name!r} does not run compiled on the "
                                f"view ({type(exc).__name__}: {first})") from exc
    if bad >= 0:
        job = JobView(int(bad), names[bad], int(a.pod_gpus[bad]), int(a.pod_milli[bad]),
                      int(a.pod_cpu[bad]), int(a.pod_mem[bad]), None)
        raise rule_error(entry, job, "returned scores of the wrong length, expected one per "
                                     f"node ({a.node_gpus.size},)")
    return node_of, gpu_lists(nodes, node_of, mask)
