"""The sweep's scenario dimension: replays as cells, the clairvoyant bound as a cell per day.

Over a small sweep (lognormal scenarios on a family and real ServeGen days,
every policy): realized value is never above the clairvoyant bound in any row
where the bound applies (the issue's target), each stored row is what
``gpusched.simulate`` gives when run again by hand, the bound cells hold the
MILP on the actual day, the simulation view's means are the rows' means, an
interrupted sweep resumes without a lost or duplicated row, and bad
``[scenarios]`` / ``[policy]`` tables are refused naming the key.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import gpusched
import instances
from gpusched import sweep
from gpusched.cli import main
from gpusched.sweep.scenarios import scenario_config
from gpusched.sweep.simulation import BOUND_LABEL, SIM_STATUS
from gpusched.tables import ci95, simulation_rows, simulation_view

SWEEP = """\
families = ["seed-training-heavy"]
seeds = "0-1"
methods = ["fifo", "list"]

[scenarios]
model = "lognormal"
sigma = [0.2, 0.5]
rho = 0.5
seeds = "0-1"
trace_days = [7]
trace_params = {contention = 2.5}
bound_time_limit = 3

[policy]
replan = ["none", 2]
headroom = [0.0, 0.3]
preempt = [true, false]
"""
DAYS = 1 * 2 * 2 * 2 + 1 * 2  # family seeds x sigmas x scenario seeds, + trace day x seeds
POLICIES = 2 * 2 * 2


def _config(tmp: Path, text: str) -> sweep.BenchConfig:
    path = tmp / "sweep.toml"
    path.write_text(text)
    return sweep.load_config(path)


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("simsweep")
    config = _config(tmp, SWEEP)
    cells = sweep.make_cells(config)
    summary = sweep.run_bench(cells, tmp / "out", workers=1, progress=False)
    return config, cells, sweep.load_rows(tmp / "out"), summary, tmp / "out"


@pytest.mark.slow
def test_the_cells_of_a_scenario_sweep(swept):
    _, cells, df, summary, _ = swept
    bounds = [c for c in cells if c.sim is None]
    replays = [c for c in cells if c.sim is not None]
    assert len(bounds) == DAYS and {c.spec.label for c in bounds} == {BOUND_LABEL}
    assert len(replays) == DAYS * 2 * POLICIES
    assert len({c.key for c in cells}) == len(cells)  # every replay is its own cell
    assert summary.ran == len(cells) and summary.errors == 0
    assert len(df) == len(cells) and set(df["cell"]) == {c.key for c in cells}
    sim = df[df["kind"] == "simulation"]
    assert (sim["status"] == SIM_STATUS).all()
    assert set(sim["scenario"]) == {"lognormal rho=0.5 sigma=0.2", "lognormal rho=0.5 sigma=0.5",
                                    "trace-day"}
    assert sim.groupby(["cell"]).size().max() == 1
    # every replay names its day's bound cell, which is the MILP on the actual demand
    for c in replays[:: 7]:
        b = next(x for x in bounds if x.key == c.sim.bound_key)
        assert b.instance == instances.actual_instance(c.instance, c.sim.scenario)
        assert b.spec.method == "milp" and b.spec.time_limit == 3.0


@pytest.mark.slow
def test_realized_value_never_above_the_clairvoyant_bound(swept):
    """The issue's target, over every row of the sweep where the bound applies."""
    _, _, df, _, _ = swept
    d = simulation_rows(df)
    assert d["clairvoyant_bound"].notna().all()
    applies = d[d["bound_applies"]]
    assert len(applies) > 0.8 * len(d)
    assert (applies["realized_value"] <= applies["clairvoyant_bound"] + 1e-6).all()
    assert not d["bound_conflict"].any()
    # where it does not apply, inference went unserved (runs without preemption only)
    off = d[~d["bound_applies"]]
    assert (off["unserved_gpu_slots"] > 0).all() and not off["preempt"].any()
    assert (d.loc[d["preempt"], "unserved_gpu_slots"] == 0).all()
    pou = d["clairvoyant_bound"] - d["realized_value"]
    assert np.allclose(d["price_of_uncertainty"], pou)
    assert np.allclose(applies["gap_to_bound_pct"], 100 * pou[applies.index] / applies["clairvoyant_bound"])


@pytest.mark.slow
def test_rows_are_what_simulate_gives(swept):
    _, cells, df, _, _ = swept
    rows = df.set_index("cell")
    for c in [c for c in cells if c.sim is not None][::11]:
        s = c.sim
        r = gpusched.simulate(c.instance, s.scenario, c.spec.method, s.replan, s.headroom, s.preempt,
                              clairvoyant=False)
        row = rows.loc[c.key]
        assert row["realized_value"] == pytest.approx(r.realized_value) == pytest.approx(row["value"])
        for k in ("preemptions", "lost_gpu_slots", "unserved_gpu_slots", "missed_starts", "plans"):
            assert row[k] == getattr(r, k), k
        assert row["utilization"] == pytest.approx(r.utilization)
        replan = None if pd.isna(row["replan"]) else int(row["replan"])  # None is NaN in a frame
        assert (replan, row["headroom"], bool(row["preempt"])) == (s.replan, s.headroom, s.preempt)


@pytest.mark.slow
def test_bound_cells_are_checked_milp_rows(swept):
    _, cells, df, _, out = swept
    b = df[df["method"] == BOUND_LABEL]
    assert len(b) == DAYS and b["status"].isin(["optimal", "time_limit"]).all()
    assert (b["value"] <= b["upper_bound"] + 1e-6).all()
    # the stored instance of a bound cell is the actual day, and its schedule checks there
    for _, row in b.iterrows():
        inst = instances.load(out / row["instance_file"])
        m = instances.evaluate(inst, instances.load_schedule(out / row["schedule_file"]))
        assert m.value == pytest.approx(row["value"])
    # replays store no schedule (theirs is feasible on the actual day, not the forecast)
    assert df.loc[df["kind"] == "simulation", "schedule_file"].isna().all()
    # one bound recomputed directly (same MILP, same actual day)
    c = next(c for c in cells if c.sim is None and c.family == "seed-training-heavy")
    direct = gpusched.solve(c.instance, "milp", time_limit=10, threads=1)
    row = b.set_index("cell").loc[c.key]
    if direct.status == "optimal" and row["status"] == "optimal":
        assert row["upper_bound"] == pytest.approx(direct.upper_bound, rel=1e-6)


@pytest.mark.slow
def test_simulation_view_means_are_the_rows_means(swept):
    _, _, df, _, _ = swept
    v = simulation_view(df)
    d = simulation_rows(df)
    assert len(v.frame) == 3 * 2 * POLICIES
    for _, r in v.frame.sample(6, random_state=0).iterrows():
        g = d[(d["scenario"] == r["scenario"]) & (d["method"] == r["method"]) & (d["policy"] == r["policy"])]
        assert r["n"] == len(g)
        for col, name in (("realized_value", "realized"), ("preemptions", "preemptions"),
                          ("lost_gpu_slots", "lost"), ("unserved_gpu_slots", "unserved")):
            mean, half, _ = ci95(g[col])
            assert r[f"{name}_mean"] == pytest.approx(mean)
            assert r[f"{name}_ci95"] == pytest.approx(half, nan_ok=True)
        gap = g.loc[g["bound_applies"], "gap_to_bound_pct"]
        assert r["gap_n"] == len(gap) == r["bound_applies"]
        if len(gap):
            assert r["gap_mean"] == pytest.approx(gap.mean())
    text = v.render("markdown")
    assert "Gap to bound (%)" in text and "trace-day" in text and "WARNING" not in text
    assert "one plan, H 0" in text and "replan 2, H 0.3, no preempt" in text
    assert v.render("latex").count("\\toprule") == 1


@pytest.mark.slow
def test_a_bound_below_a_realized_value_is_flagged(swept):
    _, _, df, _, _ = swept
    bad = df.copy()
    sim = bad[bad["kind"] == "simulation"]
    target = sim.loc[sim["bound_applies"] & (sim["realized_value"] > 1), "bound_cell"].iloc[0]
    bad.loc[bad["cell"] == target, "upper_bound"] = 0.5
    d = simulation_rows(bad)
    assert d["bound_conflict"].any()
    assert "WARNING" in simulation_view(bad).render("markdown")


@pytest.mark.slow
def test_an_interrupted_simulation_sweep_resumes(tmp_path):
    config = _config(tmp_path, SWEEP.replace('seeds = "0-1"\nmethods', 'seeds = [0]\nmethods')
                     .replace("trace_days = [7]\ntrace_params = {contention = 2.5}\n", ""))
    cells = sweep.make_cells(config)
    out = tmp_path / "out"
    seen: list[dict] = []

    def stop_after(row):
        seen.append(row)
        if len(seen) == 9:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sweep.run_bench(cells, out, workers=1, progress=False, on_row=stop_after)
    assert len(list((out / "cells").glob("*.json"))) == 9
    first = sweep.load_rows(out)
    s = sweep.run_bench(cells, out, workers=1, progress=False)
    assert (s.skipped, s.ran, s.total) == (9, len(cells) - 9, len(cells))
    df = sweep.load_rows(out)
    assert len(df) == len(cells) and df["cell"].is_unique
    # the rows stored before the interruption are kept as they were
    kept = df.set_index("cell").loc[first["cell"], "value"].to_numpy()
    assert np.allclose(pd.to_numeric(first["value"]), pd.to_numeric(kept), equal_nan=True)
    # and the replays are what an uninterrupted run gives (the bounds' MILP, stopped by
    # its clock on a loaded machine, may end with another incumbent: not compared)
    again = tmp_path / "again"
    sweep.run_bench(cells, again, workers=2, progress=False)
    b = df[df["kind"] == "simulation"].set_index("cell")["value"]
    a = sweep.load_rows(again).set_index("cell")["value"]
    assert set(a.index) == set(df["cell"])
    assert np.allclose(pd.to_numeric(a.loc[b.index]), pd.to_numeric(b), equal_nan=True)
    assert sweep.run_bench(cells, out, workers=1, progress=False).ran == 0


def test_offline_cells_keep_their_keys():
    inst = instances.generate("seed-training-heavy", seed=0)
    spec = sweep.MethodSpec("list", "list")
    cell = sweep.Cell(inst, "seed-training-heavy", 0, spec, sweep.instance_hash(inst))
    sc = instances.scenario(inst, "lognormal", seed=0)
    sim = sweep.SimSpec(sc, "lognormal", None, 0.0, True)
    replay = sweep.Cell(inst, "seed-training-heavy", 0, spec, sweep.instance_hash(inst), sim=sim)
    assert cell.key != replay.key
    offline = sweep.make_cells(sweep.make_config("seed-training-heavy", 1, "list"))
    assert offline[0].key == cell.key and offline[0].sim is None


@pytest.mark.slow
def test_cli_bench_and_table_of_a_scenario_sweep(tmp_path, capsys):
    config = tmp_path / "sim.toml"
    config.write_text('families = ["seed-training-heavy"]\nseeds = 1\nmethods = ["fifo", "list"]\n'
                      '[scenarios]\nsigma = 0.3\nbound_time_limit = 5\n'
                      '[policy]\nreplan = [1]\nheadroom = [0, 0.1]\n')
    out = tmp_path / "out"
    argv = ["bench", "--config", str(config), "-o", str(out), "--workers", "1", "--no-progress"]
    assert main(argv) == 0
    assert "5 cells run (0 errors)" in capsys.readouterr().out
    assert main(["table", str(out), "--view", "simulation"]) == 0
    text = capsys.readouterr().out
    assert "lognormal sigma=0.3" in text and "replan 1, H 0.1" in text
    assert main(["table", str(out), "--view", "simulation", "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("family,scenario,method,policy")
    # an offline folder has no replays: exit 2, one line
    off = tmp_path / "off"
    assert main(["bench", "--families", "small", "--methods", "fifo", "-o", str(off),
                 "--workers", "1", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["table", str(off), "--view", "simulation"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no simulation rows" in err[0]


# ------------------------------------------------------------------ bad input
BASE = 'families = ["seed-training-heavy"]\nmethods = ["list"]\n'


@pytest.mark.parametrize(
    "tables,field",
    [
        ('[scenarios]\nmodel = "gaussian"\n', "scenarios.model"),
        ("[scenarios]\nsigma = -0.1\n", "sigma"),
        ("[scenarios]\nsigma = []\n", "scenarios.sigma"),
        ("[scenarios]\nnope = 1\n", "nope"),
        ('[scenarios]\nseeds = "x"\n', "scenarios.seeds"),
        ("[scenarios]\ntrace_days = [0]\n", "scenarios.trace_days"),
        ("[scenarios]\ntrace_days = [14]\n", "scenarios.trace_days"),
        ("[scenarios]\nhistory = 0\n", "scenarios.history"),
        ("[scenarios]\nhistory = 2\n", "scenarios.history"),  # without trace days
        ("[scenarios]\nbound_time_limit = -1\n", "scenarios.bound_time_limit"),
        ('[scenarios]\nmodel = "none"\n', "scenarios"),
        ("[scenarios]\n[policy]\nreplan = 0\n", "policy.replan"),
        ('[scenarios]\n[policy]\nreplan = ["never"]\n', "policy.replan"),
        ("[scenarios]\n[policy]\nheadroom = -0.5\n", "policy.headroom"),
        ("[scenarios]\n[policy]\nheadroom = nan\n", "policy.headroom"),
        ('[scenarios]\n[policy]\npreempt = "yes"\n', "policy.preempt"),
        ("[scenarios]\n[policy]\nreplan_every = 1\n", "policy.replan_every"),
        ("[policy]\nreplan = 1\n", "policy"),
    ],
)
def test_bad_scenario_tables_are_refused_naming_the_key(tmp_path, capsys, tables, field):
    path = tmp_path / "bad.toml"
    path.write_text(BASE + tables)
    with pytest.raises(ValueError, match=str(path)) as e:
        sweep.load_config(path)
    assert field in str(e.value)
    assert main(["bench", "--config", str(path), "-o", str(tmp_path / "o"), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and field in err[0] and "Traceback" not in err[0]


def test_bad_trace_parameter_is_refused_when_the_cells_are_made(tmp_path, capsys):
    path = tmp_path / "bad.toml"
    path.write_text('methods = ["list"]\n[scenarios]\nmodel = "none"\ntrace_days = [3]\n'
                    "trace_params = {num_gpus = 2}\n")
    config = sweep.load_config(path)
    assert config.families == () and config.seeds == (0,)
    with pytest.raises(ValueError, match=r"^scenarios\.trace_params\.num_gpus"):
        sweep.make_cells(config)
    assert main(["bench", "--config", str(path), "-o", str(tmp_path / "o"), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "trace_params.num_gpus" in err[0]


def test_scenario_config_from_values():
    c = scenario_config("lognormal", {"sigma": [0.1, 0.2], "rho": 0.5}, "0-2",
                        replan=[None, 1], headroom=[0, 0.2], preempt=[True, False])
    assert c.param_grid() == [{"rho": 0.5, "sigma": 0.1}, {"rho": 0.5, "sigma": 0.2}]
    assert c.seeds == (0, 1, 2) and len(c.policies()) == 8
    assert c.policies()[0] == (None, 0.0, True)
    with pytest.raises(ValueError, match=r"^scenarios\.sigma"):
        scenario_config("lognormal", {"sigma": "big"})
    with pytest.raises(ValueError, match=r"^scenarios\.rho"):
        scenario_config("lognormal", {"rho": 2})
    json.dumps(c.policies())  # plain values: they go into the rows
