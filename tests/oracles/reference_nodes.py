"""Plain per-slot reference of the decoders on nodes that the fast ones are held to.

Loops over slots, nodes and subsets, no numpy: slow on purpose, obviously right.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from reference import capacity_ref

from instances import Instance


def node_caps_ref(inst: Instance, reservation: str) -> list[int]:
    """Each node's GPUs less what the peak reservation withholds from the end of the list."""
    assert inst.nodes is not None
    caps = [n.gpus for n in inst.nodes]
    if reservation == "peak":
        left = min(inst.num_gpus, sum(max(s.demand) for s in inst.services))
        for k in range(len(caps) - 1, -1, -1):
            take = min(left, caps[k])
            caps[k] -= take
            left -= take
    return caps


def stranded_ref(inst: Instance, k: int, f: int) -> int:
    """``F_k(f)``: ``f`` times the jobs that cannot use ``f`` free GPUs of node ``k``."""
    assert inst.nodes is not None
    size = inst.nodes[k].gpus
    largest = max(n.gpus for n in inst.nodes)
    cannot = 0
    for job in inst.jobs:
        if job.gpus > largest:
            cannot += f < size
        else:
            cannot += job.gpus > f
    return f * cannot


def placements_at_ref(
    inst: Instance, pool: list[int], nodes: list[list[int]], j: int, s: int, rule: str
) -> list[int] | None:
    """The nodes job ``j`` takes from slot ``s`` under ``rule``, or ``None`` if it does not fit."""
    assert inst.nodes is not None
    job = inst.jobs[j]
    g, p = job.gpus, job.duration
    sizes = [n.gpus for n in inst.nodes]
    if any(pool[t] < g for t in range(s, s + p)):
        return None
    if g > max(sizes):  # whole nodes: the lexicographically smallest set of positions
        free = [k for k in range(len(sizes)) if all(nodes[k][t] == sizes[k] for t in range(s, s + p))]
        sets = [list(c) for r in range(1, len(free) + 1) for c in combinations(free, r)
                if sum(sizes[k] for k in c) == g]
        return min(sets) if sets else None
    fits = [k for k in range(len(sizes)) if all(nodes[k][t] >= g for t in range(s, s + p))]
    if not fits:
        return None
    if rule == "first-fit":
        return [fits[0]]

    def room(k: int) -> int:
        return min(nodes[k][t] for t in range(s, s + p)) - g

    def delta(k: int) -> int:
        return sum(stranded_ref(inst, k, nodes[k][t] - g) - stranded_ref(inst, k, nodes[k][t])
                   for t in range(s, s + p))

    if rule == "best-fit":
        return [min(fits, key=lambda k: (room(k), k))]
    return [min(fits, key=lambda k: (delta(k), room(k), k))]


def take_ref(inst: Instance, pool: list[int], nodes: list[list[int]], j: int, s: int, ks: list[int]) -> None:
    assert inst.nodes is not None
    job = inst.jobs[j]
    for t in range(s, s + job.duration):
        pool[t] -= job.gpus
        for k in ks:
            nodes[k][t] -= job.gpus if len(ks) == 1 else inst.nodes[k].gpus


def list_starts_nodes_ref(
    inst: Instance, order: Sequence[int], reservation: str = "curve", rule: str = "first-fit"
) -> tuple[list[int], list[list[int]]]:
    """Serial list scheduling on nodes: earliest start with a valid placement, the rule's nodes."""
    pool = capacity_ref(inst, reservation)
    nodes = [[c] * inst.horizon for c in node_caps_ref(inst, reservation)]
    start, place = [-1] * inst.num_jobs, [[] for _ in range(inst.num_jobs)]
    for j in [int(x) for x in order]:
        job = inst.jobs[j]
        end_by = inst.horizon if job.deadline is None else min(job.deadline, inst.horizon)
        for s in range(job.release, end_by - job.duration + 1):
            ks = placements_at_ref(inst, pool, nodes, j, s, rule)
            if ks is not None:
                take_ref(inst, pool, nodes, j, s, ks)
                start[j], place[j] = s, ks
                break
    return start, place


def fifo_nodes_ref(inst: Instance, reservation: str = "peak") -> tuple[list[int], list[list[int]]]:
    """FIFO on nodes (the specification (docs/model.md)): arrival order, never before the last start, first fit."""
    pool = capacity_ref(inst, reservation)
    nodes = [[c] * inst.horizon for c in node_caps_ref(inst, reservation)]
    start, place = [-1] * inst.num_jobs, [[] for _ in range(inst.num_jobs)]
    s_last = 0
    for j in sorted(range(inst.num_jobs), key=lambda j: (inst.jobs[j].release, j)):
        job = inst.jobs[j]
        end_by = inst.horizon if job.deadline is None else min(job.deadline, inst.horizon)
        for s in range(max(job.release, s_last), end_by - job.duration + 1):
            ks = placements_at_ref(inst, pool, nodes, j, s, "first-fit")
            if ks is not None:
                take_ref(inst, pool, nodes, j, s, ks)
                start[j], place[j], s_last = s, ks, s
                break
    return start, place
