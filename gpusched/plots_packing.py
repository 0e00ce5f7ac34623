"""Plots of the packing experiment: unallocated and fragmented GPUs against arrived load.

FGD's Fig. 9(a) (unallocated GPU % against arrived GPU %) and Fig. 7(a)
(fragmented GPU %) in one figure, one line per policy (the median over the
seeds at each integer arrived percentage), with the bound as a line: below it
no placement of the pods arrived by then can go. They read ``pack.csv``
(:func:`gpusched.tables.packing.pack_frame`).

Several policies' curves lie on top of one another (all of them while every pod
fits; ``clustering`` and ``packing`` at high load): each policy has its own
colour, line style and markers (:data:`POLICY_LINES`), and the earlier ones are
drawn wider and below, so that a curve hidden under another still shows at its
edges.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

__all__ = ["POLICY_LINES", "POLICY_STYLE", "bound_line", "plot_fragmentation", "plot_packing",
           "plot_unallocated"]

POLICY_STYLE: dict[str, str] = {
    "random": "#8C8C8C", "dotprod": "#DD8452", "clustering": "#937860", "packing": "#DA8BC3",
    "bestfit": "#55A868", "fgd": "#4C72B0", "first-fit": "#8172B3",
}
"""Colour of each policy's line."""

POLICY_LINES: dict[str, tuple[Any, str]] = {
    "random": ("-", "o"), "dotprod": ("--", "s"), "clustering": ("-", "^"),
    "packing": (":", "v"), "bestfit": ("-.", "D"), "fgd": ("-", "P"),
    "first-fit": ((0, (5, 1, 1, 1, 1, 1)), "X"),
}
"""Line style and marker of each policy's line (others: solid, no marker)."""

MARKERS_PER_LINE = 7
"""About this many markers on each policy's line, at places that differ between policies."""

BOUND_COLOR = "black"


def _axes(ax: Axes | None) -> Axes:
    if ax is not None:
        return ax
    _, new = plt.subplots(figsize=(6.0, 3.6))
    return new  # type: ignore[no-any-return]


def _policies(df: pd.DataFrame, policies: Sequence[str] | None) -> list[str]:
    have = list(dict.fromkeys(df["policy"]))
    if policies is not None:
        return [p for p in policies if p in have]
    return [p for p in POLICY_STYLE if p in have] + [p for p in have if p not in POLICY_STYLE]


def _median(df: pd.DataFrame, column: str) -> pd.DataFrame:
    return df.groupby(["policy", "arrived_pct"])[column].median().unstack(0)


def _lines(ax: Axes, med: pd.DataFrame, names: Sequence[str]) -> None:
    """One line per policy, each in its own style; the earlier drawn wider and below."""
    n = max(1, len(names) - 1)
    for i, pol in enumerate(names):
        y = med[pol].dropna()
        style, marker = POLICY_LINES.get(pol, ("-", ""))
        step = max(1, len(y) // MARKERS_PER_LINE)
        ax.plot(y.index, y.to_numpy(), label=pol, color=POLICY_STYLE.get(pol),
                linestyle=style, marker=marker or None, markersize=4.5,
                markevery=(int(i * step / max(1, len(names))) % step, step),
                markerfacecolor="white" if i % 2 else POLICY_STYLE.get(pol),
                linewidth=1.2 + 1.6 * (len(names) - 1 - i) / n, zorder=2 + i)


def bound_line(df: pd.DataFrame, start: int) -> tuple[np.ndarray, np.ndarray, pd.Series]:
    """The bound on unallocated GPU % as a line over every arrived load it covers.

    ``bound_pct`` is computed at a few arrived levels (the median over the seeds with a
    bound). The bound computed at level ``L`` also holds at every load below ``L``: the
    pods arrived by then are some of those arrived by ``L``, and no placement of fewer
    pods holds more. So the line is a step: from ``start`` (or the previous level) up to
    each level, ``100 - bound`` at that level. Returns the line's x and y, and the levels
    computed with their values (empty where no bound is in ``df``).
    """
    at = (df.dropna(subset=["bound_pct"]).groupby("arrived_pct")["bound_pct"].median()
          .sort_index())
    levels = 100.0 - at
    xs: list[float] = []
    ys: list[float] = []
    prev = float(start)
    for lv, y in levels.items():
        lo = min(prev, float(lv))
        xs += [lo, float(lv)]
        ys += [float(y), float(y)]
        prev = float(lv)
    return np.array(xs), np.array(ys), levels


def plot_unallocated(df: pd.DataFrame, *, ax: Axes | None = None,
                     policies: Sequence[str] | None = None, start: int = 60) -> Axes:
    """Median unallocated GPU % against arrived GPU % per policy, the bound as a line
    (:func:`bound_line`) with the region below it shaded: no placement reaches there."""
    ax = _axes(ax)
    df = df[df["arrived_pct"] >= start]
    _lines(ax, _median(df, "unallocated_pct"), _policies(df, policies))
    xs, ys, levels = bound_line(df, start)
    if len(levels):
        computed = ", ".join(f"{lv:g}" for lv in levels.index)
        ax.fill_between(xs, 0.0, ys, color=BOUND_COLOR, alpha=0.08, linewidth=0, zorder=1)
        ax.plot(xs, ys, color=BOUND_COLOR, linestyle="--", linewidth=1.2, zorder=20,
                label=f"bound (no placement less; computed at {computed}%)")
        ax.plot(levels.index, levels.to_numpy(), linestyle="none", marker="o", markersize=4,
                color=BOUND_COLOR, zorder=21)
    ax.set_xlabel("arrived GPU request, % of the cluster's GPUs")
    ax.set_ylabel("unallocated GPUs, %")
    top = ax.get_ylim()[1]
    ax.set_ylim(-0.02 * top, top)  # a bound at 0 shows above the axis line
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    return ax


def plot_fragmentation(df: pd.DataFrame, *, ax: Axes | None = None,
                       policies: Sequence[str] | None = None, start: int = 0) -> Axes:
    """Median fragmented GPU % (FGD's measure) against arrived GPU % per policy."""
    ax = _axes(ax)
    df = df[df["arrived_pct"] >= start]
    _lines(ax, _median(df, "fragmentation_pct"), _policies(df, policies))
    ax.set_xlabel("arrived GPU request, % of the cluster's GPUs")
    ax.set_ylabel("fragmented GPUs, %")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    return ax


def plot_packing(df: pd.DataFrame, *, policies: Sequence[str] | None = None,
                 start: int = 60) -> Figure:
    """Both plots side by side (FGD's Fig. 9a and 7a), on one x axis from ``start`` %
    arrived, with one legend for both."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(11.0, 4.6), sharex=True,
                                      layout="constrained")
    plot_unallocated(df, ax=left, policies=policies, start=start)
    plot_fragmentation(df, ax=right, policies=policies, start=start)
    handles, labels = left.get_legend_handles_labels()
    for ax in (left, right):
        legend = ax.get_legend()
        if legend is not None:
            legend.remove()
    right.tick_params(labelleft=True)
    if len(df):
        left.set_xlim(start, max(start + 1, int(df["arrived_pct"].max())))
    fig.legend(handles, labels, loc="outside lower center", ncol=min(4, max(1, len(labels))),
               fontsize=8, frameon=False)
    seeds = df["seed"].nunique()
    fig.suptitle(f"openb: median over {seeds} seed(s)", fontsize=10)
    return fig
