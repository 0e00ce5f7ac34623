"""Solver faults inside a sweep: the row carries the status and the message, the sweep goes on.

The MILP's own failure modes are tested one solve at a time in
``test_milp_failures.py``; here they happen inside a benchmark sweep, as they
would during a night of computation: a time limit of zero, a solver with no
incumbent at its limit, an exception inside the solver, a solver that reports
a bound below a feasible value, and a worker process that dies outright (as
under the out-of-memory killer). After every sweep the same invariant is
checked over all rows: no recorded upper bound is below any value recorded
for the same instance.
"""

from __future__ import annotations

import json
import os
import time

import numpy as np
import pandas as pd
import pytest

import heuristics
import instances
import milp.solver as milp_solver
from gpusched import bench
from gpusched.cli import main
from instances import Status
from milp import RawSolve

FAMS = "small,seed-training-heavy"


def _sweep(tmp_path, methods, *, seeds="0-1", time_limit=5.0, workers=1, params=None):
    config = bench.make_config(FAMS, seeds, methods, time_limit=time_limit, params=params)
    cells = bench.make_cells(config)
    summary = bench.run_bench(cells, tmp_path, workers=workers, progress=False)
    df = bench.load_rows(tmp_path)
    assert len(df) == len(cells) and df["cell"].is_unique
    _assert_bounds_honest(df)
    _assert_values_checked(tmp_path, df)
    return summary, df


def _assert_bounds_honest(df: pd.DataFrame) -> None:
    """No upper bound below any feasible value recorded for the same instance."""
    for h, group in df.groupby("instance_hash"):
        best = group["value"].max(skipna=True)
        ub = group["upper_bound"].dropna()
        assert (ub >= best - 1e-6 * max(1.0, abs(best))).all(), (h, best, list(ub))


def _assert_values_checked(out, df: pd.DataFrame) -> None:
    """Every stored schedule passes the checker and has the recorded value."""
    for row in df.itertuples():
        if not isinstance(row.schedule_file, str):
            assert row.status == "error"
            continue
        inst = instances.load(out / row.instance_file)
        m = instances.evaluate(inst, instances.load_schedule(out / row.schedule_file))
        assert m.value == pytest.approx(row.value)


# ------------------------------------------------------------------ time limits
def test_time_limit_zero_in_a_sweep(tmp_path):
    s, df = _sweep(tmp_path, "fifo,milp", time_limit=0.0)
    assert s.errors == 0
    exact = df[df["method"] == "milp"]
    assert (exact["status"] == "time_limit").all()
    assert exact["message"].str.contains("time limit reached before the solver started").all()
    assert exact["upper_bound"].notna().all() and (exact["value"] == 0).all()


def test_no_incumbent_at_the_time_limit(tmp_path, monkeypatch):
    """The solver stops with a bound and no schedule: the warm start is kept, the bound too."""

    def stopped(form, **kw):
        return RawSolve(Status.TIME_LIMIT, None, dual_bound=form.trivial_bound, nodes=0,
                        message="injected: time limit, no incumbent")

    monkeypatch.setitem(milp_solver.BACKENDS, "highs", stopped)
    _, df = _sweep(tmp_path, "fifo,milp")
    exact = df[df["method"] == "milp"]
    assert (exact["status"] == "time_limit").all()
    assert exact["message"].str.contains("injected: time limit, no incumbent").all()
    assert exact["message"].str.contains("no incumbent").all()
    # the automatic warm start is the best fast heuristic: at least FIFO's value
    fifo = df[df["method"] == "fifo"].set_index("instance_hash")["value"]
    for row in exact.itertuples():
        assert row.value >= fifo[row.instance_hash] - 1e-9


# ------------------------------------------------------------------ exceptions
def test_exception_inside_the_solver(tmp_path, monkeypatch):
    calls = []
    real = milp_solver.BACKENDS["highs"]

    def boom(form, **kw):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("injected failure inside HiGHS")
        return real(form, **kw)

    monkeypatch.setitem(milp_solver.BACKENDS, "highs", boom)
    # no automatic warm start: its LNS phase would call the backend too
    s, df = _sweep(tmp_path, "milp,fifo", params={"milp": {"warm_start": None}})
    assert len(calls) == 4
    bad = df[df["status"] == "error"]
    assert len(bad) == 1 and bad["method"].iloc[0] == "milp"
    assert "RuntimeError: injected failure inside HiGHS" in bad["message"].iloc[0]
    # the failed cell keeps the empty schedule and a valid (trivial) bound
    assert bad["value"].iloc[0] == 0 and bad["upper_bound"].iloc[0] > 0
    assert (df.loc[df["status"] != "error", "status"].isin(["optimal", "time_limit", "feasible"])).all()
    assert s.errors == 1


def test_bound_below_a_feasible_value_is_never_recorded(tmp_path, monkeypatch):
    def lying(form, **kw):
        return RawSolve(Status.OPTIMAL, None, dual_bound=0.5, lp_bound=None, nodes=1)

    monkeypatch.setitem(milp_solver.BACKENDS, "highs", lying)
    s, df = _sweep(tmp_path, "fifo,milp")
    exact = df[df["method"] == "milp"]
    assert (exact["status"] == "error").all() and exact["upper_bound"].isna().all()
    assert exact["message"].str.contains("below the checked value").all()
    assert s.errors == len(exact)


def test_infeasible_schedule_from_the_solver_is_never_recorded(tmp_path, monkeypatch):
    def overload(form, **kw):
        start = np.zeros(len(kw["warm_start"]) if kw.get("warm_start") is not None else 0,
                         dtype=np.int64)
        return RawSolve(Status.OPTIMAL, start if start.size else None, dual_bound=1e9)

    monkeypatch.setitem(milp_solver.BACKENDS, "highs", overload)
    _, df = _sweep(tmp_path, "fifo,milp")  # _sweep re-checks every stored schedule
    exact = df[df["method"] == "milp"]
    assert (exact["status"] == "error").all()
    assert exact["message"].str.contains("rejected by the checker").all()


def _dies_on_seed_1(inst, **params):
    if inst.meta.get("seed") == 1 and inst.meta.get("family") == "small":
        os._exit(9)  # the worker dies without a word, as under the out-of-memory killer
    time.sleep(0.05)
    return heuristics.solve(inst, "fifo-curve")


def test_worker_process_that_dies_is_recorded_and_the_sweep_goes_on(tmp_path, monkeypatch):
    """Only the cell that killed its worker gets an error row; the cells in flight beside it
    are run again, and the sweep finishes."""
    monkeypatch.setitem(heuristics.METHODS, "dies", _dies_on_seed_1)  # forked workers see it
    cells = bench.make_cells(bench.make_config(FAMS, "0-3", "dies,fifo"))
    s = bench.run_bench(cells, tmp_path, workers=2, progress=False)
    df = bench.load_rows(tmp_path)
    assert len(df) == len(cells) == 16 and df["cell"].is_unique
    bad = df[df["status"] == "error"]
    assert len(bad) == 1 and s.errors == 1, df[["instance", "method", "status", "message"]]
    assert bad["instance"].iloc[0] == "small-s1" and bad["method"].iloc[0] == "dies"
    assert "worker" in bad["message"].iloc[0]
    assert (df.loc[df["status"] != "error", "status"] == "feasible").all()
    _assert_values_checked(tmp_path, df)


# ------------------------------------------------------------------ the command line
def test_cli_time_limit_zero_carries_status_and_message(tmp_path, capsys):
    path = tmp_path / "i.json"
    instances.save(instances.generate("hc-mixed", seed=0), path)
    assert main(["solve", str(path), "--method", "milp", "--time-limit", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "time_limit" and "time limit" in out["message"]
    assert out["upper_bound"] >= out["value"]


def test_cli_solver_exception_exits_1_with_the_message(tmp_path, capsys, monkeypatch):
    def boom(form, **kw):
        raise MemoryError("injected: out of memory in the solver")

    monkeypatch.setitem(milp_solver.BACKENDS, "highs", boom)
    path = tmp_path / "i.json"
    instances.save(instances.generate("small", seed=0), path)
    code = main(["solve", str(path), "--method", "milp", "--time-limit", "5", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    assert out["status"] == "error" and "injected: out of memory" in out["message"]
    assert out["upper_bound"] is None or out["upper_bound"] >= out["value"]


# ------------------------------------------------------------------ resource bounds
OVERSIZE = {"num_jobs": 10_000, "num_gpus": 1024, "horizon": 1000}
"""The largest family's size over a longer horizon: a model of millions of columns."""

MEASURE_CHILD = """
import json, resource, sys, time
import instances, milp
inst = instances.generate("large", seed=0, **json.loads(sys.argv[1]))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
try:
    milp.solve(inst, time_limit=60)
    outcome = "solved"
except ValueError as e:
    outcome = str(e)
print(json.dumps({"outcome": outcome, "seconds": time.perf_counter() - t0, "before_kib": before,
                  "peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


@pytest.mark.slow
def test_model_over_the_size_limit_is_refused_before_it_takes_memory():
    """Refused in well under a second, the process's peak memory barely above the instance's."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", MEASURE_CHILD, json.dumps(OVERSIZE)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["outcome"].startswith("max_columns:"), got
    assert got["seconds"] < 5
    assert got["peak_kib"] - got["before_kib"] < 100 * 1024  # under 100 MiB more


@pytest.mark.slow
def test_model_over_the_size_limit_in_a_sweep_and_on_the_command_line(tmp_path, capsys):
    config = bench.make_config("large", [0], "fifo,milp", time_limit=60,
                               family_params={"large": OVERSIZE})
    s = bench.run_bench(bench.make_cells(config), tmp_path / "out", workers=1, progress=False)
    df = bench.load_rows(tmp_path / "out")
    assert (s.ran, s.errors) == (2, 1)
    bad = df[df["method"] == "milp"].iloc[0]
    assert bad["status"] == "error" and "max_columns" in bad["message"]
    assert df[df["method"] == "fifo"].iloc[0]["status"] == "feasible"
    inst_file = tmp_path / "out" / bad["instance_file"]
    assert main(["solve", str(inst_file), "--method", "milp"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "max_columns" in err and "Traceback" not in err
