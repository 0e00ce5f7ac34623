"""Brute-force optimum of tiny instances with nodes, written to be checked by eye.

Depth-first over the jobs in order, as ``tests/oracles/brute.py``: each job is either
not run, or started at one of ``release .. min(deadline, horizon) - duration``
on one of its placements (one node with room; for a job larger than the
largest node, a set of whole nodes of exactly its GPUs, from
``itertools.combinations``), tried only if the pool and every node it uses
have room on every slot it covers. Nothing here is shared with the MILP or
CP-SAT code. Meant for at most five jobs, three nodes and short horizons.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
from brute import flow_of, improves

from instances import Instance, Job, Node, Schedule, Service


def tiny_node_instance(
    seed: int, n: int = 5, shape: tuple[int, ...] = (2, 2), T: int = 7
) -> Instance:
    """A random tiny instance on nodes of ``shape`` GPUs, drawn here: one service, ``n`` jobs.

    Job sizes are drawn from 1 to the largest node, and the pool's total
    when some set of whole nodes sums to it, so that multi-node jobs occur.
    """
    rng = np.random.default_rng(seed)
    G = sum(shape)
    demand = tuple(int(d) for d in rng.integers(0, 2, size=T))
    sizes = list(range(1, max(shape) + 1))
    if max(shape) < G:
        sizes.append(G)
    jobs = []
    for k in range(n):
        p = int(rng.integers(1, 4))
        r = int(rng.integers(0, T - p + 1))
        deadline = None if rng.random() < 0.6 else int(rng.integers(r + p, T + 1))
        priority = round(float(rng.uniform(0.5, 3)), 2)
        g = int(rng.choice(sizes))
        jobs.append(Job(f"j-{k}", g, p, priority, release=r, deadline=deadline))
    nodes = tuple(Node(f"n{k}", m) for k, m in enumerate(shape))
    return Instance(f"tiny-nodes-{seed}", G, T, (Service("svc", 2.0, demand),), tuple(jobs),
                    nodes=nodes)


def placements_of(inst: Instance, job: Job) -> list[tuple[str, ...]]:
    """Every valid placement of a job, as node names."""
    nodes = list(inst.nodes or ())
    largest = max(node.gpus for node in nodes)
    if job.gpus <= largest:
        return [(node.name,) for node in nodes if node.gpus >= job.gpus]
    out = []
    for size in range(2, len(nodes) + 1):
        for combo in combinations(nodes, size):
            if sum(node.gpus for node in combo) == job.gpus:
                out.append(tuple(node.name for node in combo))
    return out


def brute_force_nodes(inst: Instance) -> tuple[float, Schedule]:
    """The best value (or least flow) over every feasible node schedule, and one reaching it."""
    T = inst.horizon
    nodes = {node.name: node.gpus for node in inst.nodes or ()}
    pool = [inst.num_gpus - sum(s.demand[t] for s in inst.services) for t in range(T)]
    room = {name: [gpus] * T for name, gpus in nodes.items()}
    jobs = list(inst.jobs)
    best_value = flow_of(inst, {}) if inst.objective == "flow" else 0.0
    best: tuple[dict[str, int], dict[str, dict[str, int]]] = ({}, {})
    starts: dict[str, int] = {}
    where: dict[str, dict[str, int]] = {}

    def visit(k: int, value: float) -> None:
        nonlocal best_value, best
        if k == len(jobs):
            if inst.objective == "flow":
                value = flow_of(inst, starts)
            if improves(inst, value, best_value):
                best_value, best = value, (dict(starts), dict(where))
            return
        job = jobs[k]
        visit(k + 1, value)  # not run
        end_by = T if job.deadline is None else min(job.deadline, T)
        for names in placements_of(inst, job):
            held = {n: (job.gpus if len(names) == 1 else nodes[n]) for n in names}
            for s in range(job.release, end_by - job.duration + 1):
                slots = range(s, s + job.duration)
                if not all(pool[t] >= job.gpus for t in slots):
                    continue
                if not all(room[n][t] >= c for n, c in held.items() for t in slots):
                    continue
                for t in slots:
                    pool[t] -= job.gpus
                    for n, c in held.items():
                        room[n][t] -= c
                starts[job.name], where[job.name] = s, held
                visit(k + 1, value + job.priority * job.gpus * job.duration * inst.slot_hours)
                del starts[job.name], where[job.name]
                for t in slots:
                    pool[t] += job.gpus
                    for n, c in held.items():
                        room[n][t] += c

    visit(0, 0.0)
    return best_value, Schedule(inst.name, best[0], best[1])
