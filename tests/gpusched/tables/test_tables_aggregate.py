"""gpusched.tables.aggregate: gains, gaps and intervals on a tiny hand-made results set."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from scipy import stats
from table_rows import hand_rows

from gpusched import tables


@pytest.fixture
def rows() -> pd.DataFrame:
    return hand_rows()


T975_1 = 12.706204736174705  # Student's t, 0.975 quantile, 1 degree of freedom


def test_ci95_by_hand():
    mean, half, n = tables.ci95([20.0, 10.0])
    assert (mean, n) == (15.0, 2)
    assert half == pytest.approx(T975_1 * 5.0)  # sd 7.0711 / sqrt(2) = 5
    assert tables.ci95([3.0])[1] != tables.ci95([3.0])[1]  # NaN: one value has no interval
    assert tables.ci95([2.0, 2.0, 2.0]) == (2.0, 0.0, 3)
    assert tables.ci95([math.nan, 4.0, 6.0])[2] == 2
    assert tables.ci95([])[2] == 0


def test_t_quantile_is_students():
    assert tables.t_quantile(2) == pytest.approx(T975_1)
    assert tables.t_quantile(30) == pytest.approx(stats.t.ppf(0.975, 29))
    assert tables.t_quantile(5) < tables.t_quantile(4) < tables.t_quantile(3)


def test_prepare_gains_and_gaps_by_hand(rows):
    d = tables.prepare(rows).set_index("cell")
    assert d.loc["A-fifo", "best_ub"] == 18.0 and d.loc["B-fifo", "best_ub"] == 5.0
    assert d.loc["A-fifo", "gap_best"] == pytest.approx(8 / 18)
    assert d.loc["A-best", "gap_best"] == pytest.approx(3 / 18)
    assert d.loc["A-cpsat", "gap_best"] == 0.0
    assert d.loc["B-best", "gap_best"] == 0.0
    assert d.loc["A-best", "gain_pp"] == pytest.approx(20.0)
    assert d.loc["A-best", "gain_pct"] == pytest.approx(50.0)
    assert d.loc["B-best", "gain_pp"] == pytest.approx(10.0)
    assert math.isnan(d.loc["B-best", "gain_pct"])  # V_fifo = 0: undefined, not infinite
    assert d.loc["A-best", "gain_total_pct"] == pytest.approx(50.0)  # total_value 10 -> 15
    assert math.isnan(d.loc["B-best", "gain_total_pct"])
    assert bool(d.loc["B-best", "baseline_value_zero"])
    assert math.isnan(d.loc["B-cpsat", "gap_best"]) and math.isnan(d.loc["B-cpsat", "gain_pp"])
    assert not d["ub_conflict"].any()


def test_upper_bound_below_value_is_flagged(rows, caplog):
    bad = rows.copy()
    bad.loc[bad["cell"] == "A-milp", "upper_bound"] = 12.0  # below best's 15 and cpsat's 18
    d = tables.prepare(bad)
    assert d.loc[d["instance"] == "A", "ub_conflict"].all()
    assert "below a feasible value" in caplog.text
