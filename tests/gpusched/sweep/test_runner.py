"""gpusched.sweep.runner: resume, crash safety, failures, the process pool and Dask paths."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pandas as pd
import paths
import pytest

import heuristics
import instances
from gpusched import sweep
from gpusched.cli import main
from gpusched.sweep import runner

FAMS = "small,seed-training-heavy"
ROOT = paths.ROOT


def _cells(seeds="0-1", methods="fifo,fifo-curve"):
    return sweep.make_cells(sweep.make_config(FAMS, seeds, methods))


def _stable(df: pd.DataFrame) -> pd.DataFrame:
    """Rows without the columns that differ between two runs of the same cell."""
    drop = ["runtime_s", "wall_s", "finished_at", "host"]
    return df.drop(columns=[c for c in drop if c in df.columns]).sort_values("cell").reset_index(
        drop=True)


def test_run_and_resume(tmp_path):
    cells = _cells()
    assert len(cells) == 2 * 2 * 2
    seen = []
    s1 = sweep.run_bench(cells, tmp_path, workers=1, progress=False, on_row=seen.append)
    assert (s1.ran, s1.skipped, s1.errors, s1.pending) == (8, 0, 0, 0)
    assert sorted(r["cell"] for r in seen) == sorted(c.key for c in cells)
    files1 = {p.name: p.read_bytes() for p in (tmp_path / "cells").iterdir()}
    csv1 = (tmp_path / "results.csv").read_bytes()
    s2 = sweep.run_bench(cells, tmp_path, workers=1, progress=False)
    assert (s2.ran, s2.skipped) == (0, 8)
    files2 = {p.name: p.read_bytes() for p in (tmp_path / "cells").iterdir()}
    assert files1 == files2
    assert (tmp_path / "results.csv").read_bytes() == csv1

    df = sweep.load_rows(tmp_path)
    assert len(df) == 8 and df["cell"].is_unique
    csv = pd.read_csv(tmp_path / "results.csv")
    assert sorted(csv["cell"]) == sorted(df["cell"])
    for col in ("instance_hash", "family", "seed", "method", "params", "status", "value",
                "upper_bound", "utilization", "reserved_idle", "jobs_run", "weighted_mean_wait",
                "runtime_s", "gpusched_version", "numpy_version", "highspy_version",
                "pulp_version", "ortools_version"):
        assert col in df.columns, col


def test_a_config_runs_and_a_cell_twice_in_the_sweep_runs_once(tmp_path):
    cfg = sweep.make_config("small", 1, "fifo")
    cells = sweep.make_cells(cfg)
    s = sweep.run_bench([*cells, *cells], tmp_path, workers=1, progress=False)
    assert (s.total, s.ran) == (2, 1)
    assert sweep.run_bench(cfg, tmp_path, workers=1, progress=False).skipped == 1


def test_rows_match_direct_evaluation(tmp_path):
    """Every stored row's figures are the checker's, and its schedule file re-checks."""
    cells = _cells(seeds=1)
    sweep.run_bench(cells, tmp_path, workers=1, progress=False)
    df = sweep.load_rows(tmp_path)
    for _, row in df.iterrows():
        inst = instances.load(tmp_path / row["instance_file"])
        assert sweep.instance_hash(inst) == row["instance_hash"]
        sched = instances.load_schedule(tmp_path / row["schedule_file"])
        m = instances.evaluate(inst, sched, row["reservation"], enforce_reservation=True)
        assert m.value == pytest.approx(row["value"])
        assert m.utilization == pytest.approx(row["utilization"])
        assert m.reserved_idle == row["reserved_idle"]
        assert main(["check", str(tmp_path / row["instance_file"]),
                     str(tmp_path / row["schedule_file"])]) == 0


def test_process_pool_matches_serial(tmp_path):
    cells = _cells()
    sweep.run_bench(cells, tmp_path / "serial", workers=1, progress=False)
    s = sweep.run_bench(cells, tmp_path / "pool", workers=2, progress=False)
    assert s.ran == len(cells)
    a = _stable(sweep.load_rows(tmp_path / "serial"))
    b = _stable(sweep.load_rows(tmp_path / "pool"))
    pd.testing.assert_frame_equal(a, b)


def _boom(inst, **params):
    raise RuntimeError("deliberate failure in this cell")


@pytest.mark.parametrize("workers", [1, 2])
def test_failed_cell_is_recorded_and_sweep_goes_on(tmp_path, monkeypatch, workers):
    monkeypatch.setitem(heuristics.METHODS, "boom", _boom)  # forked workers see it
    cells = _cells(seeds=1, methods="fifo,boom")
    s = sweep.run_bench(cells, tmp_path, workers=workers, progress=False)
    assert (s.ran, s.errors) == (4, 2)
    df = sweep.load_rows(tmp_path)
    bad = df[df["method"] == "boom"]
    assert (bad["status"] == "error").all()
    assert bad["message"].str.contains("deliberate failure").all()
    assert bad["value"].isna().all() and bad["schedule_file"].isna().all()
    assert (df.loc[df["method"] == "fifo", "status"] == "feasible").all()
    # resume skips failed cells too, unless asked to retry them
    assert sweep.run_bench(cells, tmp_path, workers=1, progress=False).ran == 0
    s = sweep.run_bench(cells, tmp_path, workers=1, progress=False, retry_errors=True)
    assert (s.ran, s.errors) == (2, 2)
    assert len(sweep.load_rows(tmp_path)) == 4


@pytest.mark.slow
def test_dask_local_cluster(tmp_path, monkeypatch):
    from distributed import LocalCluster

    monkeypatch.setitem(heuristics.METHODS, "boom", _boom)  # threads of this process
    cells = _cells(seeds=1, methods="fifo,fifo-curve,boom")
    sweep.run_bench(cells, tmp_path / "serial", workers=1, progress=False)
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                      dashboard_address=":0") as cluster:
        s = sweep.run_bench(cells, tmp_path / "dask", scheduler=cluster.scheduler_address,
                            progress=False)
    assert (s.ran, s.errors) == (len(cells), 2)
    pd.testing.assert_frame_equal(_stable(sweep.load_rows(tmp_path / "serial")),
                                  _stable(sweep.load_rows(tmp_path / "dask")))


# ------------------------------------------------------- the executor loop, by hand
class _FakeExecutor:
    """Runs each cell at submit; the ``k``-th submit's future breaks the whole executor."""

    def __init__(self, break_at: int):
        self.break_at, self.submits, self.recovered, self.closed = break_at, 0, [], None

    def in_flight(self) -> int:
        return 2

    def submit(self, cell):
        self.submits += 1
        fut: Future = Future()
        if self.submits == self.break_at:
            fut.set_exception(BrokenProcessPool("a worker died"))
        else:
            fut.set_result(sweep.run_cell(cell))
        return fut

    def wait(self, futures):
        return [f for f in futures if f.done()][:1]

    def broken(self, e):
        return isinstance(e, BrokenProcessPool)

    def recover(self, lost):
        self.recovered += lost
        for cell in lost:
            yield cell, (sweep.error_row(cell, "worker failed: killed it"), None)

    def close(self, *, abort, futures=()):
        self.closed = abort


def test_execute_reruns_the_cells_lost_with_a_broken_executor():
    cells = _cells(seeds=1)
    stored = {}
    ex = _FakeExecutor(break_at=3)
    runner._execute(cells, ex, lambda c, row, sched: stored.setdefault(c.key, row))
    assert sorted(stored) == sorted(c.key for c in cells)  # every cell stored once
    # the third future broke the executor while the fourth was in flight: both are lost
    # and recovered (run alone, in the real pool); the others keep their rows
    assert [c.key for c in ex.recovered] == [cells[2].key, cells[3].key]
    assert all(stored[c.key]["status"] == "error" for c in ex.recovered)
    assert all(stored[c.key]["status"] == "feasible" for c in cells if c not in ex.recovered)
    assert ex.closed is False


def test_execute_closes_with_abort_when_storing_fails():
    ex = _FakeExecutor(break_at=0)

    def store(cell, row, sched):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        runner._execute(_cells(seeds=1), ex, store)
    assert ex.closed is True


# A slow method in a child process, for the kill and interrupt tests.
SLOW_SCRIPT = textwrap.dedent("""
    import sys, time
    import heuristics
    from heuristics.fifo import fifo

    def slow(inst, **params):
        time.sleep(0.15)
        return fifo(inst, reservation="curve")

    heuristics.register("slow", slow, "fifo-curve after a pause (tests)")
    from gpusched.cli import main
    sys.exit(main(sys.argv[1:]))
""")


def _slow_cmd(tmp_path: Path, out: Path, workers: int = 1) -> list[str]:
    script = tmp_path / "slow_cli.py"
    script.write_text(SLOW_SCRIPT)
    return [sys.executable, str(script), "bench", "--families", FAMS, "--seeds", "0-9",
            "--methods", "slow", "-o", str(out), "--workers", str(workers), "--no-progress"]


def _wait_for_rows(out: Path, n: int, proc: subprocess.Popen, timeout: float = 30.0) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        d = out / "cells"
        if d.is_dir() and len(list(d.glob("*.json"))) >= n:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    raise AssertionError("no rows appeared")


def _slow_method(inst, **params):
    from heuristics.fifo import fifo

    return fifo(inst, reservation="curve")


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.slow
def test_sigkill_then_resume(tmp_path, monkeypatch, workers):
    out = tmp_path / "out"
    proc = subprocess.Popen(_slow_cmd(tmp_path, out, workers), cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    _wait_for_rows(out, 4, proc)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = {p.name: p.read_bytes() for p in (out / "cells").glob("*.json")}
    assert 4 <= len(before) < 20
    for data in before.values():
        json.loads(data)  # every stored row is whole
    if (out / "results.csv").exists():
        pd.read_csv(out / "results.csv")  # the consolidated file is always readable
    # resume in this process: the same sweep with the same method name
    monkeypatch.setitem(heuristics.METHODS, "slow", _slow_method)
    cells = sweep.make_cells(sweep.make_config(FAMS, "0-9", "slow"))
    s = sweep.run_bench(cells, out, workers=1, progress=False)
    assert s.skipped == len(before) and s.ran == 20 - len(before)
    df = sweep.load_rows(out)
    assert len(df) == 20 and df["cell"].is_unique
    assert sorted(pd.read_csv(out / "results.csv")["cell"]) == sorted(df["cell"])
    after = {p.name: p.read_bytes() for p in (out / "cells").glob("*.json")}
    assert all(after[k] == v for k, v in before.items())  # no finished row touched


@pytest.mark.slow
def test_sigint_stops_cleanly_with_resume_hint(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.Popen(_slow_cmd(tmp_path, out), cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            # SIGINT as at a terminal, even if this run inherited it ignored
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    _wait_for_rows(out, 2, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "interrupted" in err and "run the same command again to resume" in err
    assert "Traceback" not in err
    df = pd.read_csv(out / "results.csv")
    assert 2 <= len(df) < 20 and df["cell"].is_unique
