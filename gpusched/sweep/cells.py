"""The cells of a sweep (one method on one instance) and the columns of the row each gives.

A cell's key hashes the instance's content, the method, its parameters and its
time limit, so the same work has the same key in every process and every run
(what resume relies on). The rows share :func:`base_row` and
:func:`finish_row`; a failure becomes :func:`error_row` (making and running
the cells is :mod:`.work`).
"""

from __future__ import annotations

import hashlib
import json
import math
import platform
import re
import time
from dataclasses import dataclass, fields
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import instances
from instances import Instance, Metrics
from instances.families import node_shape_label

from .config import MethodSpec
from .scenarios import SimSpec

__all__ = [
    "METRIC_COLUMNS",
    "METRIC_FIELDS",
    "VERSIONED_PACKAGES",
    "Cell",
    "base_row",
    "crashed_row",
    "error_row",
    "finish_row",
    "instance_hash",
    "safe_name",
    "versions",
]

VERSIONED_PACKAGES: tuple[str, ...] = ("gpusched", "numpy", "highspy", "pulp", "ortools")
"""Packages whose versions every row records."""

METRIC_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Metrics) if f.name != "reservation")
"""The figures of :class:`instances.Metrics` (``value`` first): the rows' metric columns."""

METRIC_COLUMNS: tuple[str, ...] = tuple(k for k in METRIC_FIELDS if k != "value")
"""The columns a row takes from :class:`instances.Metrics` besides ``value`` (which,
with ``reservation``, is a result column of its own)."""


def instance_hash(inst: Instance) -> str:
    """SHA-256 of the instance file's bytes (:func:`instances.dumps`)."""
    return hashlib.sha256(instances.dumps(inst).encode()).hexdigest()


@dataclass(frozen=True)
class Cell:
    """One unit of work: one method on one instance.

    Attributes
    ----------
    instance
        The instance (sent to the worker).
    family, seed
        Where the instance came from (``family`` is ``"file"`` for an
        instance file; ``seed`` is ``-1`` then).
    spec
        The method, its label, parameters and time limit.
    content_hash
        :func:`instance_hash` of ``instance``.
    sim
        When set, the cell replays the method against a day's actual demand
        with a policy (:mod:`.simulation`) instead of running it offline.
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


def error_row(cell: Cell, message: str, runtime_s: float = 0.0) -> dict[str, Any]:
    """The row of a failed cell: status ``error``, no value, ``message`` says why."""
    row = base_row(cell)
    row.update(
        status="error", value=None, upper_bound=None, gap=None, lp_bound=None, nodes=None,
        runtime_s=runtime_s, reservation=None, message=message,
    )
    for k in METRIC_COLUMNS:
        row[k] = None
    return finish_row(row, time.perf_counter() - runtime_s)


def crashed_row(cell: Cell, e: BaseException) -> dict[str, Any]:
    """The row of a cell whose worker died before returning."""
    return error_row(cell, f"worker failed: {type(e).__name__}: {e}")
