"""gpusched.tables.views: the summary, seed and ablation views by hand, and their notes."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from table_rows import hand_rows, row

from gpusched import tables


@pytest.fixture
def rows() -> pd.DataFrame:
    return hand_rows()


T975_1 = 12.706204736174705  # Student's t, 0.975 quantile, 1 degree of freedom


def test_summary_view_by_hand(rows):
    tv = tables.summary_view(rows, methods=["fifo", "best", "milp", "cpsat"])
    f = tv.frame.set_index("method")
    assert list(f.index) == ["fifo", "best", "milp", "cpsat"]
    b = f.loc["best"]
    assert b["n"] == 2 and b["errors"] == 0 and b["optimal"] == 0
    assert b["utilization_mean"] == pytest.approx(55.0)
    assert b["utilization_ci95"] == pytest.approx(T975_1 * 15.0)  # sd 21.21 / sqrt(2)
    assert b["value_mean"] == pytest.approx(10.0)
    assert b["gain_pp_mean"] == pytest.approx(15.0)
    assert b["gain_pp_ci95"] == pytest.approx(T975_1 * 5.0)
    assert b["gain_pct_mean"] == pytest.approx(50.0) and b["gain_pct_n"] == 1
    assert math.isnan(b["gain_pct_ci95"]) and b["gain_pct_undefined"] == 1
    assert b["gap_pct_mean"] == pytest.approx(100 * (3 / 18 + 0) / 2)
    m = f.loc["milp"]
    assert m["optimal"] == 1 and m["gap_pct_mean"] == pytest.approx(100 * (2 / 18) / 2)
    c = f.loc["cpsat"]
    assert c["errors"] == 1 and c["utilization_n"] == 1 and c["optimal"] == 1
    md = tv.render("markdown")
    assert "+50.0 (1 n/a)" in md  # the undefined gain is counted, not averaged in
    assert "1/2" in md and "n/a" in md


def test_upper_bound_below_value_is_flagged_in_the_table(rows):
    bad = rows.copy()
    bad.loc[bad["cell"] == "A-milp", "upper_bound"] = 12.0  # below best's 15 and cpsat's 18
    md = tables.summary_view(bad).render("markdown")
    assert "WARNING" in md and "A" in md.split("WARNING")[1]


def test_seed_view_by_hand(rows):
    r = rows.copy()
    r["family"] = ["seed-training-heavy"] * 4 + ["hc-mixed"] * 4
    tv = tables.seed_view(r)
    f = tv.frame.set_index("scenario")
    assert list(f.index) == ["seed-training-heavy", "hc-mixed", "all 1 hc-* scenarios"]
    s = f.loc["seed-training-heavy"]
    assert (s["util_fifo_mean"], s["util_alloc_mean"]) == pytest.approx((50.0, 70.0))
    assert s["value_gain_mean"] == pytest.approx(50.0)
    assert s["published_util_fifo"] == "53.6" and s["published_value_gain"] == "+105.1"
    h = f.loc["hc-mixed"]
    assert math.isnan(h["value_gain_mean"]) and h["value_gain_undefined"] == 1
    md = tv.render("markdown")
    assert "53.6 → 87.0" in md and "52-85 → 72-88" in md and "n/a" in md


def test_seed_view_falls_back_when_allocator_missing(rows):
    r = rows.copy()
    r["family"] = "seed-training-heavy"
    r.loc[r["method"] == "best", "method"] = "fifo-curve"
    tv = tables.seed_view(r)
    assert "'fifo-curve' stands in as the allocator" in tv.render("markdown")
    assert tv.frame.loc[0, "value_gain_mean"] == pytest.approx(50.0)
    with pytest.raises(ValueError, match="nothing to show"):
        tables.seed_view(rows)  # family "fam": neither the seed nor a scenario


def test_ablation_view_maps_methods_by_reservation(rows):
    r = pd.concat([rows, pd.DataFrame([
        row("A", "easy-peak", 12.0, 0.55, reservation="peak"),
        row("B", "easy-peak", 1.0, 0.35, reservation="peak", seed=1),
        row("A", "list-peak", 11.0, 0.52, reservation="curve"),  # wrong reservation: unused
    ])])
    tv = tables.ablation_view(r)
    f = tv.frame.set_index(["ordering", "reservation"])
    assert f.loc[("FIFO", "peak"), "method"] == "fifo"
    assert f.loc[("backfill", "peak"), "method"] == "easy-peak"
    assert f.loc[("backfill", "peak"), "utilization_mean"] == pytest.approx(45.0)
    assert f.loc[("backfill", "peak"), "value_gain_mean"] == pytest.approx(20.0)
    assert f.loc[("best", "curve"), "method"] == "best"
    assert pd.isna(f.loc[("priority list", "peak"), "method"])
    assert pd.isna(f.loc[("backfill", "curve"), "method"])


def _seeds(n: int, family: str = "seed-training-heavy") -> pd.DataFrame:
    """fifo and best on n instances of a family, values that differ from seed to seed."""
    out = []
    for s in range(n):
        out += [row(f"I{s}", "fifo", 10.0 + s, 0.5 + 0.01 * s, family=family, seed=s,
                     reservation="peak"),
                row(f"I{s}", "best", 15.0 + 3 * s, 0.7 + 0.02 * s, family=family, seed=s)]
    return pd.DataFrame(out)


@pytest.mark.parametrize("name", ["summary", "seed"])
@pytest.mark.parametrize("n", [2, 3, 4])
def test_few_seeds_carry_a_warning(name, n):
    """Intervals over fewer than five values are said to be wide and unreliable, with the
    t quantile that makes them so."""
    for fmt in ("markdown", "latex"):
        text = " ".join(tables.view(_seeds(n), name).render(fmt).split())
        assert f"rest on only {n} seeds (fewer than 5)" in text, text
        assert f"{tables.t_quantile(n):.1f}" in text and "unreliable" in text


@pytest.mark.parametrize("name", ["summary", "seed", "ablation"])
def test_five_seeds_or_one_carry_no_warning(name):
    for n in (1, 5):
        assert "unreliable" not in tables.view(_seeds(n), name).render("markdown")


def test_the_ablation_counts_pooled_instances():
    """The ablation pools every instance: 2 instances warn, of whichever families."""
    text = tables.ablation_view(_seeds(2)).render("markdown")
    assert "rest on only 2 instances" in text
    pooled = pd.concat([_seeds(3), _seeds(3, family="hc-mixed").assign(
        instance=lambda d: d["instance"] + "h", instance_hash=lambda d: d["instance_hash"] + "h")])
    assert "unreliable" not in tables.ablation_view(pooled).render("markdown")


def test_view_rejects_bad_input(rows):
    with pytest.raises(ValueError, match="view"):
        tables.view(rows, "nope")
    with pytest.raises(ValueError, match="missing column"):
        tables.view(rows.drop(columns=["utilization"]), "summary")
