"""The packing loop under a user's placement rule (section 14 of the specification), plain and compiled.

Each pod in turn: the nodes it fits (model, CPU, memory, and ``gpus`` wholly
free GPUs or one GPU with room for its share), the rule's scores over them
(:func:`heuristics.scoring.choose_node`), the GPUs it takes
(:func:`heuristics.scoring.choose_gpus`), or it fails. A rule compiled with
numba runs inside :func:`run_compiled`, one compiled call for the whole
list, with no Python call per pod; a plain rule is called once per pod
with read-only views of the state.

A rule is scored on every node, whatever it reads. A rule that declares
``per_node = True`` (:func:`per_node`: its score of a node reads only that
node's row of the view and the job, as a Kubernetes Score plugin scores one
node) is scored on a view of fewer rows, in node order: the nodes the pod
fits, less the nodes nothing was placed on that follow an untouched node of
the same type (their rows are equal, so are their scores, and ties go to the
earliest). The same node wins either way.
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
    Need,
    Nodes,
    Pods,
    Types,
    empty_free,
    fits,
    fits_all,
    gpu_lists,
    need_of,
    new_types,
    nodes_of,
    pods_of,
    scored_alike,
    take,
)

__all__ = ["CompiledJob", "CompiledRuleError", "per_node", "plain_loop", "run_compiled",
           "run_plain", "scored_rows"]


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


def per_node(entry: PlacementRule) -> bool:
    """Whether ``entry``'s rule declares ``per_node = True``: its score of a node reads only
    that node's row of the view and the job, so the packing loops may score it on a view of
    some of the nodes (docs/extending.md, "Scored per node")."""
    return getattr(entry.rule, "per_node", False) is True


@njit(cache=True)
def scored_rows(need: Need, j: int, nodes: Nodes, free: Free, types: Types,
                out: np.ndarray) -> int:  # pragma: no cover (compiled)
    """Into ``out``, the nodes a rule scored per node scores for pod ``j``: those the pod
    fits, less the untouched nodes after the first untouched node of their type; how many."""
    count = 0
    for n in range(nodes.gpus.shape[0]):
        if not fits(need, nodes, free, n) or scored_alike(types, n, j):
            continue
        out[count] = n
        count += 1
    return count


@njit(cache=True)
def _select_plain(pods: Pods, j: int, nodes: Nodes, free: Free, types: Types, fits: np.ndarray,
                  rows: np.ndarray, local: bool) -> int:  # pragma: no cover (compiled)
    """For the plain loop, in one call: every node's fit of pod ``j`` into ``fits`` and, for a
    rule scored per node (``local``), its rows into ``rows``; how many rows the rule scores
    (0: the pod fits no node)."""
    need = need_of(pods, j)
    if not fits_all(need, nodes, free, fits):
        return 0
    return scored_rows(need, j, nodes, free, types, rows) if local else fits.shape[0]


def run_plain(entry: PlacementRule, a: PackingArrays, names: tuple[str, ...],
              models: tuple[tuple[str, ...], ...], seq: np.ndarray) -> tuple[np.ndarray, list[list[int]]]:
    """Place the pods of ``seq`` with a plain Python rule (or a compiled one called pod by pod).

    Returns
    -------
    node_of, gpus
        Per pod: its node (-1: failed or not in ``seq``) and its GPU indices.
    """
    node_of, mask = plain_loop(entry, a, names, models, seq)
    return node_of, gpu_lists(nodes_of(a), node_of, mask)


def plain_loop(entry: PlacementRule, a: PackingArrays, names: tuple[str, ...],
               models: tuple[tuple[str, ...], ...], seq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`run_plain` with the GPUs as bit masks, as :func:`run_compiled` gives them."""
    nodes, pods, free = nodes_of(a), pods_of(a), empty_free(a)
    types = new_types(nodes)
    local = per_node(entry)
    fits = np.zeros(a.node_gpus.size, dtype=np.bool_)
    rows = np.zeros(a.node_gpus.size, dtype=np.int64)
    view = NodeView(readonly(a.node_gpus), readonly(a.node_cpu), readonly(a.node_mem),
                    readonly(a.node_model), readonly(free.left), readonly(free.cpu),
                    readonly(free.mem), readonly(fits), a.models, -1)
    node_of = np.full(a.pod_gpus.size, -1, dtype=np.int64)
    mask = np.zeros(a.pod_gpus.size, dtype=np.int64)
    for j in seq.tolist():
        count = _select_plain(pods, j, nodes, free, types, fits, rows, local)
        if count == 0:
            continue
        job = JobView(j, names[j], int(a.pod_gpus[j]), int(a.pod_milli[j]), int(a.pod_cpu[j]),
                      int(a.pod_mem[j]), models[j] or None)
        if local:  # the rule scores the rows of some nodes (copies: it cannot write the state)
            some = rows[:count]
            part = NodeView(a.node_gpus[some], a.node_cpu[some], a.node_mem[some],
                            a.node_model[some], free.left[some], free.cpu[some], free.mem[some],
                            np.ones(count, dtype=np.bool_), a.models, -1)
            r = choose_node(entry, part, job)
            n = int(some[r]) if r >= 0 else -1
        else:
            n = choose_node(entry, view, job)
        if n < 0:
            continue
        bits = 0
        for i in choose_gpus(entry, view, job, n):
            bits |= 1 << i
        take(free, n, bits, job.gpu_milli if job.gpus else 0, job.cpu_milli, job.memory_mib)
        types.touched[n] = True
        node_of[j] = n
        mask[j] = bits
    return node_of, mask


class Rows(NamedTuple):
    """The view a compiled rule scored per node sees: the rows of the nodes it scores,
    gathered in node order (``K`` rows kept for the whole run, the first ``count`` used)."""

    node: np.ndarray
    """``(K,)``: the node of each row."""
    gpus: np.ndarray
    """``(K,)``: the view's ``gpus`` of each row (and so on, field for field)."""
    cpu: np.ndarray
    mem: np.ndarray
    model: np.ndarray
    left: np.ndarray
    """``(K, width)``: the view's ``gpu_free_milli`` of each row."""
    free_cpu: np.ndarray
    free_mem: np.ndarray
    fits: np.ndarray
    """``(K,)``: the view's ``fits``: every node's (the view of every node), or all true."""


def _rows(a: PackingArrays) -> Rows:
    """:class:`Rows` for ``a``'s nodes (the rows in node order, every ``fits`` true)."""
    n_nodes, width = a.node_gpus.size, int(a.node_gpus.max(initial=0))

    def ints() -> np.ndarray:
        return np.zeros(n_nodes, dtype=np.int64)

    return Rows(np.arange(n_nodes, dtype=np.int64), ints(), ints(), ints(), ints(),
                np.zeros((n_nodes, width), dtype=np.int64), ints(), ints(),
                np.ones(n_nodes, dtype=np.bool_))


@njit(cache=True)
def _every_node(need: Need, j: int, nodes: Nodes, free: Free, types: Types, rows: Rows,
                models: Any) -> tuple[NodeView, int]:  # pragma: no cover (compiled)
    """The view of every node, with the fit of each (any rule); its rows (0: the pod fits no
    node)."""
    some = fits_all(need, nodes, free, rows.fits)
    view = NodeView(nodes.gpus, nodes.cpu, nodes.mem, nodes.model, free.left, free.cpu,
                    free.mem, rows.fits, models, -1)
    return view, nodes.gpus.shape[0] if some else 0


@njit(cache=True)
def _scored_nodes(need: Need, j: int, nodes: Nodes, free: Free, types: Types, rows: Rows,
                  models: Any) -> tuple[NodeView, int]:  # pragma: no cover (compiled)
    """The view of the nodes a rule scored per node scores for pod ``j`` (:func:`scored_rows`),
    gathered into ``rows``; its rows."""
    count = scored_rows(need, j, nodes, free, types, rows.node)
    for r in range(count):
        n = rows.node[r]
        rows.gpus[r], rows.cpu[r], rows.mem[r] = nodes.gpus[n], nodes.cpu[n], nodes.mem[n]
        rows.model[r], rows.free_cpu[r], rows.free_mem[r] = nodes.model[n], free.cpu[n], free.mem[n]
        for i in range(rows.left.shape[1]):  # (a row assigned whole ran slower)
            rows.left[r, i] = free.left[n, i]
    view = NodeView(rows.gpus[:count], rows.cpu[:count], rows.mem[:count], rows.model[:count],
                    rows.left[:count], rows.free_cpu[:count], rows.free_mem[:count],
                    rows.fits[:count], models, -1)
    return view, count


@njit(cache=True)
def _compiled_loop(score: Any, select: Any, seq: np.ndarray, nodes: Nodes, pods: Pods,
                   models: Any, free: Free, rows: Rows) -> tuple[np.ndarray, np.ndarray, int, int]:
    # pragma: no cover (compiled; held to run_plain in the tests)
    """Place the pods of ``seq``, each on the node of the highest score among the rows
    ``select`` gives it (:func:`_every_node` or :func:`_scored_nodes`) that it fits.

    Returns the pods' nodes and GPU masks, and the first pod whose scores had the wrong
    length with the length expected (-1, 0: none), since compiled code cannot raise a
    message naming the pod.
    """
    types = new_types(nodes)
    node_of = np.full(pods.gpus.shape[0], -1, dtype=np.int64)
    mask = np.zeros(pods.gpus.shape[0], dtype=np.int64)
    for j in seq:
        need = need_of(pods, j)
        view, count = select(need, j, nodes, free, types, rows, models)
        if count == 0:
            continue
        scores = score(view, CompiledJob(j, need.gpus, need.milli, need.cpu, need.mem,
                                         need.allowed, 0, 0, 1.0))
        if scores.shape[0] != count:
            return node_of, mask, j, count
        best, best_s = -1, -np.inf
        for r in range(count):
            if view.fits[r] and scores[r] > best_s:  # NaN and -inf never compare greater
                best, best_s = r, scores[r]
        if best < 0:
            continue
        n = rows.node[best]
        bits = 0
        for i in default_gpus(free.left[n], need.gpus, need.milli):
            bits |= 1 << i
        take(free, n, bits, need.milli, need.cpu, need.mem)
        types.touched[n] = True
        mask[j] = bits
        node_of[j] = n
    return node_of, mask, -1, 0


class CompiledRuleError(ValueError):
    """A compiled rule failed inside the compiled loop, which cannot say on which pod."""


def run_compiled(entry: PlacementRule, a: PackingArrays, names: tuple[str, ...],
                 seq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Place the pods of ``seq`` with a numba-compiled rule, in one compiled call.

    Returns
    -------
    node_of, gpu_mask
        Per pod: its node (-1: failed or not in ``seq``) and its GPUs as a bit mask
        (:func:`.state.gpu_lists` turns them into indices).

    Raises
    ------
    ValueError
        Naming the rule and the pod when the rule's scores have the wrong
        length; naming the rule when it does not compile for the view or raises.
    """
    loop: Any = _compiled_loop
    local = per_node(entry)
    try:
        node_of, mask, bad, length = loop(entry.score, _scored_nodes if local else _every_node,
                                          np.ascontiguousarray(seq, dtype=np.int64), nodes_of(a),
                                          pods_of(a), a.models, empty_free(a), _rows(a))
    except Exception as exc:  # a typing error inside the user's compiled rule
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CompiledRuleError(f"placement: rule {entry.name!r} does not run compiled on the "
                                f"view ({type(exc).__name__}: {first})") from exc
    if bad >= 0:
        job = JobView(int(bad), names[bad], int(a.pod_gpus[bad]), int(a.pod_milli[bad]),
                      int(a.pod_cpu[bad]), int(a.pod_mem[bad]), None)
        raise rule_error(entry, job, "returned scores of the wrong length, expected one per "
                                     f"{'row of the view' if local else 'node'} ({length},)")
    return node_of, mask
