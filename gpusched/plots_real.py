"""Plots of the real-cluster reproduction: gain and gap to the bound against contention.

They read the frame of :func:`gpusched.reproduce.real_frame` (one row per
openb day and pool size); every number there comes from the sweep's rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from .plots import new_axes

__all__ = ["plot_gain_vs_contention", "plot_gap_vs_contention", "plot_real"]

METHOD_STYLE: dict[str, tuple[str, str]] = {
    "fifo": ("#C44E52", "o"),
    "best": ("#4C72B0", "s"),
    "list": ("#55A868", "^"),
    "easy-curve": ("#8172B3", "v"),
}
"""Colour and marker of each method's points."""


CONTENTION_TICKS: tuple[float, ...] = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0)
"""Ticks of the (logarithmic) contention axis."""


def _contention_axis(ax: Axes) -> None:
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(list(CONTENTION_TICKS)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.axvline(1.0, color="0.6", linewidth=0.8, linestyle=":")
    ax.set_xlabel("contention: batch GPU-slots / GPU-slots inference leaves")


def _pools(frame: pd.DataFrame) -> list[int]:
    return sorted(int(g) for g in frame["num_gpus"].unique())


def plot_gain_vs_contention(
    frame: pd.DataFrame, *, ax: Axes | None = None, methods: Sequence[str] = ("best", "list"),
) -> Axes:
    """Value gain over ``fifo`` (%) of each method against contention, one point per (day,
    pool): colour by pool, marker by method (the first filled); dotted at contention 1.
    """
    ax = new_axes(ax, (6.0, 3.2))
    pools = _pools(frame)
    shades = plt.get_cmap("viridis")(np.linspace(0.0, 0.85, max(1, len(pools))))
    for k, m in enumerate(methods):
        col = f"gain_{m}_pct"
        if col not in frame.columns or frame[col].isna().all():
            continue
        marker = METHOD_STYLE.get(m, ("0.3", "x"))[1]
        for g, colour in zip(pools, shades):
            sub = frame[frame["num_gpus"] == g]
            style: dict[str, Any] = (
                {"color": colour} if k == 0 else {"facecolors": "none", "edgecolors": colour}
            )
            ax.scatter(sub["contention"], sub[col], s=20, marker=marker,
                       label=f"{m}, {g} GPUs", zorder=3, **style)
    ax.axhline(0.0, color="0.6", linewidth=0.8)
    _contention_axis(ax)
    ax.set_ylabel("value gain over fifo %")
    if ax.get_legend_handles_labels()[0]:  # none when no method has a figure (all failed)
        ax.legend(fontsize=7, frameon=False, ncol=2)
    return ax


def plot_gap_vs_contention(
    frame: pd.DataFrame, *, ax: Axes | None = None, methods: Sequence[str] = ("fifo", "best"),
) -> Axes:
    """Gap to the bound, ``100 (bound - value) / bound``, of each method against contention."""
    ax = new_axes(ax, (6.0, 3.2))
    for m in methods:
        col = f"gap_{m}_pct"
        if col not in frame.columns:
            continue
        colour, marker = METHOD_STYLE.get(m, ("0.3", "x"))
        ax.scatter(frame["contention"], frame[col], s=18, color=colour, marker=marker,
                   label=m, zorder=3, alpha=0.85)
    _contention_axis(ax)
    ax.set_ylim(bottom=min(0.0, ax.get_ylim()[0]))
    ax.set_ylabel("gap to the bound %")
    ax.legend(fontsize=8, frameon=False)
    return ax


def plot_real(frame: pd.DataFrame, methods: Sequence[str] = ("fifo", "list", "best")) -> Any:
    """Both plots, gains over ``fifo`` above and gaps to the bound below on a shared
    contention axis; returns the two axes."""
    fig, axes = plt.subplots(2, 1, figsize=(6.4, 6.0), sharex=True)
    gainers = sorted((m for m in methods if m != "fifo"), key=lambda m: m != "best")
    plot_gain_vs_contention(frame, ax=axes[0], methods=gainers)
    plot_gap_vs_contention(frame, ax=axes[1], methods=methods)
    axes[0].set_xlabel("")
    axes[0].set_title("openb days: where the allocator's gain appears", fontsize=9)
    fig.align_ylabels(axes)
    return axes
