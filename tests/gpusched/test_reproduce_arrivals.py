"""`gpusched reproduce arrivals`: a tiny run end to end, its resume, the tables against the
rows' checker figures, and the bound on its side under each objective."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

import instances
from gpusched import reproduce
from gpusched.cli import main
from gpusched.reproduce.arrivals import BOUND_LABEL
from gpusched.sweep import cell_rows, load_rows, run_bench
from gpusched.tables.arrivals import arrival_summary, arrival_views

TINY = {"traces": ("itp",), "seeds": (1,), "loads": (1.0, 2.0), "days": 1,
        "best_time_limit": 0.2, "bound_time_limit": 0.5}
POLICIES = [p.label for p in reproduce.ARRIVAL_POLICIES]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("arrivals")
    return out, reproduce.reproduce_arrivals(out, workers=1, progress=False, **TINY)


def test_tiny_run_end_to_end(run):
    out, rep = run
    assert rep.policies.errors == 0 and rep.bounds.errors == 0
    assert rep.policies.ran == 2 * 2 * len(POLICIES) and rep.bounds.ran == 4
    f = rep.frame
    assert len(f) == 2 * 2 * len(POLICIES)
    assert set(f["objective"]) == {"value", "flow"} and set(f["load"]) == {1.0, 2.0}
    assert list(dict.fromkeys(f["method"])) == POLICIES
    assert f["value"].notna().all() and f["bound"].notna().all()
    # one pool per seed across the loads; load 2 holds more jobs
    assert f["num_gpus"].nunique() == 1
    assert f[f["load"] == 2.0]["jobs"].min() > f[f["load"] == 1.0]["jobs"].max()
    for name in ("jct", "value", "agreement"):
        for suffix in ("md", "tex", "csv"):
            assert (out / "tables" / f"arrivals-{name}.{suffix}").stat().st_size > 100
    assert (out / "plots" / "arrivals-jct.png").stat().st_size > 1000
    assert (out / "arrivals.csv").is_file()
    md = (out / "tables" / "arrivals-jct.md").read_text()
    assert "parallel-sjf" in md and "bound" in md


def test_resume_does_no_work_and_keeps_the_figures(run):
    out, rep = run
    again = reproduce.reproduce_arrivals(out, workers=1, progress=False, **TINY)
    assert again.policies.ran == 0 and again.bounds.ran == 0
    pd.testing.assert_frame_equal(again.frame, rep.frame)


def test_an_interrupted_run_resumes_from_the_cells_it_finished(tmp_path):
    kw = {**TINY, "loads": (1.0,), "objectives": ("flow",)}
    cells = reproduce.arrival_cells(kw["traces"], seeds=kw["seeds"], loads=kw["loads"],
                                    objectives=kw["objectives"], days=kw["days"],
                                    best_time_limit=kw["best_time_limit"])
    done = run_bench(cells[:3], tmp_path, workers=1, progress=False)  # as if stopped there
    assert done.ran == 3
    before = {r["cell"]: r["finished_at"] for r in load_rows(tmp_path).to_dict("records")}
    rep = reproduce.reproduce_arrivals(tmp_path, workers=1, progress=False, **kw)
    assert rep.policies.skipped == 3 and rep.policies.ran == len(cells) - 3
    after = {r["cell"]: r["finished_at"] for r in cell_rows(tmp_path, cells).to_dict("records")}
    assert all(after[k] == v for k, v in before.items())  # the finished rows kept as they were


def test_frame_figures_are_the_checkers(run):
    """Every figure of the frame is the checker's on the stored schedule."""
    out, rep = run
    rows = load_rows(out)
    for r in rows.to_dict("records"):
        inst = instances.load(out / r["instance_file"])
        sched = instances.load_schedule(out / r["schedule_file"])
        m = instances.evaluate(inst, sched)
        line = rep.frame[(rep.frame["load"] == inst.meta["load"])
                         & (rep.frame["objective"] == inst.objective)
                         & (rep.frame["method"] == r["method"])].iloc[0]
        for k in ("value", "mean_jct_hours", "utilization", "batch_value", "flow_hours",
                  "jobs_censored"):
            assert line[k] == pytest.approx(getattr(m, k), rel=1e-9, abs=1e-9), (r["method"], k)


def test_table_values_equal_the_rows(run):
    _, rep = run
    f = rep.frame
    views = arrival_views(f)
    jct = views["jct"].frame
    for _, t in jct.iterrows():
        sel = f[(f["objective"] == "flow") & (f["load"] == t["load"])].set_index("method")
        for p in POLICIES:  # one seed: the means are the rows
            assert t[f"jct_{p}_hours"] == pytest.approx(sel.at[p, "mean_jct_hours"])
            assert t[f"gap_{p}_pct"] == pytest.approx(sel.at[p, "gap_pct"])
        assert t["jct_bound_hours"] == pytest.approx(sel.at["fifo", "bound"] / sel.at["fifo", "weight"])
    val = views["value"].frame
    for _, t in val.iterrows():
        sel = f[(f["objective"] == "value") & (f["load"] == t["load"])].set_index("method")
        v0 = sel.at["fifo", "value"]
        for p in POLICIES[1:]:
            assert t[f"gain_{p}_pct"] == pytest.approx(100 * (sel.at[p, "value"] - v0) / v0, abs=1e-9)
        assert t["util_best"] == pytest.approx(sel.at["best", "utilization"])
    agree = views["agreement"].frame.set_index("load")
    flow2 = f[(f["objective"] == "flow") & (f["load"] == 2.0)].set_index("method")
    top = agree.at[2.0, "least_jct"].split(" = ")
    assert all(flow2.at[p, "mean_jct_hours"] == flow2["mean_jct_hours"].min() for p in top)
    s = arrival_summary(f)
    assert (s["seeds"] == 1).all()


def test_gain_is_the_objectives_improvement(run):
    _, rep = run
    f = rep.frame
    flow = f[f["objective"] == "flow"].set_index(["load", "method"])
    for load in (1.0, 2.0):
        f0 = flow.at[(load, "fifo"), "value"]
        fb = flow.at[(load, "best"), "value"]
        assert flow.at[(load, "best"), "gain_pct"] == pytest.approx(100 * (f0 - fb) / f0, abs=1e-9)


def test_bound_on_its_side(run):
    """Under flow a lower bound on F (and on the mean JCT, all weights 1); under value an
    upper bound on V; every gap >= 0."""
    _, rep = run
    f = rep.frame
    flow, value = f[f["objective"] == "flow"], f[f["objective"] == "value"]
    assert (flow["bound"] <= flow["value"] * (1 + 1e-9)).all()
    assert (flow["weight"] == flow["jobs"]).all()
    assert (flow["jct_bound_hours"] <= flow["mean_jct_hours"] * (1 + 1e-9)).all()
    assert (value["bound"] >= value["value"] * (1 - 1e-9)).all()
    assert (f["gap_pct"] >= 0).all()
    assert value["jct_bound_hours"].isna().all()
    # the stored bound rows are the lagrangian method's, its target the best policy's worth
    out = run[0]
    brows = load_rows(out / "bounds")
    assert set(brows["method"]) == {BOUND_LABEL}
    for r in brows.to_dict("records"):
        lower = json.loads(r["params"])["lower"]
        inst = instances.load(out / "bounds" / r["instance_file"])
        best = f[(f["load"] == inst.meta["load"]) & (f["objective"] == inst.objective)]
        worth = [instances.objective.report(inst, v) for v in best["value"]]
        assert lower == pytest.approx(max(worth))
        assert math.isfinite(r["bound"])


@pytest.mark.parametrize(("kw", "field"), [
    ({"traces": ("openb",)}, "traces: "),
    ({"loads": (0.0,)}, "loads: "),
    ({"loads": (math.inf,)}, "loads: "),
    ({"objectives": ("jct",)}, "objectives: "),
    ({"contention": -1.0}, "contention: "),
    ({"days": 0}, "days: "),
    ({"itp_cluster": 11}, "cluster: "),
    ({"best_time_limit": 0.0}, "best_time_limit: "),
])
def test_bad_input_names_the_field(kw, field):
    with pytest.raises(ValueError, match=f"^{field}"):
        reproduce.arrival_cells(**{"traces": ("itp",), "seeds": (1,), "days": 1, **kw})


def test_bound_time_limit_named(tmp_path):
    with pytest.raises(ValueError, match=r"^bound_time_limit: "):
        reproduce.reproduce_arrivals(tmp_path, workers=1, progress=False,
                                     **{**TINY, "bound_time_limit": 0.0})


@pytest.mark.parametrize(("argv", "flag"), [
    (["--loads", "1,x"], "--loads: "),
    (["--traces", "x"], "--traces: "),
    (["--objectives", "jct"], "--objectives: "),
    (["--window-days", "0"], "--window-days: "),
    (["--time-limit", "0"], "--time-limit: "),
    (["--days", "130"], "--days, --pools"),
])
def test_cli_bad_input_exit_2_one_line(tmp_path, capsys, argv, flag):
    code = main(["reproduce", "arrivals", "--quick", "-o", str(tmp_path), "--no-progress", *argv])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and flag in err


def test_other_targets_refuse_arrival_flags(tmp_path, capsys):
    assert main(["reproduce", "seed", "--loads", "1", "-o", str(tmp_path)]) == 2
    assert "--loads: an option of reproduce arrivals" in capsys.readouterr().err


def test_cli_quick(tmp_path, capsys):
    argv = ["reproduce", "arrivals", "-o", str(tmp_path), "--quick", "--workers", "1",
            "--no-progress", "--best-time-limit", "0.2", "--time-limit", "0.5", "--loads", "2"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "Mean JCT against load" in text and "Where the seed's claim" in text
    assert "14 cells run (0 errors)" in text
    assert main(argv) == 0
    assert "0 cells run (0 errors), 14 already done" in capsys.readouterr().out
