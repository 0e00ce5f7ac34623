"""Write every table and plot of a results folder (what ``reproduce`` leaves behind)."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

import instances

from . import plots, plots_nodes
from .sweep import load_rows
from .tables import VIEWS, has_node_rows, prepare, view

__all__ = ["FORMATS", "write_plots", "write_report", "write_tables"]

logger = logging.getLogger(__name__)

FORMATS: dict[str, str] = {"markdown": "md", "latex": "tex", "csv": "csv"}
"""Table format -> file suffix."""


def write_tables(
    df: pd.DataFrame, out: str | os.PathLike[str], *, baseline: str = "fifo",
    allocator: str = "best", views: Sequence[str] = tuple(VIEWS),
    summary_methods: Sequence[str] = (),
) -> list[Path]:
    """Write each view in each format as ``out/<view>.<md|tex|csv>`` (``summary_methods``:
    only those methods in the summary, in that order).
    """
    from instances.io import atomic_write_text

    out = Path(out)
    paths = []
    for name in views:
        kw: dict[str, Any] = {"baseline": baseline}
        if name == "seed":
            kw["allocator"] = allocator
        if name == "topology":
            if not has_node_rows(df):
                continue  # a flat sweep: the topology view has nothing to show
            kw["allocator"] = allocator
        if name == "summary" and summary_methods:
            kw["methods"] = kw["only"] = tuple(summary_methods)
        tv = view(df, name, **kw)
        for fmt, suffix in FORMATS.items():
            p = out / f"{name}.{suffix}"
            atomic_write_text(p, tv.render(fmt))
            paths.append(p)
    return paths


def _example_instance(df: pd.DataFrame) -> str | None:
    """The instance the per-schedule plots show: the first seed-training-heavy one."""
    ok = df[df["schedule_file"].notna()] if "schedule_file" in df.columns else df.iloc[0:0]
    if ok.empty:
        return None
    seed_rows = ok[ok["family"] == "seed-training-heavy"]
    pick = seed_rows if not seed_rows.empty else ok
    return str(pick.sort_values(["seed", "instance"]).iloc[0]["instance_hash"])


def write_plots(
    df: pd.DataFrame, results: str | os.PathLike[str], out: str | os.PathLike[str], *,
    methods: Sequence[str] = ("fifo", "best"), formats: Sequence[str] = ("png", "pdf"),
) -> list[Path]:
    """Sweep plots (gaps, performance profiles) and, for one example instance, the
    Gantt chart and utilization of each of ``methods`` that has a schedule there."""
    results, out = Path(results), Path(out)
    d = prepare(df)
    paths: list[Path] = []
    if d["gap_pct"].notna().any():
        paths += plots.save_figure(plots.plot_gaps(d), out / "gaps", formats)
    paths += plots.save_figure(plots.plot_performance_profile(d), out / "profile-value", formats)
    paths += plots.save_figure(plots.plot_performance_profile(d, measure="runtime_s"),
                               out / "profile-runtime", formats)
    h = _example_instance(d)
    if h is None:
        return paths
    rows = d[d["instance_hash"] == h]
    for m in dict.fromkeys(methods):
        r = rows[(rows["method"] == m) & rows["schedule_file"].notna()]
        if r.empty:
            continue
        row = r.iloc[0]
        inst = instances.load(results / row["instance_file"])
        sched = instances.load_schedule(results / row["schedule_file"])
        res = str(row["reservation"]) if pd.notna(row["reservation"]) else "curve"
        stem = f"{inst.name}-{m}"
        paths += plots.save_figure(
            plots_nodes.plot_schedule_gantt(inst, sched, reservation=res,
                             title=f"{inst.name}, {m} ({res} reservation)"),
            out / f"gantt-{stem}", formats)
        paths += plots.save_figure(
            plots.plot_utilization(inst, sched, reservation=res), out / f"utilization-{stem}",
            formats)
    return paths


def write_report(
    results: str | os.PathLike[str], out: str | os.PathLike[str] | None = None, *,
    baseline: str = "fifo", allocator: str = "best", df: pd.DataFrame | None = None,
    summary_methods: Sequence[str] = (),
) -> list[Path]:
    """All tables (``out/tables``) and plots (``out/plots``) of a results folder
    (or of ``df``, a selection of its rows)."""
    results = Path(results)
    out = Path(out) if out is not None else results
    if df is None:
        df = load_rows(results)
    paths = write_tables(df, out / "tables", baseline=baseline, allocator=allocator,
                         summary_methods=summary_methods)
    paths += write_plots(df, results, out / "plots", methods=(baseline, allocator))
    logger.info("wrote %d files under %s", len(paths), out)
    return paths
