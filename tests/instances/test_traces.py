"""Trace import (instances.traces): every rule of the specification (docs/model.md) on every format.

The sample files in ``tests/data/traces`` hold one record per rule; the
expected jobs and counts below are worked out by hand from them (comments
give the arithmetic). The shipped openb pods and generated SWF logs are
held to the plain reading in ``tests/oracles/traces_reference.py``.
"""

from __future__ import annotations

import math

import numpy as np
import paths
import pytest
from traces_reference import openb_records, reference, swf_records

import instances
from instances.traces import REASONS, from_trace, shipped
from instances.traces import _io as trace_io
from instances.traces.swf import NFIELDS, scan_python

DATA = paths.DATA / "traces"
SAMPLES = {
    "swf": (DATA / "sample.swf", {"num_gpus": 8, "procs_per_gpu": 4}),
    "openb": (DATA / "openb_pods.csv", {"num_gpus": 8}),
    "philly": (DATA / "philly.json", {"num_gpus": 8}),
    "helios": (DATA / "helios_cluster_log.csv", {"num_gpus": 8}),
    "pai": (DATA / "pai_job_table.csv", {"num_gpus": 8}),
}


def _jobs(inst):
    return [(j.name, j.gpus, j.duration, j.release, j.priority) for j in inst.jobs]


def _skipped(**nonzero):
    return {**dict.fromkeys((*REASONS, "bad"), 0), **nonzero}


# L = 3600 s, T = 24 slots in every sample (default window and slot).
EXPECTED = {
    # job 1: 8 procs / 4 = 2 GPUs, 3600 s = 1 slot; job 12 (submit 100, out of file order)
    # sorts before job 2: 4 procs = 1 GPU, 60.5 s = 1 slot; job 2: field 5 is -1 so field 8
    # (5 procs) = 2 GPUs, 3601 s = 2 slots; job 9: submit 86399 = release 23, ends at 24.
    "swf": (
        [("1", 2, 1, 0, 1.0), ("12", 1, 1, 0, 1.0), ("2", 2, 2, 0, 1.0), ("9", 1, 1, 23, 1.0)],
        # 10, 11 after the window; 5 (-1 and -1 procs), 6 (0 procs); 7 (10 GPUs > 8);
        # 3 (run 0), 4 (run -1); 8 (release 22 + 3 slots > 24)
        _skipped(window=2, no_gpus=2, too_large=1, no_run_time=2, past_horizon=1),
    ),
    "openb": (
        # pod-a gpu_milli 500 still one GPU, 7200 s; pod-b no scheduled_time: 4200 - 600;
        # pod-d 5000 - 1200 = 3800 s = 2 slots; pod-f2 qos Other = 1.0
        [("pod-a", 1, 2, 0, 4.0), ("pod-b", 2, 1, 0, 1.0), ("pod-d", 8, 2, 0, 3.0),
         ("pod-f2", 1, 1, 0, 1.0)],
        # pod-h at 86400; pod-c 0 GPUs; pod-i 16; pod-e run 0, pod-f run 0 (no scheduled_time), pod-j no
        # deletion_time; pod-g release 22 + 3 slots
        _skipped(window=1, no_gpus=1, too_large=1, no_run_time=3, past_horizon=1),
    ),
    "philly": (
        # 0002: the largest attempt held 8 GPUs; 00:31 to 02:31 = 7200 s = 2 slots
        [("application_1_0001", 2, 1, 0, 1.0), ("application_1_0002", 8, 2, 0, 1.0)],
        # 0005 at +24 h; 0003 no attempt; 0007 16 GPUs; 0004 end None; 0008 23 + 2 slots
        _skipped(window=1, no_gpus=1, too_large=1, no_run_time=1, past_horizon=1),
    ),
    "helios": (
        # 36848 s = 11 slots
        [("1425511", 1, 11, 0, 1.0), ("1425512", 4, 1, 0, 1.0)],
        _skipped(window=1, no_gpus=1, too_large=1, no_run_time=2, past_horizon=1),
    ),
    "pai": (
        # p1: 2 instances of 50% = 2 GPUs, ps without GPU; 4700 - 1000 (first task) = 2 slots
        [("p1", 2, 2, 0, 1.0), ("p2", 8, 1, 0, 1.0)],
        # p7 at 1000 + 86400; p3 no task; p4 1600% = 16; p5 no end_time; p6 release 21 + 4
        _skipped(window=1, no_gpus=1, too_large=1, no_run_time=1, past_horizon=1),
    ),
}


@pytest.mark.parametrize("fmt", list(SAMPLES))
def test_sample_of_each_format(fmt):
    path, kw = SAMPLES[fmt]
    inst = from_trace(fmt, path, **kw)
    jobs, skipped = EXPECTED[fmt]
    assert _jobs(inst) == jobs
    m = inst.meta["import"]
    assert m["skipped"] == skipped
    assert m["kept"] == len(jobs)
    assert m["kept"] + sum(m["skipped"].values()) == m["records"]
    assert inst.horizon == 24 and inst.num_gpus == 8 and inst.slot_hours == 1.0
    assert m["format"] == fmt and m["file"] == path.name


@pytest.mark.parametrize("fmt", list(SAMPLES))
def test_every_kept_job_fits_and_ends_in_the_horizon(fmt):
    path, kw = SAMPLES[fmt]
    inst = from_trace(fmt, path, slot_minutes=15, **kw)
    assert inst.horizon == 96
    for j in inst.jobs:
        assert 1 <= j.gpus <= inst.num_gpus
        assert j.release + j.duration <= inst.horizon
    assert list(inst.releases) == sorted(inst.releases)


def test_instance_solves_and_checks():
    from gpusched.dispatch import solve

    inst = from_trace("openb", "openb:default", start=120 * 86400, num_gpus=16,
                      service="servegen:0.25", slot_minutes=30)
    res = solve(inst, "fifo")
    m = instances.evaluate(inst, res.schedule)
    assert m.value == pytest.approx(res.value)


def test_default_pool_is_the_largest_job():
    path, _ = SAMPLES["openb"]
    inst = from_trace("openb", path)
    assert inst.num_gpus == 16  # pod-i, now not too large
    assert inst.meta["import"]["skipped"]["too_large"] == 0


def test_start_option_and_window_edges():
    path, kw = SAMPLES["swf"]
    # window [1800, 5400): only job 2 (release 0, 2 slots > T = 1: past the horizon)
    with pytest.raises(ValueError, match=r"no usable job.*past_horizon 1"):
        from_trace("swf", path, start=1800, hours=1, **kw)
    inst = from_trace("swf", path, start=1800, hours=2, **kw)
    assert _jobs(inst) == [("2", 2, 2, 0, 1.0)]
    assert inst.meta["import"]["start"] == 1800
    assert inst.meta["import"]["skipped"]["window"] == 8  # jobs 2-5 are in [1800, 9000)


def test_earliest_submit_found_anywhere_in_the_file(tmp_path):
    # reversed file order: the earliest submit is the last line, the window follows it
    lines = [
        f"{i} {s} 0 3600 1 -1 -1 1 -1 -1 1 1 1 1 1 1 -1 -1"
        for i, s in [(1, 200000), (2, 90000), (3, 5000), (4, 1000)]
    ]
    p = tmp_path / "rev.swf"
    p.write_text("\n".join(lines) + "\n")
    inst = from_trace("swf", p)
    assert inst.meta["import"]["start"] == 1000
    assert _jobs(inst) == [("4", 1, 1, 0, 1.0), ("3", 1, 1, 1, 1.0)]
    assert inst.meta["import"]["skipped"]["window"] == 2


def test_max_jobs_keeps_the_first_in_submit_order():
    path, kw = SAMPLES["swf"]
    inst = from_trace("swf", path, max_jobs=2, **kw)
    assert [j.name for j in inst.jobs] == ["1", "12"]
    assert inst.meta["import"]["skipped"]["max_jobs"] == 2


def test_priorities_from_the_class_field():
    path, kw = SAMPLES["swf"]
    inst = from_trace("swf", path, priorities={"1": 2.5, "3": 4}, **kw)
    # queues: job 1 -> 1, 12 -> 1, 2 -> 2 (unmapped), 9 -> 3
    assert [j.priority for j in inst.jobs] == [2.5, 2.5, 1.0, 4.0]
    p2, _ = SAMPLES["philly"]
    inst = from_trace("philly", p2, num_gpus=8, priorities={"vcB": 3})
    assert [j.priority for j in inst.jobs] == [1.0, 3.0]
    p3, _ = SAMPLES["openb"]
    inst = from_trace("openb", p3, num_gpus=8, priorities={"BE": 5})  # replaces the qos table
    assert [j.priority for j in inst.jobs] == [1.0, 5.0, 1.0, 1.0]
    p4, _ = SAMPLES["helios"]
    inst = from_trace("helios", p4, num_gpus=8, priorities={"vcJkd": 2})
    assert [j.priority for j in inst.jobs] == [2.0, 1.0]
    p5, _ = SAMPLES["pai"]
    inst = from_trace("pai", p5, num_gpus=8, priorities={"u2": 2})
    assert [j.priority for j in inst.jobs] == [1.0, 2.0]
    with pytest.raises(ValueError, match="priorities"):
        from_trace("swf", path, priorities={"1": 0}, **kw)


def test_service_curve():
    path, _ = SAMPLES["openb"]
    inst = from_trace("openb", path, num_gpus=20, service="servegen:0.3", slot_minutes=30)
    (svc,) = inst.services
    assert len(svc.demand) == inst.horizon == 48
    assert max(svc.demand) == math.ceil(0.3 * 20)
    assert min(svc.demand) >= 1
    assert svc.priority == 3.0
    inst = from_trace("openb", path, num_gpus=20, service="servegen:1:7")
    assert max(inst.services[0].demand) == 20 and inst.services[0].priority == 7.0
    for bad in ("servegen", "nope:0.3", "servegen:0", "servegen:1.5", "servegen:x",
                "servegen:0.3:-1"):
        with pytest.raises(ValueError, match="service"):
            from_trace("openb", path, num_gpus=20, service=bad)


def test_deterministic():
    a = instances.dumps(from_trace("openb", "openb:default", start=130 * 86400,
                                   nodes="openb:nodes", num_gpus=48))
    b = instances.dumps(from_trace("openb", "openb:default", start=130 * 86400,
                                   nodes="openb:nodes", num_gpus=48))
    assert a == b


@pytest.mark.parametrize("day", [115, 120, 128, 137, 148])
@pytest.mark.parametrize("opts", [
    {}, {"num_gpus": 8}, {"slot_minutes": 15, "num_gpus": 64}, {"hours": 72, "max_jobs": 50},
    {"hours": 5.5, "slot_minutes": 7, "num_gpus": 4},
])
def test_openb_agrees_with_the_reference(day, opts):
    path = shipped("openb:default")
    jobs, counts = reference(openb_records(path), start=day * 86400, prio={
        "LS": 4.0, "Guaranteed": 3.0, "Burstable": 2.0, "BE": 1.0}, **opts)
    if not jobs:
        with pytest.raises(ValueError, match="no usable job"):
            from_trace("openb", path, start=day * 86400, **opts)
        return
    inst = from_trace("openb", path, start=day * 86400, **opts)
    assert _jobs(inst) == jobs
    assert inst.meta["import"]["skipped"] == {**counts, "bad": 0}


def test_openb_nodes_agree_with_the_reference():
    path = shipped("openb:default")
    nodes = [("a", 3), ("b", 3)]  # a 4-GPU pod fits no node and no set of whole nodes
    inst = from_trace("openb", path, start=147 * 86400, nodes=nodes)
    jobs, counts = reference(openb_records(path), start=147 * 86400, nodes=nodes,
                             prio={"LS": 4.0, "Guaranteed": 3.0, "Burstable": 2.0, "BE": 1.0})
    assert _jobs(inst) == jobs
    assert inst.meta["import"]["skipped"] == {**counts, "bad": 0}
    assert counts["too_large"] == 8  # the 4-GPU pods of that day
    assert inst.meta["import"]["nodes"] == [list(n) for n in nodes]


def _random_swf(path, rng, n):
    sub = np.sort(rng.integers(0, 400_000, n))
    rows = []
    for i in range(n):
        run = int(rng.choice([-1, 0, rng.integers(1, 50_000)]))
        procs = int(rng.choice([-1, 0, rng.integers(1, 70)]))
        req = int(rng.choice([-1, rng.integers(1, 70)]))
        rows.append(f"{i + 1} {sub[i]} 5 {run} {procs} -1 -1 {req} 100 -1 1 1 1 1 "
                    f"{rng.integers(-1, 4)} 1 -1 -1")
    path.write_text("; Version: 2.2\n" + "\n".join(rows) + "\n")


@pytest.mark.parametrize("seed", range(4))
def test_swf_agrees_with_the_reference(tmp_path, seed, monkeypatch):
    rng = np.random.default_rng(seed)
    p = tmp_path / "r.swf"
    _random_swf(p, rng, 3000)
    if seed % 2:
        monkeypatch.setattr(trace_io, "CHUNK_BYTES", 997)  # many chunk boundaries
    opts = [{}, {"num_gpus": 16, "procs_per_gpu": 4, "hours": 48, "slot_minutes": 20},
            {"start": 100_000, "max_jobs": 40, "num_gpus": 64}][seed % 3]
    ppg = opts.pop("procs_per_gpu", 1)
    inst = from_trace("swf", p, procs_per_gpu=ppg, priorities={"2": 3.0}, **opts)
    jobs, counts = reference(swf_records(p, ppg), prio={"2": 3.0}, **opts)
    assert _jobs(inst) == jobs
    assert inst.meta["import"]["skipped"] == {**counts, "bad": 0}


def _scan(fn, data: bytes):
    buf = np.frombuffer(data, dtype=np.uint8)
    cap = max(1, data.count(b"\n") + 1)
    cols = np.array([0, 1, 3, 4, 7, 14], dtype=np.int64)
    out = np.full((cap, cols.size), np.nan)
    lines = np.zeros(cap, dtype=np.int64)
    st = np.zeros(cap, dtype=np.int8)
    fl = np.zeros(cap, dtype=np.int16)
    nrow, _nl = fn(buf, cols, NFIELDS, out, lines, st, fl)
    ok = st[:nrow] == 0
    return nrow, lines[:nrow].tolist(), st[:nrow].tolist(), fl[:nrow].tolist(), out[:nrow][ok].tolist()


def test_compiled_scanner_matches_the_python_one():
    from instances.traces._swf_compiled import scan_compiled

    rng = np.random.default_rng(3)
    toks = ["1", "-1", "0", "12.5", "+3", ".5", "7.", "1e3", "2E-2", "abc", "1e", "-", "1.2.3",
            "1e400", "0x10", "1_0", "nan", "9" * 19, "123456789012345678"]
    for _ in range(300):
        lines = []
        for _ in range(rng.integers(0, 6)):
            kind = rng.integers(0, 10)
            if kind == 0:
                lines.append("; comment 1 2")
            elif kind == 1:
                lines.append("   \t ")
            else:
                n = int(rng.choice([NFIELDS] * 6 + [3, 17, 19]))
                good = rng.random() < 0.7
                fields = [str(rng.integers(-1, 10**6)) if good else str(rng.choice(toks))
                          for _ in range(n)]
                lines.append(" " * int(rng.integers(0, 3)) + "  ".join(fields))
        data = "\n".join(lines) + ("\n" if rng.random() < 0.5 else "")
        assert _scan(scan_compiled, data.encode()) == _scan(scan_python, data.encode()), data


def test_progress_bar(capsys):
    path, kw = SAMPLES["swf"]
    from_trace("swf", path, progress=True, **kw)
    assert "sample.swf" in capsys.readouterr().err
    from_trace("swf", path, progress=None, **kw)  # not a terminal: no bar
    assert capsys.readouterr().err == ""


def test_philly_json_lines_and_chunks(tmp_path, monkeypatch):
    import json

    path, _ = SAMPLES["philly"]
    jobs = json.loads(path.read_text())
    p = tmp_path / "log.jsonl"
    p.write_text("\n".join(json.dumps(j) for j in jobs) + "\n")
    a = from_trace("philly", path, num_gpus=8)
    b = from_trace("philly", p, num_gpus=8)
    assert _jobs(a) == _jobs(b)
    from instances.traces import philly

    real = philly.iter_json_objects
    monkeypatch.setattr(philly, "iter_json_objects",
                        lambda path, f, bar: real(path, f, bar, chunk=7))
    assert _jobs(from_trace("philly", path, num_gpus=8)) == _jobs(a)


def test_philly_start_as_date_time():
    path, _ = SAMPLES["philly"]
    inst = from_trace("philly", path, num_gpus=8, start="2017-10-07 00:30:00")
    assert inst.jobs[0].name == "application_1_0002" and inst.jobs[0].release == 0


def test_pai_folder_and_header(tmp_path):
    from instances.traces.pai import JOB_COLUMNS, TASK_COLUMNS

    path, _ = SAMPLES["pai"]
    a = from_trace("pai", DATA, num_gpus=8)  # a folder holding both tables
    (tmp_path / "jobs.csv").write_text(",".join(JOB_COLUMNS) + "\n" + path.read_text())
    (tmp_path / "tasks.csv").write_text(
        ",".join(TASK_COLUMNS) + "\n" + (DATA / "pai_task_table.csv").read_text())
    b = from_trace("pai", tmp_path / "jobs.csv", tasks=tmp_path / "tasks.csv", num_gpus=8)
    assert _jobs(a) == _jobs(b) == EXPECTED["pai"][0]
    assert b.meta["import"]["task_rows"] == 8


def test_shipped_openb():
    p = shipped("openb:default")
    assert p.exists() and (p.parent / "README.md").exists()
    assert "ATC 2023" in (p.parent / "README.md").read_text()
    inst = from_trace("openb", "openb:default", hours=24 * 150)
    assert inst.meta["import"]["records"] == 8152
    with pytest.raises(ValueError, match="shipped"):
        shipped("nope")
