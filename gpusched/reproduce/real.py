"""``gpusched reproduce real``: the comparison on days of the openb trace (docs/real-cluster.md).

Days of the ``openb-day`` family at several pool sizes, with FIFO, the
backfilling baselines, ``list``, ``best`` and the exact bound, tabulated and
plotted against contention: where FIFO is already near the optimum and where
the allocator's gain appears. Each day and pool is run twice, with
``resources="gpus"`` (model version 2: a share of a GPU takes a whole one) and
``"full"`` (version 3), and a table says what the whole-GPU rounding did.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from instances import gap
from instances.families import OPENB_DAYS, OPENB_INFERENCE_SHARE, contention
from instances.io import atomic_write_text

from ..dispatch import EXACT_METHODS, method_names
from ..sweep import (
    BenchSummary,
    Cell,
    MethodSpec,
    cell_rows,
    instance_hash,
    make_cells,
    make_config,
    run_bench,
)

__all__ = [
    "CONTENTION_BANDS",
    "FLAT_BOUND",
    "LAGRANGIAN_TIME_LIMIT",
    "REAL_BASELINES",
    "REAL_BEST_TIME_LIMIT",
    "REAL_DAYS",
    "REAL_METHODS",
    "REAL_POOLS",
    "REAL_QUICK",
    "REAL_RESOURCES",
    "REAL_TIME_LIMIT",
    "RealReport",
    "best_values",
    "cell_resources",
    "finish_real",
    "lagrangian_bounds",
    "real_cells",
    "real_frame",
    "real_summary",
    "reproduce_real",
    "tag_resources",
    "write_real",
]

logger = logging.getLogger(__name__)

REAL_METHODS: tuple[str, ...] = (
    "fifo", "fifo-curve", "easy-peak", "easy-curve", "conservative-peak",
    "conservative-curve", "list", "best", "milp",
)
"""Methods of the real-cluster reproduction (``milp`` time-limited, its upper bound the yardstick)."""

REAL_BASELINES: tuple[str, ...] = (
    "fifo-curve", "easy-peak", "easy-curve", "conservative-peak", "conservative-curve",
)
"""The backfilling baselines (and FIFO under curve reservation) beside FIFO."""

FLAT_BOUND = "milp-flat"
"""Label of the MILP on the flat relaxation (nodes dropped): its upper bound holds
for the instance with nodes (the specification (docs/model.md))."""

REAL_DAYS: tuple[int, ...] = OPENB_DAYS[::3]
"""Default days: every third day of :data:`instances.families.OPENB_DAYS` (12 days)."""

REAL_POOLS: tuple[int, ...] = (8, 16, 32)
"""Default pool sizes (GPUs of the openb node mix)."""

REAL_TIME_LIMIT = 10.0
"""Seconds per MILP solve (node model and flat relaxation)."""

REAL_BEST_TIME_LIMIT = 2.0
"""Seconds of ``best`` per instance."""

REAL_QUICK: dict[str, Any] = {
    "days": (130, 149), "pools": (8, 16), "time_limit": 5.0, "best_time_limit": 0.5,
}
"""The ``--quick`` setting: the most contended day (130) and the least (149), two pools."""

REAL_RESOURCES: tuple[str, ...] = ("gpus", "full")
"""The ``resources=`` of the ``openb-day`` instances: version 2 (whole GPUs) and version 3."""

CONTENTION_BANDS: tuple[float, ...] = (0.0, 0.25, 0.5, 1.0, 2.0, math.inf)
"""Edges of the contention bands of :func:`real_summary`."""


def _check_grid(days: Sequence[int], pools: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    ds = tuple(dict.fromkeys(int(d) for d in days))
    ps = tuple(dict.fromkeys(int(g) for g in pools))
    if not ds:
        raise ValueError("days: no day given")
    if not ps:
        raise ValueError("pools: no pool size given")
    for d in ds:
        if d not in OPENB_DAYS:
            raise ValueError(
                f"days: {d} is not a day of the openb trace ({OPENB_DAYS[0]}..{OPENB_DAYS[-1]})"
            )
    return ds, ps


def real_cells(
    days: Sequence[int] = REAL_DAYS, pools: Sequence[int] = REAL_POOLS, *,
    time_limit: float = REAL_TIME_LIMIT, best_time_limit: float = REAL_BEST_TIME_LIMIT,
    inference_share: float = OPENB_INFERENCE_SHARE, methods: Sequence[str] = REAL_METHODS,
    resources: Sequence[str] = REAL_RESOURCES,
) -> list[Cell]:
    """The cells of the real-cluster reproduction: ``openb-day`` at seed ``day - 115`` on
    every pool and every ``resources`` of :data:`REAL_RESOURCES`, with every registered
    method of ``methods``, and on ``gpus`` the MILP on the flat relaxation
    (:data:`FLAT_BOUND`; a version 3 instance has no flat form, its MILP's bound is the
    fluid relaxation's). The ``gpus`` cells are those of a run without ``full``.

    Raises
    ------
    ValueError
        For a day outside the trace or a pool the family refuses.
    """
    ds, ps = _check_grid(days, pools)
    rs = tuple(dict.fromkeys(resources))
    if not rs or not set(rs) <= set(REAL_RESOURCES):
        raise ValueError(f"resources: must be some of {', '.join(REAL_RESOURCES)}, got {list(resources)}")
    known = method_names()
    specs: list[MethodSpec] = []
    for m in methods:
        if m not in known:
            logger.warning("method %r is not registered; the reproduction runs without it", m)
            continue
        if m in EXACT_METHODS:
            specs.append(MethodSpec(m, m, {}, time_limit))
        elif m == "best":
            specs.append(MethodSpec(m, m, {}, best_time_limit))
        else:
            specs.append(MethodSpec(m, m))
    seeds = [d - OPENB_DAYS[0] for d in ds]
    flat = make_config("openb-day", seeds, [MethodSpec(FLAT_BOUND, "milp", {}, time_limit)]).methods
    cells: list[Cell] = []
    for res, g in itertools.product(rs, ps):
        fp: dict[str, dict[str, Any]] = {"openb-day": {"num_gpus": g}}
        if inference_share != OPENB_INFERENCE_SHARE:
            fp["openb-day"]["inference_share"] = inference_share
        if res != "gpus":
            fp["openb-day"]["resources"] = res
        try:
            config = make_config("openb-day", seeds, specs, family_params=fp)
            new = make_cells(config)
        except ValueError as e:
            msg = str(e).removeprefix("family_params.openb-day.")
            if msg.startswith("num_gpus: "):
                msg = "pools: " + msg.removeprefix("num_gpus: ")
            raise ValueError(msg) from None
        cells += new
        if res != "gpus":
            continue
        for c in new[:: len(specs)]:
            relaxed = c.instance.replace(name=f"{c.instance.name}-flat", nodes=None)
            cells += [Cell(relaxed, c.family, c.seed, spec, instance_hash(relaxed)) for spec in flat]
    return cells


def cell_resources(cell: Cell) -> str:
    """``"gpus"`` or ``"full"``: what the cell's instance keeps of the pods' resources."""
    return str(cell.instance.meta.get("import", {}).get("resources", "gpus"))


def tag_resources(df: pd.DataFrame, cells: Sequence[Cell]) -> pd.DataFrame:
    """``df`` (rows of ``cells``) with a ``resources`` column, from each row's cell."""
    by = {c.key: cell_resources(c) for c in cells}
    return df.assign(resources=df["cell"].map(by).fillna("gpus") if "cell" in df else "gpus")


Key = tuple[int, int, str]
"""An instance of the reproduction: ``(seed, num_gpus, resources)``."""


def _key(c: Cell) -> Key:
    return (c.seed, c.instance.num_gpus, cell_resources(c))


LAGRANGIAN_TIME_LIMIT = 2.0
"""Most seconds of ``milp.bound`` per instance (it converges in well under that on openb days)."""


def best_values(df: pd.DataFrame) -> dict[Key, float]:
    """The best feasible value by ``(seed, num_gpus, resources)`` among the rows of methods
    run on the instance itself (the flat relaxation's schedules are not feasible with
    nodes); rows without a ``resources`` column are ``gpus`` (:func:`tag_resources`)."""
    if "resources" not in df:
        df = df.assign(resources="gpus")
    ok = df[(df["status"] != "error") & (df["method"] != FLAT_BOUND) & df["value"].notna()]
    return {(int(k[0]), int(k[1]), str(k[2])): float(v)
            for k, v in ok.groupby(["seed", "num_gpus", "resources"])["value"].max().items()}


def lagrangian_bounds(
    cells: Sequence[Cell], out: Path, time_limit: float,
    lower: Mapping[Key, float] | None = None,
) -> dict[Key, float]:
    """``milp.bound`` of every instance of ``cells`` (when the installed ``milp`` has it),
    stored in ``out/bounds`` so that a rerun reads them back; ``lower`` holds the step
    target per instance (:func:`best_values`), ``time_limit`` is capped at
    :data:`LAGRANGIAN_TIME_LIMIT`.
    """
    import milp

    fn: Callable[..., Any] | None = getattr(milp, "bound", None)
    if not callable(fn):
        return {}
    got: dict[Key, float] = {}
    folder = out / "bounds"
    for c in cells:
        key = _key(c)
        if c.instance.nodes is None or key in got:
            continue
        path = folder / f"{c.content_hash[:16]}.json"
        if path.is_file():
            got[key] = float(json.loads(path.read_text())["bound"])
            continue
        kw: dict[str, Any] = {}
        if lower and key in lower:
            kw["lower"] = lower[key]
        b = fn(c.instance, time_limit=min(time_limit, LAGRANGIAN_TIME_LIMIT), **kw)
        got[key] = float(b.value)
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps({"instance": c.instance.name, "bound": b.value,
                                            "method": getattr(b, "method", "")}) + "\n")
    return got


def real_frame(
    df: pd.DataFrame, cells: Sequence[Cell],
    extra_bounds: Mapping[Key, float] | None = None,
) -> pd.DataFrame:
    """One row per (day, pool, resources): contention, each method's value, the bound,
    gains and gaps.

    ``df`` holds the rows of ``cells`` (those without a ``resources`` column are
    ``gpus``); ``extra_bounds`` further upper bounds by ``(seed, num_gpus, resources)``
    (the Lagrangian bound). Columns: ``day``, ``num_gpus``, ``resources``, ``jobs``,
    ``contention`` (on the GPU amounts),
    ``value_<method>``, ``bound`` (the smallest proven: the MILP on the instance or
    on its flat relaxation, or ``extra_bounds``) and ``bound_source``, ``optimal``
    (a method reaches the bound), ``gain_<method>_pct`` (over ``fifo``),
    ``gap_<method>_pct`` and ``errors``; sorted by contention.
    """
    if "resources" not in df:
        df = df.assign(resources="gpus")
    info: dict[Key, dict[str, Any]] = {}
    for c in cells:
        if c.instance.nodes is None:
            continue
        key = _key(c)
        info.setdefault(key, {
            "day": int(c.instance.meta["day"]), "num_gpus": c.instance.num_gpus,
            "resources": key[2], "jobs": c.instance.num_jobs, "contention": contention(c.instance),
        })
    labels = list(dict.fromkeys(c.spec.label for c in cells if c.spec.label != FLAT_BOUND))
    out = []
    for key, row in sorted(info.items()):
        sel = df[(df["seed"] == key[0]) & (df["num_gpus"] == key[1]) & (df["resources"] == key[2])]
        rec: dict[str, Any] = dict(row)
        bounds: dict[str, float] = {}
        errors = 0
        for _, r in sel.iterrows():
            ok = r["status"] != "error" and r["value"] is not None and not pd.isna(r["value"])
            errors += not ok
            if r["method"] != FLAT_BOUND:
                rec[f"value_{r['method']}"] = float(r["value"]) if ok else math.nan
            ub = r.get("upper_bound")
            if ok and ub is not None and not pd.isna(ub):
                bounds["milp-flat" if r["method"] == FLAT_BOUND else str(r["method"])] = float(ub)
        if extra_bounds and key in extra_bounds:
            bounds["lagrangian"] = float(extra_bounds[key])
        for m in labels:
            rec.setdefault(f"value_{m}", math.nan)
        if bounds:
            src = min(bounds, key=lambda k: bounds[k])
            rec["bound"], rec["bound_source"] = bounds[src], src
        else:
            rec["bound"], rec["bound_source"] = math.nan, ""
        values = [rec[f"value_{m}"] for m in labels if not math.isnan(rec[f"value_{m}"])]
        rec["optimal"] = bool(values) and max(values) >= rec["bound"] - 1e-6 * max(1.0, abs(rec["bound"]))
        fifo = rec.get("value_fifo", math.nan)
        for m in labels:
            v = rec[f"value_{m}"]
            rec[f"gain_{m}_pct"] = 100.0 * (v - fifo) / fifo if fifo and fifo > 0 else math.nan
        for m in labels:
            v, b = rec[f"value_{m}"], rec["bound"]
            rec[f"gap_{m}_pct"] = _gap_pct(v, b)
        rec["errors"] = errors
        out.append(rec)
    frame = pd.DataFrame(out)
    if frame.empty:
        return frame
    cols = (["day", "num_gpus", "resources", "jobs", "contention"] + [f"value_{m}" for m in labels]
            + ["bound", "bound_source", "optimal"]
            + [f"gain_{m}_pct" for m in labels if m != "fifo"]
            + [f"gap_{m}_pct" for m in labels] + ["errors"])
    frame = frame[cols]
    return frame.sort_values(["resources", "contention", "day", "num_gpus"],
                             kind="stable").reset_index(drop=True)


def _gap_pct(value: float, bound: float) -> float:
    """``100 (bound - value) / bound``; 0 within the project's tolerance of the bound
    (:func:`instances.gap`, so that a value at a bound but for float noise is optimal)."""
    if not (bound and bound > 0) or math.isnan(value):
        return math.nan
    return 0.0 if gap(value, bound) == 0.0 else 100.0 * (bound - value) / bound


def _col(g: pd.DataFrame, name: str) -> pd.Series:
    return g[name] if name in g.columns else pd.Series(np.nan, index=g.index)


def real_summary(frame: pd.DataFrame, bands: Sequence[float] = CONTENTION_BANDS) -> pd.DataFrame:
    """The real-cluster table: instances by contention band, the medians of each band.

    Per band: FIFO's gap to the bound (median and largest), the best backfilling
    baseline's, ``list``'s and ``best``'s, the gains of ``list`` and ``best`` over
    FIFO, and how many instances FIFO solves to the bound.
    """
    if frame.empty:
        raise ValueError("frame: no instance in the results")
    labels = [str(b) if math.isinf(b) else f"{b:g}" for b in bands]
    names = [f"{a}-{b}" if b != "inf" else f">= {a}" for a, b in itertools.pairwise(labels)]
    band = pd.cut(frame["contention"], list(bands), right=False, labels=names)
    backfill = [f"gap_{m}_pct" for m in REAL_BASELINES if f"gap_{m}_pct" in frame.columns]
    f = frame.assign(
        band=band,
        backfill=frame[backfill].min(axis=1) if backfill else np.nan,
        fifo_opt=frame["gap_fifo_pct"] <= 1e-6,
    )
    rows = []
    for name, g in f.groupby("band", observed=True):
        rows.append({
            "contention": name,
            "instances": len(g),
            "fifo gap %": g["gap_fifo_pct"].median(),
            "fifo gap % (max)": g["gap_fifo_pct"].max(),
            "best backfill gap %": g["backfill"].median(),
            "list gap %": _col(g, "gap_list_pct").median(),
            "best gap %": _col(g, "gap_best_pct").median(),
            "list gain over fifo % (median)": _col(g, "gain_list_pct").median(),
            "best gain over fifo % (median)": _col(g, "gain_best_pct").median(),
            "best gain over fifo % (max)": _col(g, "gain_best_pct").max(),
            "fifo optimal": int(g["fifo_opt"].sum()),
        })
    return pd.DataFrame(rows)


@dataclass
class RealReport:
    """What :func:`reproduce_real` did and wrote: ``frame`` holds every (day, pool,
    resources), ``table`` the bands of the ``gpus`` rows."""

    summary: BenchSummary
    frame: pd.DataFrame
    table: pd.DataFrame
    files: list[Path]

    @property
    def rounding(self) -> pd.DataFrame:
        """What the whole-GPU rounding did, per day and pool (:func:`gpusched.tables.rounding_frame`)."""
        from ..tables.real import rounding_frame

        return rounding_frame(self.frame)


def reproduce_real(
    out: str | os.PathLike[str], *, days: Sequence[int] = REAL_DAYS,
    pools: Sequence[int] = REAL_POOLS, time_limit: float = REAL_TIME_LIMIT,
    best_time_limit: float = REAL_BEST_TIME_LIMIT,
    inference_share: float = OPENB_INFERENCE_SHARE, workers: int | None = None,
    scheduler: str | None = None, progress: bool = True,
    methods: Sequence[str] = REAL_METHODS, retry_errors: bool = True,
    resources: Sequence[str] = REAL_RESOURCES,
) -> RealReport:
    """Run (or resume) the real-cluster reproduction in ``out``; write its table and plot.

    Parameters
    ----------
    out
        Results folder: the sweep, then ``real.csv``, ``tables/real.{md,csv}``,
        ``plots/real-contention.{png,pdf}`` and, with ``full``, ``real-full.csv`` and
        ``tables/real-resources.{md,tex,csv}`` (:func:`write_real`).
    time_limit
        Seconds per MILP solve; also the budget of ``milp.bound``.
    workers, scheduler, progress, retry_errors
        As in :func:`gpusched.sweep.run_bench` (a failed cell is run again by default).
    resources
        Some of :data:`REAL_RESOURCES` (default both).
    """
    out = Path(out)
    for key, v in (("time_limit", time_limit), ("best_time_limit", best_time_limit)):
        if not (isinstance(v, (int, float)) and v >= 0):
            raise ValueError(f"{key}: must be a number >= 0, got {v!r}")
    cells = real_cells(days, pools, time_limit=time_limit, best_time_limit=best_time_limit,
                       inference_share=inference_share, methods=methods, resources=resources)
    summary = run_bench(cells, out, workers=workers, scheduler=scheduler, progress=progress,
                        retry_errors=retry_errors)
    return RealReport(summary, *finish_real(out, cells, time_limit))


def finish_real(out: str | os.PathLike[str], cells: Sequence[Cell], time_limit: float,
                ) -> tuple[pd.DataFrame, pd.DataFrame, list[Path]]:
    """After the sweep of ``cells`` in ``out``: the Lagrangian bounds (``time_limit`` s
    each), the per-instance frame (every resources), the table by contention band (of
    the ``gpus`` rows, or of the ``full`` ones in a run without ``gpus``) and their files."""
    df = tag_resources(cell_rows(out, cells), cells)
    extra = lagrangian_bounds(cells, Path(out), time_limit, best_values(df))
    frame = real_frame(df, cells, extra)
    table = real_summary(_main_rows(frame))
    return frame, table, write_real(out, frame, table)


def _main_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of the main table: ``gpus`` (as in a run of version 2 alone) if any."""
    if frame.empty or "gpus" not in set(frame["resources"]):
        return frame
    return frame[frame["resources"] == "gpus"].reset_index(drop=True)


def write_real(out: str | os.PathLike[str], frame: pd.DataFrame, table: pd.DataFrame) -> list[Path]:
    """Write under ``out``: ``real.csv`` (the main rows, :func:`_main_rows`, with the
    columns of a run of version 2 alone), ``tables/real.md`` and ``tables/real.csv`` (the
    table), ``plots/real-contention.{png,pdf}``; with ``full`` rows beside ``gpus`` ones,
    ``real-full.csv`` (those rows) and ``tables/real-resources.{md,tex,csv}``, what the
    whole-GPU rounding did per day and pool (:mod:`gpusched.tables.real`).
    """
    from ..plots import save_figure
    from ..plots_real import plot_real
    from ..tables.real import rounding_frame, rounding_view

    out = Path(out)
    main = _main_rows(frame)
    files = [out / "real.csv", out / "tables" / "real.md", out / "tables" / "real.csv"]
    files[1].parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(files[0], main.drop(columns="resources").to_csv(index=False))
    atomic_write_text(files[1], table.to_markdown(index=False, floatfmt=".1f") + "\n")
    atomic_write_text(files[2], table.to_csv(index=False))
    files += save_figure(plot_real(main)[0], out / "plots" / "real-contention")
    full = frame[frame["resources"] == "full"]
    if len(full) and len(main) and set(main["resources"]) == {"gpus"}:
        path = out / "real-full.csv"
        atomic_write_text(path, full.drop(columns="resources").to_csv(index=False))
        view = rounding_view(rounding_frame(frame))
        files.append(path)
        for fmt, suffix in (("markdown", "md"), ("latex", "tex"), ("csv", "csv")):
            path = out / "tables" / f"real-resources.{suffix}"
            atomic_write_text(path, view.render(fmt))
            files.append(path)
    return files
