"""The table of what the whole-GPU rounding did (``gpusched.tables.real``), by hand."""

from __future__ import annotations

import math
import re

import pandas as pd
import pytest

from gpusched.tables import ROUNDING_COLUMNS, rounding_frame, rounding_view


def _frame() -> pd.DataFrame:
    base = {"jobs": 10, "bound_source": "milp"}
    return pd.DataFrame([
        {**base, "day": 130, "num_gpus": 8, "resources": "gpus", "contention": 2.8,
         "gap_fifo_pct": 23.6, "gain_best_pct": 30.9, "bound": 522.5},
        {**base, "day": 130, "num_gpus": 8, "resources": "full", "jobs": 9, "contention": 1.9,
         "gap_fifo_pct": 10.0, "gain_best_pct": 12.5, "bound": 400.0, "bound_source": "lagrangian"},
        {**base, "day": 149, "num_gpus": 8, "resources": "gpus", "contention": 0.3,
         "gap_fifo_pct": 0.0, "gain_best_pct": 0.0, "bound": 113.0},
        {**base, "day": 149, "num_gpus": 8, "resources": "full", "contention": 0.2,
         "gap_fifo_pct": math.nan, "gain_best_pct": math.nan, "bound": 75.5},
        {**base, "day": 131, "num_gpus": 16, "resources": "gpus", "contention": 0.7,
         "gap_fifo_pct": 0.0, "gain_best_pct": 0.0, "bound": 510.0},  # no full row: left out
    ])


def test_rounding_frame_by_hand() -> None:
    rf = rounding_frame(_frame())
    assert list(rf.columns) == list(ROUNDING_COLUMNS)
    assert list(zip(rf["day"], rf["num_gpus"])) == [(130, 8), (149, 8)]
    r = rf.iloc[0]
    assert (r["jobs_gpus"], r["jobs_full"]) == (10, 9)
    assert r["fifo_loss_rounding_pts"] == pytest.approx(13.6)  # 23.6 on gpus less 10.0 on full
    assert r["best_gain_rounding_pts"] == pytest.approx(18.4)
    assert r["bound_full"] == 400.0 and r["bound_source_full"] == "lagrangian"
    assert math.isnan(rf.iloc[1]["fifo_loss_rounding_pts"])  # a side without the figure: nan


def test_rounding_view_renders_three_formats() -> None:
    view = rounding_view(rounding_frame(_frame()))
    md = view.render("md")
    assert md.startswith("**What the whole-GPU rounding did")
    head = md.splitlines()[2]
    for col in ("FIFO loss % gpus", "FIFO loss % full", "FIFO loss rounding (pts)",
                "best gain % gpus", "best gain % full", "best gain rounding (pts)"):
        assert col in head
    assert re.search(r"\|\s+\+13\.6 \|", md) and "n/a" in md and "400.00 (lagrangian)" in md
    tex = view.render("tex")
    assert "\\begin{table}" in tex and "\\toprule" in tex and "+13.6" in tex
    assert view.render("csv").splitlines()[0] == ",".join(ROUNDING_COLUMNS)
    tiny = rounding_frame(_frame().assign(gap_fifo_pct=[1.0, 1.00001, 0.0, 0.0, 0.0]))
    assert "-0.0" not in rounding_view(tiny).render("md")


def test_rounding_frame_needs_the_resources_column() -> None:
    with pytest.raises(ValueError, match="resources"):
        rounding_frame(_frame().drop(columns="resources"))
