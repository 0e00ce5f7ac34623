"""Plots of the packing experiment: unallocated and fragmented GPUs against arrived load.

FGD's Fig. 9(a) (unallocated GPU % against arrived GPU %) and Fig. 7(a)
(fragmented GPU %) in one figure, one line per policy (the median over the
seeds at each integer arrived percentage), with the bound as a line: below it
no placement of the pods arrived by then can go. They read ``pack.csv``
(:func:`gpusched.tables.packing.pack_frame`).
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

__all__ = ["POLICY_STYLE", "plot_fragmentation", "plot_packing", "plot_unallocated"]

POLICY_STYLE: dict[str, str] = {
    "random": "#8C8C8C", "dotprod": "#DD8452", "clustering": "#937860", "packing": "#DA8BC3",
    "bestfit": "#55A868", "fgd": "#4C72B0", "firstfit": "#8172B3",
}
"""Colour of each policy's line."""


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


def plot_unallocated(df: pd.DataFrame, *, ax: Axes | None = None,
                     policies: Sequence[str] | None = None, start: int = 60) -> Axes:
    """Median unallocated GPU % against arrived GPU % per policy, the bound as a line."""
    ax = _axes(ax)
    df = df[df["arrived_pct"] >= start]
    med = _median(df, "unallocated_pct")
    for pol in _policies(df, policies):
        ax.plot(med.index, med[pol], label=pol, color=POLICY_STYLE.get(pol), linewidth=1.4)
    bound = df.dropna(subset=["bound_pct"]).groupby("arrived_pct")["bound_pct"].median()
    if len(bound):
        ax.plot(bound.index, 100.0 - bound.values, color="black", linestyle="--", marker="o",
                markersize=3.5, linewidth=1.0, label="bound (no placement less)")
    ax.set_xlabel("arrived GPU request, % of the cluster's GPUs")
    ax.set_ylabel("unallocated GPUs, %")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    return ax


def plot_fragmentation(df: pd.DataFrame, *, ax: Axes | None = None,
                       policies: Sequence[str] | None = None, start: int = 0) -> Axes:
    """Median fragmented GPU % (FGD's measure) against arrived GPU % per policy."""
    ax = _axes(ax)
    df = df[df["arrived_pct"] >= start]
    med = _median(df, "fragmentation_pct")
    for pol in _policies(df, policies):
        ax.plot(med.index, med[pol], label=pol, color=POLICY_STYLE.get(pol), linewidth=1.4)
    ax.set_xlabel("arrived GPU request, % of the cluster's GPUs")
    ax.set_ylabel("fragmented GPUs, %")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    return ax


def plot_packing(df: pd.DataFrame, *, policies: Sequence[str] | None = None) -> Figure:
    """Both plots side by side (FGD's Fig. 9a and 7a)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(11.0, 3.8))
    plot_unallocated(df, ax=left, policies=policies)
    plot_fragmentation(df, ax=right, policies=policies)
    seeds = df["seed"].nunique()
    fig.suptitle(f"openb: median over {seeds} seed(s)", fontsize=10)
    fig.tight_layout()
    return fig
