"""The LNS on model version 3: schedules as arrays with GPU indices, and a window's fixed use.

On a version 3 instance the search keeps, beside its start and placement
arrays, each job's GPU indices (:func:`index_array`: row ``j`` lists the
indices job ``j`` holds on its one node, ``-1`` padded; a job on whole nodes
holds every GPU of each and has no row). A window's fixed jobs then say
which GPUs they hold (:func:`fixed_use`, a :class:`milp.fixed.FixedUse`), the
window's model decides starts, nodes and the shared jobs' GPUs
(:func:`milp.build` with ``fixed=``), and the whole-GPU jobs get indices
around what is taken (:func:`colour_window`), or the answer is not taken.
"""

from __future__ import annotations

import numpy as np

from instances import Instance, Schedule
from instances.resources import FULL_GPU_MILLI, resources
from milp.fixed import FixedUse
from milp.gpus import gpu_indices

__all__ = ["colour_window", "fixed_use", "index_array", "index_schedule", "index_width",
           "indices_of_solution", "join_wide", "shared_gpu", "split_wide"]


def split_wide(inst: Instance, wide: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The heuristics' version 3 placement array (nodes, then GPU indices:
    :func:`heuristics.placement.new_place`) as ``(place, idx)``."""
    span = inst.max_span
    idx = np.full((inst.num_jobs, index_width(inst)), -1, dtype=np.int64)
    cols = min(wide.shape[1] - span, idx.shape[1])
    idx[:, :cols] = wide[:, span : span + cols]
    return np.array(wide[:, :span], dtype=np.int64), idx


def join_wide(inst: Instance, place: np.ndarray, idx: np.ndarray, width: int) -> np.ndarray:
    """``(place, idx)`` as the heuristics' version 3 placement array of ``width`` columns."""
    span = inst.max_span
    out = np.full((inst.num_jobs, width), -1, dtype=np.int64)
    out[:, :span] = place
    out[:, span:] = idx[:, : width - span]
    return out


def index_width(inst: Instance) -> int:
    """Columns of an index array: the largest node's GPUs."""
    return int(inst.node_gpus.max()) if inst.has_nodes and inst.num_nodes else 0


def _rows(inst: Instance, held: dict[int, dict[int, tuple[int, ...]]]) -> np.ndarray:
    out = np.full((inst.num_jobs, index_width(inst)), -1, dtype=np.int64)
    for j, on in held.items():
        if len(on) == 1:
            (v,) = on.values()
            out[j, : len(v)] = sorted(v)
    return out


def index_array(inst: Instance, schedule: Schedule) -> np.ndarray:
    """The ``(n, W)`` GPU indices of a checked schedule's one-node jobs (``-1`` padded).

    A schedule in count form (possible without shared jobs) gets indices by
    interval colouring (:func:`milp.gpus.gpu_indices`).
    """
    if not schedule.lists_indices:
        start, place = schedule.to_array(inst), schedule.to_placement_array(inst)
        return indices_of_solution(inst, start, place, np.full(inst.num_jobs, -1, dtype=np.int64))
    index = inst.node_index
    held = {inst.job_index[name]: {index[k]: tuple(v) for k, v in on.items() if v}
            for name, on in schedule.indices.items() if name in schedule.starts}
    return _rows(inst, held)


def indices_of_solution(inst: Instance, start: np.ndarray, place: np.ndarray,
                        gpu: np.ndarray | None) -> np.ndarray:
    """The index array of a model solution's arrays (shared jobs' slots ``gpu``), by colouring."""
    g = np.full(inst.num_jobs, -1, dtype=np.int64) if gpu is None else np.asarray(gpu)
    return _rows(inst, gpu_indices(inst, np.asarray(start), np.asarray(place), g))


def shared_gpu(inst: Instance, start: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Each run shared job's GPU index (``-1`` for the others): a model's ``gpu`` array."""
    shared = resources(inst).shared & (start >= 0)
    return np.where(shared, idx[:, 0] if idx.shape[1] else -1, -1).astype(np.int64)


def index_schedule(inst: Instance, start: np.ndarray, place: np.ndarray,
                   idx: np.ndarray) -> Schedule:
    """The schedule of the arrays, listing GPU indices (a job on whole nodes: all of each)."""
    names = [n.name for n in inst.nodes or ()]
    starts: dict[str, int] = {}
    indices: dict[str, dict[str, tuple[int, ...]]] = {}
    for j in np.flatnonzero(start >= 0).tolist():
        name = inst.jobs[j].name
        starts[name] = int(start[j])
        ks = [int(k) for k in place[j] if k >= 0]
        if len(ks) == 1:
            indices[name] = {names[ks[0]]: tuple(int(v) for v in idx[j] if v >= 0)}
        else:
            indices[name] = {names[k]: tuple(range(int(inst.node_gpus[k]))) for k in ks}
    return Schedule(inst.name, starts, indices=indices)


def fixed_use(inst: Instance, start: np.ndarray, place: np.ndarray, idx: np.ndarray,
              fixed: np.ndarray, a: int, b: int) -> FixedUse:
    """What the jobs ``fixed`` (indices, run) use over ``[a, b)``, by GPU index, CPU and memory.

    A one-node job puts its ``gpu_milli`` on each GPU it holds (1000 for a
    whole-GPU job) and its CPU and memory on its node; a job on whole nodes
    holds every GPU of each (its CPU and memory left out: nothing else can
    run there meanwhile).
    """
    K, V, T = inst.num_nodes, index_width(inst), b - a
    res = resources(inst)
    s = np.clip(start[fixed], a, b) - a
    e = np.clip(start[fixed] + inst.durations[fixed], a, b) - a
    on = e > s
    jobs, s, e = fixed[on], s[on], e[on]
    diff = np.zeros((K, V, T + 1), dtype=np.int32)  # int32: 1,213 nodes x 8 GPUs x 1,120 slots
    one = place[jobs, 1] < 0 if place.shape[1] > 1 else np.ones(jobs.size, dtype=bool)
    r, c = np.nonzero((idx[jobs] >= 0) & one[:, None])
    node, gpu = place[jobs[r], 0], idx[jobs[r], c]
    milli = res.gpu_milli[jobs[r]]
    np.add.at(diff, (node, gpu, s[r]), milli.astype(np.int32))
    np.add.at(diff, (node, gpu, e[r]), -milli.astype(np.int32))
    multi = np.flatnonzero(~one)
    for i in multi.tolist():
        for k in place[jobs[i]][place[jobs[i]] >= 0].tolist():
            diff[k, : int(inst.node_gpus[k]), s[i]] += FULL_GPU_MILLI
            diff[k, : int(inst.node_gpus[k]), e[i]] -= FULL_GPU_MILLI
    gpu_milli = np.cumsum(diff, axis=2, dtype=np.int32)[:, :, :T]
    use = []
    for need in (res.job_cpu, res.job_memory):
        d = np.zeros((K, T + 1))
        sel = np.flatnonzero(one)
        np.add.at(d, (place[jobs[sel], 0], s[sel]), need[jobs[sel]])
        np.add.at(d, (place[jobs[sel], 0], e[sel]), -need[jobs[sel]])
        use.append(np.maximum(np.cumsum(d, axis=1)[:, :T], 0.0))
    return FixedUse(gpu_milli, use[0], use[1])


def colour_window(sub: Instance, fixed: FixedUse, start: np.ndarray, place: np.ndarray,
                  gpu: np.ndarray, keep: np.ndarray | None = None) -> np.ndarray | None:
    """GPU indices for a window's answer around the GPUs its fixed jobs hold, or ``None``.

    The shared jobs are on the GPUs ``gpu`` the model gave them; the
    whole-GPU jobs on one node are given, in order of start (larger first),
    their row of ``keep`` when those GPUs are free over their run, else the
    lowest-indexed GPUs free over it; when one then finds too few, the
    whole-GPU jobs are coloured again without ``keep`` (in order of start,
    lowest free GPUs: exact on a node without fixed use, interval graphs
    being perfect). ``None`` when that too runs short: the model's counts do
    not promise a colouring around GPUs the fixed jobs hold (:mod:`milp.fixed`).
    """
    got = _colour(sub, fixed, start, place, gpu, keep)
    return got if got is not None or keep is None else _colour(sub, fixed, start, place, gpu, None)


def _colour(sub: Instance, fixed: FixedUse, start: np.ndarray, place: np.ndarray,
            gpu: np.ndarray, keep: np.ndarray | None) -> np.ndarray | None:
    V = index_width(sub)
    taken = fixed.gpu_milli > 0
    taken |= (np.arange(V)[None, :] >= sub.node_gpus[:, None])[:, :, None]
    out = np.full((sub.num_jobs, V), -1, dtype=np.int64)
    run = np.flatnonzero(start >= 0)
    dur = sub.durations
    for j in run[gpu[run] >= 0].tolist():
        taken[place[j, 0], gpu[j], start[j] : start[j] + dur[j]] = True
        out[j, 0] = gpu[j]
    one = place[:, 1] < 0 if place.shape[1] > 1 else np.ones(sub.num_jobs, dtype=bool)
    whole = run[(gpu[run] < 0) & one[run]]
    for j in run[~one[run]].tolist():
        for k in place[j][place[j] >= 0].tolist():
            taken[k, :, start[j] : start[j] + dur[j]] = True
    order = whole[np.lexsort((whole, -sub.gpus[whole], start[whole]))]
    kept = np.zeros(sub.num_jobs, dtype=bool)
    if keep is not None:  # first every job whose old GPUs are still free
        for j in order.tolist():
            row = keep[j][keep[j] >= 0]
            w = slice(int(start[j]), int(start[j] + dur[j]))
            if row.size == sub.gpus[j] and not taken[place[j, 0], row, w].any():
                taken[place[j, 0], row, w] = True
                out[j, : row.size] = np.sort(row)
                kept[j] = True
    for j in order[~kept[order]].tolist():
        k, w = int(place[j, 0]), slice(int(start[j]), int(start[j] + dur[j]))
        free = np.flatnonzero(~taken[k, :, w].any(axis=1))[: sub.gpus[j]]
        if free.size < sub.gpus[j]:
            return None
        taken[k, free, w] = True
        out[j, : free.size] = free
    return out
