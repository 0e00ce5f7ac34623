"""The plot of ``gpusched reproduce arrivals``: mean JCT against load, per policy, with the bound.

The field's standard figure (mean JCT against the arrival rate, one line per
policy) with the optimum's side added: under ``flow`` the optimum's weighted mean
JCT lies between the Lagrangian lower bound and the best policy found, and that
band is shaded. It reads the frame of :func:`gpusched.reproduce.arrivals_frame`
(averaged over the seeds by :func:`gpusched.tables.arrivals.arrival_summary`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from .plots import new_axes
from .tables.arrivals import arrival_summary

__all__ = ["POLICY_STYLE", "plot_arrivals", "plot_jct_vs_load"]

POLICY_STYLE: dict[str, tuple[str, str]] = {
    "fifo": ("#C44E52", "o"),
    "easy": ("#8172B3", "v"),
    "list-wspt": ("#CCB974", "D"),
    "list-sjf": ("#55A868", "^"),
    "parallel-sjf": ("#64B5CD", "<"),
    "best": ("#4C72B0", "s"),
}
"""Colour and marker of each policy's line (others: grey crosses)."""


def plot_jct_vs_load(
    frame: pd.DataFrame, trace: str, *, ax: Axes | None = None,
    methods: Sequence[str] = (), value_best: bool = True,
) -> Axes:
    """Mean JCT (hours, log scale) against load of each policy on ``trace``'s instances
    judged by ``flow``, the band between the lower bound and the best policy shaded
    (the optimum lies in it); with ``value_best``, ``best`` on the instances judged by
    ``value`` dashed (what the seed's allocator does to the JCT).
    """
    ax = new_axes(ax, (5.0, 3.4))
    s = arrival_summary(frame[frame["trace"] == trace])
    f = s[s["objective"] == "flow"]
    pols = list(methods) or list(dict.fromkeys(f["method"]))
    for m in pols:
        g = f[f["method"] == m].sort_values("load")
        if g.empty:
            continue
        colour, marker = POLICY_STYLE.get(m, ("0.4", "x"))
        ax.plot(g["load"], g["mean_jct_hours"], color=colour, marker=marker, markersize=4,
                linewidth=1.2, label=m, zorder=3)
    by_load = f.groupby("load")
    lo = by_load["jct_bound_hours"].mean()
    hi = by_load["mean_jct_hours"].min()
    both = pd.concat([lo, hi], axis=1, keys=["lo", "hi"]).dropna().sort_index()
    if len(both):
        ax.fill_between(both.index, both["lo"], both["hi"], color="0.75", alpha=0.5,
                        linewidth=0, label="optimum lies here", zorder=1)
        ax.plot(both.index, both["lo"], color="0.3", linestyle=":", linewidth=1.0,
                label="lower bound", zorder=2)
    if value_best:
        v = s[(s["objective"] == "value") & (s["method"] == "best")].sort_values("load")
        if len(v):
            ax.plot(v["load"], v["mean_jct_hours"], color=POLICY_STYLE["best"][0],
                    linestyle="--", linewidth=1.0, label="best for value", zorder=3)
    if len(f) and np.all(f["mean_jct_hours"].dropna() > 0):
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("load (arrival rate over the log's)")
    ax.set_ylabel("mean JCT (hours)")
    ax.set_title(trace, fontsize=9)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, frameon=False, ncol=2)
    return ax


def plot_arrivals(frame: pd.DataFrame, methods: Sequence[str] = ()) -> Any:
    """:func:`plot_jct_vs_load` for every trace of the frame, side by side; returns the axes."""
    traces = list(dict.fromkeys(frame["trace"]))
    if not traces:
        raise ValueError("frame: no trace in the results")
    fig, axes = plt.subplots(1, len(traces), figsize=(5.0 * len(traces), 3.6), squeeze=False)
    for ax, t in zip(axes[0], traces, strict=True):
        plot_jct_vs_load(frame, t, ax=ax, methods=methods)
    fig.suptitle("Mean JCT against load (instances judged by flow)", fontsize=10)
    return axes[0]
