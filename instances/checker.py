"""The independent checker: feasibility and every metric, computed in one place.

Deliberately plain loops over jobs and slots that a reader can verify by eye,
sharing nothing with the solvers, so a bug in a method cannot hide behind the
same bug here. On nodes it also checks every placement and the GPUs of every
node in every slot, and computes the fragmentation (docs/nodes.md).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from typing import Any

from . import checker_resources as v3
from .arrays import Reservation
from .model import Instance
from .rounding import rounded
from .schedule import Schedule
from .violations import InfeasibleScheduleError

__all__ = ["InfeasibleScheduleError", "Metrics", "evaluate", "stranded_gpus"]


@dataclass(frozen=True)
class Metrics:
    """Every figure of a checked schedule (docs/model.md).

    Attributes
    ----------
    value
        ``V``: priority-weighted GPU-hours of batch work completed.
    utilization
        ``U``: GPU-slots doing work (inference demand plus batch) over ``G T``.
    reserved_idle
        GPU-slots reserved for inference under ``reservation`` but unused.
    weighted_mean_wait
        Mean of ``S_j - r_j`` weighted by ``w_j`` over run jobs (``nan``: none runs).
    total_value
        ``V`` plus the priority-weighted GPU-hours of inference served.
    fragmentation
        Free GPU-slots stranded by the node split (docs/nodes.md); 0 on a flat pool.
    batch_gpu_milli_slots
        ``1000 sum_j a_j p_j`` over run jobs: what utilization counts of batch
        work (model version 3; ``1000 * batch_gpu_slots`` before it).
    fgd_fragmentation
        On a version 3 instance, fragmentation in the sense of FGD (Weng et al.,
        USENIX ATC 2023), in GPU-slots; ``None`` elsewhere.
    objective
        The instance's objective; ``value`` holds its figure: ``V`` under ``value``,
        ``F`` (``flow_hours``) under ``flow`` (section 15).
    batch_value, flow_hours
        ``V`` and the weighted flow time ``F = sum_j w_j (C_j - r_j) h`` over every job,
        whatever the objective (a job not run ends at ``T + p_j``: censored).
    mean_jct_hours
        Unweighted mean of ``C_j - r_j`` over every job, censored as ``F``, in hours.
    jobs_censored
        Jobs not run (counted at their censored completion in the two figures above).

    The float figures are :func:`~instances.rounding.rounded` whoever builds the object.
    """

    value: float
    utilization: float
    reserved_idle: int
    jobs_run: int
    jobs_rejected: int
    weighted_mean_wait: float
    total_value: float
    inference_gpu_slots: int
    batch_gpu_slots: int
    capacity_gpu_slots: int
    reservation: str
    fragmentation: int = 0
    batch_gpu_milli_slots: int = 0
    fgd_fragmentation: float | None = None
    objective: str = "value"
    batch_value: float = 0.0
    flow_hours: float = 0.0
    mean_jct_hours: float = math.nan
    jobs_censored: int = 0

    def __post_init__(self) -> None:
        for f in ("value", "utilization", "weighted_mean_wait", "total_value", "batch_value",
                  "flow_hours", "mean_jct_hours"):
            object.__setattr__(self, f, rounded(float(getattr(self, f))))

    def to_dict(self) -> dict[str, Any]:
        """The metrics as a plain ``dict``."""
        return asdict(self)


def evaluate(
    inst: Instance, schedule: Schedule, reservation: Reservation = "curve",
    *, enforce_reservation: bool = False,
) -> Metrics:
    """Check a schedule against the model and compute its metrics.

    Parameters
    ----------
    reservation
        The policy of ``reserved_idle`` (``"peak"`` or ``"curve"``).
    enforce_reservation
        Also require batch work to fit in what the reservation leaves (under
        ``"peak"`` ``G - sum_s max_t d_s[t]``, and on nodes what it withholds there).

    Raises
    ------
    InfeasibleScheduleError
        Naming the first violated constraint, the job, slot, node and amount: an
        unknown job, a start before release, an end after deadline or horizon, an
        invalid placement, a slot over the pool's or a node's capacity, or a
        version 3 rule (:mod:`instances.checker_resources`).
    """
    return _check(inst, schedule, reservation, enforce_reservation)[0]


def _check(
    inst: Instance, schedule: Schedule, reservation: Reservation, enforce_reservation: bool,
) -> tuple[Metrics, list[int]]:
    """:func:`evaluate`'s metrics and :func:`stranded_gpus`'s list, from one check."""
    if reservation not in ("peak", "curve"):
        raise ValueError(f"reservation: must be 'peak' or 'curve', got {reservation!r}")
    G, T = inst.num_gpus, inst.horizon
    by_name = {j.name: j for j in inst.jobs}

    for name, s in schedule.starts.items():
        job = by_name.get(name)
        if job is None:
            raise InfeasibleScheduleError(
                f"starts[{json.dumps(name)}]: no job of that name in instance {inst.name!r}",
                job=name,
            )
        if s < job.release:
            raise InfeasibleScheduleError(
                f"job {name!r} starts at slot {s}, before its release {job.release}",
                job=name, slot=s, amount=job.release - s,
            )
        end_by = T if job.deadline is None else min(job.deadline, T)
        if s + job.duration > end_by:
            what = "horizon" if end_by == T and (job.deadline is None or job.deadline >= T) else "deadline"
            raise InfeasibleScheduleError(
                f"job {name!r} ends at slot {s + job.duration}, after its {what} {end_by}",
                job=name, slot=s + job.duration, amount=s + job.duration - end_by,
            )

    placed: dict[str, dict[str, int]] = {}
    indexed: dict[str, dict[str, tuple[int, ...]]] = {}
    if inst.nodes is not None:
        placed = _check_placements(inst, schedule)
        indexed = v3.check_models_and_indices(inst, schedule)
    elif any(c > 0 for name in schedule.starts for c in schedule.placement.get(name, {}).values()):
        name = next(n for n in schedule.starts if any(schedule.placement.get(n, {}).values()))
        raise InfeasibleScheduleError(
            f"job {name!r}: placement names a node, but instance {inst.name!r} has no nodes",
            job=name,
        )

    inference = [sum(svc.demand[t] for svc in inst.services) for t in range(T)]
    peaks = sum(max(svc.demand) for svc in inst.services) if inst.services else 0
    if reservation == "peak":
        reserved = [min(G, peaks)] * T
    else:
        reserved = list(inference)
    limit = [G - inference[t] for t in range(T)]
    if enforce_reservation:
        limit = [min(limit[t], G - reserved[t]) for t in range(T)]

    batch = [0] * T  # GPUs busy with batch work
    first_job_at: dict[int, str] = {}
    withheld = _peak_withheld(inst, peaks) if inst.nodes is not None else {}
    gpu_on_node: v3.NodeUse = {}
    gpu_used: dict[tuple[str, int], dict[int, int]] = {}
    if indexed:
        peak_gpus = None
        if enforce_reservation and reservation == "peak":
            peak_gpus = {n.name: range(n.gpus - withheld[n.name], n.gpus) for n in inst.nodes or ()}
        batch, gpu_on_node, gpu_used = v3.check_gpus(inst, schedule, indexed, peak_gpus)
        durations = {j.name: j.duration for j in inst.jobs}
        over_at = next((t for t in range(T) if batch[t] > limit[t]), None)  # the one reported
        if over_at is not None:
            first_job_at[over_at] = v3.overloading_job(schedule, indexed, durations, over_at,
                                                       limit[over_at])
    for name, s in ([] if indexed else schedule.starts.items()):
        job = by_name[name]
        for t in range(s, s + job.duration):
            batch[t] += job.gpus
            if batch[t] > limit[t] and t not in first_job_at:
                first_job_at[t] = name
    for t in range(T):
        if batch[t] > limit[t]:
            over = batch[t] - limit[t]
            which = "pool" if not enforce_reservation else f"{reservation}-reserved pool"
            raise InfeasibleScheduleError(
                f"slot {t}: {over} GPU(s) over capacity of the {which} "
                f"(batch {batch[t]} + inference {inference[t]}, limit {limit[t] + inference[t]}; "
                f"job {first_job_at[t]!r} overloads it)",
                job=first_job_at[t], slot=t, amount=over,
            )
    stranded = [0] * T
    fgd: float | None = None
    if inst.nodes is not None:
        node_limit = {n.name: n.gpus for n in inst.nodes}
        if enforce_reservation and reservation == "peak":
            node_limit = {n.name: n.gpus - withheld[n.name] for n in inst.nodes}
        if indexed:
            on_node = gpu_on_node
        else:
            on_node = _check_nodes(inst, schedule, placed, node_limit, enforce_reservation)
        cpu_use, mem_use = v3.check_node_resources(inst, schedule, placed)
        stranded = _stranded(inst, schedule, on_node, inference)
        if v3.is_version_3(inst):
            sizes = {n.name: n.gpus for n in inst.nodes}

            def free_at(node: str, t: int) -> list[int]:
                if indexed:
                    return [1000 - gpu_used.get((node, g), {}).get(t, 0) for g in range(sizes[node])]
                busy = on_node[node][t]
                return [1000] * (sizes[node] - busy) + [0] * busy

            fgd = v3.fgd_fragmentation(inst, schedule, free_at, cpu_use, mem_use, inference)

    value = 0.0
    wait_num = 0.0
    wait_den = 0.0
    milli_slots = 0
    for name, s in schedule.starts.items():
        job = by_name[name]
        value += job.priority * (job.gpus * job.gpu_milli / 1000) * job.duration * inst.slot_hours
        milli_slots += job.gpus * job.gpu_milli * job.duration
        wait_num += job.priority * (s - job.release)
        wait_den += job.priority
    flow, jct = 0.0, 0.0  # every job, one not run ending at T + p_j (section 15)
    for job in inst.jobs:
        end = schedule.starts.get(job.name, T) + job.duration
        flow += job.priority * (end - job.release) * inst.slot_hours
        jct += (end - job.release) * inst.slot_hours
    inference_slots = sum(inference)
    batch_slots = sum(batch)
    inference_value = sum(
        svc.priority * sum(svc.demand) * inst.slot_hours for svc in inst.services
    )
    metrics = Metrics(
        value=flow if inst.objective == "flow" else value,
        utilization=(1000 * inference_slots + milli_slots) / (1000 * G * T),
        reserved_idle=sum(reserved) - inference_slots,
        jobs_run=len(schedule.starts),
        jobs_rejected=len(inst.jobs) - len(schedule.starts),
        weighted_mean_wait=wait_num / wait_den if wait_den > 0 else math.nan,
        total_value=value + inference_value,
        inference_gpu_slots=inference_slots,
        batch_gpu_slots=batch_slots,
        capacity_gpu_slots=G * T,
        reservation=reservation,
        fragmentation=sum(stranded),
        batch_gpu_milli_slots=milli_slots,
        fgd_fragmentation=fgd,
        objective=inst.objective,
        batch_value=value,
        flow_hours=flow,
        mean_jct_hours=jct / len(inst.jobs) if inst.jobs else math.nan,
        jobs_censored=len(inst.jobs) - len(schedule.starts),
    )
    return metrics, stranded


def _check_placements(inst: Instance, schedule: Schedule) -> dict[str, dict[str, int]]:
    """Each started job's placement without its counts of 0, checked valid: on nodes of
    the instance, summing to ``g_j``, on one node or (a job larger than the largest
    node) on whole nodes.
    """
    assert inst.nodes is not None
    size = {n.name: n.gpus for n in inst.nodes}
    largest = max(size.values())
    gpus = {j.name: j.gpus for j in inst.jobs}
    out: dict[str, dict[str, int]] = {}
    for name in schedule.starts:
        g = gpus[name]
        if name not in schedule.placement:
            raise InfeasibleScheduleError(
                f"job {name!r} has no placement (instance {inst.name!r} has nodes)", job=name
            )
        counts = {node: c for node, c in schedule.placement[name].items() if c > 0}
        for node, c in counts.items():
            if node not in size:
                raise InfeasibleScheduleError(
                    f"job {name!r}: placement names node {node!r}, which instance "
                    f"{inst.name!r} does not have", job=name,
                )
            if c > size[node]:
                raise InfeasibleScheduleError(
                    f"job {name!r}: placement puts {c} GPUs on node {node!r}, which has "
                    f"{size[node]}", job=name, amount=c - size[node],
                )
        held = sum(counts.values())
        if held != g:
            raise InfeasibleScheduleError(
                f"job {name!r}: placement holds {held} GPUs, the job needs {g}",
                job=name, amount=abs(held - g),
            )
        if g <= largest and len(counts) > 1:
            raise InfeasibleScheduleError(
                f"job {name!r} ({g} GPUs, no more than the largest node's {largest}) is split "
                f"across nodes {', '.join(repr(n) for n in counts)}: it must run on one node",
                job=name,
            )
        if len(counts) > 1:
            for node, c in counts.items():
                if c != size[node]:
                    raise InfeasibleScheduleError(
                        f"job {name!r} ({g} GPUs, more than the largest node's {largest}) "
                        f"must take whole nodes, but holds {c} of node {node!r}'s {size[node]}",
                        job=name, amount=size[node] - c,
                    )
        out[name] = counts
    return out


def _peak_withheld(inst: Instance, peaks: int) -> dict[str, int]:
    """GPUs of each node the peak reservation withholds: ``min(G, peaks)`` from the end of
    the node list.
    """
    assert inst.nodes is not None
    left = min(inst.num_gpus, peaks)
    withheld = {}
    for node in reversed(inst.nodes):
        withheld[node.name] = min(left, node.gpus)
        left -= withheld[node.name]
    return withheld


def _check_nodes(
    inst: Instance, schedule: Schedule, placed: dict[str, dict[str, int]],
    limit: dict[str, int], enforce_reservation: bool,
) -> dict[str, list[int]]:
    """Batch GPUs on each node in each slot, checked against the node's ``limit``."""
    assert inst.nodes is not None
    T = inst.horizon
    duration = {j.name: j.duration for j in inst.jobs}
    on_node = {node.name: [0] * T for node in inst.nodes}
    first_job_at: dict[tuple[int, str], str] = {}
    for name, s in schedule.starts.items():
        for where, c in placed[name].items():
            for t in range(s, s + duration[name]):
                on_node[where][t] += c
                if on_node[where][t] > limit[where] and (t, where) not in first_job_at:
                    first_job_at[(t, where)] = name
    for t in range(T):
        for node in inst.nodes:
            used = on_node[node.name][t]
            if used > limit[node.name]:
                over = used - limit[node.name]
                what = "capacity" if not enforce_reservation else "capacity left by the reservation"
                job = first_job_at[(t, node.name)]
                raise InfeasibleScheduleError(
                    f"slot {t}, node {node.name!r}: {over} GPU(s) over the node's {what} "
                    f"(batch {used}, limit {limit[node.name]} of {node.gpus}; job {job!r} "
                    f"overloads it)",
                    job=job, slot=t, amount=over,
                )
    return on_node


def stranded_gpus(inst: Instance, schedule: Schedule) -> list[int]:
    """Free GPUs stranded by the node split, slot by slot (docs/nodes.md); their sum is
    :attr:`Metrics.fragmentation`. All zeros on a flat pool.

    Raises
    ------
    InfeasibleScheduleError
        If the schedule is infeasible (it is checked first).
    """
    return _check(inst, schedule, "curve", False)[1]


def _stranded(
    inst: Instance, schedule: Schedule, on_node: dict[str, list[int]], inference: list[int]
) -> list[int]:
    """Free GPUs stranded by the node split at each slot (the definition is in docs/nodes.md).

    A job is pending at ``t`` if released, not started by ``t`` and still able to
    start. Inference takes free GPUs from the nodes with the fewest first (ties:
    the later node). A node's free GPUs are usable if some pending job fits on it
    alone, or it is wholly free and the wholly free nodes hold a pending multi-node
    job; where the free GPUs together hold the smallest pending job, the rest are stranded.
    """
    nodes = inst.nodes
    assert nodes is not None
    T = inst.horizon
    largest = max(node.gpus for node in nodes)
    sizes = sorted({j.gpus for j in inst.jobs})
    # pending[g][t]: pending jobs of g GPUs at slot t (a difference array, then summed)
    pending = {g: [0] * (T + 1) for g in sizes}
    for job in inst.jobs:
        end_by = T if job.deadline is None else min(job.deadline, T)
        last = end_by - job.duration  # last slot it could start at
        if job.name in schedule.starts:
            last = min(last, schedule.starts[job.name] - 1)
        if last >= job.release:
            pending[job.gpus][job.release] += 1
            pending[job.gpus][last + 1] -= 1
    count = dict.fromkeys(sizes, 0)
    stranded = [0] * T
    for t in range(T):
        smallest_one = smallest_multi = None
        for g in sizes:
            count[g] += pending[g][t]
            if count[g] > 0:
                if g <= largest and smallest_one is None:
                    smallest_one = g
                if g > largest and smallest_multi is None:
                    smallest_multi = g
        smallest = smallest_one if smallest_one is not None else smallest_multi
        if smallest is None:
            continue
        free = {node.name: node.gpus - on_node[node.name][t] for node in nodes}
        left = inference[t]
        by_room = sorted(range(len(nodes)), key=lambda k: (free[nodes[k].name], -k))
        for k in by_room:
            name = nodes[k].name
            take = min(left, free[name])
            free[name] -= take
            left -= take
        if sum(free.values()) < smallest:
            continue
        whole = sum(node.gpus for node in nodes if free[node.name] == node.gpus)
        for node in nodes:
            f = free[node.name]
            fits_one = smallest_one is not None and f >= smallest_one
            fits_multi = smallest_multi is not None and f == node.gpus and whole >= smallest_multi
            if f > 0 and not fits_one and not fits_multi:
                stranded[t] += f
    return stranded
