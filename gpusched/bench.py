"""The benchmark harness: families x seeds x methods, in parallel, crash-safe and resumable.

A sweep is a list of :class:`Cell` (one instance, one method with its
parameters and time limit). :func:`run_bench` runs the cells that are not done
yet and stores one tidy row per cell in an output folder::

    DIR/cells/<instance>--<method>--<key>.json   one row per cell (atomic write)
    DIR/results.csv                              all rows, rebuilt atomically
    DIR/schedules/<instance>--<method>--<key>.json  gpusched-schedule/1
    DIR/instances/<instance>.json                gpusched-instance/1

The per-cell files are the store of record: each is written whole (temporary
file, ``fsync``, rename) by the parent process as soon as its cell ends, so a
run killed with SIGKILL loses at most the cells in flight, and never leaves a
torn or duplicate row. ``results.csv`` is rebuilt from them (atomically) every
few seconds and at the end; :func:`load_rows` reads the cell files, so it is
exact even after a crash. Running the same sweep again skips the cells whose
row exists (the key is a hash of the instance's content, the method, its
parameters and its time limit).

Cells run in worker processes (:class:`concurrent.futures.ProcessPoolExecutor`)
or, given a scheduler address, on a Dask distributed cluster. Every exact
method is single-threaded unless its parameters say otherwise.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import platform
import re
import signal
import sys
import threading
import time
import tomllib
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import pandas as pd

import instances
from instances import Instance
from instances.io import atomic_write_text
from instances.model import check_size_params

from .solvers import EXACT_METHODS, method_names, solve

__all__ = [
    "BenchConfig",
    "BenchSummary",
    "Cell",
    "MethodSpec",
    "consolidate",
    "done_keys",
    "error_row",
    "instance_hash",
    "load_config",
    "load_rows",
    "make_cells",
    "make_config",
    "parse_seeds",
    "run_bench",
    "run_cell",
    "versions",
]

logger = logging.getLogger(__name__)

VERSIONED_PACKAGES: tuple[str, ...] = ("gpusched", "numpy", "highspy", "pulp", "ortools")
"""Packages whose versions every row records."""

CONSOLIDATE_EVERY_S = 5.0
"""At most this many seconds between two rebuilds of ``results.csv`` during a run."""


# ---------------------------------------------------------------- configuration
@dataclass(frozen=True)
class MethodSpec:
    """A method to run, under a label (the ``method`` column of the rows).

    Attributes
    ----------
    label
        The name the rows and tables use (defaults to ``method``); two labels
        may run the same method with different parameters.
    method
        A name accepted by :func:`gpusched.solve`.
    params
        Keyword parameters of the method.
    time_limit
        Seconds, passed as ``time_limit`` (``None``: the method's default).
    """

    label: str
    method: str
    params: Mapping[str, Any] = field(default_factory=dict)
    time_limit: float | None = None


@dataclass(frozen=True)
class BenchConfig:
    """A sweep: the cross product of families, seeds and methods.

    Attributes
    ----------
    families
        Family names (:data:`instances.FAMILIES`).
    seeds
        Seeds of each family.
    methods
        What to run on every instance.
    family_params
        Per-family generator parameters (``{"large": {"num_jobs": 500}}``).
    instance_files
        Instance files to add to the families' instances.
    """

    families: tuple[str, ...]
    seeds: tuple[int, ...]
    methods: tuple[MethodSpec, ...]
    family_params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    instance_files: tuple[str, ...] = ()


MAX_SEEDS = 100_000
"""Most seeds a sweep accepts (checked before any list of them is built)."""


def parse_seeds(spec: Any) -> tuple[int, ...]:
    """Seeds from ``5`` (0..4), ``"0-4"``, ``"1,3,7"`` or a list of integers.

    Raises
    ------
    ValueError
        For anything else, or a negative seed.
    """
    if isinstance(spec, bool):
        raise ValueError(f"seeds: expected N, A-B, a comma list or a list, got {spec!r}")
    if isinstance(spec, int):
        if not 1 <= spec <= MAX_SEEDS:
            raise ValueError(f"seeds: a count must be in [1, {MAX_SEEDS}], got {spec}")
        return tuple(range(spec))
    if isinstance(spec, (list, tuple)):
        out = []
        for s in spec:
            if isinstance(s, bool) or not isinstance(s, int) or s < 0:
                raise ValueError(f"seeds: must be non-negative integers, got {s!r}")
            out.append(s)
        if not out:
            raise ValueError("seeds: the list is empty")
        if len(out) > MAX_SEEDS:
            raise ValueError(f"seeds: at most {MAX_SEEDS} seeds, got {len(out)}")
        return tuple(dict.fromkeys(out))
    if isinstance(spec, str):
        text = spec.strip()
        if re.fullmatch(r"\d+", text):
            return parse_seeds(int(text))
        m = re.fullmatch(r"(\d+)\s*-\s*(\d+)", text)
        if m:
            a, b = int(m.group(1)), int(m.group(2))
            if b < a:
                raise ValueError(f"seeds: empty range {text!r}")
            if b - a + 1 > MAX_SEEDS:
                raise ValueError(f"seeds: at most {MAX_SEEDS} seeds, got the range {text!r}")
            return tuple(range(a, b + 1))
        if re.fullmatch(r"\d+(\s*,\s*\d+)+", text):
            return parse_seeds([int(x) for x in text.split(",")])
    raise ValueError(f"seeds: expected N, A-B, a comma list or a list, got {spec!r}")


def _split(items: str | Sequence[str]) -> tuple[str, ...]:
    if isinstance(items, str):
        items = items.split(",")
    return tuple(x.strip() for x in items if x.strip())


def make_config(
    families: str | Sequence[str],
    seeds: Any,
    methods: str | Sequence[str | MethodSpec],
    *,
    time_limit: float | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    family_params: Mapping[str, Mapping[str, Any]] | None = None,
    instance_files: Sequence[str] = (),
) -> BenchConfig:
    """Build and check a :class:`BenchConfig` from plain values (the command-line flags).

    Parameters
    ----------
    time_limit
        Applies to every method without its own.
    params
        Per-method parameters, keyed by method label.

    Raises
    ------
    ValueError
        For an unknown family or method, or bad seeds.
    """
    fams = _split(families) if families else ()
    for f in fams:
        if f not in instances.FAMILIES:
            raise ValueError(f"families: unknown family {f!r}; known: {', '.join(instances.FAMILIES)}")
    params = params or {}
    specs: list[MethodSpec] = []
    for m in _split(methods) if isinstance(methods, str) else methods:
        if isinstance(m, MethodSpec):
            spec = m
        else:
            spec = MethodSpec(m, m, dict(params.get(m, {})), time_limit)
        if not isinstance(spec.method, str):
            raise ValueError(f"methods: {spec.label!r}: the method must be a name, got {spec.method!r}")
        if spec.time_limit is None and time_limit is not None:
            spec = MethodSpec(spec.label, spec.method, spec.params, time_limit)
        specs.append(_with_threads(spec))
    if not specs:
        raise ValueError("methods: no method given")
    known = method_names()
    for spec in specs:
        if spec.method not in known:
            raise ValueError(f"methods: unknown method {spec.method!r}; known: {', '.join(known)}")
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        raise ValueError(f"methods: a label appears twice in {labels}")
    if not fams and not instance_files:
        raise ValueError("families: no family and no instance file given")
    return BenchConfig(
        families=fams,
        seeds=parse_seeds(seeds) if fams else (),
        methods=tuple(specs),
        family_params={k: dict(v) for k, v in (family_params or {}).items()},
        instance_files=tuple(str(p) for p in instance_files),
    )


def _with_threads(spec: MethodSpec) -> MethodSpec:
    """Normalize a spec: a ``time_limit`` parameter becomes the spec's time limit, and
    exact methods run single-threaded unless the parameters say otherwise."""
    params = dict(spec.params)
    tl = params.pop("time_limit", spec.time_limit)
    if tl is not None and (isinstance(tl, bool) or not isinstance(tl, (int, float)) or not tl >= 0):
        raise ValueError(f"{spec.label}.time_limit: must be a number >= 0, got {tl!r}")
    if spec.method in EXACT_METHODS and "threads" not in params:
        params["threads"] = 1
    return MethodSpec(spec.label, spec.method, params, None if tl is None else float(tl))


def load_config(path: str | os.PathLike[str]) -> BenchConfig:
    """Read a sweep from a TOML file.

    The file holds ``families`` (list), ``seeds`` (N, ``"A-B"`` or a list),
    ``methods`` (list of names), optional ``time_limit``, ``instances`` (list of
    instance files), per-method tables ``[params.<method>]`` (a
    ``time_limit`` key there overrides the global one), variants
    ``[variants.<label>]`` with a ``method`` key and parameters, and per-family
    generator parameters ``[family_params.<family>]``. Example::

        families = ["seed-training-heavy", "hc-mixed"]
        seeds = "0-4"
        methods = ["fifo", "fifo-curve", "best", "milp"]
        time_limit = 30

        [params.milp]
        threads = 2

        [variants.list-value]
        method = "list"
        rule = "value"

    Raises
    ------
    ValueError
        ``<file>: <key>: <problem>``.
    """
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: malformed TOML: {e}") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a UTF-8 text file") from None
    try:
        return _config_from_dict(data)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


def _check_tables(value: Any, key: str) -> None:
    """``[key.<name>]`` sections: a table of tables."""
    if not isinstance(value, dict):
        raise ValueError(f"{key}: must be a table of [{key}.<name>] tables, got {value!r}")
    for name, v in value.items():
        if not isinstance(v, dict):
            raise ValueError(f"{key}.{name}: must be a table, got {v!r}")


def _config_from_dict(data: Mapping[str, Any]) -> BenchConfig:
    allowed = {"families", "seeds", "methods", "time_limit", "params", "variants",
               "family_params", "instances"}
    unknown = set(data) - allowed
    if unknown:
        raise ValueError(f"{sorted(unknown)[0]}: unknown key; allowed: {sorted(allowed)}")
    time_limit = data.get("time_limit")
    if time_limit is not None and (isinstance(time_limit, bool) or not isinstance(time_limit, (int, float))
                                   or time_limit < 0):
        raise ValueError(f"time_limit: must be a number >= 0, got {time_limit!r}")
    for key in ("params", "variants", "family_params"):
        _check_tables(data.get(key, {}), key)
    for fam, fp in data.get("family_params", {}).items():
        try:
            check_size_params(fp)  # before a horizon of 10^9 is drawn
        except ValueError as e:
            raise ValueError(f"family_params.{fam}.{e}") from None
    for key in ("families", "methods", "instances"):
        v = data.get(key, [])
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise ValueError(f"{key}: must be a list of strings, got {v!r}")
    params = data.get("params", {})
    specs: list[MethodSpec] = []
    for name in data.get("methods", []):
        p = dict(params.get(name, {}))
        tl = p.pop("time_limit", time_limit)
        specs.append(MethodSpec(name, name, p, tl))
    for label, v in data.get("variants", {}).items():
        v = dict(v)
        if "method" not in v:
            raise ValueError(f"variants.{label}.method: missing")
        method = v.pop("method")
        if not isinstance(method, str):
            raise ValueError(f"variants.{label}.method: must be a method name, got {method!r}")
        tl = v.pop("time_limit", time_limit)
        specs.append(MethodSpec(label, method, v, tl))
    return make_config(
        data.get("families", []),
        data.get("seeds", 1),
        specs,
        time_limit=time_limit,
        family_params=data.get("family_params", {}),
        instance_files=data.get("instances", []),
    )


# ---------------------------------------------------------------- cells
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
    """

    instance: Instance
    family: str
    seed: int
    spec: MethodSpec
    content_hash: str

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
        return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def instance_id(self) -> str:
        """Instance name and the start of its content hash."""
        return f"{self.instance.name}-{self.content_hash[:12]}"

    @property
    def stem(self) -> str:
        """File name (without ``.json``) of the cell's row and schedule."""
        return f"{_safe(self.instance_id)}--{_safe(self.spec.label)}--{self.key}"


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)[:80]


def make_cells(config: BenchConfig) -> list[Cell]:
    """Generate every instance of the sweep and pair it with every method."""
    insts: list[tuple[Instance, str, int]] = []
    for fam in config.families:
        fp = dict(config.family_params.get(fam, {}))
        for seed in config.seeds:
            insts.append((instances.generate(fam, seed=seed, **fp), fam, seed))
    for path in config.instance_files:
        inst = instances.load(path)
        fam = str(inst.meta.get("family", "file"))
        seed = int(inst.meta.get("seed", -1))
        insts.append((inst, fam, seed))
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


METRIC_COLUMNS: tuple[str, ...] = (
    "utilization", "reserved_idle", "jobs_run", "jobs_rejected", "weighted_mean_wait",
    "total_value", "inference_gpu_slots", "batch_gpu_slots", "capacity_gpu_slots",
)
"""The columns a row takes from :class:`instances.Metrics` (besides ``value``)."""


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


def run_cell(cell: Cell) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Run one cell; never raises for a failing method.

    Returns
    -------
    row, schedule
        The tidy row (JSON-safe) and the schedule as a ``gpusched-schedule/1``
        object (``None`` when the method failed). A method that raises gives a
        row with status ``error`` and the exception in ``message``.
    """
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


# ---------------------------------------------------------------- the store
def _cells_dir(out: Path) -> Path:
    return out / "cells"


def _read_cell_file(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        logger.warning("%s: unreadable row skipped (%s)", path, e)
        return None
    return data if isinstance(data, dict) and "cell" in data else None


def _iter_rows(out: Path) -> Iterator[dict[str, Any]]:
    d = _cells_dir(out)
    if not d.is_dir():
        return
    for p in sorted(d.glob("*.json")):
        row = _read_cell_file(p)
        if row is not None:
            yield row


def done_keys(out: str | os.PathLike[str], *, retry_errors: bool = False) -> set[str]:
    """Keys of the cells that have a row in ``out`` (without errors if ``retry_errors``)."""
    return {
        r["cell"] for r in _iter_rows(Path(out))
        if not (retry_errors and r.get("status") == "error")
    }


SORT_COLUMNS = ["family", "seed", "instance", "method"]


def load_rows(path: str | os.PathLike[str]) -> pd.DataFrame:
    """All rows of a results folder (from the per-cell files), or of a CSV file.

    Raises
    ------
    ValueError
        If the folder holds no results.
    """
    p = Path(path)
    if p.is_file():
        try:
            return pd.read_csv(p)
        except (ValueError, pd.errors.ParserError) as e:  # binary, empty or malformed
            raise ValueError(f"{path}: not a results CSV file ({' '.join(str(e).split())})") from None
    rows = list(_iter_rows(p))
    if not rows:
        csv = p / "results.csv"
        if csv.is_file():
            return pd.read_csv(csv)
        raise ValueError(f"{path}: no results (no cells/*.json and no results.csv)")
    df = pd.DataFrame(rows)
    return df.sort_values(SORT_COLUMNS, kind="stable").reset_index(drop=True)


def consolidate(out: str | os.PathLike[str]) -> Path | None:
    """Rebuild ``results.csv`` from the per-cell rows, atomically; returns its path."""
    out = Path(out)
    rows = list(_iter_rows(out))
    if not rows:
        return None
    df = pd.DataFrame(rows).sort_values(SORT_COLUMNS, kind="stable")
    path = out / "results.csv"
    atomic_write_text(path, df.to_csv(index=False))
    return path


def _store(out: Path, cell: Cell, row: dict[str, Any], schedule: dict[str, Any] | None) -> None:
    if schedule is not None:
        sched_rel = f"schedules/{cell.stem}.json"
        atomic_write_text(out / sched_rel, json.dumps(schedule, indent=1) + "\n")
        row = {**row, "schedule_file": sched_rel}
    else:
        row = {**row, "schedule_file": None}
    row["instance_file"] = f"instances/{_safe(cell.instance_id)}.json"
    atomic_write_text(_cells_dir(out) / f"{cell.stem}.json", json.dumps(row) + "\n")


def _save_instances(out: Path, cells: Iterable[Cell]) -> None:
    seen = set()
    for c in cells:
        if c.content_hash in seen:
            continue
        seen.add(c.content_hash)
        path = out / "instances" / f"{_safe(c.instance_id)}.json"
        if not path.exists():
            instances.save(c.instance, path)


# ---------------------------------------------------------------- running
@dataclass
class BenchSummary:
    """What a run did.

    Attributes
    ----------
    total
        Cells in the sweep.
    skipped
        Cells already done before this run (resume).
    ran
        Cells run and stored by this run.
    errors
        Of ``ran``, cells whose status is ``error``.
    interrupted
        Whether the run stopped early (SIGINT).
    out
        The results folder.
    elapsed_s
        Wall-clock seconds of the run.
    """

    total: int
    skipped: int
    ran: int = 0
    errors: int = 0
    interrupted: bool = False
    out: Path = Path(".")
    elapsed_s: float = 0.0

    @property
    def pending(self) -> int:
        """Cells still to run."""
        return self.total - self.skipped - self.ran


def _ignore_sigint() -> None:  # pragma: no cover - runs in worker processes
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _exit_with_parent()


def _exit_with_parent(poll_s: float = 0.5) -> None:  # pragma: no cover - in worker processes
    """End this worker when its parent dies.

    A parent killed with SIGKILL leaves its pool workers blocked on their task
    queue forever, each holding its memory; a watcher thread ends them.
    """
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="exit-with-parent").start()


def run_bench(
    cells: Sequence[Cell] | BenchConfig,
    out: str | os.PathLike[str],
    *,
    workers: int | None = None,
    scheduler: str | Any | None = None,
    progress: bool = True,
    retry_errors: bool = False,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> BenchSummary:
    """Run the cells not yet done in ``out`` and store their rows.

    Parameters
    ----------
    cells
        The sweep (or a :class:`BenchConfig`, expanded by :func:`make_cells`).
    out
        Results folder (created).
    workers
        Worker processes (default ``os.cpu_count()``); ``1`` runs in this process.
    scheduler
        Address of a Dask distributed scheduler (or a ``distributed.Client``);
        the cells then run on that cluster and ``workers`` is ignored.
    progress
        Show a progress bar (on standard error).
    retry_errors
        Run again the cells whose stored status is ``error``.
    on_row
        Called with each stored row.

    Returns
    -------
    BenchSummary

    Raises
    ------
    KeyboardInterrupt
        On SIGINT, after the finished rows are stored, the cells in flight
        dropped and ``results.csv`` rebuilt: running the same sweep again
        resumes it.
    """
    if isinstance(cells, BenchConfig):
        cells = make_cells(cells)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    keys = done_keys(out, retry_errors=retry_errors)
    todo = [c for c in cells if c.key not in keys]
    # A key appearing twice in the sweep (the same instance twice) runs once.
    todo = list({c.key: c for c in todo}.values())
    summary = BenchSummary(total=len(cells), skipped=len(cells) - len(todo), out=out)
    logger.info("%d cells, %d done already, %d to run", len(cells), summary.skipped, len(todo))
    _save_instances(out, todo)

    bar = None
    if progress and todo:
        from tqdm import tqdm

        bar = tqdm(total=len(todo), file=sys.stderr, unit="cell", dynamic_ncols=True,
                   desc="bench")
    last_consolidate = time.monotonic()

    def store(cell: Cell, row: dict[str, Any], schedule: dict[str, Any] | None) -> None:
        nonlocal last_consolidate
        _store(out, cell, row, schedule)
        summary.ran += 1
        if row["status"] == "error":
            summary.errors += 1
        if bar is not None:
            bar.update(1)
            if summary.errors:
                bar.set_postfix(errors=summary.errors)
        if on_row is not None:
            on_row(row)
        if time.monotonic() - last_consolidate > CONSOLIDATE_EVERY_S:
            consolidate(out)
            last_consolidate = time.monotonic()

    try:
        if not todo:
            pass
        elif scheduler is not None:
            _run_dask(todo, scheduler, store)
        elif (workers or os.cpu_count() or 1) <= 1:
            for cell in todo:
                store(cell, *run_cell(cell))
        else:
            _run_pool(todo, workers or os.cpu_count() or 1, store)
    except KeyboardInterrupt:
        summary.interrupted = True
        raise
    finally:
        if bar is not None:
            bar.close()
        consolidate(out)
        summary.elapsed_s = time.perf_counter() - t0
        logger.info("stored %d rows (%d errors) in %.1f s", summary.ran, summary.errors,
                    summary.elapsed_s)
    return summary


StoreFn = Callable[[Cell, dict[str, Any], "dict[str, Any] | None"], None]


def _new_pool(workers: int) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(max_workers=workers, initializer=_ignore_sigint)


def _run_alone(cell: Cell) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Run one cell in a pool of its own: if the worker dies, this cell killed it."""
    with _new_pool(1) as one:
        try:
            return one.submit(run_cell, cell).result()
        except BrokenProcessPool:
            return error_row(cell, "worker failed: the worker process died while running "
                                   "this cell (killed by the system, e.g. out of memory?)"), None


def _run_pool(todo: Sequence[Cell], workers: int, store: StoreFn) -> None:
    workers = min(workers, len(todo))
    ex = _new_pool(workers)
    pending: dict[Future[Any], Cell] = {}
    queue = deque(todo)

    def refill() -> None:
        # Keep a bounded number of cells in flight: instances travel with them.
        while queue and len(pending) < 2 * workers:
            pending[ex.submit(run_cell, queue[0])] = queue[0]
            queue.popleft()

    try:
        refill()
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            broken = False
            for fut in finished:
                cell = pending[fut]
                try:
                    row, sched = fut.result()
                except BrokenProcessPool:  # a worker died: every cell in flight is lost
                    broken = True
                    continue
                except Exception as e:
                    row, sched = _crashed_row(cell, e), None
                del pending[fut]
                store(cell, row, sched)
            try:
                if not broken:
                    refill()
            except BrokenProcessPool:
                broken = True
            if broken:
                # Which cell killed its worker is unknown: run each cell that was in
                # flight alone, so that only the culprit gets an error row; go on in a
                # new pool.
                lost = list(pending.values())
                pending.clear()
                ex.shutdown(wait=True, cancel_futures=True)
                for cell in lost:
                    store(cell, *_run_alone(cell))
                ex = _new_pool(workers)
                refill()
    except BaseException:
        for fut in pending:
            fut.cancel()
        # Cells in flight are lost by design: end their workers first, then let the
        # pool's manager thread see them gone and stop. (Shutting down without waiting
        # left that thread to the interpreter's exit, which could trip over the closed
        # pipes and print "Bad file descriptor" from threading's atexit hook.)
        for p in list(getattr(ex, "_processes", {}).values()):
            p.terminate()
        ex.shutdown(wait=True, cancel_futures=True)
        raise
    ex.shutdown(wait=True)


def _run_dask(todo: Sequence[Cell], scheduler: str | Any, store: StoreFn) -> None:
    from distributed import Client, as_completed

    own = isinstance(scheduler, str)
    client: Any = Client(scheduler) if own else scheduler
    try:
        futures = {client.submit(run_cell, c, pure=False, key=f"cell-{c.key}"): c for c in todo}
        try:
            for fut in as_completed(futures):
                cell = futures[fut]
                try:
                    row, sched = fut.result()
                except Exception as e:
                    row, sched = _crashed_row(cell, e), None
                store(cell, row, sched)
        except BaseException:
            client.cancel(list(futures))
            raise
    finally:
        if own:
            client.close()


def _crashed_row(cell: Cell, e: BaseException) -> dict[str, Any]:
    """The row of a cell whose worker died before returning."""
    return error_row(cell, f"worker failed: {type(e).__name__}: {e}")
