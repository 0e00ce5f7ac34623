"""Schedules of model version 3 from the count model's arrays, and back.

The model (:mod:`milp.shares`) says how many GPUs of a node each whole-GPU
job holds and on which GPU *slot* each shared job runs; a schedule file
lists GPU indices. :func:`gpu_indices` gives them by interval colouring,
node by node: the items are the whole-GPU jobs (``g_j`` GPUs over their
run; a job on whole nodes all of a node's) and, per slot, the maximal runs
of overlapping shared jobs (one GPU each), taken in order of start, each
given the lowest-indexed GPUs free from its start on. As the model's node
rows keep the items at every slot within the GPUs the node offers, the
colouring never runs short, and the indices stay below that number (so a
node's withheld GPUs, its highest-indexed ones, stay free).
"""

from __future__ import annotations

import numpy as np

from instances import Instance, Schedule
from instances.resources import FULL_GPU_MILLI, resources, shares_gpus

__all__ = ["first_fit_gpu", "gpu_indices", "gpu_of_schedule", "schedule_of"]


def _items(inst: Instance, start: np.ndarray, place: np.ndarray,
           gpu: np.ndarray) -> dict[int, list[tuple[int, int, int, list[int]]]]:
    """Per node, its items ``(start, end, GPUs, jobs)``."""
    p, g = inst.durations, inst.gpus
    sizes = inst.node_gpus
    items: dict[int, list[tuple[int, int, int, list[int]]]] = {}
    runs: dict[tuple[int, int], list[int]] = {}
    for j in np.flatnonzero(start >= 0).tolist():
        s, e = int(start[j]), int(start[j] + p[j])
        ks = [int(k) for k in place[j] if k >= 0]
        if gpu[j] >= 0:
            runs.setdefault((ks[0], int(gpu[j])), []).append(j)
        elif len(ks) == 1:
            items.setdefault(ks[0], []).append((s, e, int(g[j]), [j]))
        else:
            for k in ks:
                items.setdefault(k, []).append((s, e, int(sizes[k]), [j]))
    for (k, _), jobs in runs.items():
        jobs.sort(key=lambda j: (int(start[j]), j))
        group: list[int] = []
        lo = hi = 0
        for j in jobs:
            s, e = int(start[j]), int(start[j] + p[j])
            if group and s >= hi:
                items.setdefault(k, []).append((lo, hi, 1, group))
                group = []
            if not group:
                lo, hi = s, e
            group.append(j)
            hi = max(hi, e)
        items.setdefault(k, []).append((lo, hi, 1, group))
    return items


def gpu_indices(
    inst: Instance, start: np.ndarray, place: np.ndarray, gpu: np.ndarray,
    offered: np.ndarray | None = None,
) -> dict[int, dict[int, tuple[int, ...]]]:
    """Each run job's GPU indices per node position, by interval colouring (module notes).

    Parameters
    ----------
    start, place
        The start and placement arrays (``Schedule.from_array``'s).
    gpu
        Each shared job's slot (or GPU) label on its node, ``-1`` for the others.
    offered
        ``(K,)`` GPUs each node offers batch work (default: all of them).

    Raises
    ------
    ValueError
        If a node's items need more GPUs at some slot than it offers (the
        arrays break a node row of the model).
    """
    cap = inst.node_gpus if offered is None else np.asarray(offered)
    out: dict[int, dict[int, tuple[int, ...]]] = {}
    for k, items in sorted(_items(inst, start, place, np.asarray(gpu)).items()):
        until = [0] * int(cap[k])
        for s, e, need, jobs in sorted(items, key=lambda it: (it[0], it[3][0])):
            free = [i for i, u in enumerate(until) if u <= s][:need]
            if len(free) < need:
                name = inst.nodes[k].name if inst.nodes else str(k)
                raise ValueError(f"gpu: node {name!r} has {len(free)} GPU(s) free at slot {s}, "
                                 f"job {inst.jobs[jobs[0]].name!r} needs {need}")
            for i in free:
                until[i] = e
            for j in jobs:
                out.setdefault(j, {})[k] = tuple(free)
    return out


def schedule_of(inst: Instance, start: np.ndarray, place: np.ndarray | None,
                gpu: np.ndarray | None = None, offered: np.ndarray | None = None) -> Schedule:
    """The schedule of a solution's arrays: GPU indices on an instance with shared jobs.

    Elsewhere :meth:`Schedule.from_array` (GPU counts). Without ``gpu`` the
    shared jobs get slots by :func:`first_fit_gpu`.

    Raises
    ------
    ValueError
        If the shared jobs find no slots, or the colouring runs short.
    """
    if place is None or not shares_gpus(inst):
        return Schedule.from_array(inst, start, place)
    start = np.asarray(start, dtype=np.int64)
    place = np.asarray(place, dtype=np.int64)
    if gpu is None:
        gpu = first_fit_gpu(inst, start, place, offered)
        if gpu is None:
            raise ValueError("gpu: the shared jobs of the schedule find no GPU slots")
    held = gpu_indices(inst, start, place, gpu, offered)
    names = [n.name for n in inst.nodes or ()]
    starts = {inst.jobs[j].name: int(start[j]) for j in np.flatnonzero(start >= 0).tolist()}
    indices = {inst.jobs[j].name: {names[k]: v for k, v in on.items()} for j, on in held.items()}
    return Schedule(inst.name, starts, indices=indices)


def gpu_of_schedule(inst: Instance, schedule: Schedule) -> np.ndarray:
    """Each shared job's GPU index on its node in ``schedule`` (``-1``: not shared, not run)."""
    out = np.full(inst.num_jobs, -1, dtype=np.int64)
    shared = resources(inst).shared
    for name, on in schedule.indices.items():
        j = inst.job_index.get(name)
        if j is not None and shared[j] and name in schedule.starts:
            held = [g for v in on.values() for g in v]
            if held:
                out[j] = held[0]
    return out


def first_fit_gpu(inst: Instance, start: np.ndarray, place: np.ndarray,
                  offered: np.ndarray | None = None) -> np.ndarray | None:
    """Slots for the shared jobs of a node schedule: in order of start, the first with room.

    A slot has room when the shares on it stay within 1000 over the job's
    run. ``None`` if some job finds none among its node's ``offered`` GPUs;
    the node rows (whole GPUs and busy slots together) are not checked.
    """
    cap = inst.node_gpus if offered is None else np.asarray(offered)
    res = resources(inst)
    out = np.full(inst.num_jobs, -1, dtype=np.int64)
    level: dict[int, np.ndarray] = {}
    run = np.flatnonzero((start >= 0) & res.shared)
    for j in run[np.lexsort((run, start[run]))].tolist():
        k = int(place[j, 0])
        lv = level.setdefault(k, np.zeros((int(cap[k]), inst.horizon), dtype=np.int64))
        w = slice(int(start[j]), int(start[j] + inst.durations[j]))
        room = np.flatnonzero(lv[:, w].max(axis=1, initial=0) + res.gpu_milli[j] <= FULL_GPU_MILLI)
        if room.size == 0:
            return None
        lv[room[0], w] += res.gpu_milli[j]
        out[j] = room[0]
    return out
