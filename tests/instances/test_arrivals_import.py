"""The arrival-trace importers of section 16 (``itp``, ``philly-csv``) on hand-made files:
each rule with a test (drain, cluster filter and its count, UTC times, the default start,
names, load, the accounting of every row), bad input, the command line; then the shipped
logs: their checksums, row counts and package data, and a whole-log import of each."""

from __future__ import annotations

import glob
import gzip
import hashlib
import math
import time
import tomllib
from pathlib import Path

import paths
import pytest

import instances
from gpusched.cli import main
from instances.traces import FORMATS, ITP_CLUSTERS, REASONS, from_trace, shipped

ITP_HEADER = "job_id,submission_time,duration,num_gpu\n"
PHILLY_HEADER = "timestamp,duration,num_gpus,gpu_time,cluster\n"
OCT1 = 1_506_816_000
"""2017-10-01 00:00:00 UTC in Unix seconds."""


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def accounted(inst: instances.Instance) -> bool:
    meta = inst.meta["import"]
    return meta["kept"] + sum(meta["skipped"].values()) == meta["records"]


@pytest.fixture
def itp(tmp_path: Path) -> Path:
    # 30-minute slots, a one-hour window from 0: a runs in slot 0; b (release 1, 2 slots)
    # and c (release 1: 3599 s is slot 1, 4 slots) cannot end in T = 2; d is past the window.
    return write(tmp_path, "itp.csv", ITP_HEADER + "a,0,600,1\nb,1800,3600,2\nc,3599,7200,4\nd,3600,60,1\n")


@pytest.fixture
def philly(tmp_path: Path) -> Path:
    # Rows out of time order, two virtual clusters; row 5 has no run time.
    return write(tmp_path, "philly.csv", PHILLY_HEADER + (
        "2017-10-01 00:30:00,600.0,1,600.0,vcA\n"
        "2017-10-01 00:10:00,1200.0,2,2400.0,vcB\n"
        "2017-10-01 00:00:00,60.0,1,60.0,vcB\n"
        "2017-10-01 02:00:00,60.0,4,240.0,vcA\n"
        "2017-10-01 00:20:00,0.0,1,0.0,vcA\n"
    ))


def test_the_formats_are_in_the_one_table() -> None:
    from gpusched.commands.traces import FORMAT_NAMES

    assert {"itp", "philly-csv"} <= set(FORMATS)
    assert set(FORMAT_NAMES) == set(FORMATS)


# ---------------------------------------------------------------- itp
def test_itp_window_releases_durations_and_names(itp: Path) -> None:
    inst = from_trace("itp", itp, hours=1, slot_minutes=30)
    assert inst.horizon == 2 and [j.name for j in inst.jobs] == ["a"]
    (a,) = inst.jobs
    assert (a.release, a.duration, a.gpus, a.priority) == (0, 1, 1, 1.0)
    meta = inst.meta["import"]
    assert meta["start"] == 0 and meta["records"] == 4 and meta["kept"] == 1
    assert meta["skipped"] == {"window": 1, "no_gpus": 0, "too_large": 0, "no_run_time": 0,
                               "past_horizon": 2, "max_jobs": 0, "bad": 0}
    assert "other_cluster" not in meta["skipped"] and "drain" not in meta
    assert accounted(inst)


@pytest.mark.parametrize(("drain", "horizon", "kept"), [
    (0, 2, ["a"]),          # T = ceil(3600 * 1 / 1800)
    (1, 4, ["a", "b"]),     # b: release 1 + 2 slots = 3 <= 4; c: 1 + 4 = 5 > 4
    (1.5, 5, ["a", "b", "c"]),
    (0.25, 3, ["a", "b"]),  # T = ceil(3600 * 1.25 / 1800) = ceil(2.5): b ends at 3
])
def test_drain_extends_the_horizon_not_the_window(itp: Path, drain, horizon, kept) -> None:
    inst = from_trace("itp", itp, hours=1, slot_minutes=30, drain=drain)
    assert inst.horizon == horizon == math.ceil(3600 * (1 + drain) / 1800)
    assert [j.name for j in inst.jobs] == kept
    meta = inst.meta["import"]
    assert meta["skipped"]["window"] == 1  # d (submitted at 3600) stays outside
    assert meta["skipped"]["past_horizon"] == 3 - len(kept)
    assert accounted(inst)
    if drain:
        assert meta["drain"] == drain


def test_a_job_is_skipped_only_when_it_cannot_end(tmp_path: Path) -> None:
    # release 0, 2 slots of 30 min: ends at 2 = T exactly (kept); 3 slots: past T.
    p = write(tmp_path, "x.csv", ITP_HEADER + "ok,0,3600,1\nlate,0,3601,1\n")
    inst = from_trace("itp", p, hours=0.5, slot_minutes=30, drain=0.5)
    assert inst.horizon == 2 and [j.name for j in inst.jobs] == ["ok"]
    assert inst.meta["import"]["skipped"]["past_horizon"] == 1


def test_itp_start_is_the_earliest_submit_and_an_option(itp: Path, tmp_path: Path) -> None:
    p = write(tmp_path, "late.csv", ITP_HEADER + "x,5000,600,1\ny,4000,600,2\n")
    inst = from_trace("itp", p, hours=1, slot_minutes=60)
    assert inst.meta["import"]["start"] == 4000 and [j.name for j in inst.jobs] == ["y", "x"]
    assert [j.release for j in inst.jobs] == [0, 0]  # submit order, ties by file order
    inst = from_trace("itp", itp, start=1800, hours=1, slot_minutes=30, drain=2)
    assert [j.name for j in inst.jobs] == ["b", "c", "d"] and inst.jobs[2].release == 1


def test_load_divides_submit_times_from_the_start(itp: Path) -> None:
    # load 2: the one-hour window holds two hours of submits, offsets halved.
    inst = from_trace("itp", itp, hours=1, slot_minutes=30, drain=4, load=2)
    assert [(j.name, j.release) for j in inst.jobs] == [("a", 0), ("b", 0), ("c", 0), ("d", 1)]
    assert [j.duration for j in inst.jobs] == [1, 2, 4, 1]  # run times are not scaled
    assert inst.meta["import"]["load"] == 2 and accounted(inst)
    half = from_trace("itp", itp, hours=1, slot_minutes=30, drain=4, load=0.5)
    assert [(j.name, j.release) for j in half.jobs] == [("a", 0)]  # 1800 s is 3600 s away


def test_itp_skip_reasons_each_counted_once(tmp_path: Path) -> None:
    p = write(tmp_path, "r.csv", ITP_HEADER + (
        "g0,0,600,0\n"       # no_gpus
        "big,0,600,9\n"      # too_large (pool 8)
        "norun,0,0,1\n"      # no_run_time (zero)
        "empty,0,,1\n"       # no_run_time (missing)
        "long,0,999999,1\n"  # past_horizon
        "k1,10,600,8\n"
        "k2,20,600,1\n"      # max_jobs (1 kept)
        "bad,0,600,two\n"    # bad (skip_bad)
        "out,999999,600,1\n"  # window
    ))
    inst = from_trace("itp", p, hours=1, num_gpus=8, max_jobs=1, skip_bad=True)
    sk = inst.meta["import"]["skipped"]
    assert sk == {"window": 1, "no_gpus": 1, "too_large": 1, "no_run_time": 2,
                  "past_horizon": 1, "max_jobs": 1, "bad": 1}
    assert [j.name for j in inst.jobs] == ["k1"] and inst.meta["import"]["records"] == 9
    assert accounted(inst)
    assert "line 9" in inst.meta["import"]["bad_lines"][0]


# ---------------------------------------------------------------- philly-csv
def test_philly_csv_times_are_utc_unix_seconds(philly: Path, monkeypatch) -> None:
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        inst = from_trace("philly-csv", philly, hours=1, slot_minutes=10)
        assert inst.meta["import"]["start"] == OCT1  # the earliest row, 00:00 UTC
        inst = from_trace("philly-csv", philly, start="2017-10-01 00:10:00", hours=1,
                          slot_minutes=10)
        assert inst.meta["import"]["start"] == OCT1 + 600
        assert from_trace("philly-csv", philly, start=OCT1 + 600, hours=1,
                          slot_minutes=10).jobs == inst.jobs
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_philly_csv_zone_is_converted(tmp_path: Path) -> None:
    p = write(tmp_path, "z.csv", PHILLY_HEADER + "2017-10-01 02:30:00+02:00,60,1,60,v\n")
    assert from_trace("philly-csv", p).meta["import"]["start"] == OCT1 + 1800


def test_philly_csv_names_are_row_numbers_in_submit_order(philly: Path) -> None:
    inst = from_trace("philly-csv", philly, hours=3, slot_minutes=10)
    assert [j.name for j in inst.jobs] == ["3", "2", "1", "4"]  # row 5 has no run time
    assert [j.release for j in inst.jobs] == [0, 1, 3, 12]
    assert [j.gpus for j in inst.jobs] == [1, 2, 1, 4] and inst.num_gpus == 4
    assert all(j.priority == 1.0 for j in inst.jobs)
    meta = inst.meta["import"]
    assert list(meta["skipped"]) == ["other_cluster", *REASONS, "bad"]
    assert meta["skipped"]["other_cluster"] == 0 and meta["skipped"]["no_run_time"] == 1
    assert accounted(inst)


def test_philly_csv_cluster_filter_counts_other_rows_first(philly: Path) -> None:
    inst = from_trace("philly-csv", philly, cluster="vcA", hours=1, slot_minutes=10)
    meta = inst.meta["import"]
    # the default start is the earliest submit of vcA's rows (row 5, 00:20), not row 3's
    assert meta["start"] == OCT1 + 1200 and meta["cluster"] == "vcA"
    assert meta["skipped"] == {"other_cluster": 2, "window": 1, "no_gpus": 0, "too_large": 0,
                               "no_run_time": 1, "past_horizon": 0, "max_jobs": 0, "bad": 0}
    assert [(j.name, j.release) for j in inst.jobs] == [("1", 1)]
    assert meta["records"] == 5 and accounted(inst)
    # other_cluster comes ahead of the window: a vcB row inside the window counts there
    b = from_trace("philly-csv", philly, cluster="vcB", hours=1, slot_minutes=10)
    assert [j.name for j in b.jobs] == ["3", "2"]
    assert b.meta["import"]["skipped"]["other_cluster"] == 3
    assert b.meta["import"]["skipped"]["window"] == 0 and accounted(b)


def test_philly_csv_priorities_by_cluster_on_request(philly: Path) -> None:
    inst = from_trace("philly-csv", philly, hours=3, slot_minutes=10, priorities={"vcB": 2})
    assert [j.priority for j in inst.jobs] == [2.0, 2.0, 1.0, 1.0]


def test_philly_csv_blank_lines_and_bad_rows_are_accounted(tmp_path: Path) -> None:
    p = write(tmp_path, "b.csv", PHILLY_HEADER + (
        "2017-10-01 00:00:00,60,1,60,v\n\n"
        "yesterday,60,1,60,v\n"
        "2017-10-01 00:01:00,60,1,60,\n"
        "2017-10-01 00:02:00,60,1,60,w\n"
    ))
    inst = from_trace("philly-csv", p, skip_bad=True, cluster="v")
    meta = inst.meta["import"]
    assert meta["records"] == 4 and meta["skipped"]["bad"] == 2
    assert meta["skipped"]["other_cluster"] == 1 and [j.name for j in inst.jobs] == ["1"]
    assert accounted(inst)
    assert any("line 4" in m and "timestamp" in m for m in meta["bad_lines"])
    assert any("line 5" in m and "cluster: empty" in m for m in meta["bad_lines"])


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize(("fmt", "text", "options", "fragments"), [
    ("itp", ITP_HEADER + "a,0,600,1\nb,0,600,two\n", {}, ["line 3", "num_gpu", "'two'"]),
    ("itp", ITP_HEADER + "a,0,-5,1\n", {}, ["line 2", "duration: negative"]),
    ("itp", ITP_HEADER + "a,x,600,1\n", {}, ["line 2", "submission_time", "'x'"]),
    ("itp", ITP_HEADER + ",0,600,1\n", {}, ["line 2", "job_id: empty"]),
    ("itp", ITP_HEADER + "a,0,600,1\na,5,600,1\n", {}, ["line 3", "job id 'a' repeats"]),
    ("itp", "job_id,submission_time,duration\na,0,600\n", {}, ["line 1", "missing column 'num_gpu'"]),
    ("itp", ITP_HEADER + "a,0,600\n", {}, ["line 2", "too few fields"]),
    ("itp", ITP_HEADER, {}, ["no records"]),
    ("philly-csv", PHILLY_HEADER + "2017-13-01 00:00:00,60,1,60,v\n", {}, ["line 2", "timestamp"]),
    ("philly-csv", PHILLY_HEADER + "2017-10-01 00:00:00,1.5e,1,60,v\n", {}, ["line 2", "duration"]),
    ("philly-csv", PHILLY_HEADER + "2017-10-01 00:00:00,60,1.5,60,v\n", {}, ["line 2", "num_gpus"]),
    ("philly-csv", PHILLY_HEADER + "2017-10-01 00:00:00,60,1,60,v\n", {"cluster": "zz"},
     ["cluster", "no row of virtual cluster 'zz'", "v"]),
    ("philly-csv", PHILLY_HEADER + "2017-10-01 00:00:00,60,0,0,v\n", {}, ["no usable job"]),
])
def test_bad_input_names_the_file_and_the_field(tmp_path, fmt, text, options, fragments) -> None:
    p = write(tmp_path, "bad_input.csv", text)
    with pytest.raises(ValueError) as e:
        from_trace(fmt, p, **options)
    msg = str(e.value)
    assert "bad_input.csv" in msg, msg
    for f in fragments:
        assert f in msg, (f, msg)


@pytest.mark.parametrize(("options", "field"), [
    ({"drain": -1}, "drain"), ({"drain": math.inf}, "drain"), ({"load": 0}, "load"),
    ({"load": "2"}, "load"), ({"cluster": ""}, "cluster"),
])
def test_bad_options_name_the_option(itp: Path, options, field) -> None:
    fmt = "philly-csv" if "cluster" in options else "itp"
    with pytest.raises(ValueError, match=f"^{field}: "):
        from_trace(fmt, itp, **options)


def test_cluster_is_a_philly_csv_option(itp: Path) -> None:
    with pytest.raises(ValueError, match=r"^cluster: .*philly-csv.*'itp'"):
        from_trace("itp", itp, cluster="vcA")


# ---------------------------------------------------------------- command line
def test_cli_imports_with_drain_and_cluster(philly: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "p.json"
    argv = ["import", "philly-csv", str(philly), "--cluster", "vcA", "--hours", "1",
            "--slot-minutes", "10", "--drain", "1", "-o", str(out)]
    assert main(argv) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("philly-csv philly.csv: 5 records, kept 1 jobs")
    assert "other_cluster 2, window 1" in line
    inst = instances.load(out)
    assert inst.horizon == 12 and inst.meta["import"]["drain"] == 1.0


@pytest.mark.parametrize(("argv", "fragment"), [
    (["philly-csv", "{philly}", "--cluster"], "--cluster: philly-csv needs a virtual-cluster ID"),
    (["itp", "{itp}", "--cluster", "vcA"], "--cluster vcA: a virtual-cluster filter is for philly-csv"),
    (["openb", "openb:default", "--cluster", "vcA"], "--cluster: openb's whole cluster takes no ID"),
    (["openb", "openb:default", "--cluster", "--drain", "5"], "--drain"),
    (["philly-csv", "{philly}", "--cluster", "zz"], "no row of virtual cluster 'zz'"),
    (["itp", "{itp}", "--drain", "-2"], "drain: must be"),
    (["itp", "{itp}", "--load", "0"], "load: must be"),
    (["itp", "{bad}"], "line 2"),
])
def test_cli_bad_input_is_exit_2_and_one_line(itp, philly, tmp_path, capsys, argv, fragment) -> None:
    bad = write(tmp_path, "bad.csv", ITP_HEADER + "a,0,600,many\n")
    argv = [a.format(itp=itp, philly=philly, bad=bad) for a in argv]
    assert main(["import", *argv, "-o", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and fragment in err, err
    assert not (tmp_path / "x.json").exists()


# ---------------------------------------------------------------- the shipped logs
ARRIVALS = Path(str(shipped("itp:cluster04"))).parents[1]
ITP_ROWS = {"cluster01": 1595, "cluster02": 5778, "cluster03": 3011, "cluster04": 15802,
            "cluster05": 3629, "cluster06": 2396, "cluster07": 12699, "cluster08": 13047,
            "cluster09": 11134, "cluster10": 260}
"""Data rows of each ITP file (the README's counts)."""


def _sums() -> dict[str, str]:
    text = (ARRIVALS / "SHA256SUMS").read_text()
    return {name: digest for digest, name in (line.split() for line in text.splitlines())}


def test_shipped_files_match_their_checksums_decompressed() -> None:
    sums = _sums()
    assert set(sums) == {f"itp/{c}.csv" for c in ITP_CLUSTERS} | {"philly/philly.csv"}
    assert set(ITP_ROWS) == set(ITP_CLUSTERS)
    for name, digest in sums.items():
        raw = gzip.decompress((ARRIVALS / f"{name}.gz").read_bytes())
        assert hashlib.sha256(raw).hexdigest() == digest, name
        rows = [r for r in raw.decode("utf-8").splitlines()[1:] if r.strip()]
        expected = 82_247 if name.startswith("philly") else ITP_ROWS[Path(name).stem]
        assert len(rows) == expected, name
    assert sum(ITP_ROWS.values()) == 69_351
    assert "MIT License" in (ARRIVALS / "itp" / "LICENSE").read_text()
    readme = (ARRIVALS / "README.md").read_text()
    assert "CC BY 4.0" in readme and "69,351" in readme and "82,247" in readme


def test_shipped_files_are_package_data() -> None:
    root = paths.ROOT
    globs = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["instances"]
    packaged = {Path(p) for g in globs for p in glob.glob(str(root / "instances" / g))}
    files = {p for p in (root / "instances" / "data" / "arrivals").rglob("*") if p.is_file()}
    assert files and files <= packaged, sorted(map(str, files - packaged))


def test_whole_itp_cluster04_with_a_drain() -> None:
    t0 = time.perf_counter()
    inst = from_trace("itp", "itp:cluster04", hours=24 * 60, slot_minutes=15, drain=240,
                      num_gpus=512)
    seconds = time.perf_counter() - t0
    meta = inst.meta["import"]
    assert meta["records"] == meta["kept"] == inst.num_jobs == 15_802 and accounted(inst)
    assert inst.horizon == 6720 and inst.num_gpus == 512
    assert seconds < 30  # about 0.2 s on an idle machine


def test_whole_philly_by_cluster_accounts_for_every_row() -> None:
    whole = from_trace("philly-csv", "philly-csv:default", hours=24 * 110, slot_minutes=60)
    assert whole.meta["import"]["records"] == 82_247 and accounted(whole)
    assert whole.meta["import"]["start"] == 1_504_521_041  # 2017-09-04 10:30:41 UTC
    one = from_trace("philly-csv", "philly-csv:default", cluster="ee9e8c", hours=24 * 110,
                     slot_minutes=60)
    sk = one.meta["import"]["skipped"]
    assert sk["other_cluster"] == 82_247 - 1_511 and accounted(one)
    assert one.meta["import"]["kept"] + sum(v for k, v in sk.items() if k != "other_cluster") == 1_511


def test_a_compressed_logs_instance_is_named_by_the_file_inside() -> None:
    inst = instances.from_trace("itp", "itp:cluster04", hours=24, slot_minutes=15, num_gpus=512)
    assert inst.name == "itp-cluster04"
