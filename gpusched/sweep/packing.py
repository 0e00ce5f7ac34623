"""The packing sweep: (policy, seed) cells and bound cells, parallel, resumable, crash-safe.

A :class:`PackCell` is one policy on the openb instance of one seed (its curve
after every pod, binned to integer arrived percentages), the same policy on
the pods arrived by a few percentages placed in an offline order, or the
bound of one seed at those percentages. The instance is built from the default
pod list or another one (a file, or one of the paper's variants by name). The
results folder::

    DIR/cells/<stem>.json          one row per finished cell (written whole)
    DIR/placements/<stem>.json     a policy's placement (gpusched-placement/1)
    DIR/bounds/<stem>-<pct>.json   a bound's dual certificate and its best packing
    DIR/packings/<name>.json       each instance, once (gpusched-packing/1)

A cell whose row file exists is done and does not run again, so a run killed
at any point resumes where it stopped. The rows are written by this (the
parent) process as each cell ends; worker processes or a Dask cluster only
compute. A cell that raises gets a row with status ``error`` and runs again
next time.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from instances.io import atomic_write_text
from instances.packing import (
    INFLATION,
    OPENB_VARIANTS,
    Packing,
    dumps_packing,
    openb_packing,
    openb_pod_list,
    packing_curve,
)
from instances.traces import shipped

from .cells import safe_name, versions
from .store import cells_dir, read_cell_file

__all__ = ["BOUND", "LEVELS", "PackCell", "PackSummary", "arrived_prefix", "bound_with_starts",
           "load_pack_rows", "run_pack_cell", "run_pack_cells"]

logger = logging.getLogger(__name__)

BOUND = "bound"
"""The ``policy`` of a bound cell."""

LEVELS: tuple[int, ...] = (90, 100, 110, 120)
"""Arrived percentages where the bound and the offline orders are measured by default."""

START_ORDERS: tuple[str, ...] = ("arrival", "largest", "dominant")
"""The orders every policy's start placement for the bound is made in."""

ROW_VERSION = 1
"""Part of every key: bumped when a row changes meaning, so that old rows run again."""


@cache
def _file_hash(path: str | None, default: str) -> str:
    p = Path(path) if path is not None else shipped(default)
    return hashlib.sha256(p.read_bytes()).hexdigest()


@cache
def _pods_hash(pods: str | None) -> str:
    """The hash of a pod list's bytes (a file, or a shipped list by name)."""
    return hashlib.sha256(openb_pod_list(pods).read_bytes()).hexdigest()


def _rule_source_hash(policy: str) -> str | None:
    """The hash of the file a ``MODULE:NAME`` rule comes from (``None`` for any other name)."""
    if ":" not in policy or policy.startswith("random:"):
        return None
    from heuristics.registry import import_object

    try:
        import_object(policy, "placement")  # imported as the rule table imports it
    except ValueError:
        return None  # the cell itself says so when it runs
    path = getattr(sys.modules.get(policy.split(":", 1)[0]), "__file__", None)
    if not path or not Path(path).is_file():
        return None
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


@dataclass(frozen=True)
class PackCell:
    """One unit of work of the packing sweep.

    Attributes
    ----------
    policy
        A policy name, or :data:`BOUND`.
    seed
        The openb instance's seed.
    order
        ``arrival`` (the online run) or an offline order (measured at ``levels``).
    levels
        Arrived percentages (offline orders and bounds).
    pods
        An openb pod list: a file or a shipped list's name (``"gpushare40"``; ``None``:
        the default list).
    nodes
        An openb node CSV (``None``: the shipped one).
    inflation
        The instance's total GPU request over the capacity.
    time_limit
        Seconds of a bound per level.
    """

    policy: str
    seed: int
    order: str = "arrival"
    levels: tuple[int, ...] = ()
    pods: str | None = None
    nodes: str | None = None
    inflation: float = INFLATION
    time_limit: float = 60.0

    @property
    def key(self) -> str:
        """Stable identity: what runs and on which data."""
        ident = {"v": ROW_VERSION, "policy": self.policy, "seed": self.seed, "order": self.order,
                 "levels": list(self.levels), "pods": _pods_hash(self.pods),
                 "nodes": _file_hash(self.nodes, "openb:nodes"),
                 "inflation": self.inflation,
                 "time_limit": self.time_limit if self.policy == BOUND else None}
        if self.order != "arrival":
            ident["workload"] = "instance"  # FGD's target workload: the whole instance's
        source = _rule_source_hash(self.policy)
        if source is not None:  # a MODULE:NAME rule: edited, its cells run again
            ident["rule_source"] = source
        return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def stem(self) -> str:
        """File name (without ``.json``) of the cell's row and files (a shipped variant's
        name first)."""
        head = f"{self.pods}-" if self.pods in OPENB_VARIANTS else ""
        return f"{safe_name(f'{head}{self.policy}-{self.order}-s{self.seed}')}--{self.key}"

    def packing(self) -> Packing:
        """The cell's instance (rebuilt from its seed: deterministic)."""
        return openb_packing(self.seed, pods=self.pods, nodes=self.nodes, inflation=self.inflation)


def arrived_prefix(packing: Packing, pct: float) -> int:
    """Pods arrived by ``pct`` percent: the longest prefix whose GPU request is at most
    ``pct`` percent of the capacity."""
    req = np.cumsum(packing.arrays.pod_request)
    return int(np.searchsorted(req, pct / 100.0 * packing.capacity_milli, side="right"))


Files = dict[str, dict[str, Any]]


def run_pack_cell(cell: PackCell, with_packing: bool = False) -> tuple[dict[str, Any], Files]:
    """Run one cell; never raises. Returns its row and the files to store beside it
    (name suffix -> JSON object; with ``with_packing`` the instance's file too, so that
    workers, not the parent, build the instances)."""
    t0 = time.perf_counter()
    row: dict[str, Any] = {"cell": cell.key, "policy": cell.policy, "seed": cell.seed,
                           "order": cell.order, "levels": list(cell.levels),
                           "pods": cell.pods, "nodes": cell.nodes, "inflation": cell.inflation}
    try:
        packing = cell.packing()
        row["packing"] = packing.name
        if cell.policy == BOUND:
            files = _bound(cell, packing, row)
        elif cell.order == "arrival":
            files = _online(cell, packing, row)
        else:
            files = _offline(cell, packing, row)
        if with_packing:
            files["packing"] = {"name": packing.name, "text": dumps_packing(packing)}
        row["status"] = "ok"
    except Exception as e:  # a failed cell is recorded; the sweep goes on
        logger.warning("cell %s failed: %s", cell.stem, e)
        row.update(status="error", message=traceback.format_exception_only(type(e), e)[-1].strip())
        files = {}
    row["wall_s"] = time.perf_counter() - t0
    row.update(versions())
    return row, files


def _online(cell: PackCell, packing: Packing, row: dict[str, Any]) -> Files:
    from heuristics.packing import place

    run = place(packing, cell.policy, seed=cell.seed)
    curve = packing_curve(packing, run.placement)
    binned = curve.binned()
    prefixes = [arrived_prefix(packing, lv) for lv in LEVELS]
    row.update(
        runtime_s=run.runtime_s, allocated_milli=run.metrics.allocated_milli,
        failed=run.metrics.failed, capacity_milli=run.metrics.capacity_milli,
        curve={c: [float(x) for x in binned[c]] for c in binned.columns},
        at_levels={str(lv): {"pods": k, "allocated_milli": int(curve.allocated_milli[k]),
                             "arrived_milli": int(curve.arrived_milli[k])}
                   for lv, k in zip(LEVELS, prefixes)},
    )
    return {"placement": run.placement.to_dict()}


def _offline(cell: PackCell, packing: Packing, row: dict[str, Any]) -> Files:
    from heuristics.packing import place
    from instances.packing import target_workload

    out = {}
    workload = target_workload(packing)  # FGD's, as in the online run: the whole instance's
    for lv in cell.levels:
        k = arrived_prefix(packing, lv)
        run = place(packing.head(k), cell.policy, seed=cell.seed, order=cell.order,
                    workload=workload)
        out[str(lv)] = {"pods": k, "allocated_milli": run.metrics.allocated_milli,
                        "runtime_s": run.runtime_s}
    row.update(capacity_milli=packing.capacity_milli, at_levels=out)
    return {}


def bound_with_starts(packing: Packing, time_limit: float) -> Any:
    """:func:`milp.packing.packing_bound` seeded with every policy's placement in every
    order (what the policies found is where the LP starts); ``time_limit`` covers both."""
    from heuristics.packing import POLICIES, place
    from milp.packing import packing_bound

    t0 = time.perf_counter()
    starts = [place(packing, pol, order=order).placement for pol in POLICIES
              for order in START_ORDERS]
    left = time_limit - (time.perf_counter() - t0)
    return packing_bound(packing, time_limit=max(left, 0.1 * time_limit), starts=starts)


def _bound(cell: PackCell, packing: Packing, row: dict[str, Any]) -> Files:
    from instances.packing import check_packing_bound

    out, files = {}, {}
    for lv in cell.levels:
        k = arrived_prefix(packing, lv)
        head = packing.head(k)
        b = bound_with_starts(head, cell.time_limit)
        checked = check_packing_bound(head, b.certificate)
        out[str(lv)] = {"pods": k, "bound_milli": b.bound_milli, "best_milli": b.best_milli,
                        "checked_bound_milli": checked, "status": b.status,
                        "runtime_s": b.runtime_s, "columns": b.columns,
                        "iterations": b.iterations}
        files[f"{lv}"] = {"certificate": b.certificate.to_dict(),
                          "best": b.best_placement.to_dict() if b.best_placement else None}
    row.update(capacity_milli=packing.capacity_milli, at_levels=out)
    return files


# ---------------------------------------------------------------- the store
def load_pack_rows(out: str | os.PathLike[str], *, errors: bool = False) -> list[dict[str, Any]]:
    """The stored rows of a results folder (those with status ``ok`` unless ``errors``)."""
    d = cells_dir(Path(out))
    rows = [r for p in sorted(d.glob("*.json")) if (r := read_cell_file(p)) is not None] if d.is_dir() else []
    return [r for r in rows if errors or r.get("status") == "ok"]


def _store(out: Path, cell: PackCell, row: dict[str, Any], files: Files) -> None:
    """The cell's files first, then its row: the row file commits the cell."""
    for suffix, data in files.items():
        if suffix == "packing":
            path = out / "packings" / f"{safe_name(data['name'])}.json"
            if not path.exists():
                atomic_write_text(path, data["text"])
        elif suffix == "placement":
            atomic_write_text(out / "placements" / f"{cell.stem}.json", json.dumps(data) + "\n")
        else:
            atomic_write_text(out / "bounds" / f"{cell.stem}-{suffix}.json",
                              json.dumps(data, indent=1) + "\n")
    atomic_write_text(cells_dir(out) / f"{cell.stem}.json", json.dumps(row) + "\n")


@dataclass
class PackSummary:
    """What :func:`run_pack_cells` did (cells in the sweep, skipped, run, errors, seconds)."""

    total: int
    skipped: int
    ran: int = 0
    errors: int = 0
    elapsed_s: float = 0.0


def _first_of_instances(cells: Sequence[PackCell]) -> set[str]:
    """Keys of the first cell of each instance: those return the instance's file."""
    seen, first = set(), set()
    for c in cells:
        ident = (c.seed, c.pods, c.nodes, c.inflation)
        if ident not in seen:
            seen.add(ident)
            first.add(c.key)
    return first


def run_pack_cells(cells: Sequence[PackCell], out: str | os.PathLike[str], *,
                   workers: int | None = None, scheduler: str | None = None,
                   progress: bool = True,
                   on_row: Callable[[dict[str, Any]], None] | None = None) -> PackSummary:
    """Run the cells of ``cells`` not yet done in ``out`` and store their rows.

    Parameters
    ----------
    cells
        The sweep.
    out
        Results folder (created).
    workers
        Worker processes (default: every core; ``1`` runs in this process).
    scheduler
        Address of a Dask distributed scheduler: the cells then run on that cluster.
    progress
        A progress bar on standard error.
    on_row
        Called with each stored row.

    Raises
    ------
    KeyboardInterrupt
        After the finished rows are stored and the cells in flight dropped:
        running the same sweep again resumes it.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    done = {r["cell"] for r in load_pack_rows(out)}
    todo = list({c.key: c for c in cells if c.key not in done}.values())
    summary = PackSummary(total=len(cells), skipped=len(cells) - len(todo))
    first = _first_of_instances(todo)
    bar = None
    if progress and todo:
        from tqdm import tqdm

        bar = tqdm(total=len(todo), file=sys.stderr, unit="cell", desc="pack", dynamic_ncols=True)

    def store(cell: PackCell, row: dict[str, Any], files: Files) -> None:
        _store(out, cell, row, files)
        summary.ran += 1
        summary.errors += row["status"] == "error"
        if bar is not None:
            bar.update(1)
        if on_row is not None:
            on_row(row)

    try:
        n = workers or os.cpu_count() or 1
        if scheduler is not None:
            _on_dask(todo, first, scheduler, store)
        elif n <= 1 or len(todo) <= 1:
            for cell in todo:
                store(cell, *run_pack_cell(cell, cell.key in first))
        else:
            _on_pool(todo, first, min(n, len(todo)), store)
    finally:
        if bar is not None:
            bar.close()
        summary.elapsed_s = time.perf_counter() - t0
    return summary


def _on_pool(todo: Sequence[PackCell], first: set[str], workers: int,
             store: Callable[[PackCell, dict[str, Any], Files], None]) -> None:
    pool = ProcessPoolExecutor(max_workers=workers)
    pending: dict[Future[Any], PackCell] = {}
    queue = list(reversed(todo))
    try:
        while queue or pending:
            while queue and len(pending) < 2 * workers:
                cell = queue.pop()
                pending[pool.submit(run_pack_cell, cell, cell.key in first)] = cell
            finished, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for fut in finished:
                store(pending.pop(fut), *fut.result())
    except BaseException:
        for fut in pending:
            fut.cancel()
        for proc in list(getattr(pool, "_processes", {}).values()):
            proc.terminate()  # the cells in flight are dropped: they run again on resume
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def _on_dask(todo: Sequence[PackCell], first: set[str], scheduler: str,
             store: Callable[[PackCell, dict[str, Any], Files], None]) -> None:
    from distributed import Client, as_completed

    with Client(scheduler) as client:
        futures = {client.submit(run_pack_cell, c, c.key in first, pure=False): c for c in todo}
        try:
            for fut in as_completed(futures):
                store(futures[fut], *fut.result())
        except BaseException:
            client.cancel(list(futures))
            raise
