"""The problem's vocabulary: inference services, batch jobs, nodes and instances.

Every object is immutable and validated when it is built; a bad field raises a
:class:`ValueError` naming the field and the value (``jobs[3].gpus: must be <=
num_gpus (8), got 12``). The arrays an :class:`Instance` derives are in :mod:`.arrays`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .arrays import InstanceArrays
from .objective import OBJECTIVES
from .resources import check_instance_resources, check_job_fields, check_node_fields

__all__ = [
    "JOB_KINDS",
    "MAX_GPUS",
    "MAX_HORIZON",
    "MAX_JOBS",
    "SIZE_PARAMS",
    "Instance",
    "Job",
    "Node",
    "Service",
    "check_size_params",
    "check_total",
    "int_curve",
    "is_int",
    "subset_sums",
]

JOB_KINDS: tuple[str, ...] = ("training", "batch_inference", "quantization", "other")
"""The kinds a batch job may have."""

MAX_HORIZON = 1_000_000
"""Largest horizon accepted (slots); larger ones are refused before any array is built."""

MAX_JOBS = 1_000_000
"""Largest number of batch jobs accepted in one instance."""

MAX_GPUS = 1_000_000
"""Largest pool accepted."""

SIZE_PARAMS: dict[str, tuple[int, int]] = {
    "num_jobs": (0, MAX_JOBS),
    "num_gpus": (1, MAX_GPUS),
    "horizon": (1, MAX_HORIZON),
}
"""Generator parameters that set an instance's size, with their accepted range."""


def check_size_params(params: Mapping[str, Any]) -> None:
    """Refuse a size parameter out of range before anything is drawn or built (a horizon
    of 10^9 would otherwise take minutes and gigabytes first).

    Raises
    ------
    ValueError
        ``num_jobs: must be an integer in [0, 1000000], got 10000000``.
    """
    for key, (lo, hi) in SIZE_PARAMS.items():
        v = params.get(key)
        if v is None:
            continue
        if not is_int(v) or not lo <= v <= hi:
            raise ValueError(f"{key}: must be an integer in [{lo}, {hi}], got {v!r}")


def is_int(x: Any) -> bool:
    """Whether ``x`` is an integer (Python or numpy), not a boolean."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _is_real(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(
        x, (bool, np.bool_)
    )


def _check_int(where: str, x: Any, lo: int | None = None, hi: int | None = None) -> int:
    if not is_int(x):
        raise ValueError(f"{where}: must be an integer, got {x!r}")
    x = int(x)
    if lo is not None and x < lo:
        raise ValueError(f"{where}: must be >= {lo}, got {x}")
    if hi is not None and x > hi:
        raise ValueError(f"{where}: must be <= {hi}, got {x}")
    return x


def _check_positive(where: str, x: Any) -> float:
    if not _is_real(x):
        raise ValueError(f"{where}: must be a number, got {x!r}")
    x = float(x)
    if not math.isfinite(x) or x <= 0:
        raise ValueError(f"{where}: must be a finite number > 0, got {x!r}")
    return x


def int_curve(where: str, values: Any) -> tuple[int, ...]:
    """``values`` as a tuple of integers ``>= 0`` (a demand curve), each checked.

    Raises
    ------
    ValueError
        ``<where>: must be a list of integers`` or ``<where>[t]: ...`` naming the slot.
    """
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise ValueError(f"{where}: must be a list of integers, got {values!r}")
    return tuple(_check_int(f"{where}[{t}]", d, lo=0) for t, d in enumerate(values))


def check_total(where: str, what: str, total: np.ndarray, num_gpus: int) -> None:
    """Refuse the first slot where the summed inference ``total`` is over the pool
    (``<where>: summed <what> at slot 5 is 9, over num_gpus (8)``)."""
    over = np.flatnonzero(total > num_gpus)
    if over.size:
        t = int(over[0])
        raise ValueError(f"{where}: summed {what} at slot {t} is {int(total[t])}, "
                         f"over num_gpus ({num_gpus})")


def _unique(key: str, items: tuple[Any, ...], cls: type[Any]) -> None:
    """Each of ``items`` a ``cls``, no name twice (``jobs[3].name: duplicate job name 'x'``)."""
    seen: set[str] = set()
    for i, x in enumerate(items):
        if not isinstance(x, cls):
            raise ValueError(f"{key}[{i}]: must be a {cls.__name__}, got {type(x).__name__}")
        if x.name in seen:
            raise ValueError(f"{key}[{i}].name: duplicate {cls.__name__.lower()} name {x.name!r}")
        seen.add(x.name)


def _check_name(where: str, x: Any) -> str:
    if not isinstance(x, str) or not x:
        raise ValueError(f"{where}: must be a non-empty string, got {x!r}")
    return x


@dataclass(frozen=True)
class Service:
    """A real-time inference service: priority ``pi_s > 0`` per GPU-hour, and the GPUs it
    needs in each slot (``demand``, length ``horizon``), served in full.
    """

    name: str
    priority: float
    demand: tuple[int, ...]

    def __post_init__(self) -> None:
        _check_name("service.name", self.name)
        where = f"service {self.name!r}"
        object.__setattr__(self, "priority", _check_positive(f"{where}.priority", self.priority))
        object.__setattr__(self, "demand", int_curve(f"{where}.demand", self.demand))

    @property
    def peak(self) -> int:
        """Largest demand over the horizon (0 for an empty curve)."""
        return max(self.demand, default=0)


@dataclass(frozen=True)
class Job:
    """A batch job: a contiguous block of ``gpus`` GPUs for ``duration`` slots, non-preemptive.

    Parameters
    ----------
    priority
        Weight ``w_j > 0`` of one GPU-hour of this job.
    kind
        One of :data:`JOB_KINDS`.
    release
        Submit slot ``r_j``, the earliest start.
    deadline
        Slot by which the job must have ended, or ``None`` for the horizon.
    gpu_milli, gpu_models, cpu_milli, memory_mib
        Model version 3 (docs/model.md), on nodes only: thousandths of a GPU per
        GPU (below 1000 only with ``gpus == 1``: a *shared* job), the GPU models it
        accepts (``None``: any), CPU and memory.
    """

    name: str
    gpus: int
    duration: int
    priority: float = 1.0
    kind: str = "other"
    release: int = 0
    deadline: int | None = None
    gpu_milli: int = 1000
    gpu_models: tuple[str, ...] | None = None
    cpu_milli: int = 0
    memory_mib: int = 0

    def __post_init__(self) -> None:
        _check_name("job.name", self.name)
        where = f"job {self.name!r}"
        object.__setattr__(self, "gpus", _check_int(f"{where}.gpus", self.gpus, lo=1))
        object.__setattr__(
            self, "duration", _check_int(f"{where}.duration", self.duration, lo=1, hi=MAX_HORIZON)
        )
        object.__setattr__(
            self, "priority", _check_positive(f"{where}.priority", self.priority)
        )
        if self.kind not in JOB_KINDS:
            raise ValueError(f"{where}.kind: must be one of {list(JOB_KINDS)}, got {self.kind!r}")
        object.__setattr__(self, "release", _check_int(f"{where}.release", self.release, lo=0))
        if self.deadline is not None:
            dl = _check_int(f"{where}.deadline", self.deadline)
            if dl < self.release + self.duration:
                raise ValueError(
                    f"{where}.deadline: must be >= release + duration "
                    f"({self.release} + {self.duration}), got {dl}"
                )
            object.__setattr__(self, "deadline", dl)
        fields = check_job_fields(
            where, self.gpus, self.gpu_milli, self.gpu_models, self.cpu_milli, self.memory_mib
        )
        for key, v in zip(("gpu_milli", "gpu_models", "cpu_milli", "memory_mib"), fields):
            object.__setattr__(self, key, v)


@dataclass(frozen=True)
class Node:
    """A machine of the pool holding ``gpus >= 1`` GPUs.

    A batch job's GPUs share one node or, for a job larger than the largest node,
    take whole nodes. ``model``, ``cpu_milli`` and ``memory_mib`` are model version
    3 (docs/model.md): the GPU model (``None`` matches no job that lists models),
    CPU and memory (``None``: unlimited).
    """

    name: str
    gpus: int
    model: str | None = None
    cpu_milli: int | None = None
    memory_mib: int | None = None

    def __post_init__(self) -> None:
        _check_name("node.name", self.name)
        where = f"node {self.name!r}"
        object.__setattr__(self, "gpus", _check_int(f"{where}.gpus", self.gpus, lo=1, hi=MAX_GPUS))
        fields = check_node_fields(where, self.model, self.cpu_milli, self.memory_mib)
        for key, v in zip(("model", "cpu_milli", "memory_mib"), fields):
            object.__setattr__(self, key, v)


def subset_sums(sizes: Iterable[int], limit: int) -> int:
    """Sums ``<= limit`` of subsets of ``sizes``, as a bit set (bit ``k`` set: ``k`` is one);
    equal sizes are split in powers of two, so a thousand 8-GPU nodes cost ten shifts.
    """
    counts: dict[int, int] = {}
    for s in sizes:
        counts[s] = counts.get(s, 0) + 1
    mask = (1 << (limit + 1)) - 1
    reach = 1
    for size, count in sorted(counts.items()):
        k = 1
        while count > 0:
            take = min(k, count)
            reach = (reach | (reach << (size * take))) & mask
            count -= take
            k *= 2
    return reach


@dataclass(frozen=True)
class Instance(InstanceArrays):
    """A GPU pool over a horizon, shared by inference services and batch jobs.

    Immutable: its derived arrays (``demand``, ``gpus``, ...) are computed once,
    read-only, and never go stale; :meth:`replace` derives a changed copy.

    Parameters
    ----------
    num_gpus, horizon
        Pool size ``G`` and number of slots ``T``.
    services
        Inference services; their summed demand never exceeds ``G``.
    jobs
        Batch jobs in submission-list order (FIFO breaks release ties by it).
    meta
        Free-form provenance (family, seed, parameters), ignored by equality.
    nodes
        The nodes the GPUs sit on, summing to ``num_gpus``; ``None``: one flat pool.
    objective
        What a schedule is worth: ``value`` (maximise ``V``) or ``flow`` (minimise the
        weighted flow time, jobs not run censored at the horizon); see
        :mod:`instances.objective`.

    Raises
    ------
    ValueError
        On any invalid field, naming the field and the value.
    """

    name: str
    num_gpus: int
    horizon: int
    services: tuple[Service, ...] = ()
    jobs: tuple[Job, ...] = ()
    slot_hours: float = 1.0
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)
    nodes: tuple[Node, ...] | None = None
    objective: str = "value"

    def __post_init__(self) -> None:
        _check_name("name", self.name)
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective: must be one of {', '.join(OBJECTIVES)}, "
                             f"got {self.objective!r}")
        if not isinstance(self.meta, Mapping):
            raise ValueError(f"meta: must be a mapping, got {self.meta!r}")
        G = _check_int("num_gpus", self.num_gpus, lo=1, hi=MAX_GPUS)
        T = _check_int("horizon", self.horizon, lo=1, hi=MAX_HORIZON)
        object.__setattr__(self, "num_gpus", G)
        object.__setattr__(self, "horizon", T)
        object.__setattr__(self, "slot_hours", _check_positive("slot_hours", self.slot_hours))
        services = tuple(self.services)
        jobs = tuple(self.jobs)
        if len(jobs) > MAX_JOBS:
            raise ValueError(f"jobs: at most {MAX_JOBS} jobs are accepted, got {len(jobs)}")
        object.__setattr__(self, "services", services)
        object.__setattr__(self, "jobs", jobs)

        _unique("services", services, Service)
        for i, s in enumerate(services):
            if len(s.demand) != T:
                raise ValueError(
                    f"services[{i}].demand: length must equal horizon ({T}), got {len(s.demand)}"
                )
            if s.peak > G:
                t = s.demand.index(s.peak)
                raise ValueError(
                    f"services[{i}].demand[{t}]: must be <= num_gpus ({G}), got {s.peak}"
                )
        if services:
            check_total("services", "demand", self.total_demand, G)

        _unique("jobs", jobs, Job)
        for i, j in enumerate(jobs):
            if j.gpus > G:
                raise ValueError(f"jobs[{i}].gpus: must be <= num_gpus ({G}), got {j.gpus}")
            if j.release >= T:
                raise ValueError(f"jobs[{i}].release: must be < horizon ({T}), got {j.release}")
            if j.deadline is not None and j.deadline > T:
                raise ValueError(
                    f"jobs[{i}].deadline: must be <= horizon ({T}), got {j.deadline}"
                )
        if self.nodes is not None:
            self._check_nodes()
        check_instance_resources(self)
        self._check_values_finite()

    def _check_nodes(self) -> None:
        """Node names unique, GPUs summing to ``num_gpus``, every job with a valid placement."""
        if isinstance(self.nodes, (str, bytes, Mapping)) or not isinstance(self.nodes, Iterable):
            raise ValueError(f"nodes: must be a list of nodes, got {self.nodes!r}")
        nodes = tuple(self.nodes)
        object.__setattr__(self, "nodes", nodes)
        _unique("nodes", nodes, Node)
        total = sum(node.gpus for node in nodes)
        if total != self.num_gpus:
            raise ValueError(
                f"nodes: the nodes' GPUs sum to {total}, must equal num_gpus ({self.num_gpus})"
            )
        largest = max(node.gpus for node in nodes)
        sums = subset_sums((node.gpus for node in nodes), self.num_gpus)
        for i, j in enumerate(self.jobs):
            if j.gpus > largest and not (sums >> j.gpus) & 1:
                raise ValueError(
                    f"jobs[{i}].gpus: job {j.name!r} has no valid placement on the nodes: "
                    f"{j.gpus} GPUs is more than the largest node ({largest}) and no set of "
                    f"whole nodes has exactly {j.gpus} GPUs"
                )

    def _check_values_finite(self) -> None:
        """Refuse priorities so large that a value or the total value overflows to infinity."""
        h = self.slot_hours
        total = 0.0
        for i, s in enumerate(self.services):
            total += s.priority * float(sum(s.demand)) * h
            if not math.isfinite(total):
                raise ValueError(
                    f"services[{i}].priority: {s.priority!r} makes the value of the served "
                    f"demand (priority * GPU-slots * slot_hours) overflow to infinity"
                )
        for i, j in enumerate(self.jobs):
            total += j.priority * j.gpus * j.duration * h
            if not math.isfinite(total):
                raise ValueError(
                    f"jobs[{i}].priority: {j.priority!r} makes the value "
                    f"(priority * gpus * duration * slot_hours) overflow to infinity"
                )

    def replace(self, **changes: Any) -> Instance:
        """Return a validated copy with some fields changed."""
        return replace(self, **changes)

    def summary(self) -> str:
        """One line describing the instance's size."""
        where = "" if self.nodes is None else f" on {len(self.nodes)} nodes"
        return (
            f"{self.name}: {self.num_gpus} GPUs{where}, {self.horizon} slots x "
            f"{self.slot_hours:g} h, {len(self.services)} services, {self.num_jobs} jobs"
        )
