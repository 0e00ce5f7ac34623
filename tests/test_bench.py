"""The benchmark harness: resume, crash safety, failures, parallel and Dask paths, config."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

import heuristics
import instances
from gpusched import bench
from gpusched.cli import main

FAMS = "small,seed-training-heavy"
ROOT = Path(__file__).resolve().parents[1]


def _cells(seeds="0-1", methods="fifo,fifo-curve"):
    return bench.make_cells(bench.make_config(FAMS, seeds, methods))


def _stable(df: pd.DataFrame) -> pd.DataFrame:
    """Rows without the columns that differ between two runs of the same cell."""
    drop = ["runtime_s", "wall_s", "finished_at", "host"]
    return df.drop(columns=[c for c in drop if c in df.columns]).sort_values("cell").reset_index(
        drop=True)


def test_run_and_resume(tmp_path):
    cells = _cells()
    assert len(cells) == 2 * 2 * 2
    s1 = bench.run_bench(cells, tmp_path, workers=1, progress=False)
    assert (s1.ran, s1.skipped, s1.errors) == (8, 0, 0)
    files1 = {p.name: p.read_bytes() for p in (tmp_path / "cells").iterdir()}
    csv1 = (tmp_path / "results.csv").read_bytes()
    s2 = bench.run_bench(cells, tmp_path, workers=1, progress=False)
    assert (s2.ran, s2.skipped) == (0, 8)
    files2 = {p.name: p.read_bytes() for p in (tmp_path / "cells").iterdir()}
    assert files1 == files2
    assert (tmp_path / "results.csv").read_bytes() == csv1

    df = bench.load_rows(tmp_path)
    assert len(df) == 8 and df["cell"].is_unique
    csv = pd.read_csv(tmp_path / "results.csv")
    assert sorted(csv["cell"]) == sorted(df["cell"])
    for col in ("instance_hash", "family", "seed", "method", "params", "status", "value",
                "upper_bound", "utilization", "reserved_idle", "jobs_run", "weighted_mean_wait",
                "runtime_s", "gpusched_version", "numpy_version", "highspy_version",
                "pulp_version", "ortools_version"):
        assert col in df.columns, col


def test_rows_match_direct_evaluation(tmp_path):
    """Every stored row's figures are the checker's, and its schedule file re-checks."""
    cells = _cells(seeds=1)
    bench.run_bench(cells, tmp_path, workers=1, progress=False)
    df = bench.load_rows(tmp_path)
    for _, row in df.iterrows():
        inst = instances.load(tmp_path / row["instance_file"])
        assert bench.instance_hash(inst) == row["instance_hash"]
        sched = instances.load_schedule(tmp_path / row["schedule_file"])
        m = instances.evaluate(inst, sched, row["reservation"], enforce_reservation=True)
        assert m.value == pytest.approx(row["value"])
        assert m.utilization == pytest.approx(row["utilization"])
        assert m.reserved_idle == row["reserved_idle"]
        assert main(["check", str(tmp_path / row["instance_file"]),
                     str(tmp_path / row["schedule_file"])]) == 0


def test_process_pool_matches_serial(tmp_path):
    cells = _cells()
    bench.run_bench(cells, tmp_path / "serial", workers=1, progress=False)
    s = bench.run_bench(cells, tmp_path / "pool", workers=2, progress=False)
    assert s.ran == len(cells)
    a = _stable(bench.load_rows(tmp_path / "serial"))
    b = _stable(bench.load_rows(tmp_path / "pool"))
    pd.testing.assert_frame_equal(a, b)


def _boom(inst, **params):
    raise RuntimeError("deliberate failure in this cell")


def test_failed_cell_is_recorded_and_sweep_goes_on(tmp_path, monkeypatch):
    monkeypatch.setitem(heuristics.METHODS, "boom", _boom)
    cells = _cells(seeds=1, methods="fifo,boom")
    s = bench.run_bench(cells, tmp_path, workers=1, progress=False)
    assert (s.ran, s.errors) == (4, 2)
    df = bench.load_rows(tmp_path)
    bad = df[df["method"] == "boom"]
    assert (bad["status"] == "error").all()
    assert bad["message"].str.contains("deliberate failure").all()
    assert bad["value"].isna().all() and bad["schedule_file"].isna().all()
    assert (df.loc[df["method"] == "fifo", "status"] == "feasible").all()
    # resume skips failed cells too, unless asked to retry them
    assert bench.run_bench(cells, tmp_path, workers=1, progress=False).ran == 0
    s = bench.run_bench(cells, tmp_path, workers=1, progress=False, retry_errors=True)
    assert (s.ran, s.errors) == (2, 2)
    assert len(bench.load_rows(tmp_path)) == 4


def test_dask_local_cluster(tmp_path):
    from distributed import LocalCluster

    cells = _cells(seeds=1)
    bench.run_bench(cells, tmp_path / "serial", workers=1, progress=False)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=":0") as cluster:
        s = bench.run_bench(cells, tmp_path / "dask", scheduler=cluster.scheduler_address,
                            progress=False)
    assert (s.ran, s.errors) == (len(cells), 0)
    pd.testing.assert_frame_equal(_stable(bench.load_rows(tmp_path / "serial")),
                                  _stable(bench.load_rows(tmp_path / "dask")))


# A slow method in a child process, for the kill and interrupt tests.
SLOW_SCRIPT = textwrap.dedent("""
    import sys, time
    from functools import partial
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
    cells = bench.make_cells(bench.make_config(FAMS, "0-9", "slow"))
    s = bench.run_bench(cells, out, workers=1, progress=False)
    assert s.skipped == len(before) and s.ran == 20 - len(before)
    df = bench.load_rows(out)
    assert len(df) == 20 and df["cell"].is_unique
    assert sorted(pd.read_csv(out / "results.csv")["cell"]) == sorted(df["cell"])
    after = {p.name: p.read_bytes() for p in (out / "cells").glob("*.json")}
    assert all(after[k] == v for k, v in before.items())  # no finished row touched


def test_sigint_stops_cleanly_with_resume_hint(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.Popen(_slow_cmd(tmp_path, out), cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    _wait_for_rows(out, 2, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "interrupted" in err and "run the same command again to resume" in err
    assert "Traceback" not in err
    df = pd.read_csv(out / "results.csv")
    assert 2 <= len(df) < 20 and df["cell"].is_unique


def test_parse_seeds():
    assert bench.parse_seeds(3) == (0, 1, 2)
    assert bench.parse_seeds("3") == (0, 1, 2)
    assert bench.parse_seeds("2-4") == (2, 3, 4)
    assert bench.parse_seeds("1, 5,7") == (1, 5, 7)
    assert bench.parse_seeds([4, 4, 2]) == (4, 2)
    for bad in (0, "4-2", "x", -1, [True], [-3], True, ""):
        with pytest.raises(ValueError, match="seeds"):
            bench.parse_seeds(bad)


def test_toml_config(tmp_path):
    p = tmp_path / "sweep.toml"
    p.write_text(textwrap.dedent("""
        families = ["small"]
        seeds = "0-2"
        methods = ["fifo", "milp"]
        time_limit = 7

        [params.milp]
        time_limit = 3
        mip_rel_gap = 0.01

        [variants.curve-fifo]
        method = "fifo-curve"

        [family_params.small]
        num_jobs = 5
    """))
    cfg = bench.load_config(p)
    assert cfg.families == ("small",) and cfg.seeds == (0, 1, 2)
    specs = {s.label: s for s in cfg.methods}
    assert specs["fifo"].time_limit == 7
    assert specs["milp"].time_limit == 3
    assert dict(specs["milp"].params) == {"mip_rel_gap": 0.01, "threads": 1}
    assert specs["curve-fifo"].method == "fifo-curve"
    cells = bench.make_cells(cfg)
    assert len(cells) == 9 and all(c.instance.num_jobs == 5 for c in cells)
    assert len({c.key for c in cells}) == 9

    p.write_text('families = ["small"]\nmethods = ["nope"]\n')
    with pytest.raises(ValueError, match=r"sweep\.toml: methods: unknown method 'nope'"):
        bench.load_config(p)
    p.write_text('families = ["small"\n')
    with pytest.raises(ValueError, match="malformed TOML"):
        bench.load_config(p)
    # a variant whose method is not a name (found by the fuzz test: a TypeError before)
    p.write_text('families = ["small"]\n[variants.v]\nmethod = []\n')
    with pytest.raises(ValueError, match=r"variants\.v\.method: must be a method name, got \[\]"):
        bench.load_config(p)
    with pytest.raises(ValueError, match=r"methods: 'v': the method must be a name, got 3"):
        bench.make_config("small", 1, [bench.MethodSpec("v", 3)])


def test_cell_key_depends_on_content_method_params_and_limit():
    inst = instances.generate("small", seed=0)
    h = bench.instance_hash(inst)
    base = bench.Cell(inst, "small", 0, bench.MethodSpec("fifo", "fifo"), h)
    assert base.key == bench.Cell(inst, "small", 0, bench.MethodSpec("fifo", "fifo"), h).key
    other = [
        bench.Cell(inst, "small", 0, bench.MethodSpec("fifo", "fifo", {"x": 1}), h),
        bench.Cell(inst, "small", 0, bench.MethodSpec("fifo", "fifo", {}, 5.0), h),
        bench.Cell(inst, "small", 0, bench.MethodSpec("f2", "fifo"), h),
        bench.Cell(inst, "small", 0, bench.MethodSpec("fifo", "fifo"), "0" * 64),
    ]
    assert len({base.key, *(c.key for c in other)}) == 5


def test_cli_bench_and_bad_input(tmp_path, capsys):
    out = tmp_path / "o"
    argv = ["bench", "--families", "small", "--seeds", "2", "--methods", "fifo,fifo-curve",
            "-o", str(out), "--workers", "1", "--no-progress"]
    assert main(argv) == 0
    assert "4 cells run (0 errors), 0 already done" in capsys.readouterr().out
    assert main(argv) == 0
    assert "0 cells run (0 errors), 4 already done" in capsys.readouterr().out
    for bad, msg in (
        (["--methods", "nope"], "unknown method 'nope'"),
        (["--families", "nope"], "unknown family 'nope'"),
        (["--seeds", "3-1"], "seeds"),
        (["--workers", "0"], "--workers"),
    ):
        args = dict(zip(argv[1::2], argv[2::2]))
        args.pop("--no-progress", None)
        args.update(dict(zip(bad[::2], bad[1::2])))
        cmd = ["bench", *[x for kv in args.items() for x in kv], "--no-progress"]
        assert main(cmd) == 2
        err = capsys.readouterr().err
        assert msg in err and "Traceback" not in err
    # A table measured from a baseline the results do not hold is refused, not printed.
    assert main(["table", str(out), "--baseline", "nope"]) == 2
    err = capsys.readouterr().err
    assert "--baseline" in err and "nope" in err and "fifo-curve" in err


def test_cli_config_and_table(tmp_path, capsys):
    cfg = tmp_path / "sweep.toml"
    cfg.write_text('families = ["small"]\nseeds = 2\nmethods = ["fifo", "fifo-curve"]\n')
    out = tmp_path / "o"
    assert main(["bench", "--config", str(cfg), "-o", str(out), "--workers", "1",
                 "--no-progress"]) == 0
    assert "4 cells run" in capsys.readouterr().out
    assert main(["bench", "--config", str(cfg), "--methods", "fifo", "-o", str(out)]) == 2
    assert "either as a file or as flags" in capsys.readouterr().err
    assert main(["table", str(out)]) == 0
    md = capsys.readouterr().out
    assert "| small" in md and "fifo-curve" in md
    assert main(["table", str(out), "--format", "latex", "-o", str(tmp_path / "t.tex")]) == 0
    assert "\\toprule" in (tmp_path / "t.tex").read_text()
    assert main(["table", str(out / "results.csv"), "--format", "csv",
                 "--methods", "fifo-curve"]) == 0
    csv = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert list(csv["method"]) == ["fifo-curve"] and csv["n"].tolist() == [2]
    assert main(["table", str(out), "--view", "seed"]) == 2  # no seed family in these rows
    assert "nothing to show" in capsys.readouterr().err
    assert main(["table", str(tmp_path / "empty")]) == 2
