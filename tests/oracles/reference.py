"""Plain per-slot reference implementations that the fast heuristics are held to.

Readable loops over slots, no numpy tricks: slow on purpose, obviously right.
"""

from __future__ import annotations

from collections.abc import Sequence

from instances import Instance


def capacity_ref(inst: Instance, reservation: str) -> list[int]:
    """Batch capacity per slot, computed slot by slot."""
    T, G = inst.horizon, inst.num_gpus
    if reservation == "curve":
        return [G - sum(s.demand[t] for s in inst.services) for t in range(T)]
    peak = sum(max(s.demand) for s in inst.services)
    return [max(0, G - peak)] * T


def fits_ref(free: Sequence[int], g: int, s: int, p: int) -> bool:
    """``g`` GPUs free in every slot ``s .. s+p-1``."""
    for t in range(s, s + p):  # noqa: SIM110 (a plain loop, on purpose)
        if free[t] < g:
            return False
    return True


def earliest_fit_ref(free: Sequence[int], g: int, p: int, lo: int, hi: int) -> int:
    """Earliest ``s`` in ``[lo, hi - p]`` with ``free[s:s+p] >= g``, or ``-1``."""
    if lo < 0:
        return -1
    for s in range(lo, hi - p + 1):
        if fits_ref(free, g, s, p):
            return s
    return -1


def list_starts_ref(inst: Instance, order: Sequence[int], reservation: str = "curve") -> list[int]:
    """Serial list scheduling, earliest fit, one slot at a time."""
    free = capacity_ref(inst, reservation)
    start = [-1] * inst.num_jobs
    for j in [int(x) for x in order]:
        job = inst.jobs[j]
        end_by = inst.horizon if job.deadline is None else min(job.deadline, inst.horizon)
        s = earliest_fit_ref(free, job.gpus, job.duration, job.release, end_by)
        if s >= 0:
            for t in range(s, s + job.duration):
                free[t] -= job.gpus
            start[j] = s
    return start


def parallel_starts_ref(inst: Instance, order: Sequence[int], reservation: str = "curve") -> list[int]:
    """Parallel scheme: at each slot, scan the released jobs in order, start those that fit."""
    free = capacity_ref(inst, reservation)
    start = [-1] * inst.num_jobs
    for t in range(inst.horizon):
        for j in [int(x) for x in order]:
            job = inst.jobs[j]
            end_by = inst.horizon if job.deadline is None else min(job.deadline, inst.horizon)
            if start[j] >= 0 or job.release > t or t + job.duration > end_by:
                continue
            if fits_ref(free, job.gpus, t, job.duration):
                for u in range(t, t + job.duration):
                    free[u] -= job.gpus
                start[j] = t
    return start


def fifo_queue_ref(inst: Instance) -> list[int]:
    """Job indices by (release, list position)."""
    return sorted(range(inst.num_jobs), key=lambda j: (inst.jobs[j].release, j))


def easy_starts_ref(inst: Instance, reservation: str = "peak") -> list[int]:
    """EASY backfilling, slot by slot, job by job (see ``heuristics.backfill.easy``)."""
    free = capacity_ref(inst, reservation)
    T = inst.horizon
    start = [-1] * inst.num_jobs
    dropped = [False] * inst.num_jobs

    def end_by(j: int) -> int:
        d = inst.jobs[j].deadline
        return T if d is None else min(d, T)

    def take(s: int, j: int, prof: list[int]) -> None:
        for u in range(s, s + inst.jobs[j].duration):
            prof[u] -= inst.jobs[j].gpus

    for t in range(T):
        queue = [
            j for j in fifo_queue_ref(inst)
            if start[j] < 0 and not dropped[j] and inst.jobs[j].release <= t
            and t + inst.jobs[j].duration <= end_by(j)
        ]
        head_res = None
        while queue:
            h = queue[0]
            r = earliest_fit_ref(free, inst.jobs[h].gpus, inst.jobs[h].duration, t, end_by(h))
            if r < 0:
                dropped[h] = True
                queue.pop(0)
            elif r == t:
                take(t, h, free)
                start[h] = t
                queue.pop(0)
            else:
                head_res = r
                break
        if head_res is None:
            continue
        shadow = list(free)
        take(head_res, queue[0], shadow)
        for j in queue[1:]:
            if fits_ref(shadow, inst.jobs[j].gpus, t, inst.jobs[j].duration):
                take(t, j, free)
                take(t, j, shadow)
                start[j] = t
    return start
