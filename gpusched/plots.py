"""Plots: Gantt chart, utilization (and fragmentation) over time, gaps, performance profiles.

Free functions ``plot_x(..., ax=None) -> Axes`` (:func:`save_figure` writes
PNG and PDF). They read the numbers the tables read: usage from the instance
and the schedule, stranded GPUs from the checker, gaps from the rows.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullLocator

from instances import Instance, Schedule, evaluate, stranded_gpus

from .plots_text import FittedLabel, short_names

__all__ = [
    "KIND_COLORS",
    "assign_gpus",
    "contiguous_rows",
    "new_axes",
    "node_rows",
    "performance_profile",
    "plot_fragmentation",
    "plot_gantt",
    "plot_gaps",
    "plot_performance_profile",
    "plot_utilization",
    "profile_end",
    "profile_ticks",
    "save_figure",
    "split_jobs",
]

KIND_COLORS: dict[str, str] = {
    "training": "#4C72B0",
    "batch_inference": "#DD8452",
    "quantization": "#55A868",
    "other": "#8172B3",
}
"""Colour of each job kind."""

_MPL = tuple(int(x) for x in matplotlib.__version__.split(".")[:2])

INFERENCE_COLOR = "#C44E52"
IDLE_COLOR = "#EEEEEE"
STRANDED_COLOR = "#8C564B"
NODE_BAND_COLOR = "#F4F4F4"
SHARE_IDLE_COLOR = "#B7C7E6"
FULL_MILLI = 1000  # gpu_milli of one whole GPU
FONT_SIZE = 8
"""Smallest font size of any text in a figure (points)."""
NOT_IDENTITIES = "GPU count (rows are not GPU identities)"
"""The Gantt chart's y label when a job had to be drawn in pieces (:func:`split_jobs`)."""


# ---------------------------------------------------------------- GPU assignment
def node_rows(inst: Instance) -> list[tuple[str, int, int]]:
    """The Gantt chart's GPU rows of each node: ``(name, first row, GPUs)`` in node order.

    A flat pool is one band of all ``G`` rows (named ``"pool"``).
    """
    if inst.nodes is None:
        return [("pool", 0, inst.num_gpus)]
    out, first = [], 0
    for node in inst.nodes:
        out.append((node.name, first, node.gpus))
        first += node.gpus
    return out


def assign_gpus(inst: Instance, schedule: Schedule) -> dict[str, tuple[int, ...]]:
    """A concrete set of GPUs for every job that runs, held for its whole duration.

    The schedule gives counts (in the pool, or per node), not GPUs; the chart picks the
    rows. Each job gets one block of adjacent rows (on nodes: in each placement node's
    rows of :func:`node_rows`) wherever the schedule allows it (:func:`contiguous_rows`,
    a search over the jobs by start slot). Where no such assignment is found, the
    jobs are taken by start slot and each gets the lowest block of adjacent rows free
    at its start, or, when there is none, the lowest free rows (that job is then drawn
    in pieces: :func:`split_jobs`). On a feasible schedule this never fails. Inference
    takes the highest free GPUs of each slot (it may move between slots; batch work may
    not).

    Raises
    ------
    ValueError
        If the schedule uses more GPUs than the pool (or a node) has at some slot.
    """
    out: dict[str, tuple[int, ...]] = {}
    for band, first, n, items in _band_items(inst, schedule):
        where = "" if inst.nodes is None else f" on node {band!r}"
        rows = _greedy_rows(items, n, where=where)  # the counts fit at every start, or raise
        if any(len(_runs(r)) > 1 for r in rows):
            rows = contiguous_rows(items, n) or min(
                (rows, _greedy_rows(items, n, fit=True)),
                key=lambda rs: sum(len(_runs(r)) > 1 for r in rs))
        for (name, *_), taken in zip(items, rows):
            out[name] = out.get(name, ()) + tuple(first + g for g in taken)
    return {name: out[name] for name in sorted(out, key=lambda j: inst.job_index[j])}


def split_jobs(inst: Instance, gpus: Mapping[str, Sequence[int]]) -> list[str]:
    """The jobs of ``gpus`` (:func:`assign_gpus`) whose rows on one node (or in the pool)
    are not one block of adjacent rows: the chart draws them in pieces."""
    cuts = [first for _, first, _ in node_rows(inst)]
    out = []
    for name, held in gpus.items():
        bands = {max(c for c in cuts if c <= g) for g in held}
        if len(_split_at(_runs(held), cuts)) > len(bands):
            out.append(name)
    return out


Item = tuple[str, int, int, int]
"""A job's stay in one band of rows: ``(job, start, end, GPUs)``."""


def _band_items(inst: Instance, schedule: Schedule) -> list[tuple[str, int, int, list[Item]]]:
    """Per band of rows (the pool, or each node): its name, first row and rows, and the
    jobs that hold GPUs there, by start slot (then job order)."""
    idx = inst.job_index
    order = sorted(schedule.starts.items(), key=lambda kv: (kv[1], idx[kv[0]]))
    bands = node_rows(inst)
    where = {name: k for k, (name, _, _) in enumerate(bands)}
    per: list[list[Item]] = [[] for _ in bands]
    for name, s in order:
        job = inst.jobs[idx[name]]
        if inst.nodes is None:
            on = {"pool": job.gpus}
        else:
            on = {k: c for k, c in schedule.placement.get(name, {}).items() if c > 0}
            if sum(on.values()) != job.gpus or not set(on) <= set(where):
                raise ValueError(f"schedule: job {name!r} has no valid placement ({dict(on)})")
        for k, c in on.items():
            per[where[k]].append((name, s, s + job.duration, c))
    return [(name, first, n, items) for (name, first, n), items in zip(bands, per) if items]


def _free_runs(ok: np.ndarray) -> list[tuple[int, int]]:
    """Maximal runs of True in ``ok`` as (first, length)."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], ok.astype(np.int8), [0]])))
    return [(int(a), int(b - a)) for a, b in zip(edges[::2], edges[1::2])]


def _greedy_rows(items: Sequence[Item], n: int, *, fit: bool = False,
                 where: str = "") -> list[tuple[int, ...]]:
    """Rows of each item, taken by start slot: the lowest ``c`` rows free at its start, or
    (``fit``) the lowest block of ``c`` adjacent free rows where there is one."""
    free_at = np.zeros(n, dtype=np.int64)  # slot from which each row is free
    out = []
    for name, s, e, c in items:
        ok = free_at <= s
        cand = np.flatnonzero(ok)
        if len(cand) < c:
            raise ValueError(f"schedule: job {name!r} needs {c} GPUs{where} at slot {s}, "
                             f"only {len(cand)} are free")
        block = next((a for a, length in _free_runs(ok) if length >= c), None) if fit else None
        take = list(range(block, block + c)) if block is not None else cand[:c].tolist()
        free_at[take] = e
        out.append(tuple(int(g) for g in take))
    return out


CONTIGUOUS_BUDGET = 50_000
"""Blocks the search of :func:`contiguous_rows` tries per band before it gives up."""


def contiguous_rows(items: Sequence[Item], n: int,
                    budget: int = CONTIGUOUS_BUDGET) -> list[tuple[int, ...]] | None:
    """One block of adjacent rows of ``0..n-1`` per item, no row held by two items at once,
    or ``None`` when none is found within ``budget`` tries.

    ``items`` (``(job, start, end, GPUs)``, by start slot) are placed in that order. Each
    tries the blocks of rows free at its start, first those flush against a busy row or
    the band's edge, in the tightest gap, lowest first; the search backs up when a job
    finds no block. Such an assignment need not exist, and finding one is hard in general
    (dynamic storage allocation): hence the budget.
    """
    free_at = np.zeros(n, dtype=np.int64)  # slot from which each row is free

    def offsets(s: int, c: int) -> Iterator[int]:
        runs = [(a, length) for a, length in _free_runs(free_at <= s) if length >= c]
        flush = sorted({(length - c, o) for a, length in runs for o in (a, a + length - c)})
        yield from (o for _, o in flush)
        for a, length in runs:  # then the blocks inside a gap, lowest first
            yield from range(a + 1, a + length - c)

    # an explicit stack: the jobs' offsets to try, the one taken, the rows' slots before it
    stack: list[tuple[Iterator[int], int, np.ndarray]] = []
    tries = 0
    k = 0
    todo = offsets(items[0][1], items[0][3]) if items else iter(())
    while k < len(items):
        *_, e, c = items[k]
        o = next(todo, None) if tries < budget else None
        if o is not None:
            tries += 1
            stack.append((todo, o, free_at[o : o + c].copy()))
            free_at[o : o + c] = e
            k += 1
            if k < len(items):
                todo = offsets(items[k][1], items[k][3])
            continue
        if tries >= budget or not stack:
            return None
        k -= 1  # back up: undo job k's block and try its next one
        todo, o, saved = stack.pop()
        free_at[o : o + items[k][3]] = saved
    return [tuple(range(o, o + c)) for (_, o, _), (*_, c) in zip(stack, items)]


def _occupancy(inst: Instance, schedule: Schedule, gpus: Mapping[str, Sequence[int]]) -> np.ndarray:
    """``G x T`` grid: job index (>= 0), -1 idle."""
    grid = -np.ones((inst.num_gpus, inst.horizon), dtype=np.int64)
    for name, s in schedule.starts.items():
        j = inst.job_index[name]
        p = inst.jobs[j].duration
        for g in gpus[name]:
            if (grid[g, s : s + p] >= 0).any():
                raise ValueError(f"schedule: GPU {g} is given to two jobs (job {name!r})")
            grid[g, s : s + p] = j
    return grid


def _runs(values: Sequence[int]) -> list[tuple[int, int]]:
    """Maximal runs of consecutive integers as (first, count)."""
    out: list[tuple[int, int]] = []
    for v in sorted(values):
        if out and out[-1][0] + out[-1][1] == v:
            out[-1] = (out[-1][0], out[-1][1] + 1)
        else:
            out.append((v, 1))
    return out


def _split_at(runs: Sequence[tuple[int, int]], cuts: Sequence[int]) -> list[tuple[int, int]]:
    """``runs`` (first, count) split at every row in ``cuts`` (the first rows of the nodes)."""
    out: list[tuple[int, int]] = []
    for first, n in runs:
        edges = [first, *(c for c in cuts if first < c < first + n), first + n]
        out.extend((a, b - a) for a, b in pairwise(edges))
    return out


def _reserved(inst: Instance, reservation: str) -> np.ndarray:
    inference = np.asarray(inst.total_demand, dtype=np.int64)
    if reservation == "peak":
        peak = int(sum(max(s.demand) for s in inst.services)) if inst.services else 0
        return np.full(inst.horizon, min(peak, inst.num_gpus), dtype=np.int64)
    if reservation == "curve":
        return inference.copy()
    raise ValueError(f"reservation: must be 'peak' or 'curve', got {reservation!r}")


def plot_gantt(
    inst: Instance, schedule: Schedule, *, reservation: str = "curve", ax: Axes | None = None,
    labels: bool = True, title: str | None = None,
) -> Axes:
    """Gantt chart of one schedule, one row per GPU (:func:`assign_gpus`).

    Jobs are bars coloured by kind, inference is shaded on the highest free GPUs,
    and under ``reservation="peak"`` the reserved idle GPUs are hatched. On nodes
    the rows form one labelled band per node; a job on several nodes has a bar on each.
    Each job is one block of adjacent rows (per node) where the schedule allows it; when
    no such drawing is found, a job may be drawn in pieces, and the y axis and the title
    say that the rows count GPUs and are not GPU identities.
    """
    ax = new_axes(ax, (min(14.0, max(6.0, 0.25 * inst.horizon + 2)),
                       min(10.0, max(2.5, 0.35 * inst.num_gpus + 1.6))))
    G, T = inst.num_gpus, inst.horizon
    edge = 0.6 if G <= 64 else 0.15
    gpus = assign_gpus(inst, schedule)
    split = split_jobs(inst, gpus)
    starts = [first for _, first, _ in node_rows(inst)]
    grid = _occupancy(inst, schedule, gpus)
    inference = np.asarray(inst.total_demand, dtype=np.int64)
    reserved = _reserved(inst, reservation)
    for t in range(T):
        free = np.flatnonzero(grid[:, t] < 0)[::-1]  # highest first
        k = int(min(inference[t], len(free)))
        for g0, n in _runs(free[:k].tolist()):
            ax.add_patch(Rectangle((t, g0), 1, n, facecolor=INFERENCE_COLOR, alpha=0.35,
                                   edgecolor="none"))
        idle_res = int(min(max(0, reserved[t] - inference[t]), len(free) - k))
        for g0, n in _runs(free[k : k + idle_res].tolist()):
            ax.add_patch(Rectangle((t, g0), 1, n, facecolor="none", hatch="///",
                                   edgecolor=INFERENCE_COLOR, linewidth=0.0, alpha=0.6))
    for name, s in schedule.starts.items():
        job = inst.jobs[inst.job_index[name]]
        color = KIND_COLORS.get(job.kind, "#999999")
        for g0, n in _split_at(_runs(gpus[name]), starts):
            bar = Rectangle((s, g0 + 0.06), job.duration, n - 0.12, facecolor=color,
                            edgecolor="black", linewidth=edge)
            ax.add_patch(bar)
            if labels and n >= G / 60:  # drawn only where it fits, once laid out
                ax.add_artist(FittedLabel(bar, short_names(name), fontsize=FONT_SIZE,
                                          color="white"))
    ax.set_xlim(0, T)
    ax.set_ylim(0, G)
    if inst.nodes is None:
        step = max(1, math.ceil(G / 16))
        ax.set_yticks(np.arange(0, G, step) + 0.5)
        ax.set_yticklabels([str(g) for g in range(0, G, step)], fontsize=FONT_SIZE)
        ax.set_ylabel(NOT_IDENTITIES.replace(" (", "\n(") if split else "GPU")
    else:
        _node_bands(ax, inst)
        if split:
            ax.set_ylabel(f"node (GPUs)\n{NOT_IDENTITIES}")
    ax.set_xlabel(f"slot ({inst.slot_hours:g} h)")
    head = title or f"{inst.name}: {len(schedule.starts)}/{inst.num_jobs} jobs run"
    if split:
        named = ", ".join(split[:3]) + (", ..." if len(split) > 3 else "")
        note = (f"{len(split)} job(s) drawn in pieces ({named}): no drawing found keeps every "
                "job on adjacent rows; rows are not GPU identities")
        inches = ax.get_window_extent().width / ax.figure.dpi  # the axes' width
        width = max(40, int(11 * inches))
        head += "\n" + textwrap.fill(note, width)
    ax.set_title(head)
    handles = [Patch(facecolor=c, edgecolor="black", label=k)
               for k, c in KIND_COLORS.items() if any(j.kind == k for j in inst.jobs)]
    handles.append(Patch(facecolor=INFERENCE_COLOR, alpha=0.35, label="inference"))
    if reservation == "peak":
        handles.append(Patch(facecolor="none", hatch="///", edgecolor=INFERENCE_COLOR,
                             label="reserved idle"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=FONT_SIZE,
              frameon=False)
    return ax


def _node_bands(ax: Axes, inst: Instance) -> None:
    """Shade every other node's rows, draw the node boundaries, label each band."""
    bands = node_rows(inst)
    every = max(1, math.ceil(len(bands) / 32))  # at most about 32 labels
    ticks, names = [], []
    for k, (name, first, n) in enumerate(bands):
        if k % 2 == 1:
            ax.axhspan(first, first + n, facecolor=NODE_BAND_COLOR, edgecolor="none", zorder=0)
        if k > 0:
            ax.axhline(first, color="black", linewidth=0.8, zorder=3)
        if k % every == 0:
            ticks.append(first + n / 2)
            names.append(f"{name} ({n})")
    ax.set_yticks(ticks)
    ax.set_yticklabels(names, fontsize=FONT_SIZE)
    ax.set_ylabel("node (GPUs)")


def plot_utilization(
    inst: Instance, schedule: Schedule, *, reservation: str = "curve", ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """GPUs in use per slot, stacked: inference, batch, reserved-idle (peak), idle.

    With shared jobs (model version 3) batch is the GPU amount running (a share counts its
    fraction, as utilization does), and the rest of the GPUs that shares keep busy is a
    layer of its own (idle shares of shared GPUs, which no whole-GPU job can take).
    """
    inference, batch, share_idle = _usage(inst, schedule)
    busy = batch + share_idle
    reserved_idle = np.minimum(np.maximum(0, _reserved(inst, reservation) - inference),
                               np.maximum(0, inst.num_gpus - inference - busy))
    layers: list[tuple[np.ndarray, dict[str, Any]]] = [
        (inference, {"color": INFERENCE_COLOR, "alpha": 0.7, "label": "inference"}),
        (batch, {"color": KIND_COLORS["training"], "label": "batch"}),
    ]
    if share_idle.any():
        layers.append((share_idle, {"color": SHARE_IDLE_COLOR, "label": "idle share of shared GPUs"}))
    if reservation == "peak":
        layers.append((reserved_idle, {"color": "white", "edgecolor": INFERENCE_COLOR,
                                       "hatch": "///", "linewidth": 0.0, "label": "reserved idle"}))
    layers.append((inst.num_gpus - inference - busy - reserved_idle,
                   {"color": IDLE_COLOR, "label": "idle"}))
    util = evaluate(inst, schedule).utilization
    return _stacked(new_axes(ax, (8, 3.2)), inst, layers,
                    title or f"{inst.name}: utilization {100 * util:.1f}%")


def plot_fragmentation(
    inst: Instance, schedule: Schedule, *, ax: Axes | None = None, title: str | None = None,
) -> Axes:
    """GPUs per slot, stacked: inference, batch, stranded by the node split
    (:func:`instances.stranded_gpus`), free.
    """
    m = evaluate(inst, schedule)
    stranded = np.asarray(stranded_gpus(inst, schedule), dtype=np.int64)
    inference, batch, share_idle = _usage(inst, schedule)
    batch = batch + share_idle  # GPUs busy with batch work
    layers: list[tuple[np.ndarray, dict[str, Any]]] = [
        (inference, {"color": INFERENCE_COLOR, "alpha": 0.7, "label": "inference"}),
        (batch, {"color": KIND_COLORS["training"], "label": "batch"}),
        (stranded, {"color": STRANDED_COLOR, "label": "stranded (no pending job fits)"}),
        (inst.num_gpus - inference - batch - stranded, {"color": IDLE_COLOR, "label": "free"}),
    ]
    shape = "flat pool" if inst.nodes is None else f"{inst.num_nodes} nodes"
    return _stacked(new_axes(ax, (8, 3.2)), inst, layers,
                    title or f"{inst.name} ({shape}): utilization {100 * m.utilization:.1f}%, "
                             f"fragmentation {m.fragmentation} GPU-slots")


def _usage(inst: Instance, schedule: Schedule) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per slot: inference demand, batch GPUs in use, and the idle share of shared GPUs
    (model version 3: batch is then the GPU amount running, and the last the GPUs that
    shares keep busy less the amount they run; 0 without shared jobs)."""
    T = inst.horizon
    batch = np.zeros(T, dtype=np.float64 if inst.shares_gpus else np.int64)
    shares = np.zeros(T)
    held: dict[tuple[str, int], np.ndarray] = {}  # per GPU carrying shares: the slots it is busy
    for name, s in schedule.starts.items():
        job = inst.jobs[inst.job_index[name]]
        e = s + job.duration
        if job.gpu_milli >= FULL_MILLI:
            batch[s:e] += job.gpus
            continue
        shares[s:e] += job.gpu_milli / FULL_MILLI
        for gpu in ((k, g) for k, idx in schedule.indices.get(name, {}).items() for g in idx):
            held.setdefault(gpu, np.zeros(T, dtype=bool))[s:e] = True
    busy = np.sum(list(held.values()), axis=0) if held else 0
    share_idle = np.maximum(0.0, busy - shares) if held else np.zeros(T, batch.dtype)
    return np.asarray(inst.total_demand, dtype=np.int64), batch + shares.astype(batch.dtype), share_idle


def _stacked(ax: Axes, inst: Instance, layers: Sequence[tuple[np.ndarray, dict[str, Any]]],
             title: str) -> Axes:
    """One stacked bar per slot, ``layers`` from the bottom up, on the pool's axes."""
    x = np.arange(inst.horizon)
    bottom = np.zeros(inst.horizon, dtype=np.int64)
    for values, style in layers:
        ax.bar(x, values, width=1.0, align="edge", bottom=bottom, **style)
        bottom = bottom + values
    ax.set_xlim(0, inst.horizon)
    ax.set_ylim(0, inst.num_gpus)
    ax.set_xlabel(f"slot ({inst.slot_hours:g} h)")
    ax.set_ylabel("GPUs")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # GPUs are whole
    ax.set_title(title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=FONT_SIZE, frameon=False)
    return ax


def new_axes(ax: Axes | None, size: tuple[float, float]) -> Axes:
    """``ax``, or the axes of a new figure of ``size`` inches."""
    if ax is None:
        _, ax = plt.subplots(figsize=size)
    return ax


# ---------------------------------------------------------------- sweep plots
def plot_gaps(df: pd.DataFrame, *, ax: Axes | None = None, methods: Sequence[str] = ()) -> Axes:
    """Distribution of the gap to the best known bound (percent), one box per method.

    ``df`` is :func:`gpusched.tables.prepare` output (or raw rows, prepared here).
    """
    from .tables import prepare

    if "gap_pct" not in df.columns:
        df = prepare(df)
    ax = new_axes(ax, (7, 3.5))
    if methods:
        order = [m for m in methods if m in set(df["method"])]
    else:  # best (smallest median gap) at the top
        med = df.groupby("method")["gap_pct"].median().dropna()
        order = list(med.sort_values(ascending=False, kind="stable").index)
    data, names = [], []
    for m in order:
        v = df.loc[df["method"] == m, "gap_pct"].dropna().to_numpy()
        if len(v):
            data.append(v)
            names.append(m)
    if data:
        horizontal: dict[str, Any] = (
            {"orientation": "horizontal"} if _MPL >= (3, 10) else {"vert": False})
        ax.boxplot(data, showfliers=False, widths=0.5, **horizontal)
        rng = np.random.default_rng(0)
        for i, v in enumerate(data, start=1):
            ax.scatter(v, i + rng.uniform(-0.15, 0.15, len(v)), s=10, alpha=0.6,
                       color=KIND_COLORS["training"], zorder=3)
        ax.set_yticks(range(1, len(names) + 1))
        ax.set_yticklabels(names)
    else:
        ax.text(0.5, 0.5, "no upper bound in these results", ha="center", va="center",
                transform=ax.transAxes)
    ax.set_xlabel("gap to best known upper bound (%)")
    ax.set_title("Gap to the bound per method")
    ax.grid(axis="x", alpha=0.3)
    return ax


def performance_profile(df: pd.DataFrame, measure: str = "value") -> dict[str, np.ndarray]:
    """Dolan-More performance ratios per method (one per instance; ``inf``: failed): best
    value over the method's for ``value``, the method's time over the best for ``runtime_s``.
    """
    key = "instance_hash" if "instance_hash" in df.columns else "instance"
    ok = df["status"] != "error"
    piv = df[ok].pivot_table(index=key, columns="method", values=measure, aggfunc="first")
    piv = piv.reindex(index=sorted(set(df[key])), columns=list(dict.fromkeys(df["method"])))
    a = piv.to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        if measure == "value":
            best = np.nanmax(np.where(np.isnan(a), -np.inf, a), axis=1, keepdims=True)
            r = np.where(a >= best, 1.0, best / a)
        else:
            best = np.nanmin(np.where(np.isnan(a), np.inf, a), axis=1, keepdims=True)
            best = np.maximum(best, 1e-6)
            r = np.maximum(a, 1e-6) / best
    r = np.where(np.isnan(a) | ~np.isfinite(r) | (r < 0), np.inf, r)
    return {m: r[:, i] for i, m in enumerate(piv.columns)}


def plot_performance_profile(
    df: pd.DataFrame, *, measure: str = "value", ax: Axes | None = None,
    methods: Sequence[str] = (),
) -> Axes:
    """Dolan-More performance profile: share of instances within a factor tau of the best."""
    ax = new_axes(ax, (6, 3.8))
    ratios = performance_profile(df, measure)
    if methods:
        names = [m for m in methods if m in ratios]
    else:  # legend from the most robust method down
        names = sorted(ratios, key=lambda m: (-float(np.mean(ratios[m] <= 1.0)),
                                              -float(np.mean(ratios[m] <= 2.0)), m))
    finite = np.concatenate([r[np.isfinite(r)] for r in ratios.values()] or [np.array([1.0])])
    tau_max = profile_end(float(finite.max())) if len(finite) else 2.0
    # Curves often coincide (best and milp both at ratio 1): each method has its own
    # line style and marker, and the earlier (more robust) ones are drawn wider and
    # below, so a curve hidden exactly under another still shows as its border.
    n_names = max(1, len(names) - 1)
    for i, m in enumerate(names):
        r = np.sort(ratios[m])
        n = len(r)
        taus = np.concatenate([[1.0], r[np.isfinite(r)], [tau_max]])
        frac = np.array([np.count_nonzero(r <= t) / n for t in taus])
        ax.step(taus, frac, where="post", label=m, zorder=2 + i,
                linewidth=1.2 + 2.4 * (len(names) - 1 - i) / n_names,
                linestyle=PROFILE_LINESTYLES[i % len(PROFILE_LINESTYLES)],
                marker=PROFILE_MARKERS[i % len(PROFILE_MARKERS)], markersize=5,
                markevery=[0, len(taus) - 1], fillstyle="none" if i % 2 else "full",
                clip_on=False)  # the end markers sit on the axes' edges: draw them whole
    ax.set_xscale("log", base=2)
    ax.set_xlim(1.0, tau_max)
    ax.xaxis.set_major_locator(FixedLocator(profile_ticks(tau_max)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_ylim(0.0, 1.02)
    ratio = ("the instance's highest value / the method's value" if measure == "value"
             else f"the method's {measure} / the instance's smallest")
    ax.set_xlabel(f"tau = {ratio} (log scale)")
    ax.set_ylabel("share of instances with ratio ≤ tau")
    ax.set_title(f"Performance profile ({measure})")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=FONT_SIZE)
    return ax


def profile_end(largest: float) -> float:
    """Where a profile's log axis ends: past the largest finite ratio by a tenth of the
    axis (at least 1.05), so that the last step of every curve shows before the edge."""
    span = math.log(max(largest, 1.0))
    return max(1.05, math.exp(span / 0.9))


PROFILE_LINESTYLES: tuple[Any, ...] = ("-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)))
PROFILE_MARKERS: tuple[str, ...] = ("o", "s", "^", "D", "v", "P", "X", "*")


def profile_ticks(tau_max: float, most: int = 8) -> list[float]:
    """Labelled ticks for a log axis from 1 to ``tau_max``: at least 3, at most ``most``,
    from 1, 1.01, 1.02, 1.05, 1.1, 1.2, 1.5, 2, 3, 5 and their multiples of ten, spaced
    so that their labels do not overlap.
    """
    nice = [1.0, 1.01, 1.02, 1.05, 1.1, 1.2, 1.5]
    k = 0
    while 10.0**k <= tau_max:
        nice += [m * 10.0**k for m in (2, 3, 5, 10)]
        k += 1
    span = math.log(max(tau_max, 1.0 + 1e-9))
    min_step = span / (most - 1)
    ticks = [1.0]
    for t in sorted(set(nice)):
        if 1.0 < t <= tau_max * (1 + 1e-9) and math.log(t) - math.log(ticks[-1]) >= min_step:
            ticks.append(t)
    if len(ticks) < 3:  # a narrow axis: split it evenly in log space
        ticks = [float(t) for t in np.geomspace(1.0, tau_max, 3)]
    return ticks


def save_figure(ax: Axes, path: str | Path, formats: Sequence[str] = ("png", "pdf"),
                dpi: int = 150) -> list[Path]:
    """Save the figure of ``ax`` as ``path`` with each suffix of ``formats``; close it."""
    fig: Any = ax.figure
    fig.tight_layout()
    out = []
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    for fmt in formats:
        q = p.with_suffix(f".{fmt}")
        fig.savefig(q, dpi=dpi, bbox_inches="tight")
        out.append(q)
    plt.close(fig)
    return out

