"""Brute-force optimum of tiny model version 3 instances, written to be checked by eye.

Depth-first over the jobs (largest value first): each job is either not
run, or started at one of ``release .. min(deadline, horizon) - duration`` on
one of its placements (one node of a model it accepts; for a job larger than
the largest node, a set of whole nodes of exactly its GPUs) and on GPU
indices of those nodes: a whole-GPU job on ``gpus`` GPUs no job uses over its
run, a shared job on one GPU whose shares stay within 1000. Every GPU of a
node is tried, but of the GPUs no job has used yet (at any slot) only the
lowest ones, since those are interchangeable. The pool counts busy GPUs
(held whole or running a share); CPU and memory are charged per node and
slot, a job on whole nodes in proportion to its GPUs there (exact
fractions). A branch stops when even every job left could not beat the best
value found. Nothing here is shared with the MILP, CP-SAT or checker code.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations

import numpy as np
from brute import flow_of, improves

from instances import Instance, Job, Node, Schedule, Service

FULL = 1000
MODELS = ("A", "B")
SHARES = (200, 300, 400, 500, 600, 700)


def _job_fits_somewhere(nodes: tuple[Node, ...], job: Job) -> bool:
    return bool(_placements(nodes, job))


def tiny_v3_instance(seed: int, n: int = 5, shape: tuple[int, ...] = (2, 2), T: int = 6,
                     shared: float = 0.5, limits: bool = True) -> Instance:
    """A random tiny version 3 instance, drawn here: nodes of ``shape`` GPUs with models A/B
    (one without a model), CPU and memory on some, one service; ``n`` jobs, a share
    ``shared`` of them shared, some asking models, CPU or memory."""
    rng = np.random.default_rng(seed)
    G = sum(shape)
    nodes = []
    for k, m in enumerate(shape):
        model = None if k == len(shape) - 1 and len(shape) > 1 else MODELS[int(rng.integers(2))]
        cpu = int(rng.choice([4000, 6000])) if limits and rng.random() < 0.6 else None
        mem = int(rng.choice([8, 12])) if limits and rng.random() < 0.4 else None
        nodes.append(Node(f"n{k}", m, model, cpu, mem))
    nodes_t = tuple(nodes)
    demand = tuple(int(d) for d in rng.integers(0, 2, size=T))
    sizes = list(range(1, max(shape) + 1))
    if max(shape) < G:
        sizes.append(G)
    jobs = []
    for i in range(n):
        p = int(rng.integers(1, 4))
        r = int(rng.integers(0, T - p + 1))
        deadline = None if rng.random() < 0.7 else int(rng.integers(r + p, T + 1))
        w = float(rng.choice([1.0, 1.5, 2.0, 3.0]))
        if rng.random() < shared:
            g, milli = 1, int(rng.choice(SHARES))
        else:
            g, milli = int(rng.choice(sizes)), FULL
        models = [MODELS[int(rng.integers(2))]] if rng.random() < 0.3 else None
        cpu = int(rng.choice([1000, 2000, 3000])) if rng.random() < 0.6 else 0
        mem = int(rng.choice([2, 4, 6])) if rng.random() < 0.4 else 0
        job = Job(f"j{i}", g, p, w, release=r, deadline=deadline, gpu_milli=milli,
                  gpu_models=models, cpu_milli=cpu, memory_mib=mem)
        if not _job_fits_somewhere(nodes_t, job):
            job = Job(f"j{i}", g, p, w, release=r, deadline=deadline, gpu_milli=milli)
        if not _job_fits_somewhere(nodes_t, job):
            job = Job(f"j{i}", 1, p, w, release=r, deadline=deadline, gpu_milli=milli)
        jobs.append(job)
    return Instance(f"tiny-v3-{seed}", G, T, (Service("svc", 2.0, demand),), tuple(jobs),
                    nodes=nodes_t)


def _charge(job: Job, node: Node, on_nodes: int) -> tuple[Fraction, Fraction]:
    """CPU and memory the job charges ``node`` (in proportion to its GPUs there when on several)."""
    if on_nodes == 1:
        return Fraction(job.cpu_milli), Fraction(job.memory_mib)
    return (Fraction(job.cpu_milli * node.gpus, job.gpus),
            Fraction(job.memory_mib * node.gpus, job.gpus))


def _placements(nodes: tuple[Node, ...], job: Job) -> list[tuple[int, ...]]:
    """Node positions of every placement the job may take (models, GPUs, CPU and memory alone)."""
    def ok(k: int, count: int) -> bool:
        node = nodes[k]
        if job.gpu_models is not None and node.model not in job.gpu_models:
            return False
        cpu, mem = _charge(job, node, count)
        return ((node.cpu_milli is None or cpu <= node.cpu_milli)
                and (node.memory_mib is None or mem <= node.memory_mib))

    largest = max(node.gpus for node in nodes)
    if job.gpus <= largest:
        return [(k,) for k in range(len(nodes)) if nodes[k].gpus >= job.gpus and ok(k, 1)]
    out = []
    for size in range(2, len(nodes) + 1):
        for combo in combinations(range(len(nodes)), size):
            if sum(nodes[k].gpus for k in combo) == job.gpus and all(ok(k, size) for k in combo):
                out.append(combo)
    return out


def brute_force_v3(inst: Instance, reservation: str = "curve") -> tuple[float, Schedule]:
    """The best value over every feasible schedule, and one schedule (GPU indices) reaching it.

    Under ``peak`` the pool offers ``G - P`` GPUs at every slot and the ``P``
    GPUs withheld (the last node's highest-indexed first) take no batch work.
    """
    T = inst.horizon
    nodes = inst.nodes or ()
    K = len(nodes)
    if reservation == "peak":
        P = min(inst.num_gpus, sum(max(s.demand) for s in inst.services))
        pool = [inst.num_gpus - P] * T
    else:
        P = 0
        pool = [inst.num_gpus - sum(s.demand[t] for s in inst.services) for t in range(T)]
    usable = []
    left = P
    for k in range(K - 1, -1, -1):
        take = min(left, nodes[k].gpus)
        usable.append(nodes[k].gpus - take)
        left -= take
    usable.reverse()
    level = [[[0] * T for _ in range(nodes[k].gpus)] for k in range(K)]  # gpu_milli per GPU, slot
    touched = [[False] * nodes[k].gpus for k in range(K)]
    cpu = [[Fraction(0)] * T for _ in range(K)]
    mem = [[Fraction(0)] * T for _ in range(K)]
    jobs = sorted(inst.jobs, key=lambda j: -j.priority * j.gpus * j.gpu_milli / FULL * j.duration)
    values = [j.priority * j.gpus * j.gpu_milli / FULL * j.duration * inst.slot_hours for j in jobs]
    rest = [sum(values[i:]) for i in range(len(jobs) + 1)]
    flow = inst.objective == "flow"
    best_value = flow_of(inst, {}) if flow else 0.0
    best: tuple[dict[str, int], dict[str, dict[str, list[int]]]] = ({}, {})
    starts: dict[str, int] = {}
    where: dict[str, dict[str, list[int]]] = {}

    def gpu_choices(k: int, job: Job, slots: range, whole_node: bool) -> list[tuple[int, ...]]:
        """GPU index sets of node ``k`` the job may take over ``slots`` (lowest untouched only)."""
        fresh = [i for i in range(usable[k]) if not touched[k][i]]
        if job.gpu_milli < FULL:
            cands = [i for i in range(usable[k]) if touched[k][i]] + fresh[:1]
            return [(i,) for i in cands
                    if all(level[k][i][t] + job.gpu_milli <= FULL for t in slots)]
        idle = [i for i in range(usable[k]) if all(level[k][i][t] == 0 for t in slots)]
        out = []
        for combo in combinations(idle, nodes[k].gpus if whole_node else job.gpus):
            new = [i for i in combo if not touched[k][i]]
            if new == fresh[: len(new)]:
                out.append(combo)
        return out

    def visit(m: int, value: float) -> None:
        nonlocal best_value, best
        figure = flow_of(inst, starts) if flow else value  # the jobs left not run
        if improves(inst, figure, best_value):
            best_value, best = figure, (dict(starts),
                                        {n: dict(w) for n, w in where.items()})
        if m == len(jobs) or (not flow and value + rest[m] <= best_value * (1 + 1e-12) + 1e-12):
            return  # even every job left cannot beat the best (float sums: a relative margin)
        job = jobs[m]
        end_by = T if job.deadline is None else min(job.deadline, T)
        for q in _placements(nodes, job):
            for s in range(job.release, end_by - job.duration + 1):
                slots = range(s, s + job.duration)
                options = [gpu_choices(k, job, slots, len(q) > 1) for k in q]
                for choice in _product(options):
                    if not _fits(q, choice, job, slots):
                        continue
                    saved = [list(row) for row in touched]
                    _apply(q, choice, job, slots, +1)
                    starts[job.name] = s
                    where[job.name] = {nodes[k].name: list(c) for k, c in zip(q, choice)}
                    visit(m + 1, value + values[m])
                    del starts[job.name], where[job.name]
                    _apply(q, choice, job, slots, -1)
                    for k in range(K):
                        touched[k][:] = saved[k]
        visit(m + 1, value)  # not run

    def _fits(q: tuple[int, ...], choice: tuple[tuple[int, ...], ...], job: Job,
              slots: range) -> bool:
        for t in slots:
            new_busy = sum(1 for k, c in zip(q, choice) for i in c if level[k][i][t] == 0)
            if new_busy > pool[t]:
                return False
            for k in q:
                c, mm = _charge(job, nodes[k], len(q))
                if nodes[k].cpu_milli is not None and cpu[k][t] + c > nodes[k].cpu_milli:
                    return False
                if nodes[k].memory_mib is not None and mem[k][t] + mm > nodes[k].memory_mib:
                    return False
        return True

    def _apply(q: tuple[int, ...], choice: tuple[tuple[int, ...], ...], job: Job, slots: range,
               sign: int) -> None:
        for k, c in zip(q, choice):
            charge_cpu, charge_mem = _charge(job, nodes[k], len(q))
            for t in slots:
                for i in c:
                    was = level[k][i][t]
                    level[k][i][t] += sign * job.gpu_milli
                    if sign > 0 and was == 0:
                        pool[t] -= 1
                    if sign < 0 and level[k][i][t] == 0:
                        pool[t] += 1
                cpu[k][t] += sign * charge_cpu
                mem[k][t] += sign * charge_mem
            if sign > 0:
                for i in c:
                    touched[k][i] = True

    visit(0, 0.0)
    return best_value, Schedule(inst.name, best[0], indices=best[1])


def _product(options: list[list[tuple[int, ...]]]) -> list[tuple[tuple[int, ...], ...]]:
    out: list[tuple[tuple[int, ...], ...]] = [()]
    for opts in options:
        out = [(*o, c) for o in out for c in opts]
    return out
