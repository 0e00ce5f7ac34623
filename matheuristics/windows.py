"""The neighbourhoods of the LNS: which jobs a round frees, and the small instance they leave.

A round frees the jobs of a time window ``[a, b)`` (:func:`window_jobs`) or
the running jobs near a slot with some not run (:func:`nearby_jobs`, over the
whole horizon), as :func:`neighbourhood` draws. Every other job keeps its
start, and its GPUs leave the capacity: the window becomes an instance of its
own (:func:`sub_instance`; the capacity left appears as one inference
service), whose warm start is the freed jobs' current starts. On nodes the
window keeps the nodes, and the fixed jobs' GPUs are also withheld from the
nodes they run on, per slot (:func:`node_window`). :func:`make_window` makes
the one or the other; a flat instance is the case of one internal node,
whose row never binds, so its window needs no per-node rows. On model
version 3 the fixed jobs hold particular GPUs: the window carries their use
by GPU index, CPU and memory (:func:`resource_window`, :mod:`~matheuristics.gpus`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

import numpy as np

from instances import Instance, Job, Service
from instances.objective import window_meta
from instances.resources import resources
from milp.fixed import FixedUse

from .gpus import fixed_use, index_width, shared_gpu

__all__ = [
    "MAX_WINDOW_NODES", "Window", "make_window", "nearby_jobs", "neighbourhood", "node_window",
    "resource_window", "sub_instance", "window_jobs", "window_nodes",
]


class Window(NamedTuple):
    """A window to re-solve: the freed jobs of ``[a, b)`` as an instance of their own.

    Attributes
    ----------
    sub
        The sub-instance (horizon ``b - a``, the freed jobs in order of ``freed``).
    warm
        The freed jobs' current starts, shifted by ``a`` (a start array of ``sub``).
    warm_place
        Their current placement (rows of ``sub``), or ``None`` on a flat instance.
    reserved
        ``(num_nodes, b - a)`` GPUs the fixed jobs hold per node, or ``None`` on a flat instance.
    a, b
        The window's slots in the instance.
    freed
        The freed jobs, indices into the instance.
    fixed
        On model version 3 (``reserved`` then ``None``): the fixed jobs' use by GPU
        index, CPU and memory over the window (:class:`milp.fixed.FixedUse`).
    warm_gpu, warm_idx
        On model version 3: the freed jobs' current shared GPUs (``-1``: not shared)
        and GPU indices (:func:`matheuristics.gpus.index_array`'s rows).
    nodes
        On model version 3 with more than :data:`MAX_WINDOW_NODES` nodes: the
        instance's positions of the sub-instance's nodes (its placements are
        over those); ``None``: the sub-instance has every node.
    """

    sub: Instance
    warm: np.ndarray
    warm_place: np.ndarray | None
    reserved: np.ndarray | None
    a: int
    b: int
    freed: np.ndarray
    fixed: FixedUse | None = None
    warm_gpu: np.ndarray | None = None
    warm_idx: np.ndarray | None = None
    nodes: np.ndarray | None = None


MAX_WINDOW_NODES = 16
"""On model version 3, a window over more nodes keeps only some (:func:`window_nodes`): 40
freed jobs on 1,213 nodes, 8 GPU slots each, over a quarter of 3,360 slots, would be far
over the column cap."""


def window_nodes(inst: Instance, start: np.ndarray, place: np.ndarray, freed: np.ndarray,
                 seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The nodes a version 3 window keeps, and the freed jobs it keeps, when the instance
    has more than :data:`MAX_WINDOW_NODES` nodes.

    Every node a running freed job uses; then, while under the cap, for each freed
    job not run (in order) up to two nodes it fits alone (GPUs, model, CPU, memory),
    drawn with ``seed``. A freed job not run with no kept node it fits stays out (it
    stays not run), and so does one that needs whole nodes.
    """
    res = resources(inst)
    run = start[freed] >= 0
    used = place[freed[run]]
    keep = set(used[used >= 0].tolist())
    rng = np.random.default_rng(seed)
    out = [int(j) for j in freed[run]]
    for j in freed[~run].tolist():
        if inst.multi_node[j]:
            continue
        ok = np.flatnonzero(res.eligible[j] & (inst.node_gpus >= inst.gpus[j])
                            & (res.job_cpu[j] <= res.node_cpu)
                            & (res.job_memory[j] <= res.node_memory))
        if not any(k in keep for k in ok.tolist()):
            room = MAX_WINDOW_NODES - len(keep)
            if room <= 0 or ok.size == 0:
                continue
            keep.update(rng.choice(ok, size=min(2, room, ok.size), replace=False).tolist())
        out.append(int(j))
    return np.array(sorted(keep), dtype=np.int64), np.array(sorted(out), dtype=np.int64)


def sub_instance(
    inst: Instance, start: np.ndarray, a: int, b: int, freed: np.ndarray
) -> tuple[Instance, np.ndarray]:
    """The instance left to decide when only the jobs ``freed`` may move, in window ``[a, b)``.

    Every other job keeps its start and its GPUs leave the capacity, which
    becomes one inference service ``rest`` of the sub-instance (horizon
    ``b - a``); the freed jobs keep their size and priority, with release and
    deadline clipped to the window. Returns it with the warm start, a start
    array of the sub-instance: the freed jobs' current starts, shifted by
    ``a`` (each freed job that runs must lie inside the window; each one not
    run must fit in it).
    """
    gpus, dur, rel, dl = inst.gpus, inst.durations, inst.releases, inst.deadlines
    run = start >= 0
    keep = run.copy()
    keep[freed] = False
    fixed = np.flatnonzero(keep)
    usage = np.zeros(inst.horizon + 1, dtype=np.int64)
    np.add.at(usage, start[fixed], gpus[fixed])
    np.add.at(usage, start[fixed] + dur[fixed], -gpus[fixed])
    cap = inst.batch_capacity("curve") - np.cumsum(usage)[: inst.horizon]
    lo, hi = np.maximum(rel, a), np.minimum(dl, b)
    jobs = tuple(
        Job(inst.jobs[j].name, int(gpus[j]), int(dur[j]), float(inst.priorities[j]),
            inst.jobs[j].kind, int(lo[j] - a), int(hi[j] - a))
        for j in freed.tolist()
    )
    sub = Instance(f"{inst.name}[{a}:{b}]", inst.num_gpus, b - a,
                   (Service("rest", 1.0, tuple((inst.num_gpus - cap[a:b]).tolist())),),
                   jobs, inst.slot_hours, meta=window_meta(inst, a), objective=inst.objective)
    warm = np.where(run[freed], start[freed] - a, -1).astype(np.int64)
    return sub, warm


def node_window(
    inst: Instance, start: np.ndarray, place: np.ndarray, a: int, b: int, freed: np.ndarray
) -> tuple[Instance, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`sub_instance` on nodes: the window keeps the nodes, the fixed jobs hold theirs.

    ``place`` is the placement array of ``start``. The sub-instance is the
    one of :func:`sub_instance` (the fixed jobs' GPUs out of the pool) with
    ``inst``'s nodes; ``reserved[k, t - a]`` is what the fixed jobs running
    at ``t`` hold on node ``k`` (a one-node job its ``g_j``, a multi-node
    job each of its nodes in full), for :func:`milp.build`.

    Returns
    -------
    tuple
        ``(sub, warm, warm_place, reserved)``: the sub-instance, the freed
        jobs' current starts and placements (shifted by ``a``; arrays of
        the sub-instance) and the ``(num_nodes, b - a)`` withheld GPUs.
    """
    flat, warm = sub_instance(inst, start, a, b, freed)
    sub = flat.replace(nodes=inst.nodes)
    keep = start >= 0
    keep[freed] = False
    fixed = np.flatnonzero(keep)
    rows, cols = np.nonzero(place[fixed] >= 0)
    job = fixed[rows]
    node = place[job, cols]
    held = np.where(inst.multi_node[job], inst.node_gpus[node], inst.gpus[job])
    K, T = inst.num_nodes, inst.horizon
    diff = np.zeros((K, T + 1), dtype=np.int64)
    np.add.at(diff, (node, start[job]), held)
    np.add.at(diff, (node, start[job] + inst.durations[job]), -held)
    reserved = np.cumsum(diff, axis=1)[:, a:b]
    warm_place = np.where(warm[:, None] >= 0, place[freed, : sub.max_span], -1)
    return sub, warm, warm_place.astype(np.int64), reserved


def resource_window(
    inst: Instance, start: np.ndarray, place: np.ndarray, idx: np.ndarray, a: int, b: int,
    freed: np.ndarray,
) -> Window:
    """The window of ``[a, b)`` on model version 3: the fixed jobs' use by GPU index.

    ``idx`` is the index array of ``start`` (:func:`matheuristics.gpus.index_array`).
    The sub-instance keeps the nodes (models, CPU, memory) and the freed jobs
    (every field, release and deadline clipped to the window); its one service
    ``rest`` is the inference and the GPUs the fixed jobs keep busy per slot
    (a GPU with several fixed shares counts once).
    """
    nodes = None
    if inst.num_nodes > MAX_WINDOW_NODES:
        nodes, freed = window_nodes(inst, start, place, freed, seed=a * 7919 + b + freed.size)
        if nodes.size == 0:  # nothing freed is left: a window of one node and no job
            nodes = np.zeros(1, dtype=np.int64)
    keep = start >= 0
    keep[freed] = False
    use = fixed_use(inst, start, place, idx, np.flatnonzero(keep), a, b)
    inference = inst.num_gpus - inst.batch_capacity("curve")[a:b]
    busy = use.busy(inst.node_gpus).sum(axis=0)  # the fixed jobs' busy GPUs, on every node
    all_nodes = inst.nodes or ()
    if nodes is None:
        G, sub_nodes, rest = inst.num_gpus, tuple(all_nodes), inference + busy
    else:  # the pool left to the freed jobs, on the kept nodes' GPUs
        sub_nodes = tuple(all_nodes[k] for k in nodes.tolist())
        G = int(sum(n.gpus for n in sub_nodes))
        width = max(n.gpus for n in sub_nodes)
        use = FixedUse(use.gpu_milli[nodes][:, :width], use.cpu[nodes], use.memory[nodes])
        rest = np.clip(G - (inst.num_gpus - inference - busy), 0, G)
    lo, hi = np.maximum(inst.releases, a), np.minimum(inst.deadlines, b)
    jobs = tuple(replace(inst.jobs[j], release=int(lo[j] - a), deadline=int(hi[j] - a))
                 for j in freed.tolist())
    sub = Instance(f"{inst.name}[{a}:{b}]", G, b - a,
                   (Service("rest", 1.0, tuple(int(d) for d in rest)),), jobs, inst.slot_hours,
                   meta=window_meta(inst, a), nodes=sub_nodes, objective=inst.objective)
    run = start[freed] >= 0
    rows = place[freed, : sub.max_span]
    if nodes is not None:  # the instance's node positions as the sub-instance's
        local = np.full(inst.num_nodes, -1, dtype=np.int64)
        local[nodes] = np.arange(nodes.size)
        rows = np.where(rows >= 0, local[np.maximum(rows, 0)], -1)
    warm = np.where(run, start[freed] - a, -1).astype(np.int64)
    warm_place = np.where(run[:, None], rows, -1).astype(np.int64)
    warm_gpu = np.where(run, shared_gpu(inst, start, idx)[freed], -1)
    warm_idx = np.where(run[:, None], idx[freed][:, : index_width(sub)], -1)
    return Window(sub, warm, warm_place, None, a, b, freed, use, warm_gpu, warm_idx, nodes)


def make_window(
    inst: Instance, start: np.ndarray, place: np.ndarray | None, a: int, b: int,
    freed: np.ndarray, idx: np.ndarray | None = None,
) -> Window:
    """The :class:`Window` of ``[a, b)`` freeing ``freed``: :func:`node_window` on nodes
    (``place`` required there), :func:`resource_window` on model version 3 (``idx``
    too), :func:`sub_instance` on a flat instance."""
    if not inst.has_nodes:
        sub, warm = sub_instance(inst, start, a, b, freed)
        return Window(sub, warm, None, None, a, b, freed)
    assert place is not None
    if inst.jobs_use_resources:
        assert idx is not None
        return resource_window(inst, start, place, idx, a, b, freed)
    return Window(*node_window(inst, start, place, a, b, freed), a, b, freed)


def window_jobs(
    inst: Instance, start: np.ndarray, a: int, b: int, max_jobs: int, rng: np.random.Generator,
    share: float = 0.5,
) -> np.ndarray:
    """Jobs freed by window ``[a, b)``: those running inside it, and not-run jobs that fit in it.

    At most ``max_jobs`` in all, of which a ``share`` (rounded; more when
    the running ones leave more room) is kept for the not-run jobs: a window
    that only re-packs the jobs it holds can never add one. When there are
    more candidates than room, the running ones are a uniform random choice
    and the not-run ones a random choice weighted by value density
    ``v_j / (g_j p_j)`` (the priority times ``slot_hours``), the jobs most
    worth adding (the measurements behind ``share`` are in ``docs/milp.md``).
    """
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share: must be in [0, 1], got {share!r}")
    run = start >= 0
    dur = inst.durations
    inside = np.flatnonzero(run & (start >= a) & (start + dur <= b))
    could = np.flatnonzero(~run & (np.maximum(inst.releases, a) + dur <= np.minimum(inst.deadlines, b)))
    n_could = min(could.size, max(max_jobs - inside.size, round(share * max_jobs)))
    n_inside = min(inside.size, max_jobs - n_could)
    if inside.size > n_inside:
        inside = np.sort(rng.choice(inside, size=n_inside, replace=False))
    if could.size > n_could:
        w = inst.priorities[could] / inst.priorities[could].max()  # density, up to slot_hours
        w = np.maximum(w, 1e-12)  # each job keeps a chance, whatever the spread of priorities
        could = np.sort(rng.choice(could, size=n_could, replace=False, p=w / w.sum()))
    return np.concatenate([inside, could])


def nearby_jobs(
    inst: Instance, start: np.ndarray, center: float, max_jobs: int, rng: np.random.Generator
) -> np.ndarray:
    """Jobs freed around slot ``center``, to move over the whole horizon.

    The ``max_jobs // 2`` running jobs whose midpoints lie nearest to
    ``center`` (ties by index), and a random choice of the not-run jobs that
    fit in the horizon for the rest.
    """
    run = np.flatnonzero(start >= 0)
    mid = start[run] + inst.durations[run] / 2.0
    near = run[np.argsort(np.abs(mid - center), kind="stable")[: max_jobs // 2]]
    could = np.flatnonzero((start < 0) & (inst.releases + inst.durations <= inst.deadlines))
    room = max_jobs - near.size
    if could.size > room:
        could = rng.choice(could, size=room, replace=False)
    return np.sort(np.concatenate([near, could]))


def neighbourhood(
    inst: Instance, start: np.ndarray, k: int, widths: list[int], max_jobs: int, boost: int,
    rng: np.random.Generator, share: float,
) -> tuple[int, int, np.ndarray]:
    """The slots ``[a, b)`` and the jobs round ``k`` frees: ``(a, b, freed)``.

    A window of one of ``widths`` (drawn), times ``boost`` (a widened round),
    at most the horizon, at a random offset (:func:`window_jobs`, at most
    ``max_jobs * boost`` jobs, ``share`` of the room for jobs not run); the
    first round of an instance of at most ``max_jobs`` jobs is the whole
    horizon (re-solved whole). Every third round, unless its window is the
    whole horizon, frees the running jobs nearest to a random slot instead, to
    move anywhere (:func:`nearby_jobs`: long jobs, which a window seldom
    holds, move too).
    """
    T = inst.horizon
    W = min(max(int(widths[int(rng.integers(len(widths)))]) * boost, 1), T)
    if k == 0 and inst.num_jobs <= max_jobs:
        W = T  # a small instance: first re-solve it whole
    if k % 3 == 2 and W < T:
        return 0, T, nearby_jobs(inst, start, float(rng.uniform(0, T)), max_jobs * boost, rng)
    a = int(rng.integers(0, T - W + 1))
    return a, a + W, window_jobs(inst, start, a, a + W, max_jobs * boost, rng, share=share)
