"""Trace import: real cluster logs as instances (the specification (docs/model.md)).

:func:`from_trace` reads a trace file in one of :data:`FORMATS` and applies
the same rules to every format, so two tools importing the same file agree:
the window, the slot grid, each job's release, duration and GPUs, the skip
reasons counted in ``meta["import"]``. Files are streamed, never loaded
whole. The openb pod and node lists ship with the package
(:func:`shipped`, or the path ``"openb:default"``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from ..model import Instance
from ._core import REASONS, RESOURCES, Options
from .nodes import placeable, read_node_resources, read_nodes, select_nodes

__all__ = [
    "FORMATS",
    "REASONS",
    "RESOURCES",
    "from_trace",
    "placeable",
    "read_node_resources",
    "read_nodes",
    "select_nodes",
    "shipped",
]

FORMATS: dict[str, str] = {
    "swf": "Standard Workload Format 2.2 (Parallel Workloads Archive)",
    "openb": "Alibaba cluster-trace-gpu-v2023 pod CSV (openb)",
    "philly": "Microsoft Philly cluster_job_log (JSON)",
    "helios": "HeliosData cluster_log.csv",
    "pai": "Alibaba cluster-trace-gpu-v2020 pai_job_table with pai_task_table",
}
"""Format name -> what it reads."""

_SHIPPED = {
    "openb:default": "openb_pod_list_default.csv",
    "openb:nodes": "openb_node_list_gpu_node.csv",
}


def shipped(name: str = "openb:default") -> Path:
    """Path of a shipped trace file: ``"openb:default"`` (the 8,152 pods of
    cluster-trace-gpu-v2023) or ``"openb:nodes"`` (its 1,213 GPU nodes).

    The data are Alibaba's (cluster-trace-gpu-v2023); see ``instances/data/openb/README.md``
    for the attribution and terms.
    """
    if name not in _SHIPPED:
        raise ValueError(f"shipped: unknown name {name!r}; known: {', '.join(_SHIPPED)}")
    return Path(str(resources.files("instances").joinpath(f"data/openb/{_SHIPPED[name]}")))


def _resolve(path: str | os.PathLike[str]) -> str:
    p = os.fspath(path)
    if p in _SHIPPED:
        return str(shipped(p))
    return p


def from_trace(
    format: str,
    path: str | os.PathLike[str],
    *,
    start: float | str | None = None,
    hours: float = 24.0,
    slot_minutes: float = 60.0,
    num_gpus: int | None = None,
    nodes: str | os.PathLike[str] | Sequence[tuple[str, int]] | None = None,
    priorities: Mapping[str, float] | None = None,
    service: str | None = None,
    max_jobs: int | None = None,
    skip_bad: bool = False,
    procs_per_gpu: int = 1,
    tasks: str | os.PathLike[str] | None = None,
    progress: bool | None = None,
    resources: str = "gpus",
) -> Instance:
    """Import one window of a trace file as an instance.

    Parameters
    ----------
    format
        A key of :data:`FORMATS`.
    path
        The trace file (``"openb:default"`` for the shipped openb pods; for
        ``pai`` the job table or a folder holding both tables).
    start
        Window start in the trace's seconds (a date-time text is accepted for
        philly and helios); default the earliest submit time in the file.
    hours
        Window length; the horizon is ``ceil(3600 * hours / L)`` slots.
    slot_minutes
        Slot length; ``L = 60 * slot_minutes`` seconds.
    num_gpus
        Pool size. With ``nodes``, the part of the node list taken
        (:func:`select_nodes`); default all of it. Without nodes, default the
        largest GPU count among the window's jobs.
    nodes
        A node list: an openb node CSV (``"openb:nodes"`` for the shipped one)
        or ``(name, gpus)`` pairs. A job with no valid placement on it is
        skipped as ``too_large``.
    priorities
        Class value -> priority, for the format's class field (swf queue
        number, openb qos, philly and helios vc, pai user); classes not listed
        take 1.0. Default: openb LS 4, Guaranteed 3, Burstable 2, BE 1; every
        other format 1.0 for all jobs.
    service
        ``SERIES:SHARE[:PRIORITY]``: an inference curve from a shipped series
        (``servegen``) whose peak asks ``ceil(SHARE * num_gpus)`` GPUs.
    max_jobs
        Keep at most this many jobs, the first in submit order.
    skip_bad
        Skip malformed records and count them (``meta["import"]["skipped"]["bad"]``)
        instead of raising.
    procs_per_gpu
        swf only: processors per GPU.
    tasks
        pai only: the task table (default ``pai_task_table.csv`` beside the job table).
    progress
        Show a progress bar: ``None`` on files of 64 MiB or more when standard
        error is a terminal.
    resources
        ``"gpus"`` (default): GPU counts only, section 9 as it stands.
        ``"full"`` (openb, with ``nodes``; model version 3): the pods keep
        ``gpu_milli``, ``gpu_spec`` as ``gpu_models``, ``cpu_milli`` and
        ``memory_mib``, and the nodes of a node CSV their ``model``,
        ``cpu_milli`` and ``memory_mib``; a pod with no valid placement on
        the empty cluster (GPUs, model, CPU, memory) is skipped as
        ``too_large``.

    Returns
    -------
    Instance
        Jobs in submit order (ties by file order), named by the trace's ids,
        with ``meta["import"]`` holding the options, the records read, the
        jobs kept and the skipped records by reason (:data:`REASONS` and ``bad``).

    Raises
    ------
    ValueError
        For an unknown format, a bad option, a malformed record (naming the
        file, the line and the field), or a file with no usable job.
    """
    if format not in FORMATS:
        raise ValueError(f"format: unknown trace format {format!r}; known: {', '.join(FORMATS)}")
    p = _resolve(path)
    if start is not None and isinstance(start, str):
        from ._io import parse_time

        try:
            start = parse_time(start)
        except ValueError as e:
            raise ValueError(f"start: {e}") from None
    if resources == "full" and format != "openb":
        raise ValueError(f"resources: 'full' is for the openb format, got format {format!r}")
    node_list: tuple[tuple[str, int], ...] | None = None
    source: str | None = None
    node_res = None
    if nodes is not None:
        if isinstance(nodes, (str, os.PathLike)):
            source = _resolve(nodes)
            node_list = tuple(read_nodes(source))
            if resources == "full":
                node_res = read_node_resources(source)
        else:
            node_list = tuple((str(n), g) for n, g in nodes)
    opts = Options(
        start=start, hours=hours, slot_minutes=slot_minutes, num_gpus=num_gpus,
        nodes=node_list, nodes_source=source, priorities=priorities, service=service,
        max_jobs=max_jobs, skip_bad=skip_bad, progress=progress, resources=resources,
        node_resources=node_res,
    )
    reader: Any
    if format == "swf":
        from .swf import from_swf

        return from_swf(p, opts, procs_per_gpu)  # type: ignore[no-any-return]
    if format == "pai":
        from .pai import from_pai

        return from_pai(p, opts, None if tasks is None else os.fspath(tasks))  # type: ignore[no-any-return]
    if format == "openb":
        from .openb import from_openb as reader
    elif format == "philly":
        from .philly import from_philly as reader
    else:
        from .helios import from_helios as reader
    return reader(p, opts)  # type: ignore[no-any-return]
