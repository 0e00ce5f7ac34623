"""Table math on a tiny hand-made results set, and the shape of each format."""

from __future__ import annotations

import io
import math
import re

import pandas as pd
import pytest

from gpusched import tables


def _row(instance, method, value, util, *, family="fam", status="feasible", ub=None,
         reservation="curve", seed=0):
    return {
        "cell": f"{instance}-{method}", "instance": instance, "instance_hash": f"h-{instance}",
        "family": family, "seed": seed, "method": method, "status": status,
        "value": value, "upper_bound": ub, "utilization": util, "reserved_idle": 0,
        "jobs_run": 1, "jobs_rejected": 0, "weighted_mean_wait": 0.0,
        "total_value": value, "inference_gpu_slots": 0, "batch_gpu_slots": 0,
        "capacity_gpu_slots": 100, "reservation": reservation, "runtime_s": 1.0,
        "message": "",
    }


@pytest.fixture
def rows() -> pd.DataFrame:
    # Instance A: fifo 10 (U 0.50), best 15 (U 0.70), milp 16 with bound 20, cpsat 17 proven
    # optimal at 18 -> best known bound 18. Instance B: fifo value 0 (gain in % undefined).
    return pd.DataFrame([
        _row("A", "fifo", 10.0, 0.50, reservation="peak"),
        _row("A", "best", 15.0, 0.70),
        _row("A", "milp", 16.0, 0.72, status="time_limit", ub=20.0),
        _row("A", "cpsat", 18.0, 0.75, status="optimal", ub=18.0),
        _row("B", "fifo", 0.0, 0.30, reservation="peak", seed=1),
        _row("B", "best", 5.0, 0.40, seed=1),
        _row("B", "milp", 5.0, 0.40, status="optimal", ub=5.0, seed=1),
        _row("B", "cpsat", math.nan, math.nan, status="error", seed=1),
    ])


T975_1 = 12.706204736174705  # Student's t, 0.975 quantile, 1 degree of freedom


def test_ci95_by_hand():
    mean, half, n = tables.ci95([20.0, 10.0])
    assert (mean, n) == (15.0, 2)
    assert half == pytest.approx(T975_1 * 5.0)  # sd 7.0711 / sqrt(2) = 5
    assert tables.ci95([3.0])[1] != tables.ci95([3.0])[1]  # NaN: one value has no interval
    assert tables.ci95([2.0, 2.0, 2.0]) == (2.0, 0.0, 3)
    assert tables.ci95([math.nan, 4.0, 6.0])[2] == 2
    assert tables.ci95([])[2] == 0


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


def test_upper_bound_below_value_is_flagged(rows, caplog):
    bad = rows.copy()
    bad.loc[bad["cell"] == "A-milp", "upper_bound"] = 12.0  # below best's 15 and cpsat's 18
    d = tables.prepare(bad)
    assert d.loc[d["instance"] == "A", "ub_conflict"].all()
    assert "below a feasible value" in caplog.text
    md = tables.summary_view(bad).render("markdown")
    assert "WARNING" in md and "A" in md.split("WARNING")[1]


def _md_shape(text: str) -> None:
    lines = [ln for ln in text.splitlines() if ln.startswith("|")]
    assert len(lines) >= 3
    counts = {ln.count("|") for ln in lines}
    assert len(counts) == 1, counts
    assert re.fullmatch(r"\|(:?-+:?\|)+", lines[1])


def _latex_shape(text: str, ncols: int) -> None:
    assert "\\begin{tabular}" in text and text.rstrip().endswith("\\end{table}")
    for k in ("\\toprule", "\\midrule", "\\bottomrule"):
        assert text.count(k) == 1, k
    body = text.split("\\toprule")[1].split("\\bottomrule")[0]
    rows = [ln for ln in body.splitlines() if ln.endswith("\\\\")]
    assert rows and all(ln.count(" & ") == ncols - 1 for ln in rows)
    spec = re.search(r"\\begin\{tabular\}\{([lrc]+)\}", text).group(1)
    assert len(spec) == ncols
    for raw in ("±", "→", "—"):  # unicode symbols are turned into LaTeX
        assert raw not in text
    assert re.search(r"(?<!\\)%", text.split("\n", 1)[1]) is None  # every % escaped
    assert re.search(r"(?<!\\)_", text.split("\n", 1)[1]) is None  # every _ escaped


@pytest.mark.parametrize("name", ["summary", "seed", "ablation"])
def test_formats_shape(rows, name):
    r = rows.copy()
    r["family"] = ["seed-training-heavy"] * 4 + ["hc-mixed"] * 4
    tv = tables.view(r, name)
    _md_shape(tv.render("markdown"))
    _latex_shape(tv.render("latex"), len(tv.table.columns))
    back = pd.read_csv(io.StringIO(tv.render("csv")))
    assert len(back) == len(tv.frame)
    with pytest.raises(ValueError, match="format"):
        tv.render("html")


def test_latex_escape():
    assert tables.latex_escape("a_b 50% & $x# {y}") == r"a\_b 50\% \& \$x\# \{y\}"
    assert tables.latex_escape("1 ± 2 → 3") == r"1 $\pm$ 2 $\rightarrow$ 3"


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
        _row("A", "easy-peak", 12.0, 0.55, reservation="peak"),
        _row("B", "easy-peak", 1.0, 0.35, reservation="peak", seed=1),
        _row("A", "list-peak", 11.0, 0.52, reservation="curve"),  # wrong reservation: unused
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


def test_view_rejects_bad_input(rows):
    with pytest.raises(ValueError, match="view"):
        tables.view(rows, "nope")
    with pytest.raises(ValueError, match="missing column"):
        tables.view(rows.drop(columns=["utilization"]), "summary")
