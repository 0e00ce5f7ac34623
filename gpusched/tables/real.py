"""What the whole-GPU rounding did on the openb days: ``gpus`` (version 2) against ``full``
(version 3), per day and pool, from the frame of ``gpusched reproduce real``.

On ``gpus`` a pod asking a share of a GPU takes a whole one; on ``full`` it takes its
share, and GPU models, CPU and memory bind too. FIFO's **loss** is its gap to the
instance's bound, ``100 (bound - fifo) / bound``; ``best``'s **gain** is over FIFO,
``100 (best - fifo) / fifo``. The **rounding's effect** on each is the figure on ``gpus``
less the figure on ``full``, in percentage points: positive where rounding to whole
GPUs overstates it.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .render import Table, TableView

__all__ = ["ROUNDING_COLUMNS", "rounding_frame", "rounding_view"]

ROUNDING_COLUMNS: tuple[str, ...] = (
    "day", "num_gpus", "jobs_gpus", "jobs_full", "contention_gpus", "contention_full",
    "fifo_loss_gpus_pct", "fifo_loss_full_pct", "fifo_loss_rounding_pts",
    "best_gain_gpus_pct", "best_gain_full_pct", "best_gain_rounding_pts", "bound_full",
    "bound_source_full",
)
"""Columns of :func:`rounding_frame`."""


def _get(row: pd.Series, name: str) -> float:
    v = row.get(name, math.nan)
    return float(v) if v is not None and not pd.isna(v) else math.nan


def rounding_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (day, pool) that the frame holds on both ``gpus`` and ``full``.

    ``frame`` is :func:`gpusched.reproduce.real_frame`'s (a ``resources`` column,
    ``gap_fifo_pct``, ``gain_best_pct``). Columns: :data:`ROUNDING_COLUMNS`; a figure a
    side lacks (a method that failed there) is ``nan``, and so is its difference.

    Raises
    ------
    ValueError
        When the frame has no ``resources`` column.
    """
    if "resources" not in frame:
        raise ValueError("frame: no 'resources' column (a frame of gpusched reproduce real)")
    sides = {r: frame[frame["resources"] == r].set_index(["day", "num_gpus"]) for r in ("gpus", "full")}
    keys = sorted(set(sides["gpus"].index) & set(sides["full"].index))
    rows = []
    for key in keys:
        g, f = sides["gpus"].loc[key], sides["full"].loc[key]
        lg, lf = _get(g, "gap_fifo_pct"), _get(f, "gap_fifo_pct")
        bg, bf = _get(g, "gain_best_pct"), _get(f, "gain_best_pct")
        rows.append({
            "day": int(key[0]), "num_gpus": int(key[1]),
            "jobs_gpus": int(g["jobs"]), "jobs_full": int(f["jobs"]),
            "contention_gpus": _get(g, "contention"), "contention_full": _get(f, "contention"),
            "fifo_loss_gpus_pct": lg, "fifo_loss_full_pct": lf, "fifo_loss_rounding_pts": lg - lf,
            "best_gain_gpus_pct": bg, "best_gain_full_pct": bf, "best_gain_rounding_pts": bg - bf,
            "bound_full": _get(f, "bound"), "bound_source_full": str(f.get("bound_source", "") or ""),
        })
    return pd.DataFrame(rows, columns=list(ROUNDING_COLUMNS))


def _num(v: float, digits: int = 1, signed: bool = False) -> str:
    if v is None or not np.isfinite(v):
        return "n/a"
    if abs(v) < 0.5 * 10.0**-digits:  # no "-0.0" for a difference that rounds to nothing
        v = 0.0
    return format(v, f"{'+' if signed else ''}.{digits}f")


def rounding_view(rf: pd.DataFrame) -> TableView:
    """:func:`rounding_frame` as a table (Markdown, LaTeX or CSV by :meth:`TableView.render`)."""
    cols = ["day", "GPUs", "jobs\ngpus / full", "contention\ngpus", "contention\nfull",
            "FIFO loss %\ngpus", "FIFO loss %\nfull", "FIFO loss\nrounding (pts)",
            "best gain %\ngpus", "best gain %\nfull", "best gain\nrounding (pts)",
            "bound on full\n(from)"]
    rows = []
    for _, r in rf.iterrows():
        rows.append([
            str(r["day"]), str(r["num_gpus"]), f"{r['jobs_gpus']} / {r['jobs_full']}",
            _num(r["contention_gpus"], 2), _num(r["contention_full"], 2),
            _num(r["fifo_loss_gpus_pct"]), _num(r["fifo_loss_full_pct"]),
            _num(r["fifo_loss_rounding_pts"], signed=True),
            _num(r["best_gain_gpus_pct"]), _num(r["best_gain_full_pct"]),
            _num(r["best_gain_rounding_pts"], signed=True),
            f"{_num(r['bound_full'], 2)} ({r['bound_source_full'] or 'none'})",
        ])
    loss = rf["fifo_loss_rounding_pts"].dropna()
    gain = rf["best_gain_rounding_pts"].dropna()
    notes = [
        "gpus: a pod asking a share of a GPU takes a whole one (model version 2); full: "
        "its share, with GPU models, CPU and memory (version 3). FIFO loss: 100 (bound - "
        "fifo) / bound; best gain: 100 (best - fifo) / fifo; rounding: gpus less full, in "
        "percentage points. Contention on the GPU amounts.",
        f"Rows with both figures: FIFO loss {len(loss)} (median rounding "
        f"{_num(float(loss.median()) if len(loss) else math.nan, signed=True)} pts), best gain "
        f"{len(gain)} (median {_num(float(gain.median()) if len(gain) else math.nan, signed=True)} pts).",
    ]
    table = Table(cols, rows, caption="What the whole-GPU rounding did on the openb days",
                  notes=notes, align="rr" + "r" * (len(cols) - 3) + "l",
                  label="tab:real-resources")
    return TableView(rf, table)
