"""``gpusched reproduce real``: the frame by hand, the quick run end to end (every
row bounded, every schedule checked), a resume that does no work, bad input."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import instances
from gpusched import reproduce, sweep
from gpusched.cli import main
from gpusched.reproduce import FLAT_BOUND, REAL_METHODS, REAL_QUICK


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("real")
    rep = reproduce.reproduce_real(out, workers=1, progress=False, **REAL_QUICK)
    return out, rep


def _cells():
    return reproduce.real_cells(**REAL_QUICK)


def test_real_cells_cover_days_pools_methods_and_the_flat_bound() -> None:
    cells = _cells()
    insts = {(c.seed, c.instance.num_gpus, reproduce.cell_resources(c)) for c in cells}
    assert insts == {(s, g, r) for s in (15, 34) for g in (8, 16) for r in ("gpus", "full")}
    labels = {c.spec.label for c in cells}
    assert labels == {*REAL_METHODS, FLAT_BOUND}
    # the gpus cells are those of a run without full, byte for byte
    alone = reproduce.real_cells(**REAL_QUICK, resources=("gpus",))
    assert [c.key for c in cells if reproduce.cell_resources(c) == "gpus"] == [c.key for c in alone]
    assert all(reproduce.cell_resources(c) == "gpus" for c in cells if c.spec.label == FLAT_BOUND)
    for c in cells:
        assert (c.instance.nodes is None) == (c.spec.label == FLAT_BOUND)
        if c.spec.method == "milp":
            assert c.spec.time_limit == REAL_QUICK["time_limit"]
        if c.spec.label == "best":
            assert c.spec.time_limit == REAL_QUICK["best_time_limit"]
    flat = [c for c in cells if c.spec.label == FLAT_BOUND]
    on_nodes = {(c.seed, c.instance.num_gpus): c.instance for c in alone if c.spec.label == "fifo"}
    for c in flat:
        twin = on_nodes[(c.seed, c.instance.num_gpus)]
        assert c.instance.jobs == twin.jobs and c.instance.services == twin.services


def test_best_values_leave_out_errors_and_the_flat_relaxation() -> None:
    rows = pd.DataFrame([
        {"seed": 1, "num_gpus": 8, "method": "fifo", "status": "feasible", "value": 3.0},
        {"seed": 1, "num_gpus": 8, "method": "list", "status": "feasible", "value": 4.0},
        {"seed": 1, "num_gpus": 8, "method": FLAT_BOUND, "status": "optimal", "value": 9.0},
        {"seed": 1, "num_gpus": 8, "method": "best", "status": "error", "value": None},
        {"seed": 2, "num_gpus": 8, "method": "fifo", "status": "feasible", "value": 1.0},
    ])
    assert reproduce.best_values(rows) == {(1, 8, "gpus"): 4.0, (2, 8, "gpus"): 1.0}
    full = rows.assign(resources=["gpus", "full", "gpus", "gpus", "full"])
    assert reproduce.best_values(full) == {(1, 8, "gpus"): 3.0, (1, 8, "full"): 4.0, (2, 8, "full"): 1.0}


def test_real_frame_by_hand() -> None:
    cells = [c for c in _cells() if c.seed == 15 and c.instance.num_gpus == 8
             and reproduce.cell_resources(c) == "gpus"]
    base = {"seed": 15, "num_gpus": 8, "status": "feasible", "upper_bound": None}
    rows = [
        {**base, "method": "fifo", "value": 50.0},
        {**base, "method": "list", "value": 80.0},
        {**base, "method": "best", "value": 90.0},
        {**base, "method": "milp", "value": 90.0, "upper_bound": 120.0, "status": "time_limit"},
        {**base, "method": FLAT_BOUND, "value": 100.0, "upper_bound": 100.0, "status": "optimal"},
        {**base, "method": "easy-curve", "value": None, "status": "error"},
    ]
    frame = reproduce.real_frame(pd.DataFrame(rows), cells)
    (r,) = frame.to_dict("records")
    assert r["day"] == 130 and r["jobs"] == cells[0].instance.num_jobs
    assert r["contention"] == pytest.approx(cells[0].instance.meta["contention"], abs=1e-6)
    assert r["bound"] == 100.0 and r["bound_source"] == FLAT_BOUND  # the smaller bound
    assert r["gain_best_pct"] == pytest.approx(80.0)  # (90 - 50) / 50
    assert r["gap_fifo_pct"] == pytest.approx(50.0) and r["gap_best_pct"] == pytest.approx(10.0)
    assert r["optimal"] is False and r["errors"] == 1 and math.isnan(r["value_easy-curve"])
    assert r["resources"] == "gpus"
    tighter = reproduce.real_frame(pd.DataFrame(rows), cells, {(15, 8, "gpus"): 95.0})
    assert tighter.loc[0, "bound"] == 95.0 and tighter.loc[0, "bound_source"] == "lagrangian"
    table = reproduce.real_summary(frame)
    assert table["instances"].sum() == 1 and table.loc[0, "contention"] == ">= 2"
    noise = [{**base, "method": "fifo", "value": 75.5425},  # the Lagrangian bound but for its noise
             {**base, "method": "milp", "value": 75.5425, "upper_bound": 75.54257416903442}]
    r = reproduce.real_frame(pd.DataFrame(noise), cells).iloc[0]
    assert r["gap_fifo_pct"] == 0.0 and r["optimal"]
    far = reproduce.real_frame(pd.DataFrame([{**noise[0], "value": 75.0}, noise[1]]), cells).iloc[0]
    assert far["gap_fifo_pct"] == pytest.approx(100 * (75.54257416903442 - 75.0) / 75.54257416903442)


@pytest.mark.slow
def test_quick_run_rows_are_bounded_and_checked(quick) -> None:
    out, rep = quick
    frame = rep.frame
    assert len(frame) == 8 and set(zip(frame["day"], frame["num_gpus"], frame["resources"])) == {
        (d, g, r) for d in (130, 149) for g in (8, 16) for r in ("gpus", "full")}
    df = sweep.load_rows(out)
    bad = df[df["status"] == "error"]
    assert bad.empty, bad[["method", "message"]].to_string()  # every method runs on both versions
    for _, r in frame.iterrows():
        assert r["bound"] > 0 and r["bound_source"]
        gen = instances.generate("openb-day", day=int(r["day"]), num_gpus=int(r["num_gpus"]),
                                 **({"resources": "full"} if r["resources"] == "full" else {}))
        assert r["contention"] == pytest.approx(gen.meta["contention"], abs=1e-6)
        for m in REAL_METHODS:
            v = r[f"value_{m}"]
            assert not math.isnan(v), (m, r["day"], r["num_gpus"])
            assert v <= r["bound"] + 1e-6, (m, v, r["bound"])
            assert r[f"gap_{m}_pct"] >= -1e-9
    # every schedule stored passes the independent checker with the value of its row
    for _, row in df[df["status"] != "error"].iterrows():
        inst = instances.load(out / "instances" / f"{row['instance_id']}.json")
        stem = next((out / "schedules").glob(f"*--{row['cell']}.json"))
        m = instances.evaluate(inst, instances.load_schedule(stem))
        assert m.value == pytest.approx(row["value"])
    # the files
    for p in rep.files:
        assert p.stat().st_size > 100, p
    assert rep.table["instances"].sum() == 4
    names = {p.name for p in rep.files}
    assert {"real-full.csv", "real-resources.md", "real-resources.tex", "real-resources.csv"} <= names
    rounding = rep.rounding
    assert len(rounding) == 4 and list(rounding["day"]) == [130, 130, 149, 149]
    assert rounding[["fifo_loss_full_pct", "best_gain_full_pct"]].notna().all().all()


@pytest.mark.slow
def test_quick_run_shows_both_sides_of_the_boundary(quick) -> None:
    _, rep = quick
    f = rep.frame[rep.frame["resources"] == "gpus"].set_index(["day", "num_gpus"])
    easy = f.loc[(149, 16)]  # contention 0.15: FIFO within a few percent of the optimum
    assert easy["contention"] < 0.25 and easy["gap_fifo_pct"] <= 3.0
    hard = f.loc[(130, 16)]  # contention 1.3: the allocators beat FIFO
    assert hard["contention"] > 1
    assert min(hard["value_list"], hard["value_best"]) > 1.1 * hard["value_fifo"]


@pytest.mark.slow
def test_cli_resumes_the_quick_run(quick, capsys) -> None:
    out, rep = quick
    failed = rep.summary.errors  # run again (a failure is not a result); the rest is kept
    assert main(["reproduce", "real", "--quick", "-o", str(out), "--workers", "1",
                 "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert (f"{failed} cells run ({failed} errors), {76 - failed} already done; 8 instances"
            in text)
    assert "| contention" in text and "fifo gap %" in text
    assert "What the whole-GPU rounding did" in text


@pytest.mark.parametrize(("argv", "flag"), [
    (["--days", "3"], "--days"),
    (["--days", "x"], "--days"),
    (["--pools", "4"], "--pools"),
    (["--pools", "8,100000"], "--pools"),
    (["--inference-share", "2"], "--inference-share"),
    (["--time-limit", "-1"], "--time-limit"),
    (["--seeds", "2"], "--seeds"),
    (["--resources", "half"], "--resources"),
])
def test_cli_bad_input_exits_2_with_one_line(argv, flag, tmp_path, capsys) -> None:
    assert main(["reproduce", "real", "-o", str(tmp_path / "r"), "--no-progress", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and flag in err[0]
    assert not (tmp_path / "r").exists()


def test_seed_target_refuses_the_options_of_real(tmp_path, capsys) -> None:
    assert main(["reproduce", "seed", "--quick", "-o", str(tmp_path / "s")]) == 2
    assert "--quick" in capsys.readouterr().err


def test_library_bad_days_and_pools() -> None:
    with pytest.raises(ValueError, match=r"^days"):
        reproduce.real_cells(days=(114,))
    with pytest.raises(ValueError, match=r"^pools"):
        reproduce.real_cells(pools=(7,))
    with pytest.raises(ValueError, match=r"^days"):
        reproduce.real_cells(days=())


def test_lagrangian_bounds_are_used_and_stored(tmp_path, monkeypatch) -> None:
    import types

    import milp

    cells = [c for c in _cells() if c.seed == 34]
    calls = []

    def fake(inst, time_limit=None, lower=None):
        calls.append(inst.name)
        first = inst.num_gpus == 8 and "resources" not in inst.name
        assert time_limit == 1.0 and lower == (5.0 if first else None)
        return types.SimpleNamespace(value=1000.0 + inst.num_gpus, method="lagrangian")

    monkeypatch.setattr(milp, "bound", fake, raising=False)
    got = reproduce.lagrangian_bounds(cells, tmp_path, 1.0, {(34, 8, "gpus"): 5.0})
    assert got == {(34, g, r): 1000.0 + g for g in (8, 16) for r in ("gpus", "full")}
    assert len(calls) == 4
    monkeypatch.setattr(milp, "bound", lambda *a, **k: pytest.fail("not read back"))
    assert reproduce.lagrangian_bounds(cells, tmp_path, 1.0) == got  # stored, read back
    monkeypatch.delattr(milp, "bound")
    assert reproduce.lagrangian_bounds(cells, tmp_path, 1.0) == {}  # no milp.bound: none
