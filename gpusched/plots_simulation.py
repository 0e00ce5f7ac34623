"""Plots of online operation: the headroom trade-off and a day's timeline, drawn from
what :func:`gpusched.simulate` reported (nothing is recomputed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes

from .plots import new_axes
from .simulate import SimResult

__all__ = ["plot_day_timeline", "plot_tradeoff"]

INFERENCE_COLOR = "#C44E52"
BATCH_COLOR = "#4C72B0"
FORECAST_COLOR = "#555555"

_LABELS = {
    "unserved_gpu_slots": "inference GPU-slots unserved",
    "preemptions": "preemptions",
    "lost_gpu_slots": "GPU-slots of work lost",
}


def _row(r: SimResult | Mapping[str, Any]) -> Mapping[str, Any]:
    return r.to_row() if isinstance(r, SimResult) else r


def plot_tradeoff(
    results: Sequence[SimResult | Mapping[str, Any]],
    *,
    x: str = "unserved_gpu_slots",
    baseline: SimResult | Mapping[str, Any] | None = None,
    label: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Realized value against inference unserved (or preemptions, or work lost), one point
    per headroom in the order of ``H``, labelled ``label`` (default: the method).

    Parameters
    ----------
    results
        Results (or rows) of one method at increasing headroom (:func:`gpusched.simulate.headroom_sweep`).
    x
        ``unserved_gpu_slots``, ``preemptions`` or ``lost_gpu_slots``.
    baseline
        The static end of the trade-off (FIFO-peak), drawn as a square.
    """
    if x not in _LABELS:
        raise ValueError(f"x: must be one of {sorted(_LABELS)}, got {x!r}")
    ax = new_axes(ax, (6.0, 4.0))
    rows = sorted((_row(r) for r in results), key=lambda r: r["headroom"])
    if rows:
        xs = [r[x] for r in rows]
        ys = [r["realized_value"] for r in rows]
        ax.plot(xs, ys, "o-", color=BATCH_COLOR, label=label or str(rows[0]["method"]))
        for r, xv, yv in zip(rows, xs, ys):
            ax.annotate(f"H={r['headroom']:.2g}", (xv, yv), textcoords="offset points",
                        xytext=(4, 4), fontsize=7)
    if baseline is not None:
        b = _row(baseline)
        ax.plot([b[x]], [b["realized_value"]], "s", color=FORECAST_COLOR, markersize=8,
                label=f"{b['method']} (replan {b['replan']})")
    bounds = [r["clairvoyant_bound"] for r in [*rows, *([] if baseline is None else [_row(baseline)])]
              if r.get("clairvoyant_bound") is not None]
    every = [*rows, *([] if baseline is None else [_row(baseline)])]
    flow = any(r.get("objective") == "flow" for r in every)
    if bounds:
        ax.axhline(max(bounds), color=INFERENCE_COLOR, linestyle="--", linewidth=1,
                   label="clairvoyant bound")
    ax.set_xlabel(_LABELS[x])
    ax.set_ylabel("realized weighted flow time (job-hours; lower is better)" if flow
                  else "realized value (weighted GPU-hours)")
    ax.legend(fontsize=8)
    return ax


def plot_day_timeline(
    result: SimResult,
    *,
    num_gpus: int | None = None,
    day: int = 0,
    slots_per_day: int | None = 24,
    ax: Axes | None = None,
) -> Axes:
    """One day of a simulation: forecast and actual inference, batch running (stacked on
    the inference served), inference unserved, and each slot's preemptions marked.

    ``num_gpus`` draws the pool as a line; the window is ``[day * slots_per_day,
    (day + 1) * slots_per_day)``, or the whole horizon with ``slots_per_day=None``.
    """
    tl = result.timeline
    T = len(tl["actual"])
    lo, hi = (0, T) if slots_per_day is None else (day * slots_per_day, min(T, (day + 1) * slots_per_day))
    if not 0 <= lo < hi:
        raise ValueError(f"day: slots {lo}..{hi} are outside the horizon of {T} slots")
    ax = new_axes(ax, (8.0, 3.5))
    t = np.arange(lo, hi + 1)

    def steps(a: np.ndarray) -> np.ndarray:
        a = np.asarray(a[lo:hi])
        return np.append(a, a[-1])

    served, batch = steps(tl["served"]), steps(tl["batch"])
    ax.fill_between(t, 0, served, step="post", color=INFERENCE_COLOR, alpha=0.35,
                    label="inference served")
    ax.fill_between(t, served, served + batch, step="post", color=BATCH_COLOR, alpha=0.45,
                    label="batch running")
    ax.step(t, steps(tl["forecast"]), where="post", color=FORECAST_COLOR, linestyle="--",
            label="forecast")
    ax.step(t, steps(tl["actual"]), where="post", color=INFERENCE_COLOR, label="actual")
    unserved = np.asarray(tl["unserved"][lo:hi])
    if unserved.any():
        k = np.flatnonzero(unserved)
        ax.bar(lo + k + 0.5, unserved[k], bottom=np.asarray(tl["served"][lo:hi])[k], width=0.9,
               color="none", edgecolor=INFERENCE_COLOR, hatch="//", label="unserved")
    pre = np.asarray(tl["preempted"][lo:hi])
    top = float(max(num_gpus or 0, (served + batch).max(), steps(tl["actual"]).max())) + 0.5
    if pre.any():
        k = np.flatnonzero(pre)
        ax.plot(lo + k, np.full(k.size, top), "x", color="red", markersize=8, label="preemption")
        for slot, n in zip(lo + k, pre[k]):
            if n > 1:
                ax.annotate(str(int(n)), (slot, top), textcoords="offset points", xytext=(4, -3),
                            fontsize=7, color="red")
    if num_gpus is not None:
        ax.axhline(num_gpus, color="black", linewidth=0.8)
    ax.set_xlim(lo, hi)
    ax.set_ylim(0, top + 1)
    ax.set_xlabel("slot")
    ax.set_ylabel("GPUs")
    ax.set_title(f"{result.method}, replan {result.replan}, headroom {result.headroom:g}")
    ax.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False)
    ax.figure.subplots_adjust(bottom=0.3)
    return ax
