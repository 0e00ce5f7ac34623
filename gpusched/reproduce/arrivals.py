"""``gpusched reproduce arrivals``: policies against the bound on real arrival logs (docs/arrivals.md).

Windows of Microsoft's ITP clusters and of Philly (the ``itp`` and ``philly``
families) on a pool sized to a stated contention at load 1, the arrival rate swept
over that pool, every instance judged once by ``value`` and once by ``flow``.
On each: FIFO, EASY backfilling, serial ``list`` with ``wspt`` and ``sjf``,
``parallel`` with ``sjf`` (the serial list under ``sjf`` pushes long jobs past the
horizon), ``best``, and the Lagrangian bound (``milp.bound`` through the
``lagrangian`` method, its step target the best policy's worth). Two resumable
sweeps (the policies, then the bounds), one long frame, the tables of
:mod:`gpusched.tables.arrivals` and the plot of :mod:`gpusched.plots_arrivals`.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import pandas as pd

from instances import Instance, Metrics, gain, gap
from instances.families.arrivals import ARRIVAL_CONTENTION, ARRIVAL_DAYS
from instances.io import atomic_write_text
from instances.objective import OBJECTIVES, report

from ..sweep import (
    BenchSummary,
    Cell,
    MethodSpec,
    cell_rows,
    instance_hash,
    make_config,
    run_bench,
)

__all__ = [
    "ARRIVAL_BEST_TIME_LIMIT",
    "ARRIVAL_BOUND_TIME_LIMIT",
    "ARRIVAL_LOADS",
    "ARRIVAL_OBJECTIVES",
    "ARRIVAL_POLICIES",
    "ARRIVAL_QUICK",
    "ARRIVAL_SEEDS",
    "ARRIVAL_TRACES",
    "BOUND_LABEL",
    "FRAME_COLUMNS",
    "ArrivalsReport",
    "arrival_cells",
    "arrivals_frame",
    "bound_cells",
    "finish_arrivals",
    "reproduce_arrivals",
    "write_arrivals",
]

logger = logging.getLogger(__name__)

ARRIVAL_TRACES: tuple[str, ...] = ("itp", "philly")
"""The families of the experiment: ITP (cluster 04 by default) and Philly (all clusters)."""

ARRIVAL_LOADS: tuple[float, ...] = (0.5, 1.0, 1.5, 2.0)
"""Default loads: submit times divided by each, on the pool sized at load 1."""

ARRIVAL_SEEDS: tuple[int, ...] = (0, 1)
"""Default seeds (each picks a window's start day)."""

ARRIVAL_OBJECTIVES: tuple[str, ...] = ("value", "flow")
"""Every instance is run under both objectives."""

ARRIVAL_BEST_TIME_LIMIT = 3.0
"""Seconds of ``best`` per instance and objective."""

ARRIVAL_BOUND_TIME_LIMIT = 5.0
"""Seconds of the Lagrangian bound's search per instance and objective."""

BOUND_LABEL = "bound"
"""Label of the bound's cells (the ``lagrangian`` method: ``milp.bound`` and a schedule)."""

ARRIVAL_POLICIES: tuple[MethodSpec, ...] = (
    MethodSpec("fifo", "fifo"),
    MethodSpec("easy", "easy-peak"),
    MethodSpec("list-wspt", "list", {"rule": "wspt"}),
    MethodSpec("list-sjf", "list", {"rule": "sjf"}),
    MethodSpec("parallel-sjf", "parallel", {"rule": "sjf"}),
    MethodSpec("best", "best"),
)
"""The policies, by label: ``best`` gets its time limit from :func:`arrival_cells`."""

ARRIVAL_QUICK: dict[str, Any] = {
    "traces": ("itp",), "seeds": (1,), "loads": (1.0, 2.0), "days": 1,
    "best_time_limit": 0.5, "bound_time_limit": 1.0,
}
"""A small setting (the notebook's and the tests'): one ITP day of seed 1, two loads."""

FRAME_COLUMNS: tuple[str, ...] = (
    "trace", "cluster", "seed", "start_day", "load", "objective", "num_gpus", "jobs",
    "weight", "contention", "method", "status", "value", "bound", "gap_pct", "gain_pct",
    "utilization", "utilization_gain_pp", "batch_value", "flow_hours", "mean_jct_hours",
    "jobs_censored", "jct_bound_hours", "runtime_s",
)
"""Columns of :func:`arrivals_frame` (one row per instance, objective and policy)."""


def _positive(key: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise ValueError(f"{key}: must be a finite number > 0, got {v!r}")
    return float(v)


def _tuple(key: str, items: Sequence[Any]) -> tuple[Any, ...]:
    out = tuple(dict.fromkeys(items))
    if not out:
        raise ValueError(f"{key}: nothing given")
    return out


def arrival_cells(
    traces: Sequence[str] = ARRIVAL_TRACES, *, seeds: Sequence[int] = ARRIVAL_SEEDS,
    loads: Sequence[float] = ARRIVAL_LOADS, objectives: Sequence[str] = ARRIVAL_OBJECTIVES,
    contention: float = ARRIVAL_CONTENTION, days: int = ARRIVAL_DAYS,
    itp_cluster: int = 4, philly_cluster: str | None = None,
    best_time_limit: float = ARRIVAL_BEST_TIME_LIMIT,
    policies: Sequence[MethodSpec] = ARRIVAL_POLICIES,
) -> list[Cell]:
    """The policies' cells: every trace, seed, load and objective with every policy.

    Parameters
    ----------
    traces
        Some of :data:`ARRIVAL_TRACES`.
    contention, days
        The family's ``contention`` (the pool, sized at load 1, so one pool per seed
        across the loads) and ``days`` (the submit window).
    itp_cluster, philly_cluster
        The ``cluster`` of each family (``None`` for Philly: all virtual clusters).
    best_time_limit
        Seconds of ``best``.

    Raises
    ------
    ValueError
        Naming the field: an unknown trace or objective, a load or contention not a
        positive number, a family parameter the family refuses.
    """
    ts = _tuple("traces", traces)
    for t in ts:
        if t not in ARRIVAL_TRACES:
            raise ValueError(f"traces: must be some of {', '.join(ARRIVAL_TRACES)}, got {t!r}")
    objs = _tuple("objectives", objectives)
    for o in objs:
        if o not in OBJECTIVES:
            raise ValueError(f"objectives: must be some of {', '.join(OBJECTIVES)}, got {o!r}")
    ls = tuple(_positive("loads", x) for x in _tuple("loads", loads))
    c = _positive("contention", contention)
    _positive("best_time_limit", best_time_limit)
    specs = [MethodSpec(p.label, p.method, dict(p.params),
                        best_time_limit if p.method == "best" else p.time_limit)
             for p in policies]
    cells: list[Cell] = []
    for trace in ts:
        fp: dict[str, Any] = {"days": days, "contention": c}
        fp["cluster"] = itp_cluster if trace == "itp" else philly_cluster
        for load in ls:
            for obj in objs:
                params = {**fp, "load": load, "objective": obj}
                try:
                    config = make_config(trace, list(seeds), specs, family_params={trace: params})
                    cells += _cells(config.families[0], config.seeds, config.methods, params)
                except ValueError as e:
                    raise ValueError(str(e).removeprefix(f"family_params.{trace}.")) from None
    return cells


def _cells(family: str, seeds: Sequence[int], specs: Sequence[MethodSpec],
           params: Mapping[str, Any]) -> list[Cell]:
    import instances

    out: list[Cell] = []
    for seed in seeds:
        inst = instances.generate(family, seed=seed, **params)
        h = instance_hash(inst)
        out += [Cell(inst, family, seed, spec, h) for spec in specs]
    return out


def _instances(cells: Sequence[Cell]) -> dict[str, Cell]:
    """The first cell of every instance, by content hash, in the cells' order."""
    out: dict[str, Cell] = {}
    for c in cells:
        out.setdefault(c.content_hash, c)
    return out


def _metrics(row: Mapping[str, Any]) -> Metrics:
    """The checker's figures of a stored row, as :class:`instances.Metrics`."""
    kw = {f.name: row[f.name] for f in fields(Metrics) if f.name in row and not _missing(row[f.name])}
    return Metrics(**kw)


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _ok(row: Mapping[str, Any]) -> bool:
    return row.get("status") != "error" and not _missing(row.get("value"))


def bound_cells(cells: Sequence[Cell], rows: pd.DataFrame, time_limit: float = ARRIVAL_BOUND_TIME_LIMIT,
                ) -> list[Cell]:
    """One bound cell per instance of ``cells``: the ``lagrangian`` method with
    ``time_limit`` seconds, its step target (``lower``, a worth) the best policy's
    figure among ``rows`` (the policies' stored rows). Its key holds that target, so a
    rerun over the same stored rows finds the same cells done.
    """
    _positive("bound_time_limit", time_limit)
    out: list[Cell] = []
    ok = rows[[_ok(r) for r in rows.to_dict("records")]] if len(rows) else rows
    for h, c in _instances(cells).items():
        inst = c.instance
        sel = ok[ok["instance_hash"] == h] if len(ok) else ok
        params: dict[str, Any] = {}
        if len(sel):
            worths = [report(inst, float(v)) for v in sel["value"]]
            params["lower"] = max(worths)
        spec = make_config(c.family, [c.seed], [MethodSpec(BOUND_LABEL, "lagrangian", params,
                                                           float(time_limit))]).methods[0]
        out.append(Cell(inst, c.family, c.seed, spec, h))
    return out


def arrivals_frame(rows: pd.DataFrame, cells: Sequence[Cell]) -> pd.DataFrame:
    """One row per instance, objective and policy (:data:`FRAME_COLUMNS`), every figure
    the checker's (the stored rows') but for the relative ones computed here:

    - ``bound``: the bound cell's, in the objective's units (an upper bound on ``V``, a
      lower bound on ``F``); ``gap_pct``: :func:`instances.gap` of the row's value to it, in %;
    - ``gain_pct``: :func:`instances.gain`'s ``value_pct`` over ``fifo`` (the objective's
      improvement), ``utilization_gain_pp`` its utilization points;
    - ``jct_bound_hours``: under ``flow``, ``bound / weight`` with ``weight = sum_j w_j``:
      a lower bound on the weighted mean JCT (the mean JCT when all weights are equal,
      as in both logs); ``nan`` under ``value``.

    ``rows`` holds the rows of ``cells`` (policies and bounds, :func:`gpusched.sweep.cell_rows`).
    """
    recs = rows.to_dict("records") if len(rows) else []
    by_hash: dict[str, list[dict[str, Any]]] = {}
    for r in recs:
        by_hash.setdefault(str(r["instance_hash"]), []).append(r)
    labels = list(dict.fromkeys(c.spec.label for c in cells if c.spec.label != BOUND_LABEL))
    out: list[dict[str, Any]] = []
    for h, c in _instances(cells).items():
        inst: Instance = c.instance
        got = {str(r["method"]): r for r in by_hash.get(h, [])}
        b = got.get(BOUND_LABEL)
        bound = float(b["bound"]) if b is not None and _ok(b) and not _missing(b.get("bound")) else math.nan
        fifo = got.get("fifo")
        base = _metrics(fifo) if fifo is not None and _ok(fifo) else None
        weight = float(inst.priorities.sum())
        meta = inst.meta
        head = {
            "trace": c.family, "cluster": meta.get("cluster"), "seed": c.seed,
            "start_day": meta.get("start_day"), "load": float(meta.get("load", 1.0)),
            "objective": inst.objective, "num_gpus": inst.num_gpus, "jobs": inst.num_jobs,
            "weight": weight, "contention": meta.get("window_contention"),
        }
        for m in labels:
            r = got.get(m)
            rec: dict[str, Any] = {**head, "method": m}
            if r is None or not _ok(r):
                rec["status"] = "missing" if r is None else "error"
                out.append(rec)
                continue
            met = _metrics(r)
            g = gap(met.value, None if math.isnan(bound) else bound, inst.objective)
            gn = gain(met, base) if base is not None else {}
            rec.update({
                "status": r["status"], "value": met.value, "bound": bound,
                "gap_pct": math.nan if g is None else 100.0 * g,
                "gain_pct": _num(gn.get("value_pct")),
                "utilization": met.utilization,
                "utilization_gain_pp": _num(gn.get("utilization_pp")),
                "batch_value": met.batch_value, "flow_hours": met.flow_hours,
                "mean_jct_hours": met.mean_jct_hours, "jobs_censored": met.jobs_censored,
                "jct_bound_hours": bound / weight if inst.objective == "flow" and weight > 0 else math.nan,
                "runtime_s": r.get("runtime_s"),
            })
            out.append(rec)
    frame = pd.DataFrame(out, columns=list(FRAME_COLUMNS))
    return frame.sort_values(["trace", "objective", "load", "seed"], kind="stable").reset_index(drop=True)


def _num(v: Any) -> float:
    return math.nan if v is None else float(v) + 0.0  # no -0.0


@dataclass
class ArrivalsReport:
    """What :func:`reproduce_arrivals` did and wrote: the two sweeps' summaries, the frame
    (:func:`arrivals_frame`) and the files."""

    policies: BenchSummary
    bounds: BenchSummary
    frame: pd.DataFrame
    files: list[Path]


def reproduce_arrivals(
    out: str | os.PathLike[str], *, traces: Sequence[str] = ARRIVAL_TRACES,
    seeds: Sequence[int] = ARRIVAL_SEEDS, loads: Sequence[float] = ARRIVAL_LOADS,
    objectives: Sequence[str] = ARRIVAL_OBJECTIVES, contention: float = ARRIVAL_CONTENTION,
    days: int = ARRIVAL_DAYS, itp_cluster: int = 4, philly_cluster: str | None = None,
    best_time_limit: float = ARRIVAL_BEST_TIME_LIMIT,
    bound_time_limit: float = ARRIVAL_BOUND_TIME_LIMIT, workers: int | None = None,
    scheduler: str | None = None, progress: bool = True,
) -> ArrivalsReport:
    """Run (or resume) the experiment in ``out``; write its frame, tables and plot.

    Parameters
    ----------
    out
        Results folder: the two sweeps (``out`` and ``out/bounds``), then the files of
        :func:`write_arrivals`.
    traces, seeds, loads, objectives, contention, days, itp_cluster, philly_cluster, best_time_limit
        As in :func:`arrival_cells`.
    bound_time_limit
        Seconds of the bound's search per instance (:func:`bound_cells`).
    workers, scheduler, progress
        As in :func:`gpusched.sweep.run_bench`; a failed cell is run again.

    Raises
    ------
    ValueError
        Naming the field, for a bad argument.
    """
    cells = arrival_cells(traces, seeds=seeds, loads=loads, objectives=objectives,
                          contention=contention, days=days, itp_cluster=itp_cluster,
                          philly_cluster=philly_cluster, best_time_limit=best_time_limit)
    _positive("bound_time_limit", bound_time_limit)
    first = run_bench(cells, out, workers=workers, scheduler=scheduler, progress=progress,
                      retry_errors=True)
    bcells = bound_cells(cells, cell_rows(out, cells), bound_time_limit)
    second = run_bench(bcells, Path(out) / "bounds", workers=workers, scheduler=scheduler,
                       progress=progress, retry_errors=True)
    frame, files = finish_arrivals(out, cells, bcells)
    return ArrivalsReport(first, second, frame, files)


def finish_arrivals(out: str | os.PathLike[str], cells: Sequence[Cell], bcells: Sequence[Cell],
                    ) -> tuple[pd.DataFrame, list[Path]]:
    """After both sweeps: the frame of the stored rows and the files of :func:`write_arrivals`."""
    rows = pd.concat([cell_rows(out, cells), cell_rows(Path(out) / "bounds", bcells)],
                     ignore_index=True)
    frame = arrivals_frame(rows, [*cells, *bcells])
    return frame, write_arrivals(out, frame)


def write_arrivals(out: str | os.PathLike[str], frame: pd.DataFrame) -> list[Path]:
    """Write under ``out``: ``arrivals.csv`` (the frame), ``tables/arrivals-{jct,value,
    agreement}.{md,tex,csv}`` (:mod:`gpusched.tables.arrivals`) and
    ``plots/arrivals-jct.{png,pdf}`` (:func:`gpusched.plots_arrivals.plot_arrivals`)."""
    from ..plots import save_figure
    from ..plots_arrivals import plot_arrivals
    from ..tables.arrivals import arrival_views

    out = Path(out)
    files = [out / "arrivals.csv"]
    atomic_write_text(files[0], frame.to_csv(index=False))
    (out / "tables").mkdir(parents=True, exist_ok=True)
    for name, tv in arrival_views(frame).items():
        for fmt, suffix in (("markdown", "md"), ("latex", "tex"), ("csv", "csv")):
            path = out / "tables" / f"arrivals-{name}.{suffix}"
            atomic_write_text(path, tv.render(fmt))
            files.append(path)
    if (frame["objective"] == "flow").any():
        files += save_figure(plot_arrivals(frame)[0], out / "plots" / "arrivals-jct")
    return files
