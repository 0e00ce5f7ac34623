"""The whole openb cluster as one instance: every GPU node, the trace's 35 days (docs/traces.md).

:func:`openb_cluster` imports the shipped pods over days 115 to 149 of the
trace (:data:`OPENB_TRACE_DAYS`) onto the shipped node list in full (1,213
GPU nodes, 6,212 GPUs), in 15-minute slots. Every pod keeps its real
lifetime; the rules and the accounting are section 9's, unchanged
(:func:`instances.traces.from_trace` does the import).
"""

from __future__ import annotations

import os
from typing import Any

from ..model import Instance

__all__ = ["OPENB_CLUSTER_SLOT_MINUTES", "OPENB_TRACE_DAYS", "openb_cluster"]

OPENB_TRACE_DAYS: tuple[int, ...] = tuple(range(115, 150))
"""Days of the openb trace that hold its pods (day ``d`` is trace seconds ``[86400 d,
86400 (d + 1))``): days 115 to 149; the days before hold a few pods each, and the
trace ends 8.3 hours into day 149."""

OPENB_CLUSTER_SLOT_MINUTES = 15.0
"""Slot length of the whole-cluster instance (and of the ``openb-day`` family)."""

DAY_SECONDS = 86400


def openb_cluster(
    resources: str = "gpus", *, slot_minutes: float = OPENB_CLUSTER_SLOT_MINUTES,
    service: str | None = None, pods: str | os.PathLike[str] = "openb:default",
    nodes: str | os.PathLike[str] = "openb:nodes", progress: bool | None = None,
) -> Instance:
    """The full openb cluster in one instance: all its GPU nodes over the trace's 35 days.

    Parameters
    ----------
    resources
        ``"gpus"`` (model version 2: a share of a GPU takes a whole one) or ``"full"``
        (version 3: shares, GPU models, CPU and memory of pods and nodes).
    slot_minutes
        Slot length (default 15: 3,360 slots).
    service
        ``SERIES:SHARE[:PRIORITY]``, an inference curve as in :func:`from_trace`
        (default none: the cluster's own pods only).
    pods, nodes
        The pod and node CSVs (default the shipped ones).
    progress
        As in :func:`from_trace`.

    Returns
    -------
    Instance
        Named ``openb-cluster`` (``openb-cluster-full`` with ``resources="full"``), the
        import's accounting in ``meta["import"]`` and the days in ``meta["days"]``.

    Raises
    ------
    ValueError
        For a bad option (named as :func:`from_trace` names it).
    """
    from . import from_trace

    first, last = OPENB_TRACE_DAYS[0], OPENB_TRACE_DAYS[-1]
    inst = from_trace(
        "openb", pods, start=DAY_SECONDS * first, hours=24.0 * len(OPENB_TRACE_DAYS),
        slot_minutes=slot_minutes, nodes=nodes, service=service, resources=resources,
        progress=progress,
    )
    meta: dict[str, Any] = {"days": [first, last], **inst.meta}
    name = "openb-cluster" if resources == "gpus" else f"openb-cluster-{resources}"
    return inst.replace(name=name, meta=meta)
