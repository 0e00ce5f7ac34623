"""Brute-force optimum of tiny instances, written to be checked by eye.

Depth-first over the jobs in order: each job is either not run or started at
one of ``release .. min(deadline, horizon) - duration``; a start is tried only
if the job fits on every slot it covers. Nothing here is shared with the MILP
code. Meant for at most six jobs on short horizons.

Under the ``flow`` objective each brute force returns the least weighted flow time
``F = sum_j w_j (C_j - r_j) h`` over every job (a job not run ends at ``T + p_j``),
computed here from its definition (:func:`flow_of`), not from the toolkit's worths.
"""

from __future__ import annotations

import numpy as np

from instances import Instance, Job, Schedule, Service


def tiny_instance(seed: int, n: int = 6, G: int = 4, T: int = 10) -> Instance:
    """A random tiny instance, drawn here (not from a family): one service, ``n`` jobs."""
    rng = np.random.default_rng(seed)
    demand = tuple(int(d) for d in rng.integers(0, 2, size=T))
    jobs = []
    for k in range(n):
        p = int(rng.integers(1, 5))
        r = int(rng.integers(0, T - p + 1))
        deadline = None if rng.random() < 0.6 else int(rng.integers(r + p, T + 1))
        priority = round(float(rng.uniform(0.5, 3)), 2)
        jobs.append(Job(f"j-{k}", int(rng.integers(1, G + 1)), p, priority, release=r, deadline=deadline))
    return Instance(f"tiny-{seed}", G, T, (Service("svc", 2.0, demand),), tuple(jobs))


def flow_of(inst: Instance, starts: dict[str, int]) -> float:
    """``F`` of the starts given, from its definition: every job, one not run censored at ``T``."""
    return sum(j.priority * (starts.get(j.name, inst.horizon) + j.duration - j.release)
               * inst.slot_hours for j in inst.jobs)


def improves(inst: Instance, new: float, old: float) -> bool:
    """Whether figure ``new`` beats ``old`` (more value, or less flow; float sums: a margin)."""
    if inst.objective == "flow":
        return new < old * (1 - 1e-12) - 1e-12
    return new > old * (1 + 1e-12) + 1e-12


def brute_force(inst: Instance) -> tuple[float, Schedule]:
    """The best value (or least flow) over every feasible schedule, and one schedule reaching it."""
    G, T = inst.num_gpus, inst.horizon
    free = [G - sum(s.demand[t] for s in inst.services) for t in range(T)]
    jobs = list(inst.jobs)
    best_value = flow_of(inst, {}) if inst.objective == "flow" else 0.0
    best_starts: dict[str, int] = {}
    starts: dict[str, int] = {}

    def value_of(chosen: dict[str, int]) -> float:
        by_name = {j.name: j for j in jobs}
        return sum(
            by_name[n].priority * by_name[n].gpus * by_name[n].duration * inst.slot_hours
            for n in chosen
        )

    def visit(k: int) -> None:
        nonlocal best_value, best_starts
        if k == len(jobs):
            v = flow_of(inst, starts) if inst.objective == "flow" else value_of(starts)
            if improves(inst, v, best_value):
                best_value, best_starts = v, dict(starts)
            return
        job = jobs[k]
        visit(k + 1)  # not run
        end_by = T if job.deadline is None else min(job.deadline, T)
        for s in range(job.release, end_by - job.duration + 1):
            slots = range(s, s + job.duration)
            if all(free[t] >= job.gpus for t in slots):
                for t in slots:
                    free[t] -= job.gpus
                starts[job.name] = s
                visit(k + 1)
                del starts[job.name]
                for t in slots:
                    free[t] += job.gpus

    visit(0)
    return best_value, Schedule(inst.name, best_starts)
