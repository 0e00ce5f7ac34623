"""The whole openb cluster in one instance (``instances.traces.openb_cluster``,
``gpusched import openb PATH --cluster``): its counts against the shipped CSVs, read here
with the csv module apart from the importer, and bad input."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest

import instances
from gpusched.cli import main
from instances.families import OPENB_DAYS
from instances.traces import OPENB_TRACE_DAYS, openb_cluster, shipped

START, END = 86400 * 115, 86400 * 150
SLOT = 900.0


def _rows(name: str) -> list[dict[str, str]]:
    with open(shipped(name), newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def gpus() -> instances.Instance:
    return openb_cluster()


@pytest.fixture(scope="module")
def full() -> instances.Instance:
    return openb_cluster("full")


def _expected() -> dict[str, tuple[int, int, int]]:
    """Per pod kept: (GPUs, release, duration), by the rules of section 9 on the window of days
    115-149 in 15-minute slots; and the counts of the skip reasons."""
    out = {}
    for r in _rows("openb:default"):
        c = float(r["creation_time"])
        if not START <= c < END or int(r["num_gpu"]) <= 0:
            continue
        begin = float(r["scheduled_time"]) if r["scheduled_time"] else c
        run = float(r["deletion_time"]) - begin
        if not run > 0:
            continue
        out[r["name"]] = (int(r["num_gpu"]), math.floor((c - START) / SLOT), max(1, math.ceil(run / SLOT)))
    return out


def test_the_days_are_the_family_days() -> None:
    assert OPENB_TRACE_DAYS == OPENB_DAYS == tuple(range(115, 150))


def test_counts_against_the_csvs(gpus: instances.Instance) -> None:
    nodes = [r for r in _rows("openb:nodes") if int(r["gpu"]) > 0]
    assert len(gpus.nodes) == len(nodes) == 1213
    assert gpus.num_gpus == sum(int(r["gpu"]) for r in nodes) == 6212
    assert [(n.name, n.gpus) for n in gpus.nodes] == [(r["sn"], int(r["gpu"])) for r in nodes]
    assert gpus.horizon == 35 * 96 and gpus.slot_hours == 0.25 and not gpus.services
    want = _expected()
    assert len(gpus.jobs) == len(want) == 7038
    got = {j.name: (j.gpus, j.release, j.duration) for j in gpus.jobs}
    assert got == want  # every pod with its real lifetime, none cut at a day's end
    assert max(j.release + j.duration for j in gpus.jobs) <= gpus.horizon
    meta = gpus.meta["import"]
    pods = _rows("openb:default")
    outside = sum(not START <= float(r["creation_time"]) < END for r in pods)
    assert meta["records"] == len(pods) == 8152
    assert meta["skipped"]["window"] == outside == 27
    assert meta["skipped"]["past_horizon"] == 0 and meta["skipped"]["too_large"] == 0
    assert meta["kept"] + sum(meta["skipped"].values()) == meta["records"]
    assert gpus.name == "openb-cluster" and gpus.meta["days"] == [115, 149]


def test_full_keeps_shares_models_cpu_and_memory(gpus: instances.Instance, full: instances.Instance) -> None:
    assert full.name == "openb-cluster-full" and full.meta["import"]["resources"] == "full"
    assert [j.name for j in full.jobs] == [j.name for j in gpus.jobs]
    pods = {r["name"]: r for r in _rows("openb:default")}
    shared = sum(1 for j in full.jobs if j.gpu_milli < 1000)
    assert shared == sum(1 for j in full.jobs if int(pods[j.name]["gpu_milli"] or 1000) < 1000) > 3000
    for j in full.jobs[::97]:
        r = pods[j.name]
        assert j.cpu_milli == int(r["cpu_milli"]) and j.memory_mib == int(r["memory_mib"])
        assert j.gpu_milli == int(r["gpu_milli"] or 1000)
    nodes = {r["sn"]: r for r in _rows("openb:nodes")}
    assert {n.model for n in full.nodes} == {r["model"] for r in nodes.values()}
    for n in full.nodes[::50]:
        assert (n.model, n.cpu_milli, n.memory_mib) == (
            nodes[n.name]["model"], int(nodes[n.name]["cpu_milli"]), int(nodes[n.name]["memory_mib"]))
    # the GPU amount: a share counts its fraction, a whole-GPU job its GPUs
    amounts = instances.resources.gpu_amounts(full)
    assert amounts.sum() < gpus.gpus.sum()
    assert np.all(amounts <= gpus.gpus)


def test_cli_cluster_writes_the_same_instance(tmp_path, capsys, gpus: instances.Instance) -> None:
    out = tmp_path / "cluster.json"
    assert main(["import", "openb", "openb:default", "--cluster", "-o", str(out)]) == 0
    assert "kept 7038 jobs on 6212 GPUs" in capsys.readouterr().out
    assert out.read_text() == instances.dumps(gpus)


@pytest.mark.parametrize("argv, field", [
    (["--start", "0"], "--start"),
    (["--hours", "5"], "--hours"),
    (["--num-gpus", "64"], "--num-gpus"),
    (["--max-jobs", "5"], "--max-jobs"),
])
def test_cli_cluster_refuses_the_window_options(tmp_path, capsys, argv, field) -> None:
    code = main(["import", "openb", "openb:default", "--cluster", *argv, "-o", str(tmp_path / "x.json")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and field in err
    assert not (tmp_path / "x.json").exists()


def test_cli_cluster_bad_input_is_one_line(tmp_path, capsys) -> None:
    assert main(["import", "swf", "x.swf", "--cluster"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--cluster" in err and "openb" in err
    assert main(["import", "openb", str(tmp_path / "missing.csv"), "--cluster"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_bad_options_name_the_field() -> None:
    with pytest.raises(ValueError, match=r"^resources: "):
        openb_cluster("half")
    with pytest.raises(ValueError, match=r"^slot_minutes: "):
        openb_cluster(slot_minutes=0)


def test_a_gzip_pod_list_reads_as_the_plain_one(tmp_path) -> None:
    import gzip

    plain = tmp_path / "pods.csv"
    plain.write_bytes(shipped("openb:default").read_bytes())
    packed = tmp_path / "pods.csv.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    opts = {"start": 86400 * 130, "nodes": "openb:nodes", "num_gpus": 16, "resources": "full"}
    a = instances.from_trace("openb", plain, **opts)
    b = instances.from_trace("openb", packed, **opts)
    assert a.jobs == b.jobs and a.nodes == b.nodes and a.meta["import"]["skipped"] == b.meta["import"]["skipped"]
