"""The ``openb-shares`` family: generated jobs of the openb pods' real shapes, with a stated share mix.

Of the openb trace's 7,064 pods with GPUs, 3,078 (43.6%) ask a share of one
GPU. The family draws a pool of real openb nodes (model, CPU, memory) and jobs
of real pod shapes, a share ``shared`` of them shared; durations and releases
are drawn, since the pods' lifetimes (days) do not fit a one-day horizon.
"""

from __future__ import annotations

import csv
import math
from functools import cache
from importlib import resources as files

import numpy as np

from ..model import Instance, Job, Node, Service
from ..nodes import OPENB_NODE_FILE, openb_node_mix
from ..resources import FULL_GPU_MILLI, has_placement
from .generators import daily_curve

__all__ = ["OPENB_POD_FILE", "OPENB_SHARED", "openb_pod_shapes", "openb_shares"]

OPENB_POD_FILE = "data/openb/openb_pod_list_default.csv"
"""The openb pods shipped with the package."""

OPENB_SHARED = 0.436
"""Share of the openb pods with GPUs that ask a share of one GPU: 3,078 of 7,064."""

QOS_PRIORITY = {"LS": 4.0, "Guaranteed": 3.0, "Burstable": 2.0, "BE": 1.0}
"""Priorities by ``qos``, as the openb import gives them (section 9)."""

HOURS = (1, 8)
"""A job's duration in hours, drawn uniformly (whole hours, inclusive)."""

RELEASE_FRACTION = 0.6
"""Jobs are released over the first 60% of the horizon."""


@cache
def openb_pod_shapes() -> tuple[tuple[int, int, int, int, float], ...]:
    """``(num_gpu, gpu_milli, cpu_milli, memory_mib, priority)`` of each openb pod with GPUs."""
    text = files.files("instances").joinpath(OPENB_POD_FILE).read_text()
    out = []
    for row in csv.DictReader(text.splitlines()):
        g = int(row["num_gpu"])
        if g >= 1:
            out.append((g, int(row["gpu_milli"]), int(row["cpu_milli"]), int(row["memory_mib"]),
                        QOS_PRIORITY.get(row["qos"], 1.0)))
    return tuple(out)


@cache
def _openb_nodes() -> dict[int, tuple[tuple[str, int, int], ...]]:
    """The openb nodes by GPUs: ``(model, cpu_milli, memory_mib)`` of each, in file order."""
    text = files.files("instances").joinpath(OPENB_NODE_FILE).read_text()
    by: dict[int, list[tuple[str, int, int]]] = {}
    for row in csv.DictReader(text.splitlines()):
        by.setdefault(int(row["gpu"]), []).append(
            (row["model"], int(row["cpu_milli"]), int(row["memory_mib"]))
        )
    return {g: tuple(v) for g, v in by.items()}


def _check_fraction(name: str, x: object) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not (
        math.isfinite(x) and 0 <= x <= 1
    ):
        raise ValueError(f"{name}: must be a number in [0, 1], got {x!r}")
    return float(x)


def openb_shares(
    rng: np.random.Generator, *, seed: int = 0, num_gpus: int = 16, horizon: int = 24,
    num_jobs: int | None = None, shared: float = OPENB_SHARED,
    inference_share: float = 0.3, contention: float = 1.5,
) -> Instance:
    """16 GPUs of the openb node mix, each node a real openb node (GPU model, CPU, memory),
    24 hourly slots, one daily service peaking at 30% of the pool, and jobs of real openb pod
    shapes (GPUs, gpu_milli, CPU, memory, qos priority), 43.6% of them shared (shared=).

    Nodes: :func:`instances.openb_node_mix` (its order from ``seed``), each
    node drawn among the openb nodes of its size. Jobs: each is shared with
    probability ``shared``, its shape drawn uniformly among the openb pods of
    its kind (shared: one GPU and ``gpu_milli`` below 1000; else whole GPUs)
    that have a valid placement on the pool; ``1..8`` hours, released over
    the first 60% of the horizon, ending inside it. Unless ``num_jobs`` is
    given, there are about ``contention`` times as many expected GPU-slots
    of work (``a_j p_j``) as inference leaves free."""
    sh = _check_fraction("shared", shared)
    infer = _check_fraction("inference_share", inference_share)
    if isinstance(contention, bool) or not isinstance(contention, (int, float)) or not (
        math.isfinite(contention) and contention > 0
    ):
        raise ValueError(f"contention: must be a number > 0, got {contention!r}")
    if isinstance(horizon, bool) or not isinstance(horizon, int) or horizon < HOURS[0]:
        raise ValueError(f"horizon: must be an integer >= {HOURS[0]}, got {horizon!r}")
    sizes = openb_node_mix(num_gpus, seed)
    real = _openb_nodes()
    nodes = []
    for k, g in enumerate(sizes):
        model, cpu, mem = real[g][int(rng.integers(len(real[g])))]
        nodes.append(Node(f"node-{k}", g, model, cpu, mem))
    args = ([n.gpus for n in nodes], [n.model for n in nodes], [n.cpu_milli for n in nodes],
            [n.memory_mib for n in nodes])
    pods = [p for p in openb_pod_shapes() if has_placement(*args, p[0], None, p[2], p[3])]
    groups = ([p for p in pods if p[1] < FULL_GPU_MILLI], [p for p in pods if p[1] == FULL_GPU_MILLI])
    for name, group, want in (("shared", groups[0], sh > 0), ("whole-GPU", groups[1], sh < 1)):
        if want and not group:
            raise ValueError(f"num_gpus: no openb {name} pod fits a pool of {num_gpus} GPUs")
    peak = math.ceil(infer * num_gpus)
    demand = daily_curve(horizon, 1.0, math.ceil(0.35 * peak), peak) if peak else np.zeros(horizon)
    if num_jobs is None:
        amount = (sh * np.mean([p[1] for p in groups[0]]) / FULL_GPU_MILLI if sh else 0.0) + (
            (1 - sh) * np.mean([p[0] for p in groups[1]]) if sh < 1 else 0.0)
        hours = min(0.5 * sum(HOURS), horizon)
        free = num_gpus * horizon - float(demand.sum())
        num_jobs = max(1, round(contention * free / (amount * hours)))
    jobs = []
    for i in range(num_jobs):
        group = groups[0] if rng.random() < sh else groups[1]
        g, milli, cpu, mem, prio = group[int(rng.integers(len(group)))]
        p = int(rng.integers(HOURS[0], min(HOURS[1], horizon) + 1))
        r = int(rng.integers(0, max(1, min(math.ceil(RELEASE_FRACTION * horizon), horizon - p + 1))))
        jobs.append((r, i, Job(f"pod-{i}", g, p, prio, "other", r, gpu_milli=milli,
                               cpu_milli=cpu, memory_mib=mem)))
    jobs.sort(key=lambda x: (x[0], x[1]))
    svc = Service("chat", 3.0, tuple(int(d) for d in demand))
    return Instance("openb-shares", num_gpus, horizon, (svc,), tuple(j for _, _, j in jobs),
                    nodes=tuple(nodes), meta={"shared": sh, "node_gpus": "openb"})
