"""Trace import: real cluster logs as instances (the rules are in docs/traces.md).

:func:`from_trace` applies the same rules to every format of :data:`FORMATS`,
so two tools importing one file agree; files are streamed. The openb pod and
node lists ship with the package (:func:`shipped`, or ``"openb:default"``).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from ..model import Instance
from ._core import REASONS, RESOURCES, Options
from .cluster import OPENB_CLUSTER_SLOT_MINUTES, OPENB_TRACE_DAYS, openb_cluster
from .nodes import placeable, read_node_resources, read_nodes, select_nodes

__all__ = [
    "CLUSTER_FORMATS",
    "FORMATS",
    "ITP_CLUSTERS",
    "OPENB_CLUSTER_SLOT_MINUTES",
    "OPENB_TRACE_DAYS",
    "REASONS",
    "RESOURCES",
    "from_trace",
    "openb_cluster",
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
    "itp": "Microsoft ITP cluster CSV (the ElasticFlow traces)",
    "philly-csv": "Microsoft Philly as the Pollux and Sia artifacts ship it (CSV)",
}
"""Format name -> what it reads."""

_READERS: dict[str, tuple[str, str]] = {
    "swf": (".swf", "from_swf"),
    "openb": (".openb", "from_openb"),
    "philly": (".philly", "from_philly"),
    "helios": (".helios", "from_helios"),
    "pai": (".pai", "from_pai"),
    "itp": (".arrivals", "from_itp"),
    "philly-csv": (".arrivals", "from_philly_csv"),
}
"""Format name -> (module, function) of its reader ``(path, options, **extra) -> Instance``,
imported on first use."""

CLUSTER_FORMATS: tuple[str, ...] = ("philly-csv",)
"""Formats whose rows name a virtual cluster that ``cluster=`` selects."""

ITP_CLUSTERS: tuple[str, ...] = tuple(f"cluster{k:02d}" for k in range(1, 11))
"""The shipped ITP clusters (``"itp:cluster04"``)."""

_SHIPPED = {
    "openb:default": "openb/openb_pod_list_default.csv",
    "openb:nodes": "openb/openb_node_list_gpu_node.csv",
    **{f"itp:{c}": f"arrivals/itp/{c}.csv.gz" for c in ITP_CLUSTERS},
    "philly-csv:default": "arrivals/philly/philly.csv.gz",
}


def shipped(name: str = "openb:default") -> Path:
    """Path of a shipped trace file: ``"openb:default"`` (the 8,152 pods of
    cluster-trace-gpu-v2023), ``"openb:nodes"`` (its 1,213 GPU nodes),
    ``"itp:cluster01"`` to ``"itp:cluster10"`` (Microsoft ITP, gzip) or
    ``"philly-csv:default"`` (Microsoft Philly as Pollux ships it, gzip); the
    attribution and terms are in ``instances/data/openb/README.md`` and
    ``instances/data/arrivals/README.md``.
    """
    if name not in _SHIPPED:
        raise ValueError(f"shipped: unknown name {name!r}; known: {', '.join(_SHIPPED)}")
    return Path(str(resources.files("instances").joinpath(f"data/{_SHIPPED[name]}")))


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
    drain: float = 0.0,
    cluster: str | None = None,
    load: float = 1.0,
) -> Instance:
    """Import one window of a trace file as an instance (the rules: docs/traces.md).

    Parameters
    ----------
    format
        A key of :data:`FORMATS`.
    path
        The trace file (``"openb:default"``: the shipped pods; ``pai``: the job
        table or a folder holding both tables).
    start
        Window start in the trace's seconds (philly, philly-csv and helios take a
        date-time too, read as UTC); default the earliest submit (with ``cluster``,
        of that cluster's rows).
    hours, slot_minutes
        Submit window and slot length.
    drain
        Hours added to the horizon after the submit window, so that the jobs submitted
        in it can end: ``T = ceil(3600 (hours + drain) / (60 slot_minutes))``.
    num_gpus
        Pool size; with ``nodes``, the part of the node list taken
        (:func:`select_nodes`). Default: all the nodes, else the largest job.
    nodes
        An openb node CSV (``"openb:nodes"``) or ``(name, gpus)`` pairs.
    priorities
        Class value -> priority (the format's class field); default openb's qos
        mapping, 1.0 for every other format.
    service
        ``SERIES:SHARE[:PRIORITY]``: an inference curve from a shipped series
        whose peak asks ``ceil(SHARE * num_gpus)`` GPUs.
    max_jobs, skip_bad
        Keep the first ``max_jobs`` in submit order; skip and count malformed
        records instead of raising.
    procs_per_gpu, tasks
        swf: processors per GPU; pai: the task table (default beside the job table).
    progress
        A progress bar (``None``: on files of 64 MiB or more, on a terminal).
    resources
        ``"gpus"`` (GPU counts only) or ``"full"`` (openb with nodes, model
        version 3: shares, GPU models, CPU and memory of pods and nodes).
    cluster
        philly-csv: keep the rows of this virtual cluster, the others skipped and
        counted as ``other_cluster`` (default: every cluster).
    load
        Arrival-rate factor: a submit time's distance from the window's start is
        divided by it (2 doubles the rate: the window takes ``2 * hours`` of the trace).

    Returns
    -------
    Instance
        Jobs in submit order named by the trace's ids, ``meta["import"]`` holding
        the options, the records read, the jobs kept and the skips by reason.

    Raises
    ------
    ValueError
        For an unknown format, a bad option, a malformed record (naming the file,
        the line and the field), or a file with no usable job.
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
    if cluster is not None and format not in CLUSTER_FORMATS:
        raise ValueError(
            f"cluster: a virtual-cluster filter is for the {', '.join(CLUSTER_FORMATS)} "
            f"format, got format {format!r}"
        )
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
        node_resources=node_res, drain=drain, load=load, cluster=cluster,
    )
    extra: tuple[Any, ...] = ()
    if format == "swf":
        extra = (procs_per_gpu,)
    elif format == "pai":
        extra = (None if tasks is None else os.fspath(tasks),)
    module, function = _READERS[format]
    reader = getattr(importlib.import_module(module, __name__), function)
    inst: Instance = reader(p, opts, *extra)
    return inst
