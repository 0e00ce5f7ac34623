"""Determinism: the same sweep gives the same rows, whatever the run.

Two runs of the real console script on the same sweep file, in fresh
processes with different hash seeds (``PYTHONHASHSEED``) and different worker
counts, must give identical rows in every column except the ones that measure
the run itself (runtimes, finishing time, host), and byte-identical instance
and schedule files; the MILP's rows repeat its value and bound, not which
optimal schedule it returns (:data:`EXACT_COLUMNS`). A set iterated in hash
order, an unseeded random draw or a result that depends on which worker
finished first would break this.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import instances
from gpusched import bench

GPUSCHED = str(Path(sys.executable).with_name("gpusched"))
SWEEP = """\
families = ["small", "hc-deadlines"]
seeds = [0]
methods = ["fifo", "fifo-curve", "easy-curve", "conservative-curve", "list", "parallel",
           "sampling", "local-search", "milp"]

# the searches end on their count budgets, not the clock (a loaded machine must not
# change a row); best ends its phases on the clock by design, so it is not in this sweep
[params.sampling]
time_limit = 600

[params.local-search]
time_limit = 600

[params.milp]
time_limit = 30
"""
RUN_COLUMNS = ["runtime_s", "wall_s", "finished_at", "host"]
"""What a run measures about itself: allowed to differ."""
EXACT_COLUMNS = ["cell", "family", "seed", "method", "status", "value", "upper_bound"]
"""What the MILP's rows must repeat: its optimal value and bound, not which optimal schedule
HiGHS returns (once, on a loaded CI machine, another of the same value on ``small`` seed 0:
a weighted mean wait of 1.899 against 1.589; not reproduced in 8 runs, loaded or not)."""


def _run(tmp_path: Path, name: str, hashseed: str, workers: int) -> Path:
    out = tmp_path / name
    env = {**os.environ, "PYTHONHASHSEED": hashseed}
    proc = subprocess.run(
        [GPUSCHED, "bench", "--config", str(tmp_path / "sweep.toml"), "-o", str(out),
         "--workers", str(workers), "--no-progress"],
        capture_output=True, text=True, timeout=300, env=env,
    )
    assert proc.returncode == 0, proc.stderr
    return out


def _files(out: Path, sub: str) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((out / sub).glob("*.json"))}


@pytest.mark.slow
def test_same_sweep_same_rows(tmp_path):
    (tmp_path / "sweep.toml").write_text(SWEEP)
    a = _run(tmp_path, "a", "1", workers=2)
    b = _run(tmp_path, "b", "2", workers=1)
    rows_a, rows_b = bench.load_rows(a), bench.load_rows(b)
    assert len(rows_a) == 18 and (rows_a["status"] != "error").all()
    assert (rows_a.loc[rows_a["method"] == "milp", "status"] == "optimal").all()
    left = rows_a.drop(columns=RUN_COLUMNS).sort_values("cell").reset_index(drop=True)
    right = rows_b.drop(columns=RUN_COLUMNS).sort_values("cell").reset_index(drop=True)
    exact = left["method"] == "milp"  # an optimum's value is unique, not its schedule
    pd.testing.assert_frame_equal(left.loc[exact, EXACT_COLUMNS], right.loc[exact, EXACT_COLUMNS])
    left, right = left[~exact].reset_index(drop=True), right[~exact].reset_index(drop=True)
    differ = ~((left == right) | (left.isna() & right.isna())).all(axis=1)
    assert not differ.any(), (  # which cells, methods and columns, before the frame's diff
        f"rows differ: {left.loc[differ, ['cell', 'method']].to_dict('records')}; columns "
        f"{sorted(c for c in left if not ((left[c] == right[c]) | (left[c].isna() & right[c].isna())).all())}")
    pd.testing.assert_frame_equal(left, right)
    csv_a = pd.read_csv(a / "results.csv").drop(columns=RUN_COLUMNS)
    csv_b = pd.read_csv(b / "results.csv").drop(columns=RUN_COLUMNS)
    pd.testing.assert_frame_equal(csv_a[EXACT_COLUMNS], csv_b[EXACT_COLUMNS])  # same order too
    heur = csv_a["method"] != "milp"
    pd.testing.assert_frame_equal(csv_a[heur], csv_b[heur])
    assert _files(a, "instances") == _files(b, "instances")
    sched_a, sched_b = _files(a, "schedules"), _files(b, "schedules")
    assert sched_a.keys() == sched_b.keys()
    assert {k: v for k, v in sched_a.items() if "--milp--" not in k} == {
        k: v for k, v in sched_b.items() if "--milp--" not in k}


@pytest.mark.slow
def test_generate_is_byte_identical_across_processes(tmp_path):
    """The same family and seed give the same file in two processes with other hash seeds."""
    outs = []
    for hs in ("3", "4"):
        path = tmp_path / f"hc-mixed-{hs}.json"
        subprocess.run([GPUSCHED, "generate", "hc-mixed", "--seed", "5", "-o", str(path)],
                       check=True, timeout=60, env={**os.environ, "PYTHONHASHSEED": hs})
        outs.append(path.read_bytes())
    assert outs[0] == outs[1]
    assert instances.dumps(instances.generate("hc-mixed", seed=5)).encode() == outs[0]
