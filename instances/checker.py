"""The independent checker: feasibility and every metric, computed in one place.

This module is deliberately plain: loops over jobs and slots that a reader can
verify by eye. Nothing here is shared with the solvers, so a bug in a fast
heuristic or in the MILP cannot hide behind the same bug in the checker.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from typing import Any

from .model import Instance, Reservation
from .schedule import Schedule

__all__ = ["InfeasibleScheduleError", "Metrics", "evaluate", "gain", "gap"]


class InfeasibleScheduleError(ValueError):
    """A schedule violates a constraint of the model.

    Attributes
    ----------
    job
        Name of the job involved, if one is.
    slot
        Slot of the violation, if one applies.
    amount
        By how much the constraint is violated (GPUs or slots).
    """

    def __init__(
        self, message: str, *, job: str | None = None, slot: int | None = None,
        amount: int | None = None,
    ) -> None:
        super().__init__(message)
        self.job = job
        self.slot = slot
        self.amount = amount


@dataclass(frozen=True)
class Metrics:
    """Every figure of a checked schedule (PROBLEM.md section 2).

    Attributes
    ----------
    value
        ``V``: priority-weighted GPU-hours of batch work completed.
    utilization
        ``U``: GPU-slots doing work (inference demand plus batch) over ``G T``.
    reserved_idle
        GPU-slots reserved for inference under ``reservation`` but unused.
    jobs_run, jobs_rejected
        Jobs run and not run.
    weighted_mean_wait
        Mean of ``S_j - r_j`` weighted by ``w_j`` over run jobs, in slots
        (``nan`` when no job runs).
    total_value
        ``V`` plus the priority-weighted GPU-hours of inference served.
    inference_gpu_slots, batch_gpu_slots, capacity_gpu_slots
        The terms of the utilization ratio.
    reservation
        The reservation policy ``reserved_idle`` was computed for.
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
    inst
        The instance.
    schedule
        Start slots of the jobs that run.
    reservation
        Reservation policy used for ``reserved_idle`` (``"peak"`` or ``"curve"``).
    enforce_reservation
        Also require batch usage to stay within the capacity that the
        reservation leaves (under ``"peak"``, ``G - sum_s max_t d_s[t]``).

    Returns
    -------
    Metrics
        Every figure of PROBLEM.md section 2.

    Raises
    ------
    InfeasibleScheduleError
        Naming the first violated constraint: an unknown job, a start before
        release, an end after deadline or horizon, or the first slot where the
        pool is over capacity (with the job that starts the overload).
    """
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

    inference = [sum(svc.demand[t] for svc in inst.services) for t in range(T)]
    peaks = sum(max(svc.demand) for svc in inst.services) if inst.services else 0
    if reservation == "peak":
        reserved = [min(G, peaks)] * T
    else:
        reserved = list(inference)
    limit = [G - inference[t] for t in range(T)]
    if enforce_reservation:
        limit = [min(limit[t], G - reserved[t]) for t in range(T)]

    batch = [0] * T
    first_job_at: dict[int, str] = {}
    for name, s in schedule.starts.items():
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

    value = 0.0
    wait_num = 0.0
    wait_den = 0.0
    for name, s in schedule.starts.items():
        job = by_name[name]
        value += job.priority * job.gpus * job.duration * inst.slot_hours
        wait_num += job.priority * (s - job.release)
        wait_den += job.priority
    inference_slots = sum(inference)
    batch_slots = sum(batch)
    inference_value = sum(
        svc.priority * sum(svc.demand) * inst.slot_hours for svc in inst.services
    )
    return Metrics(
        value=value,
        utilization=(inference_slots + batch_slots) / (G * T),
        reserved_idle=sum(reserved) - inference_slots,
        jobs_run=len(schedule.starts),
        jobs_rejected=len(inst.jobs) - len(schedule.starts),
        weighted_mean_wait=wait_num / wait_den if wait_den > 0 else math.nan,
        total_value=value + inference_value,
        inference_gpu_slots=inference_slots,
        batch_gpu_slots=batch_slots,
        capacity_gpu_slots=G * T,
        reservation=reservation,
    )


def gain(method: Metrics, baseline: Metrics) -> dict[str, float | None]:
    """Gains of a method over a baseline (normally FIFO).

    Returns
    -------
    dict
        ``utilization_pp``: ``100 (U_m - U_base)``, percentage points.
        ``value_pct``: ``100 (V_m - V_base) / V_base``; ``None`` when
        ``V_base == 0``, where the ratio is undefined.
        ``total_value_pct``: the same for ``total_value`` (batch plus
        inference, both priority-weighted); ``None`` when the baseline's is 0.
    """

    def pct(new: float, old: float) -> float | None:
        return None if old == 0 else 100.0 * (new - old) / old

    return {
        "utilization_pp": 100.0 * (method.utilization - baseline.utilization),
        "value_pct": pct(method.value, baseline.value),
        "total_value_pct": pct(method.total_value, baseline.total_value),
    }


def gap(value: float, upper_bound: float | None) -> float | None:
    """Relative gap ``(UB - V) / UB`` to an upper bound.

    ``None`` when there is no bound; ``0`` when both are zero.
    """
    if upper_bound is None or (isinstance(upper_bound, float) and math.isnan(upper_bound)):
        return None
    if upper_bound <= 0:
        return 0.0 if value >= upper_bound else math.inf
    return (upper_bound - value) / upper_bound
