"""Import with ``resources="full"`` (model version 3): the pods' fields and their placement test."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..resources import has_placement

__all__ = ["fits_resources", "job_fields"]

NodeResources = Mapping[str, tuple[str | None, int | None, int | None]]


def fits_resources(
    selected: Sequence[tuple[str, int]], node_resources: NodeResources | None,
    gpus: np.ndarray, res: np.ndarray, check: np.ndarray,
) -> np.ndarray:
    """Per record: a valid placement on the empty cluster of ``selected`` (GPUs, model, CPU, memory).

    Only the records where ``check`` is true are tested (the others pass:
    an earlier rule already skips them); each distinct shape is tested once
    by :func:`instances.resources.has_placement`, the rule the instance
    itself applies.
    """
    info = node_resources or {}
    sizes = [g for _, g in selected]
    models = [info.get(n, (None, None, None))[0] for n, _ in selected]
    cpu = [info.get(n, (None, None, None))[1] for n, _ in selected]
    mem = [info.get(n, (None, None, None))[2] for n, _ in selected]
    out = np.ones(len(gpus), dtype=bool)
    seen: dict[tuple[Any, ...], bool] = {}
    for i in np.flatnonzero(check).tolist():
        _, gpu_models, cpu_milli, memory_mib = res[i]
        key = (int(gpus[i]), gpu_models, cpu_milli, memory_mib)
        if key not in seen:
            seen[key] = has_placement(sizes, models, cpu, mem, *key)
        out[i] = seen[key]
    return out


def job_fields(res: np.ndarray) -> list[dict[str, Any]]:
    """The version 3 keyword arguments of :class:`~instances.Job` for each record."""
    return [
        {"gpu_milli": m, "gpu_models": models, "cpu_milli": c, "memory_mib": mem}
        for m, models, c, mem in res.tolist()
    ]
