"""The cells of a sweep (one method on one instance) and the tidy row each one gives.

A cell's key hashes the instance's content, the method, its parameters and its
time limit, so the same work has the same key in every process and every run
(what resume relies on). :func:`run_cell` never raises for a failing method:
the failure becomes a row with status ``error``.
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
from dataclasses import dataclass, fields
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import instances
from instances import Instance, Metrics
from instances.families import node_shape_label

from ..dispatch import solve
from .config import BenchConfig, MethodSpec
from .scenarios import SimSpec

__all__ = [
    "METRIC_COLUMNS",
    "METRIC_FIELDS",
    "VERSIONED_PACKAGES",
    "Cell",
    "error_row",
    "instance_hash",
    "make_cells",
    "run_cell",
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


def make_cells(config: BenchConfig) -> list[Cell]:
    """Generate every instance of the sweep and pair it with every method.

    Raises
    ------
    ValueError
        For a family parameter the generator refuses (named
        ``family_params.<family>.<key>``) or a bad instance file.
    """
    insts: list[tuple[Instance, str, int]] = []
    for fam in config.families:
        fp = dict(config.family_params.get(fam, {}))
        for seed in config.seeds:
            try:
                inst = instances.generate(fam, seed=seed, **fp)
            except ValueError as e:
                if not fp:
                    raise
                raise ValueError(f"family_params.{fam}.{e}") from None
            insts.append((inst, fam, seed))
    for path in config.instance_files:
        inst = instances.load(path)
        fam = str(inst.meta.get("family", "file"))
        seed = int(inst.meta.get("seed", -1))
        insts.append((inst, fam, seed))
    if config.scenarios is not None:
        from .simulation import make_sim_cells

        return make_sim_cells(config, insts)
    cells: list[Cell] = []
    for inst, fam, seed in insts:
        h = instance_hash(inst)
        cells.extend(Cell(inst, fam, seed, spec, h) for spec in config.methods)
    return cells


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


def _base_row(cell: Cell) -> dict[str, Any]:
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


def _finish_row(row: dict[str, Any], started: float) -> dict[str, Any]:
    row["wall_s"] = time.perf_counter() - started
    row["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    row["host"] = platform.node()
    row.update(versions())
    return {k: _clean(v) for k, v in row.items()}


def error_row(cell: Cell, message: str, runtime_s: float = 0.0) -> dict[str, Any]:
    """The row of a failed cell: status ``error``, no value, ``message`` says why."""
    row = _base_row(cell)
    row.update(
        status="error", value=None, upper_bound=None, gap=None, lp_bound=None, nodes=None,
        runtime_s=runtime_s, reservation=None, message=message,
    )
    for k in METRIC_COLUMNS:
        row[k] = None
    return _finish_row(row, time.perf_counter() - runtime_s)


def crashed_row(cell: Cell, e: BaseException) -> dict[str, Any]:
    """The row of a cell whose worker died before returning."""
    return error_row(cell, f"worker failed: {type(e).__name__}: {e}")


def run_cell(cell: Cell) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Run one cell; never raises for a failing method.

    Returns
    -------
    row, schedule
        The tidy row (JSON-safe) and the schedule as a ``gpusched-schedule/1``
        object (``None`` when the method failed). A method that raises gives a
        row with status ``error`` and the exception in ``message``.
    """
    if cell.sim is not None:
        from .simulation import run_sim_cell

        return run_sim_cell(cell)
    spec = cell.spec
    started = time.perf_counter()
    try:
        res = solve(cell.instance, spec.method, time_limit=spec.time_limit, **dict(spec.params))
    except Exception as e:  # a failed cell is recorded, the sweep goes on
        logger.warning("cell %s (%s on %s) failed: %s", cell.key, spec.label, cell.instance.name, e)
        msg = traceback.format_exception_only(type(e), e)[-1].strip()
        return error_row(cell, msg, time.perf_counter() - started), None
    r = res.to_row()
    row = _base_row(cell)
    row.update(
        status=r["status"], value=r["value"], upper_bound=r["upper_bound"],
        gap=r["gap"], lp_bound=r["lp_bound"], nodes=r["nodes"], runtime_s=r["runtime_s"],
        reservation=r["reservation"], message=r["message"],
    )
    for k in METRIC_COLUMNS:
        row[k] = r.get(k)
    schedule = res.schedule.to_dict() if res.metrics is not None else None
    return _finish_row(row, started), schedule
