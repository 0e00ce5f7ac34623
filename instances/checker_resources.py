"""The checker's rules of model version 3 (docs/model.md): GPU indices, shares, models, CPU, memory.

Plain loops, like :mod:`instances.checker`, and apart from every solver and
from :mod:`instances.resources` (which the algorithms read): a bug there
cannot hide behind the same bug here. Every violation raises
:class:`~instances.checker.InfeasibleScheduleError` naming the job, the
node, the GPU index, the slot and the resource involved.

The rules, on an instance with nodes:

- a placement that lists GPU indices lists GPUs the node has; on an
  instance with a shared job every placement lists them;
- a whole-GPU job holds its GPUs alone; on one GPU at one slot the shared
  jobs' ``gpu_milli`` sum to at most 1000;
- every node a job uses has a model the job accepts;
- at every slot and node the jobs' CPU and memory fit the node's (a job on
  several whole nodes charges each in proportion to its GPUs there, in
  exact fractions);
- the pool row counts *busy* GPUs (held whole, or running a shared job);
- under an enforced ``peak`` reservation the withheld GPUs (the last node's
  highest indices first) take no batch work.

:func:`fgd_fragmentation` measures fragmentation in the sense of FGD
(Weng et al., USENIX ATC 2023); its definition is in docs/model.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from .model import Instance
from .schedule import Schedule
from .violations import InfeasibleScheduleError

__all__ = [
    "FULL",
    "NodeUse",
    "check_gpus",
    "check_models_and_indices",
    "check_node_resources",
    "fgd_fragmentation",
    "is_version_3",
    "overloading_job",
]

FULL = 1000
"""``gpu_milli`` of one whole GPU."""

NodeUse = dict[str, list[Any]]
"""Per node name, one entry per slot (an ``int``, or a ``Fraction`` where a multi-node job charges)."""


def _error(message: str, **what: Any) -> InfeasibleScheduleError:
    return InfeasibleScheduleError(message, **what)


def is_version_3(inst: Instance) -> bool:
    """Whether some node or job sets a field of model version 3."""
    nodes = any(n.model is not None or n.cpu_milli is not None or n.memory_mib is not None
                for n in inst.nodes or ())
    jobs = any(j.gpu_milli != FULL or j.gpu_models is not None or j.cpu_milli or j.memory_mib
               for j in inst.jobs)
    return nodes or jobs


def check_models_and_indices(
    inst: Instance, schedule: Schedule
) -> dict[str, dict[str, tuple[int, ...]]]:
    """The index lists of the started jobs' placements, checked; ``{}`` for count placements.

    Checks the models of every node each started job uses, that listed GPU
    indices exist on their node, and that an instance with a shared job
    gets index lists only. Counts summing to ``g_j`` and the one-node /
    whole-nodes rule are :func:`instances.checker.evaluate`'s.
    """
    assert inst.nodes is not None
    shared = next((j.name for j in inst.jobs if j.gpu_milli < FULL), None)
    if shared is None and not schedule.lists_indices and all(
        j.gpu_models is None for j in inst.jobs
    ):
        return {}  # counts, and no model to check: nothing for this function
    node = {n.name: n for n in inst.nodes}
    jobs = {j.name: j for j in inst.jobs}
    out: dict[str, dict[str, tuple[int, ...]]] = {}
    for name in schedule.starts:
        job = jobs[name]
        s = schedule.starts[name]
        lists = schedule.indices.get(name, {})
        on: dict[str, int | tuple[int, ...]] = {
            k: lists.get(k, v) for k, v in schedule.placement.get(name, {}).items() if v > 0
        }
        for where, held in on.items():
            n = node[where]
            if job.gpu_models is not None and n.model not in job.gpu_models:
                has = "no model" if n.model is None else f"model {n.model!r}"
                raise _error(
                    f"job {name!r} asks GPU models {list(job.gpu_models)}, but node {where!r} has "
                    f"{has} (resource: model)", job=name, slot=s, node=where, resource="model",
                )
            if isinstance(held, tuple):
                bad = [g for g in held if g >= n.gpus]
                if bad:
                    raise _error(
                        f"job {name!r}: placement lists GPU {bad[0]} of node {where!r}, which has "
                        f"GPUs 0..{n.gpus - 1}", job=name, slot=s, node=where, gpu=bad[0],
                    )
            elif shared is not None:
                raise _error(
                    f"job {name!r}: placement gives node {where!r} a GPU count ({held}), but "
                    f"instance {inst.name!r} has a shared job ({shared!r}), so every placement "
                    f"lists GPU indices", job=name, node=where,
                )
        if on and all(isinstance(v, tuple) for v in on.values()):
            out[name] = {k: v for k, v in on.items() if isinstance(v, tuple)}
    return out


def check_gpus(
    inst: Instance, schedule: Schedule, indexed: Mapping[str, Mapping[str, tuple[int, ...]]],
    withheld: Mapping[str, range] | None,
) -> tuple[list[int], NodeUse, dict[tuple[str, int], dict[int, int]]]:
    """The per-GPU rules of index placements; the busy GPUs per slot, per node, and each GPU's use.

    Parameters
    ----------
    withheld
        Per node, the GPU indices an enforced ``peak`` reservation withholds
        (``None``: nothing is enforced).

    Returns
    -------
    tuple
        ``busy[t]`` (GPUs busy with batch work at slot ``t``), the same per
        node, and per ``(node, index)`` the ``gpu_milli`` used at each slot
        it is used (1000 where a whole-GPU job holds it).
    """
    assert inst.nodes is not None
    T = inst.horizon
    jobs = {j.name: j for j in inst.jobs}
    position = {n.name: k for k, n in enumerate(inst.nodes)}
    uses: dict[tuple[str, int], list[str]] = {}
    for name, on in indexed.items():
        s = schedule.starts[name]
        for where, held in on.items():
            for g in held:
                if withheld is not None and g in withheld[where]:
                    r = withheld[where]
                    raise _error(
                        f"job {name!r} holds GPU {g} of node {where!r}, which the peak reservation "
                        f"withholds (GPUs {r.start}..{r.stop - 1} there take no batch work)",
                        job=name, slot=s, node=where, gpu=g,
                    )
                uses.setdefault((where, g), []).append(name)
    busy = [0] * T
    on_node: NodeUse = {n.name: [0] * T for n in inst.nodes}
    used: dict[tuple[str, int], dict[int, int]] = {}
    for key in sorted(uses, key=lambda k: (position[k[0]], k[1])):
        where, g = key
        level: dict[int, int] = {}
        holders: dict[int, list[str]] = {}
        for name in uses[key]:
            job, s = jobs[name], schedule.starts[name]
            for t in range(s, s + job.duration):
                here = holders.setdefault(t, [])
                whole = [h for h in (*here, name) if jobs[h].gpu_milli == FULL]
                if here and whole:
                    others = [h for h in (*here, name) if h != whole[0]]
                    raise _error(
                        f"slot {t}, node {where!r}, GPU {g}: job {whole[0]!r} holds the GPU whole, "
                        f"and job {others[0]!r} runs on it too (resource: gpu)",
                        job=name, slot=t, node=where, gpu=g, resource="gpu",
                    )
                level[t] = level.get(t, 0) + job.gpu_milli
                here.append(name)
                if level[t] > FULL:
                    raise _error(
                        f"slot {t}, node {where!r}, GPU {g}: the gpu_milli of shared jobs "
                        f"{', '.join(repr(h) for h in here)} sums to {level[t]}, over {FULL} "
                        f"(job {name!r} overloads it; resource: gpu_milli)",
                        job=name, slot=t, node=where, gpu=g, amount=level[t] - FULL,
                        resource="gpu_milli",
                    )
        for t in level:
            busy[t] += 1
            on_node[where][t] += 1
        used[key] = level
    return busy, on_node, used


def overloading_job(
    schedule: Schedule, indexed: Mapping[str, Mapping[str, tuple[int, ...]]],
    durations: Mapping[str, int], t: int, limit: int,
) -> str:
    """The job, in schedule order, whose GPUs first take the busy GPUs at ``t`` over ``limit``."""
    seen: set[tuple[str, int]] = set()
    last = ""
    for name, on in indexed.items():
        s = schedule.starts[name]
        if not s <= t < s + durations[name]:
            continue
        last = name
        seen.update((where, g) for where, held in on.items() for g in held)
        if len(seen) > limit:
            return name
    return last


def _charge(amount: int, here: int, gpus: int) -> int | Fraction:
    """What a job of ``gpus`` GPUs asking ``amount`` charges a node where it takes ``here``."""
    return amount if here == gpus else Fraction(amount * here, gpus)


def _text(x: int | Fraction) -> str:
    return str(x) if isinstance(x, int) or x.denominator == 1 else f"{float(x):.6g}"


def check_node_resources(
    inst: Instance, schedule: Schedule, placed: Mapping[str, Mapping[str, int]]
) -> tuple[NodeUse, NodeUse]:
    """CPU and memory per node and slot (the nodes that state them); the use of each.

    ``placed`` maps each started job to its GPU count per node. Returns the
    ``cpu_milli`` and ``memory_mib`` in use per node (only nodes with a
    limit) and slot.
    """
    assert inst.nodes is not None
    T = inst.horizon
    jobs = {j.name: j for j in inst.jobs}
    out: list[NodeUse] = []
    for resource in ("cpu_milli", "memory_mib"):
        cap = {n.name: getattr(n, resource) for n in inst.nodes if getattr(n, resource) is not None}
        use: NodeUse = {k: [0] * T for k in cap}
        if not cap:  # no node states this resource: nothing to charge
            out.append(use)
            continue
        first: dict[tuple[int, str], str] = {}
        for name, on in placed.items():
            job, s = jobs[name], schedule.starts[name]
            need = getattr(job, resource)
            if need == 0:
                continue
            for where, c in on.items():
                if where not in cap:
                    continue
                charge = _charge(need, c, job.gpus)
                row = use[where]
                for t in range(s, s + job.duration):
                    row[t] += charge
                    if row[t] > cap[where] and (t, where) not in first:
                        first[(t, where)] = name
        for t in sorted({t for t, _ in first}):
            for where in cap:  # node-list order
                if use[where][t] > cap[where]:
                    who = first[(t, where)]
                    over = use[where][t] - cap[where]
                    raise _error(
                        f"slot {t}, node {where!r}: the {resource} of the jobs running there sums "
                        f"to {_text(use[where][t])}, over the node's {cap[where]} (job {who!r} "
                        f"overloads it; resource: {resource})",
                        job=who, slot=t, node=where, amount=math.ceil(over), resource=resource,
                    )
        out.append(use)
    return out[0], out[1]


def _inference_takes(free: dict[str, list[int]], order: list[str], want: int) -> None:
    """Inference takes ``want`` wholly idle GPUs: the nodes with the fewest such GPUs first."""
    if want <= 0:
        return
    whole = {k: sum(1 for r in free[k] if r == FULL) for k in order}
    for _, _, k in sorted((whole[k], -i, k) for i, k in enumerate(order)):
        if want <= 0:
            return
        for i in range(len(free[k]) - 1, -1, -1):
            if want > 0 and free[k][i] == FULL:
                free[k][i] = 0
                want -= 1


def fgd_fragmentation(
    inst: Instance, schedule: Schedule, free_at: Callable[[str, int], list[int]],
    cpu_use: NodeUse, mem_use: NodeUse, inference: list[int],
) -> float:
    """Fragmentation in FGD's sense (Weng et al., USENIX ATC 2023), in GPU-slots (docs/model.md).

    At each slot, the idle GPU share that the jobs still waiting cannot use,
    averaged over those jobs (each waiting job one task of the target
    workload, with equal popularity), summed over the nodes and the slots.

    Parameters
    ----------
    free_at
        ``free_at(node, t)``: the idle ``gpu_milli`` of each GPU of the node
        at ``t`` after batch work (a new list).
    cpu_use, mem_use
        CPU and memory in use per node (with a limit) and slot.
    inference
        Inference demand per slot.
    """
    assert inst.nodes is not None
    T = inst.horizon
    nodes = inst.nodes
    largest = max(n.gpus for n in nodes)
    shapes: dict[tuple[Any, ...], list[int]] = {}
    for job in inst.jobs:
        end_by = T if job.deadline is None else min(job.deadline, T)
        last = end_by - job.duration
        if job.name in schedule.starts:
            last = min(last, schedule.starts[job.name] - 1)
        if last >= job.release:
            key = (job.gpus, job.gpu_milli, job.gpu_models, job.cpu_milli, job.memory_mib)
            row = shapes.setdefault(key, [0] * (T + 1))
            row[job.release] += 1
            row[last + 1] -= 1
    waiting = dict.fromkeys(shapes, 0)
    order = [n.name for n in nodes]
    terms: list[float] = []
    known: dict[tuple[Any, ...], int] = {}  # F of a node state for a job shape, computed once
    for t in range(T):
        for key, row in shapes.items():
            waiting[key] += row[t]
        total = sum(waiting.values())
        if total == 0:
            continue
        free = {n.name: free_at(n.name, t) for n in nodes}
        _inference_takes(free, order, inference[t])
        # nodes in the same state (model, size, idle shares, CPU and memory left) leave the
        # same fragments: count the states, then add each state's F once per node in it
        states: dict[tuple[Any, ...], int] = {}
        for n in nodes:
            idle = free[n.name]
            if sum(idle) == 0:
                continue
            cpu = None if n.cpu_milli is None else n.cpu_milli - cpu_use[n.name][t]
            mem = None if n.memory_mib is None else n.memory_mib - mem_use[n.name][t]
            state = (n.model, n.gpus, tuple(sorted(idle)), cpu, mem)
            states[state] = states.get(state, 0) + 1
        acc = 0
        for state, many in states.items():
            for key, count in waiting.items():
                if count:
                    f = known.get((state, key))
                    if f is None:
                        f = known[(state, key)] = _node_fragment(state, key, largest)
                    acc += many * count * f
        terms.append(acc / (FULL * total))
    return math.fsum(terms)


def _node_fragment(state: tuple[Any, ...], key: tuple[Any, ...], largest: int) -> int:
    """``F_n(m)``: the idle ``gpu_milli`` of a node in ``state`` that a job of shape ``key`` cannot use.

    ``state`` is the node's model, GPUs, idle share of each GPU (sorted), and
    CPU and memory left (``None``: unlimited).
    """
    model, size, idle, cpu_left, mem_left = state
    gpus, milli, models, cpu, mem = key
    amount = sum(idle)
    if models is not None and model not in models:
        return amount
    for need, left in ((cpu, cpu_left), (mem, mem_left)):
        if left is not None and need and _charge(need, min(gpus, size), gpus) > left:
            return amount
    whole = sum(1 for r in idle if r == FULL)
    if gpus > largest:  # takes whole nodes: this one only if wholly idle
        return 0 if whole == size else amount
    if milli == FULL:
        return sum(r for r in idle if r < FULL) if whole >= gpus else amount
    if any(r >= milli for r in idle):
        return sum(r for r in idle if r < milli)
    return amount
