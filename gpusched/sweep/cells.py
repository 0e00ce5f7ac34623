"""The cells of a sweep (one method on one instance) and the columns of the row each gives.

A cell's key hashes the instance's content, the method, its parameters and its
time limit, so the same work has the same key in every process and every run
(what resume relies on).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import platform
import re
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from instances import Instance, Metrics
from instances.families import node_shape_label
from instances.library import content_hash as instance_hash

from .config import MethodSpec
from .scenarios import SimSpec

__all__ = [
    "METRIC_COLUMNS",
    "METRIC_FIELDS",
    "RESULT_COLUMNS",
    "VERSIONED_PACKAGES",
    "Cell",
    "base_row",
    "crashed_row",
    "error_row",
    "failed_row",
    "finish_row",
    "instance_hash",
    "result_row",
    "safe_name",
    "versions",
]

logger = logging.getLogger(__name__)

VERSIONED_PACKAGES: tuple[str, ...] = ("gpusched", "numpy", "highspy", "pulp", "ortools")
"""Packages whose versions every row records."""

METRIC_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Metrics) if f.name != "reservation")
"""The figures of :class:`instances.Metrics` (``value`` first): the rows' metric columns."""

METRIC_COLUMNS: tuple[str, ...] = tuple(k for k in METRIC_FIELDS if k != "value")
"""The columns a row takes from :class:`instances.Metrics` besides ``value`` (which,
with ``reservation``, is a result column of its own)."""


@dataclass(frozen=True)
class Cell:
    """One unit of work: one method on one instance.

    ``family`` is ``"file"`` (and ``seed`` -1) for an instance file;
    ``content_hash`` is :func:`instance_hash` of the instance; with ``sim`` set the
    cell replays the method against a day (:mod:`.simulation`) instead.
    """

    instance: Instance
    family: str
    seed: int
    spec: MethodSpec
    content_hash: str
    sim: SimSpec | None = None

    @property
    def key(self) -> str:
        """A stable identity: instance content, method, parameters, time limit."""
        ident = {
            "instance": self.content_hash,
            "label": self.spec.label,
            "method": self.spec.method,
            "params": dict(self.spec.params),
            "time_limit": self.spec.time_limit,
        }
        if self.sim is not None:
            ident["sim"] = self.sim.ident()
        return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def instance_id(self) -> str:
        """Instance name and the start of its content hash."""
        return f"{self.instance.name}-{self.content_hash[:12]}"

    @property
    def stem(self) -> str:
        """File name (without ``.json``) of the cell's row and schedule."""
        return f"{safe_name(self.instance_id)}--{safe_name(self.spec.label)}--{self.key}"


def safe_name(text: str) -> str:
    """``text`` as a file name: runs of other characters than ``[A-Za-z0-9._-]`` become ``_``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)[:80]


@cache
def versions() -> dict[str, str]:
    """Installed versions of :data:`VERSIONED_PACKAGES` (``""`` when absent) and Python."""
    out = {}
    for pkg in VERSIONED_PACKAGES:
        try:
            out[f"{pkg}_version"] = version(pkg)
        except PackageNotFoundError:
            out[f"{pkg}_version"] = ""
    out["python_version"] = platform.python_version()
    return out


def _clean(v: Any) -> Any:
    """JSON-safe scalar: NaN and infinity become ``None``, numpy scalars Python ones."""
    if hasattr(v, "item") and not isinstance(v, (list, dict, str)):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def base_row(cell: Cell) -> dict[str, Any]:
    """The columns every row has: the cell, its instance and its method."""
    spec, inst = cell.spec, cell.instance
    return {
        "cell": cell.key,
        "instance": inst.name,
        "instance_id": cell.instance_id,
        "instance_hash": cell.content_hash,
        "family": cell.family,
        "seed": cell.seed,
        "num_gpus": inst.num_gpus,
        "horizon": inst.horizon,
        "num_jobs": inst.num_jobs,
        "node_gpus": node_shape_label(inst),
        "method": spec.label,
        "solver_method": spec.method,
        "params": json.dumps(dict(spec.params), sort_keys=True),
        "time_limit": spec.time_limit,
    }


def finish_row(row: dict[str, Any], started: float) -> dict[str, Any]:
    """``row`` with the wall time since ``started``, the host and the versions, JSON-safe."""
    row["wall_s"] = time.perf_counter() - started
    row["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    row["host"] = platform.node()
    row.update(versions())
    return {k: _clean(v) for k, v in row.items()}


RESULT_COLUMNS: tuple[str, ...] = (
    "status", "objective", "value", "upper_bound", "bound", "gap", "lp_bound", "nodes",
    "runtime_s", "reservation", "message",
)
"""The columns of a row that say how its method ended (``None`` where a method has none)."""


def result_row(cell: Cell, metrics: Mapping[str, Any] | None = None, **result: Any) -> dict[str, Any]:
    """:func:`base_row` with the :data:`RESULT_COLUMNS` of ``result`` and the
    :data:`METRIC_COLUMNS` of ``metrics`` (``None`` where either has none)."""
    row = base_row(cell)
    row.update({k: result.get(k) for k in RESULT_COLUMNS})
    row.update({k: None if metrics is None else metrics.get(k) for k in METRIC_COLUMNS})
    return row


def error_row(cell: Cell, message: str, runtime_s: float = 0.0) -> dict[str, Any]:
    """The row of a failed cell: status ``error``, no value, ``message`` says why."""
    row = result_row(cell, status="error", runtime_s=runtime_s, message=message)
    return finish_row(row, time.perf_counter() - runtime_s)


def failed_row(cell: Cell, e: Exception, started: float) -> dict[str, Any]:
    """The row of a cell whose method raised ``e`` (logged as a warning)."""
    what = f"{cell.spec.label} on {cell.instance.name}"
    logger.warning("cell %s (%s%s) failed: %s", cell.key, what,
                   "" if cell.sim is None else f", {cell.sim.label}", e)
    msg = traceback.format_exception_only(type(e), e)[-1].strip()
    return error_row(cell, msg, time.perf_counter() - started)


def crashed_row(cell: Cell, e: BaseException) -> dict[str, Any]:
    """The row of a cell whose worker died before returning."""
    return error_row(cell, f"worker failed: {type(e).__name__}: {e}")
