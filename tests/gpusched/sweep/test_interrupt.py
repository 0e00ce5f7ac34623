"""Interruption of a real ``gpusched bench`` run: no finished row lost, none duplicated.

Each test starts the installed console script on a sweep file (real methods,
the MILP included) in a subprocess and interrupts it the way a night of
computation gets interrupted: SIGKILL of the whole process group (twice), SIGKILL of the parent alone (its pool workers must not live on),
SIGINT (a clean stop that says how to resume, then the printed command
resumes), and SIGINT twice. After every interruption the results folder must
be readable, and at the end every cell has exactly one row whose schedule
passes the checker with the recorded value.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import instances
from gpusched import bench

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

GPUSCHED = str(Path(sys.executable).with_name("gpusched"))
SWEEP = """\
families = ["small", "seed-training-heavy"]
seeds = "0-7"
methods = ["fifo", "list", "milp"]
time_limit = 2
"""
NUM_CELLS = 2 * 8 * 3


@pytest.fixture
def sweep(tmp_path: Path) -> tuple[list[str], Path]:
    config = tmp_path / "sweep.toml"
    config.write_text(SWEEP)
    out = tmp_path / "out"
    cmd = [GPUSCHED, "bench", "--config", str(config), "-o", str(out), "--workers", "2",
           "--no-progress"]
    return cmd, out


def _rows(out: Path) -> dict[str, bytes]:
    d = out / "cells"
    return {p.name: p.read_bytes() for p in d.glob("*.json")} if d.is_dir() else {}


def _start(cmd: list[str]) -> subprocess.Popen:
    # SIGINT as at a terminal, even when this test run inherited it ignored (a
    # background job): a process that starts with SIGINT ignored rightly keeps ignoring it
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=_default_sigint)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_rows(out: Path, n: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if len(_rows(out)) >= n:
            return
        if proc.poll() is not None:
            raise AssertionError(f"the run ended before {n} rows: {proc.communicate()}")
        time.sleep(0.01)
    raise AssertionError(f"fewer than {n} rows after {timeout} s")


def _assert_readable(out: Path) -> None:
    """Every stored row is whole JSON; results.csv (when present) parses; no row twice."""
    rows = [json.loads(b) for b in _rows(out).values()]
    keys = [r["cell"] for r in rows]
    assert len(keys) == len(set(keys))
    if (out / "results.csv").exists():
        csv = pd.read_csv(out / "results.csv")
        assert csv["cell"].is_unique and set(csv["cell"]) <= set(keys)


def _assert_complete(out: Path) -> None:
    df = bench.load_rows(out)
    assert len(df) == NUM_CELLS and df["cell"].is_unique
    csv = pd.read_csv(out / "results.csv")
    assert sorted(csv["cell"]) == sorted(df["cell"])
    assert (df["status"] != "error").all(), df.loc[df["status"] == "error", "message"].tolist()
    for row in df.itertuples():
        inst = instances.load(out / row.instance_file)
        m = instances.evaluate(inst, instances.load_schedule(out / row.schedule_file))
        assert m.value == pytest.approx(row.value)
    # a stored bound holds every schedule of its instance, the other methods' too
    for _, rows in df.groupby("instance_id"):
        bounds = rows["upper_bound"].dropna()
        if len(bounds):
            assert bounds.min() >= rows["value"].max() - 1e-6 * max(1.0, rows["value"].max())


def _children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(d.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


# ---------------------------------------------------------------------- SIGKILL
@pytest.mark.slow
def test_sigkill_twice_then_finish(sweep):
    cmd, out = sweep
    kept: dict[str, bytes] = {}
    for _ in range(2):
        proc = _start(cmd)
        _wait_rows(out, len(kept) + 4, proc)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        _assert_readable(out)
        now = _rows(out)
        assert all(now[k] == v for k, v in kept.items())  # no finished row lost or rewritten
        assert len(now) < NUM_CELLS, "the sweep ended before it was killed: make it longer"
        kept = now
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    m = re.search(r"(\d+) cells run \((\d+) errors\), (\d+) already done", proc.stdout)
    assert m and (int(m[1]), int(m[2]), int(m[3])) == (NUM_CELLS - len(kept), 0, len(kept))
    final = _rows(out)
    assert all(final[k] == v for k, v in kept.items())
    _assert_complete(out)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
@pytest.mark.slow
def test_sigkill_of_the_parent_alone_ends_its_workers(sweep):
    cmd, out = sweep
    proc = _start(cmd)
    _wait_rows(out, 4, proc)
    workers = _children(proc.pid)
    assert workers, "no worker processes found"
    proc.kill()  # the parent only, as the out-of-memory killer would
    proc.communicate()
    t0 = time.monotonic()
    while any(_alive(w) for w in workers) and time.monotonic() - t0 < 10:
        time.sleep(0.05)
    assert not any(_alive(w) for w in workers), "pool workers outlived their parent"
    _assert_readable(out)


# ---------------------------------------------------------------------- SIGINT
@pytest.mark.slow
def test_sigint_stops_cleanly_and_the_printed_command_resumes(sweep):
    cmd, out = sweep
    proc = _start(cmd)
    _wait_rows(out, 6, proc)
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole foreground group
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    m = re.search(r"interrupted: (\d+) of (\d+) cells stored in (.+?); run the same command "
                  r"again to resume:\n\s*(.+)", err)
    assert m, err
    stored = _rows(out)
    assert int(m[1]) == len(stored) and int(m[2]) == NUM_CELLS and 6 <= len(stored) < NUM_CELLS
    # the clean stop rebuilt results.csv from exactly the stored rows
    csv = pd.read_csv(out / "results.csv")
    assert sorted(csv["cell"]) == sorted(json.loads(b)["cell"] for b in stored.values())
    resume = shlex.split(m[4])
    assert resume[0] == "gpusched"
    done = subprocess.run([GPUSCHED, *resume[1:]], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"{len(stored)} already done" in done.stdout
    assert all(_rows(out)[k] == v for k, v in stored.items())
    _assert_complete(out)


@pytest.mark.slow
def test_sigint_twice_leaves_a_readable_folder(sweep):
    cmd, out = sweep
    proc = _start(cmd)
    _wait_rows(out, 4, proc)
    os.killpg(proc.pid, signal.SIGINT)
    time.sleep(0.05)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)  # an impatient second Ctrl-C during the clean stop
    _, err = proc.communicate(timeout=60)
    # 130 from the clean stop, or death by SIGINT when the second one lands during shutdown
    assert proc.returncode in (130, -signal.SIGINT), err
    assert "Traceback" not in err
    _assert_readable(out)
    kept = _rows(out)
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert all(_rows(out)[k] == v for k, v in kept.items())
    _assert_complete(out)


# ------------------------------------------------------------ torn files on disk
def test_a_torn_row_file_is_run_again(tmp_path):
    """A row file cut short (a crash of the machine, not of the process) is not trusted:
    the next run skips it when reading, runs that cell again and replaces the file."""
    cells = bench.make_cells(bench.make_config("small", "0-2", "fifo,list"))
    bench.run_bench(cells, tmp_path, workers=1, progress=False)
    rows = sorted((tmp_path / "cells").glob("*.json"))
    before = {p.name: p.read_bytes() for p in rows}
    torn = rows[2]
    torn.write_bytes(before[torn.name][: len(before[torn.name]) // 2])
    (tmp_path / "results.csv").write_text("cell,method\nnot,a-row\ntruncated")
    assert len(bench.load_rows(tmp_path)) == len(cells) - 1  # the torn row is skipped
    s = bench.run_bench(cells, tmp_path, workers=1, progress=False)
    assert (s.ran, s.skipped) == (1, len(cells) - 1)
    df = bench.load_rows(tmp_path)
    assert len(df) == len(cells) and df["cell"].is_unique
    assert sorted(pd.read_csv(tmp_path / "results.csv")["cell"]) == sorted(df["cell"])
    after = {p.name: p.read_bytes() for p in (tmp_path / "cells").glob("*.json")}
    assert after.keys() == before.keys()
    assert all(after[k] == v for k, v in before.items() if k != torn.name)
    assert json.loads(after[torn.name])["cell"] == json.loads(before[torn.name])["cell"]
