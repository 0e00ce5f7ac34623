"""The cluster's real resources (model version 3, docs/model.md): fields, rules and arrays.

Version 3 adds optional fields to the nodes (``model``, ``cpu_milli``,
``memory_mib``) and to the jobs (``gpu_milli``, ``gpu_models``,
``cpu_milli``, ``memory_mib``), valid only on an instance with nodes. This
module holds their rules once: the checks of each field (called by
:class:`~instances.Node` and :class:`~instances.Job`), the check of an
instance (the fields only on nodes; every job with a valid placement on the
empty cluster), the placement test the trace importer shares, and the
arrays the algorithms read (a job's GPU amount ``a_j = g_j gpu_milli / 1000``,
its eligibility by model, the nodes' CPU and memory).

An instance that uses none of the fields is a version 1 or 2 instance: its
file, its figures and every array here are what they were before.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .model import Instance, Job, Node

__all__ = [
    "FULL_GPU_MILLI",
    "JOB_FIELDS",
    "NODE_FIELDS",
    "Resources",
    "check_instance_resources",
    "check_job_fields",
    "check_node_fields",
    "flat_fields",
    "gpu_amounts",
    "has_placement",
    "job_fields_to_dict",
    "job_resource_field",
    "jobs_use_resources",
    "node_fields_to_dict",
    "refuse_resources",
    "resources",
    "shares_gpus",
    "uses_resources",
    "withheld_indices",
]

FULL_GPU_MILLI = 1000
"""``gpu_milli`` of a whole GPU: a job's default, and what one GPU holds per slot."""

NODE_FIELDS: tuple[str, ...] = ("model", "cpu_milli", "memory_mib")
"""The version 3 fields of a node, in file order (absent: no model, unlimited)."""

JOB_FIELDS: tuple[str, ...] = ("gpu_milli", "gpu_models", "cpu_milli", "memory_mib")
"""The version 3 fields of a job, in file order (defaults 1000, any model, 0, 0)."""

JOB_DEFAULTS: dict[str, Any] = {
    "gpu_milli": FULL_GPU_MILLI, "gpu_models": None, "cpu_milli": 0, "memory_mib": 0,
}
"""A job's value of each version 3 field when the file leaves it out."""


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _count(where: str, x: Any, lo: int, hi: int | None = None) -> int:
    """An integer field in ``[lo, hi]``, or a ``ValueError`` naming the field and the value."""
    if not _is_int(x):
        raise ValueError(f"{where}: must be an integer, got {x!r}")
    x = int(x)
    if x < lo:
        raise ValueError(f"{where}: must be >= {lo}, got {x}")
    if hi is not None and x > hi:
        raise ValueError(f"{where}: must be <= {hi}, got {x}")
    return x


# ------------------------------------------------------------------ the fields
def check_node_fields(
    where: str, model: Any, cpu_milli: Any, memory_mib: Any
) -> tuple[str | None, int | None, int | None]:
    """A node's version 3 fields, checked (``None``: absent).

    Raises
    ------
    ValueError
        ``node 'n0'.model: must be a non-empty string, got 3``;
        ``node 'n0'.cpu_milli: must be >= 0, got -1``.
    """
    if model is not None and (not isinstance(model, str) or not model):
        raise ValueError(f"{where}.model: must be a non-empty string, got {model!r}")
    cpu = None if cpu_milli is None else _count(f"{where}.cpu_milli", cpu_milli, 0)
    mem = None if memory_mib is None else _count(f"{where}.memory_mib", memory_mib, 0)
    return model, cpu, mem


def check_job_fields(
    where: str, gpus: int, gpu_milli: Any, gpu_models: Any, cpu_milli: Any, memory_mib: Any
) -> tuple[int, tuple[str, ...] | None, int, int]:
    """A job's version 3 fields, checked and normalised (``gpu_models`` as a tuple).

    Raises
    ------
    ValueError
        ``job 'a'.gpu_milli: must be <= 1000, got 1200``; ``job 'a'.gpu_milli:
        a share below 1000 needs gpus == 1, got 500 with gpus 2``;
        ``job 'a'.gpu_models: must be a non-empty list of model names, got []``.
    """
    milli = _count(f"{where}.gpu_milli", gpu_milli, 1, FULL_GPU_MILLI)
    if milli < FULL_GPU_MILLI and gpus != 1:
        raise ValueError(
            f"{where}.gpu_milli: a share below {FULL_GPU_MILLI} needs gpus == 1, "
            f"got {milli} with gpus {gpus}"
        )
    models: tuple[str, ...] | None = None
    if gpu_models is not None:
        if isinstance(gpu_models, (str, bytes, Mapping)) or not isinstance(gpu_models, Iterable):
            raise ValueError(
                f"{where}.gpu_models: must be a non-empty list of model names, got {gpu_models!r}"
            )
        models = tuple(gpu_models)
        if not models:
            raise ValueError(
                f"{where}.gpu_models: must be a non-empty list of model names, got {gpu_models!r}"
            )
        seen: set[str] = set()
        for i, m in enumerate(models):
            if not isinstance(m, str) or not m:
                raise ValueError(f"{where}.gpu_models[{i}]: must be a non-empty string, got {m!r}")
            if m in seen:
                raise ValueError(f"{where}.gpu_models[{i}]: model {m!r} is listed twice")
            seen.add(m)
    cpu = _count(f"{where}.cpu_milli", cpu_milli, 0)
    mem = _count(f"{where}.memory_mib", memory_mib, 0)
    return milli, models, cpu, mem


def job_resource_field(job: Job) -> str | None:
    """The first version 3 field of ``job`` that differs from its default, or ``None``."""
    for key in JOB_FIELDS:
        if getattr(job, key) != JOB_DEFAULTS[key]:
            return key
    return None


def _node_resource_field(node: Node) -> str | None:
    for key in NODE_FIELDS:
        if getattr(node, key) is not None:
            return key
    return None


def jobs_use_resources(inst: Instance) -> bool:
    """Whether some job asks a share, a model, CPU or memory (so version 2 rules do not hold)."""
    return any(job_resource_field(j) is not None for j in inst.jobs)


def uses_resources(inst: Instance) -> bool:
    """Whether the instance is a version 3 instance: some node or job sets a version 3 field."""
    return jobs_use_resources(inst) or any(
        _node_resource_field(n) is not None for n in inst.nodes or ()
    )


def shares_gpus(inst: Instance) -> bool:
    """Whether some job is *shared* (``gpu_milli`` below 1000): then placements list GPU indices."""
    return any(j.gpu_milli < FULL_GPU_MILLI for j in inst.jobs)


def refuse_resources(inst: Instance, what: str, *, shares_only: bool = False) -> None:
    """Refuse a version 3 instance in code that reads only the version 2 rules.

    ``shares_only``: refuse only shared jobs (models, CPU and memory restrict
    and so leave a version 2 bound valid; shares do not).

    Raises
    ------
    ValueError
        ``version 3 resources are not supported by capacity yet (job 'a'
        sets gpu_milli)``.
    """
    if not (inst.shares_gpus if shares_only else inst.jobs_use_resources):
        return  # the common case, answered from the instance's cached flags
    for j in inst.jobs:
        key = "gpu_milli" if j.gpu_milli < FULL_GPU_MILLI else (
            None if shares_only else job_resource_field(j)
        )
        if key is not None:
            raise ValueError(
                f"version 3 resources are not supported by {what} yet (job {j.name!r} sets {key})"
            )


# ------------------------------------------------------------------ files
def flat_fields(jobs: Sequence[Mapping[str, Any]]) -> None:
    """Refuse a version 3 field in the jobs of a file without nodes, even at its default.

    Raises
    ------
    ValueError
        ``jobs[1].cpu_milli: valid only on an instance with nodes, got 0``.
    """
    for i, j in enumerate(jobs):
        for key in JOB_FIELDS:
            if key in j:
                raise ValueError(
                    f"jobs[{i}].{key}: valid only on an instance with nodes, got {j[key]!r}"
                )


def job_fields_to_dict(job: Job) -> dict[str, Any]:
    """The version 3 fields of a job that differ from their defaults, in file order."""
    out: dict[str, Any] = {}
    for key in JOB_FIELDS:
        v = getattr(job, key)
        if v != JOB_DEFAULTS[key]:
            out[key] = list(v) if key == "gpu_models" else v
    return out


def node_fields_to_dict(node: Node) -> dict[str, Any]:
    """The version 3 fields a node sets, in file order."""
    return {key: getattr(node, key) for key in NODE_FIELDS if getattr(node, key) is not None}


# ------------------------------------------------------------------ placements
def _model_ok(models: Sequence[str] | None, model: str | None) -> bool:
    """A node of ``model`` serves a job asking ``models`` (no model matches no list)."""
    return models is None or (model is not None and model in models)


def _fits(need: int, share_num: int, share_den: int, cap: int | None) -> bool:
    """``need * share_num / share_den <= cap`` in exact integers (``None``: unlimited)."""
    return cap is None or need * share_num <= cap * share_den


def has_placement(
    sizes: Sequence[int], node_models: Sequence[str | None], node_cpu: Sequence[int | None],
    node_mem: Sequence[int | None], gpus: int, gpu_models: Sequence[str] | None = None,
    cpu_milli: int = 0, memory_mib: int = 0,
) -> bool:
    """Whether a job has a valid placement on the empty cluster (docs/model.md, version 3).

    One node (for a job of at most the largest node's GPUs): a node with
    ``gpus`` GPUs or more, a model the job accepts, and the job's CPU and
    memory. Whole nodes (for a larger job): a set of nodes, each of an
    accepted model and holding its part of the CPU and memory (the job
    charges a node in proportion to the GPUs it takes there), whose GPUs sum
    to exactly ``gpus``. Every comparison is in exact integers.
    """
    largest = max(sizes)
    if gpus <= largest:
        return any(
            sizes[k] >= gpus and _model_ok(gpu_models, node_models[k])
            and _fits(cpu_milli, 1, 1, node_cpu[k]) and _fits(memory_mib, 1, 1, node_mem[k])
            for k in range(len(sizes))
        )
    reach, mask = 1, (1 << (gpus + 1)) - 1
    for k, s in enumerate(sizes):
        if (_model_ok(gpu_models, node_models[k]) and _fits(cpu_milli, s, gpus, node_cpu[k])
                and _fits(memory_mib, s, gpus, node_mem[k])):
            reach = (reach | (reach << s)) & mask
    return bool((reach >> gpus) & 1)


def check_instance_resources(inst: Instance) -> None:
    """The version 3 rules of a whole instance.

    Without nodes, no job may set a version 3 field. With nodes, every job
    needs a valid placement on the empty cluster (:func:`has_placement`).
    A version 1 or 2 instance passes at once.

    Raises
    ------
    ValueError
        ``jobs[2].gpu_milli: valid only on an instance with nodes, got 500``;
        ``jobs[0]: job 'a' has no valid placement on the empty cluster (4 GPUs
        of models ['V100'], cpu_milli 8000, memory_mib 0)``.
    """
    if inst.nodes is None:
        for i, j in enumerate(inst.jobs):
            key = job_resource_field(j)
            if key is not None:
                raise ValueError(
                    f"jobs[{i}].{key}: valid only on an instance with nodes, got {getattr(j, key)!r}"
                )
        return
    if not jobs_use_resources(inst):
        return  # defaults fit wherever the version 2 check found room
    nodes = inst.nodes
    sizes = [n.gpus for n in nodes]
    models = [n.model for n in nodes]
    cpu = [n.cpu_milli for n in nodes]
    mem = [n.memory_mib for n in nodes]
    seen: dict[tuple[Any, ...], bool] = {}
    for i, j in enumerate(inst.jobs):
        shape = (j.gpus, j.gpu_models, j.cpu_milli, j.memory_mib)
        if shape not in seen:
            seen[shape] = has_placement(sizes, models, cpu, mem, *shape)
        if not seen[shape]:
            wanted = "any model" if j.gpu_models is None else f"models {list(j.gpu_models)}"
            raise ValueError(
                f"jobs[{i}]: job {j.name!r} has no valid placement on the empty cluster "
                f"({j.gpus} GPU(s) of {wanted}, cpu_milli {j.cpu_milli}, "
                f"memory_mib {j.memory_mib})"
            )


def withheld_indices(inst: Instance, reservation: str = "peak") -> list[range]:
    """Per node, the GPU indices the reservation withholds from batch work.

    Under ``peak``, the ``P`` GPUs of :meth:`Instance.node_withheld` by
    index: the last node's highest-indexed GPUs first, so node ``k`` keeps
    GPUs ``0 .. c_k - 1`` for batch work (``c_k`` its :meth:`Instance.node_capacity`).
    """
    if inst.nodes is None:
        return []
    cap = inst.node_capacity(reservation)  # type: ignore[arg-type]
    return [range(int(c), n.gpus) for c, n in zip(cap.tolist(), inst.nodes)]


# ------------------------------------------------------------------ the arrays
def _ro(a: Any, dtype: Any) -> np.ndarray:
    arr = np.array(a, dtype=dtype)
    arr.setflags(write=False)
    return arr


def gpu_amounts(inst: Instance) -> np.ndarray:
    """``a_j = g_j gpu_milli_j / 1000`` per job, float64, read-only (``g_j`` exactly on version 2)."""
    return _ro([j.gpus * j.gpu_milli / FULL_GPU_MILLI for j in inst.jobs], np.float64)


@dataclass(frozen=True, eq=False)
class Resources:
    """The version 3 fields of an instance as arrays (all read-only).

    Attributes
    ----------
    gpu_milli
        ``(n,)`` int64: each job's ``gpu_milli`` (1000 for a whole-GPU job).
    amount
        ``(n,)`` float64: the GPU amount ``a_j``.
    shared
        ``(n,)`` bool: the job is shared (``gpu_milli < 1000``).
    job_cpu, job_memory
        ``(n,)`` int64: ``cpu_milli`` and ``memory_mib`` per job.
    eligible
        ``(n, K)`` bool: node ``k`` has a model job ``j`` accepts.
    node_cpu, node_memory
        ``(K,)`` float64: the nodes' ``cpu_milli`` and ``memory_mib``,
        ``inf`` where absent (unlimited); integers otherwise, exact in float64.
    node_models
        ``(K,)`` object: each node's model or ``None``.
    """

    gpu_milli: np.ndarray
    amount: np.ndarray
    shared: np.ndarray
    job_cpu: np.ndarray
    job_memory: np.ndarray
    eligible: np.ndarray
    node_cpu: np.ndarray
    node_memory: np.ndarray
    node_models: np.ndarray


def resources(inst: Instance) -> Resources:
    """The :class:`Resources` of ``inst`` (a flat instance has ``K = 0`` nodes)."""
    nodes = inst.nodes or ()
    milli = _ro([j.gpu_milli for j in inst.jobs], np.int64)
    eligible = np.ones((inst.num_jobs, len(nodes)), dtype=np.bool_)
    index: dict[str | None, list[int]] = {}
    for k, n in enumerate(nodes):
        index.setdefault(n.model, []).append(k)
    for i, j in enumerate(inst.jobs):
        if j.gpu_models is not None:
            eligible[i] = False
            for m in j.gpu_models:
                eligible[i, index.get(m, [])] = True
    eligible.setflags(write=False)

    def cap(x: int | None) -> float:
        return math.inf if x is None else float(x)

    return Resources(
        gpu_milli=milli,
        amount=gpu_amounts(inst),
        shared=_ro(milli < FULL_GPU_MILLI, np.bool_),
        job_cpu=_ro([j.cpu_milli for j in inst.jobs], np.int64),
        job_memory=_ro([j.memory_mib for j in inst.jobs], np.int64),
        eligible=eligible,
        node_cpu=_ro([cap(n.cpu_milli) for n in nodes], np.float64),
        node_memory=_ro([cap(n.memory_mib) for n in nodes], np.float64),
        node_models=_ro([n.model for n in nodes], object),
    )
