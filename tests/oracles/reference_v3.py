"""Plain per-slot reference of the version 3 fit, occupy and decoders (FIFO, serial list).

Loops over slots, nodes and GPUs on lists, no numpy: slow on purpose, obviously
right, and apart from heuristics.shares. ``mutation`` makes it wrong on purpose,
one rule at a time, so a hand-built test can show that its case tells the right
rule from a plausible wrong one:

- ``highest-index``: a job takes the highest-indexed GPUs that have room;
- ``free-gpus-only``: a shared job only on a GPU no job uses at any slot of its run;
- ``pool-per-job``: the pool counts a GPU once per job on it, not once per busy GPU;
- ``ignore-model``, ``ignore-cpu``, ``ignore-memory``: that rule left out;
- ``peak-lowest-index``: peak withholds each node's lowest-indexed GPUs;
- ``multi-full-charge``: a job on whole nodes charges each node all of its CPU and memory.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations

from instances import Instance

FULL = 1000


class State:
    """What is left per slot: the pool, each GPU's free milli, each node's CPU and memory."""

    def __init__(self, inst: Instance, reservation: str, mutation: str = "") -> None:
        assert inst.nodes is not None
        self.inst, self.mutation = inst, mutation
        T = inst.horizon
        nodes = inst.nodes
        if reservation == "peak":
            P = min(inst.num_gpus, sum(max(s.demand) for s in inst.services))
            self.pool = [inst.num_gpus - P] * T
        else:
            P = 0
            self.pool = [inst.num_gpus - sum(s.demand[t] for s in inst.services) for t in range(T)]
        withheld = [0] * len(nodes)
        left = P
        for k in range(len(nodes) - 1, -1, -1):
            withheld[k] = min(left, nodes[k].gpus)
            left -= withheld[k]
        self.level = []
        for k, n in enumerate(nodes):
            offered = n.gpus - withheld[k]
            if mutation == "peak-lowest-index":
                usable = [i >= withheld[k] for i in range(n.gpus)]
            else:
                usable = [i < offered for i in range(n.gpus)]
            self.level.append([[FULL if usable[i] else 0] * T for i in range(n.gpus)])
        big = 10**18
        self.cpu = [[big if n.cpu_milli is None else n.cpu_milli] * T for n in nodes]
        self.mem = [[big if n.memory_mib is None else n.memory_mib] * T for n in nodes]
        self.users = [[[0] * T for _ in range(n.gpus)] for n in nodes]  # jobs on each GPU

    # -------------------------------------------------------------- the rules
    def model_ok(self, j: int, k: int) -> bool:
        job, node = self.inst.jobs[j], self.inst.nodes[k]  # type: ignore[index]
        return (self.mutation == "ignore-model" or job.gpu_models is None
                or (node.model is not None and node.model in job.gpu_models))

    def charge(self, j: int, k: int, multi: bool) -> tuple[Fraction, Fraction]:
        job, node = self.inst.jobs[j], self.inst.nodes[k]  # type: ignore[index]
        cpu = 0 if self.mutation == "ignore-cpu" else job.cpu_milli
        mem = 0 if self.mutation == "ignore-memory" else job.memory_mib
        if not multi or self.mutation == "multi-full-charge":
            return Fraction(cpu), Fraction(mem)
        return Fraction(cpu * node.gpus, job.gpus), Fraction(mem * node.gpus, job.gpus)

    def resources_ok(self, j: int, k: int, slots: range, multi: bool) -> bool:
        c, m = self.charge(j, k, multi)
        return all(self.cpu[k][t] >= c and self.mem[k][t] >= m for t in slots)

    def gpu_ok(self, j: int, k: int, i: int, slots: range) -> bool:
        job = self.inst.jobs[j]
        lv = self.level[k][i]
        if job.gpu_milli == FULL:
            return all(lv[t] == FULL for t in slots)
        if self.mutation == "free-gpus-only" and any(lv[t] < FULL for t in slots):
            return False
        for t in slots:
            if lv[t] < job.gpu_milli:
                return False
            fresh = lv[t] == FULL or self.mutation == "pool-per-job"
            if fresh and self.pool[t] < 1:
                return False
        return True

    def one_node(self, j: int, k: int, s: int) -> list[int] | None:
        """The GPUs of node ``k`` job ``j`` may take from ``s`` (all that have room), or ``None``."""
        job = self.inst.jobs[j]
        slots = range(s, s + job.duration)
        if not self.model_ok(j, k) or not self.resources_ok(j, k, slots, False):
            return None
        if job.gpu_milli == FULL and any(self.pool[t] < job.gpus for t in slots):
            return None
        room = [i for i in range(len(self.level[k])) if self.gpu_ok(j, k, i, slots)]
        return room if len(room) >= job.gpus else None

    def whole_nodes(self, j: int, s: int) -> list[int] | None:
        """The lexicographically smallest set of wholly free nodes of ``g_j`` GPUs, or ``None``."""
        job, nodes = self.inst.jobs[j], self.inst.nodes
        assert nodes is not None
        slots = range(s, s + job.duration)
        if any(self.pool[t] < job.gpus for t in slots):
            return None
        free = [k for k in range(len(nodes)) if self.model_ok(j, k)
                and self.resources_ok(j, k, slots, True)
                and all(self.level[k][i][t] == FULL for i in range(nodes[k].gpus) for t in slots)]
        sets = [list(c) for r in range(1, len(free) + 1) for c in combinations(free, r)
                if sum(nodes[k].gpus for k in c) == job.gpus]
        return min(sets) if sets else None

    def choose(self, j: int, s: int, rule: str, workload: list[tuple[int, int, int, object]]
               ) -> tuple[list[int], list[int]] | None:
        """``(nodes, GPU indices)`` job ``j`` takes from ``s`` by ``rule``, or ``None``."""
        inst = self.inst
        job, nodes = inst.jobs[j], inst.nodes
        assert nodes is not None
        if job.gpus > max(n.gpus for n in nodes):
            ks = self.whole_nodes(j, s)
            return None if ks is None else (ks, [])
        slots = range(s, s + job.duration)
        scored = []
        for k in range(len(nodes)):
            room = self.one_node(j, k, s)
            if room is None:
                continue
            if self.mutation == "highest-index":
                room = room[::-1]
            least = [min(self.level[k][i][t] for t in slots) for i in range(nodes[k].gpus)]
            node_room = min(sum(self.level[k][i][t] for i in range(nodes[k].gpus))
                            for t in slots) - job.gpus * job.gpu_milli
            if job.gpu_milli == FULL:
                options = [room[: job.gpus]]
            else:
                options = [[i] for i in room]
            best_opt, best_key = None, None
            for opt in options:
                delta = 0.0
                if rule == "frag":
                    cpu = min(self.cpu[k][t] for t in slots)
                    after = list(least)
                    for i in opt:
                        after[i] -= job.gpu_milli
                    delta = (frag_ref(cpu - job.cpu_milli, after, nodes[k].model, workload)
                             - frag_ref(cpu, least, nodes[k].model, workload))
                gpu_room = least[opt[0]] - job.gpu_milli if job.gpu_milli < FULL else 0
                key = (delta, gpu_room, opt[0]) if rule == "frag" else (gpu_room, opt[0])
                if rule == "first-fit":
                    key = (0,)
                if best_key is None or key < best_key:
                    best_opt, best_key = opt, key
            assert best_opt is not None
            if rule == "first-fit":
                return [k], sorted(best_opt)
            d = best_key[0] if rule == "frag" else 0.0
            scored.append(((d, node_room, k), k, best_opt))
        if not scored:
            return None
        _, k, opt = min(scored)
        return [k], sorted(opt)

    def occupy(self, j: int, s: int, ks: list[int], gpus: list[int]) -> None:
        inst = self.inst
        job, nodes = inst.jobs[j], inst.nodes
        assert nodes is not None
        slots = range(s, s + job.duration)
        multi = len(ks) > 1
        for k in ks:
            held = range(nodes[k].gpus) if multi else gpus
            for t in slots:
                for i in held:
                    fresh = self.level[k][i][t] == FULL or self.mutation == "pool-per-job"
                    if fresh:
                        self.pool[t] -= 1
                    self.level[k][i][t] -= FULL if multi else job.gpu_milli
                    self.users[k][i][t] += 1
                if not multi or self.mutation == "multi-full-charge":
                    c, m = self.charge(j, k, multi)
                    self.cpu[k][t] -= c
                    self.mem[k][t] -= m


def frag_ref(cpu_left: int, gpu_left: list[int], model: str | None,
             workload: list[tuple[int, int, int, object]]) -> float:
    """FGD's fragmentation of one node (plain): per shape ``(cpu, milli, gpus, models)``
    weighted by its count, all idle milli if the shape cannot run there, else the idle milli
    of the GPUs with less free than the shape asks."""
    idle = sum(gpu_left)
    if idle == 0:
        return 0.0
    out = 0.0
    for cpu, milli, gpus, models, count in workload:  # type: ignore[misc]
        allowed = not models or (model is not None and model in models)
        room = sum(1 for x in gpu_left if x >= milli)
        short = sum(x for x in gpu_left if x < milli)
        usable = allowed and cpu_left >= cpu and room >= gpus
        out += count * (short if usable else idle)
    return out


def workload_ref(inst: Instance, later: list[int]) -> list[tuple]:
    """The shapes of the jobs ``later`` (one-node ones) with their counts, the most frequent
    covering 95% (ties: the larger shape), FGD's target workload on the jobs still to place."""
    assert inst.nodes is not None
    largest = max(n.gpus for n in inst.nodes)
    counts: dict[tuple, int] = {}
    every: dict[tuple, int] = {}
    for j, job in enumerate(inst.jobs):
        if job.gpus <= largest:
            key = (job.cpu_milli, job.gpu_milli, job.gpus, job.gpu_models or ())
            every[key] = every.get(key, 0) + 1
            if j in later:
                counts[key] = counts.get(key, 0) + 1
    ranked = sorted(every.items(), key=lambda kv: (kv[1], kv[0][:3], "|".join(kv[0][3])),
                    reverse=True)
    need, total, kept = 0.95 * sum(every.values()), 0, []
    for key, c in ranked:
        if total >= need:
            break
        total += c
        kept.append(key)
    return [(*key, counts.get(key, 0)) for key in kept]


def decode_ref(inst: Instance, order: list[int], reservation: str = "curve",
               rule: str = "first-fit", fifo: bool = False, mutation: str = ""
               ) -> tuple[list[int], dict[int, tuple[list[int], list[int]]]]:
    """Starts (``-1``: not run) and ``{job: (nodes, GPU indices)}`` of the serial decoder
    (``fifo``: each start at or after the last start placed, section 3)."""
    st = State(inst, reservation, mutation)
    T = inst.horizon
    start = [-1] * inst.num_jobs
    where: dict[int, tuple[list[int], list[int]]] = {}
    last = 0
    for pos, j in enumerate(order):
        job = inst.jobs[j]
        end_by = T if job.deadline is None else min(job.deadline, T)
        lo = max(job.release, last) if fifo else job.release
        workload = workload_ref(inst, order[pos + 1 :]) if rule == "frag" else []
        for s in range(lo, end_by - job.duration + 1):
            got = st.choose(j, s, rule, workload)
            if got is not None:
                st.occupy(j, s, *got)
                start[j] = s
                where[j] = got
                last = s
                break
    return start, where


def fifo_ref(inst: Instance, reservation: str = "peak", mutation: str = ""
             ) -> tuple[list[int], dict[int, tuple[list[int], list[int]]]]:
    """FIFO of section 12: arrival order, first fit by GPU index, no start before the last."""
    order = sorted(range(inst.num_jobs), key=lambda j: (inst.jobs[j].release, j))
    return decode_ref(inst, order, reservation, "first-fit", True, mutation)
