"""Bad trace input: each a ValueError naming the file, the line and the field in the
library, exit 2 with one line on the command line; ``skip_bad`` skips and counts."""

from __future__ import annotations

from pathlib import Path

import paths
import pytest

from gpusched.cli import main
from instances.traces import from_trace

DATA = paths.DATA / "traces"
BROKEN = paths.DATA / "broken" / "traces"

# (format, file, options, fragments of the message)
CASES = [
    ("swf", "empty.swf", {}, ["empty file"]),
    ("openb", "empty.csv", {}, ["empty file"]),
    ("swf", "comments_only.swf", {}, ["no records"]),
    ("openb", "header_only.csv", {}, ["no records"]),
    ("openb", "missing_column.csv", {}, ["line 1", "missing column 'num_gpu'"]),
    ("openb", "malformed_field.csv", {}, ["line 3", "num_gpu", "'two'"]),
    ("openb", "short_row.csv", {}, ["line 3", "too few fields: 4 of 11"]),
    ("openb", "duplicate_id.csv", {}, ["line 3", "job id 'pod-a' repeats that of line 2"]),
    ("swf", "too_few_fields.swf", {}, ["line 4", "too few fields: 10 of 18"]),
    ("swf", "non_numeric.swf", {}, ["line 3", "field 2 (submit time)", "'abc'"]),
    ("swf", "negative_run.swf", {}, ["line 3", "field 4 (run time): negative, got -50"]),
    ("openb", "negative_run.csv", {}, ["line 4", "deletion_time: before creation_time",
                                       "run time -100 s"]),
    ("helios", "helios_negative.csv", {}, ["line 3", "duration: negative, got -249"]),
    ("philly", "philly_negative.json", {}, ["line 4", "attempts.end_time: before"]),
    ("pai", "pai_negative_jobs.csv", {"tasks": BROKEN / "pai_negative_tasks.csv"},
     ["line 2", "end_time: before the first task's start_time", "run time -300 s"]),
    ("helios", "bad_time.csv", {}, ["line 3", "submit_time", "'yesterday'"]),
    ("philly", "bad_syntax.json", {}, ["line 5", "not valid JSON"]),
    ("philly", "bad_record.json", {}, ["line 4", "submitted_time", "'not a date'"]),
    ("pai", "pai_jobs_for_bad_task.csv", {"tasks": BROKEN / "pai_bad_task.csv"},
     ["pai_bad_task.csv", "line 1", "inst_num", "'one'"]),
    ("openb", str(DATA / "openb_pods.csv"), {"nodes": BROKEN / "nodes_8.csv", "num_gpus": 4},
     ["num_gpus", "nodes_8.csv", "no set of whole nodes"]),
    ("openb", str(DATA / "openb_pods.csv"), {"start": 10**7}, ["no usable job", "window 11"]),
    ("swf", str(DATA / "sample.swf"), {"procs_per_gpu": 0}, ["procs_per_gpu"]),
    ("swf", str(DATA / "sample.swf"), {"hours": -1}, ["hours"]),
    ("swf", str(DATA / "sample.swf"), {"slot_minutes": 0}, ["slot_minutes"]),
    ("swf", str(DATA / "sample.swf"), {"max_jobs": 0}, ["max_jobs"]),
    ("nope", str(DATA / "sample.swf"), {}, ["format", "'nope'", "swf, openb"]),
]

FLAGS = {"tasks": "--tasks", "nodes": "--nodes", "num_gpus": "--num-gpus", "start": "--start",
         "procs_per_gpu": "--procs-per-gpu", "hours": "--hours", "slot_minutes": "--slot-minutes",
         "max_jobs": "--max-jobs"}


def _path(name: str) -> Path:
    p = Path(name)
    return p if p.is_absolute() else BROKEN / name


@pytest.mark.parametrize("fmt, name, opts, frags", CASES, ids=[f"{c[0]}-{Path(c[1]).name}-{len(c[2])}" for c in CASES])
def test_library_raises_naming_file_line_field(fmt, name, opts, frags):
    path = _path(name)
    with pytest.raises(ValueError) as e:
        from_trace(fmt, path, **opts)
    msg = str(e.value)
    if not frags[0].startswith(("procs_per_gpu", "hours", "slot_minutes", "max_jobs", "format")):
        assert str(path) in msg or any(str(v) in msg for v in opts.values()), msg
    for frag in frags:
        assert frag in msg, msg


@pytest.mark.parametrize("fmt, name, opts, frags", CASES, ids=[f"{c[0]}-{Path(c[1]).name}-{len(c[2])}" for c in CASES])
def test_command_line_exit_2_one_line(fmt, name, opts, frags, capsys, tmp_path):
    argv = ["import", fmt, str(_path(name)), "-o", str(tmp_path / "i.json")]
    for k, v in opts.items():
        argv += [FLAGS[k], str(v)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpusched: error: "), err
    for frag in frags:
        assert frag in lines[0], lines[0]
    assert not (tmp_path / "i.json").exists()


# (format, file, options, kept, bad): with skip_bad the bad record is skipped and counted
SKIPPABLE = [
    ("openb", "malformed_field.csv", {}, 2, 1),
    ("openb", "short_row.csv", {}, 2, 1),
    ("swf", "too_few_fields.swf", {}, 2, 1),
    ("swf", "non_numeric.swf", {}, 2, 1),
    ("helios", "bad_time.csv", {}, 1, 1),
    ("philly", "bad_record.json", {}, 1, 1),
    # a negative run time is malformed; SWF's -1 (missing) stays a skip reason
    ("swf", "negative_run.swf", {}, 1, 1),
    ("openb", "negative_run.csv", {}, 2, 1),
    ("helios", "helios_negative.csv", {}, 1, 1),
    ("philly", "philly_negative.json", {}, 1, 1),
    ("pai", "pai_negative_jobs.csv", {"tasks": BROKEN / "pai_negative_tasks.csv"}, 1, 1),
]


@pytest.mark.parametrize("fmt, name, opts, kept, bad", SKIPPABLE)
def test_skip_bad_counts(fmt, name, opts, kept, bad):
    inst = from_trace(fmt, BROKEN / name, skip_bad=True, **opts)
    m = inst.meta["import"]
    assert m["kept"] == kept and m["skipped"]["bad"] == bad
    assert m["kept"] + sum(m["skipped"].values()) == m["records"]
    assert len(m["bad_lines"]) == bad and str(BROKEN / name) in m["bad_lines"][0]


def test_skip_bad_task_rows(tmp_path):
    (tmp_path / "pai_job_table.csv").write_text("q1,i1,u,Terminated,0,100\nq2,i2,u,Terminated,0,100\n")
    (tmp_path / "pai_task_table.csv").write_text(
        (BROKEN / "pai_bad_task.csv").read_text() + "q2,w,1,Terminated,0,100,1,1,100,T4\n")
    with pytest.raises(ValueError, match=r"pai_task_table\.csv: line 1: inst_num"):
        from_trace("pai", tmp_path)
    inst = from_trace("pai", tmp_path, skip_bad=True)
    m = inst.meta["import"]
    assert [j.name for j in inst.jobs] == ["q2"]
    assert m["task_rows_bad"] == 1 and m["skipped"]["no_gpus"] == 1


def test_cli_summary_and_json(capsys, tmp_path):
    import json

    out = tmp_path / "i.json"
    assert main(["import", "swf", str(DATA / "sample.swf"), "--num-gpus", "8",
                 "--procs-per-gpu", "4", "-o", str(out)]) == 0
    line = capsys.readouterr().out.strip()
    assert line == ("swf sample.swf: 12 records, kept 4 jobs on 8 GPUs; skipped: window 2, "
                    "no_gpus 2, too_large 1, no_run_time 2, past_horizon 1, max_jobs 0, bad 0")
    import instances

    inst = instances.load(out)
    assert [j.name for j in inst.jobs] == ["1", "12", "2", "9"]
    assert main(["import", "openb", "openb:default", "--start", "10368000", "--nodes",
                 "openb:nodes", "--num-gpus", "64", "--priority", "LS=2", "--service",
                 "servegen:0.25", "--slot-minutes", "15", "--json", "-o", str(out)]) == 0
    meta = json.loads(capsys.readouterr().out)
    assert meta["num_gpus"] == 64 and meta["priorities"] == {"LS": 2.0}
    assert meta["kept"] + sum(meta["skipped"].values()) == meta["records"] == 8152
    assert instances.load(out).num_gpus == 64
    assert main(["import", "swf", str(DATA / "sample.swf"), "--priority", "1"]) == 2
    assert "CLASS=WEIGHT" in capsys.readouterr().err


@pytest.mark.parametrize("size", [40, 97, 1 << 20])
def test_line_numbers_across_chunks(monkeypatch, tmp_path, size):
    from instances.traces import _io

    monkeypatch.setattr(_io, "CHUNK_BYTES", size)
    good = "     1       0   10  3600      8  -1  -1    8  3600   -1  0    1   1   1     1    1   -1    -1"
    lines = ["; header", *[good.replace("     1 ", f"{i:6d} ", 1) for i in range(1, 40)]]
    lines[25] = lines[25].replace("3600", "x3600", 1)
    p = tmp_path / "t.swf"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"t.swf: line 26: field 4 \(run time\): not a number: 'x3600'"):
        from_trace("swf", p)
    inst = from_trace("swf", p, skip_bad=True)
    assert inst.meta["import"]["skipped"]["bad"] == 1
    assert inst.meta["import"]["bad_lines"][0].endswith("line 26: field 4 (run time): not a number: 'x3600'")
