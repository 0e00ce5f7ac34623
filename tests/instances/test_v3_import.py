"""Import and families of model version 3: openb with ``resources="full"``, the ``openb-day``
family's ``resources=``, and the generated ``openb-shares`` family."""

from __future__ import annotations

import csv
import json

import pytest

import instances
from gpusched.cli import main
from instances.families.openb_shapes import OPENB_SHARED, openb_pod_shapes
from instances.resources import shares_gpus, uses_resources
from instances.traces import shipped

DAY = 130 * 86400
OPTS = {"start": DAY, "slot_minutes": 15, "nodes": "openb:nodes", "num_gpus": 16}


def _pods() -> dict[str, dict[str, str]]:
    with open(shipped("openb:default"), newline="") as f:
        return {r["name"]: r for r in csv.DictReader(f)}


def _nodes() -> dict[str, dict[str, str]]:
    with open(shipped("openb:nodes"), newline="") as f:
        return {r["sn"]: r for r in csv.DictReader(f)}


def test_full_keeps_the_pods_and_nodes_fields() -> None:
    gpus = instances.from_trace("openb", "openb:default", **OPTS)
    full = instances.from_trace("openb", "openb:default", resources="full", **OPTS)
    assert instances.dumps(gpus) == instances.dumps(
        instances.from_trace("openb", "openb:default", resources="gpus", **OPTS))
    assert "resources" not in gpus.meta["import"] and full.meta["import"]["resources"] == "full"
    assert not uses_resources(gpus) and shares_gpus(full)
    pods, nodes = _pods(), _nodes()
    for job in full.jobs:
        row = pods[job.name]
        assert (job.gpus, job.gpu_milli, job.cpu_milli, job.memory_mib) == (
            int(row["num_gpu"]), int(row["gpu_milli"]), int(row["cpu_milli"]), int(row["memory_mib"]))
        assert job.gpu_models is None  # gpu_spec is empty in the shipped pods
    for node in full.nodes or ():
        row = nodes[node.name]
        assert (node.gpus, node.model, node.cpu_milli, node.memory_mib) == (
            int(row["gpu"]), row["model"], int(row["cpu_milli"]), int(row["memory_mib"]))
    # the same records, the same window, the same accounting; full skips what has no placement
    imp_g, imp_f = gpus.meta["import"], full.meta["import"]
    assert imp_f["kept"] + sum(imp_f["skipped"].values()) == imp_f["records"] == imp_g["records"]
    assert imp_f["skipped"]["no_gpus"] == imp_g["skipped"]["no_gpus"]
    dropped = {j.name for j in gpus.jobs} - {j.name for j in full.jobs}
    assert len(dropped) == imp_f["skipped"]["too_large"] - imp_g["skipped"]["too_large"] == 1
    for name in dropped:  # a pod asking more CPU or memory than any node of the pool holds
        row = pods[name]
        assert all(int(row["cpu_milli"]) > n.cpu_milli or int(row["memory_mib"]) > n.memory_mib
                   for n in full.nodes or () if n.gpus >= int(row["num_gpu"]))
    # the same jobs otherwise, with the same releases, durations and priorities
    by_name = {j.name: j for j in gpus.jobs}
    for job in full.jobs:
        j = by_name[job.name]
        assert (j.release, j.duration, j.priority) == (job.release, job.duration, job.priority)
    assert instances.instance_from_dict(instances.instance_to_dict(full)) == full


POD_HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
NODE_CSV = "sn,cpu_milli,memory_mib,gpu,model\nx,8000,16384,2,V100M32\ny,4000,8192,4,T4\nz,64000,262144,0,\n"


def _files(tmp_path, rows: str):
    pods = tmp_path / "pods.csv"
    pods.write_text(POD_HEADER + rows)
    nodes = tmp_path / "nodes.csv"
    nodes.write_text(NODE_CSV)
    return str(pods), str(nodes)


def test_full_by_hand(tmp_path) -> None:
    pods, nodes = _files(tmp_path, (
        "a,1000,100,1,250,,LS,Running,0,3600,0\n"
        "b,2000,100,2,1000,V100M32|G2,BE,Running,10,3600,\n"
        "c,1000,100,1,1000,A10,BE,Running,20,3600,20\n"          # no A10 node: too_large
        "d,9000,100,1,1000,,BE,Running,30,3600,30\n"             # more CPU than any node
        "e,1000,100,0,0,,BE,Running,40,3600,40\n"                # no GPUs (its share 0 is not read)
        "f,1000,100,1,,T4| |T4,LS,Running,50,3600,50\n"          # empty gpu_milli: 1000
    ))
    inst = instances.from_trace("openb", pods, nodes=nodes, resources="full")
    jobs = {j.name: j for j in inst.jobs}
    assert list(jobs) == ["a", "b", "f"]
    assert (jobs["a"].gpu_milli, jobs["a"].gpu_models, jobs["a"].cpu_milli) == (250, None, 1000)
    assert jobs["b"].gpu_models == ("V100M32", "G2") and jobs["b"].gpus == 2
    assert jobs["f"].gpu_milli == 1000 and jobs["f"].gpu_models == ("T4",)
    assert inst.meta["import"]["skipped"]["too_large"] == 2
    assert inst.meta["import"]["skipped"]["no_gpus"] == 1
    assert [(n.name, n.model, n.cpu_milli, n.memory_mib) for n in inst.nodes or ()] == [
        ("x", "V100M32", 8000, 16384), ("y", "T4", 4000, 8192)]
    # resources="gpus": the same file as section 9 reads it (c and d are kept, a takes a GPU)
    plain = instances.from_trace("openb", pods, nodes=nodes)
    assert [j.name for j in plain.jobs] == ["a", "b", "c", "d", "f"]
    assert not uses_resources(plain)


@pytest.mark.parametrize(
    ("row", "needle"),
    [
        ("a,1000,100,1,0,,LS,Running,0,3600,0\n", "line 2: gpu_milli: must be an integer in 1..1000"),
        ("a,1000,100,1,1200,,LS,Running,0,3600,0\n", "line 2: gpu_milli"),
        ("a,1000,100,2,500,,LS,Running,0,3600,0\n", "line 2: gpu_milli: a share below 1000 needs num_gpu 1"),
        ("a,1000,100,1,x,,LS,Running,0,3600,0\n", "line 2: gpu_milli"),
        ("a,-1,100,1,500,,LS,Running,0,3600,0\n", "line 2: cpu_milli: must be >= 0"),
        ("a,1000,1.5,1,500,,LS,Running,0,3600,0\n", "line 2: memory_mib: must be a whole number"),
    ],
)
def test_full_malformed_fields_name_file_line_and_field(tmp_path, row, needle) -> None:
    pods, nodes = _files(tmp_path, row + "ok,1,1,1,1000,,LS,Running,0,3600,0\n")
    with pytest.raises(ValueError, match=f"{pods}: {needle}"):
        instances.from_trace("openb", pods, nodes=nodes, resources="full")
    inst = instances.from_trace("openb", pods, nodes=nodes, resources="full", skip_bad=True)
    assert inst.meta["import"]["skipped"]["bad"] == 1 and [j.name for j in inst.jobs] == ["ok"]
    # resources="gpus" does not read those columns
    assert instances.from_trace("openb", pods, nodes=nodes).num_jobs == 2


def test_full_option_errors(tmp_path) -> None:
    pods, nodes = _files(tmp_path, "a,1000,100,1,250,,LS,Running,0,3600,0\n")
    with pytest.raises(ValueError, match=r"resources: 'full' keeps .* give a node list"):
        instances.from_trace("openb", pods, resources="full")
    with pytest.raises(ValueError, match="resources: 'full' is for the openb format"):
        instances.from_trace("swf", pods, resources="full", nodes=nodes)
    with pytest.raises(ValueError, match="resources: must be one of 'gpus', 'full', got 'all'"):
        instances.from_trace("openb", pods, resources="all", nodes=nodes)
    bad = tmp_path / "bad-nodes.csv"
    bad.write_text("sn,cpu_milli,memory_mib,gpu,model\nx,-5,16384,2,V100M32\n")
    with pytest.raises(ValueError, match=f"{bad}: line 2: cpu_milli: must be an integer >= 0"):
        instances.from_trace("openb", pods, nodes=str(bad), resources="full")
    missing = tmp_path / "pods-no-cpu.csv"
    missing.write_text("name,num_gpu,gpu_milli,gpu_spec,qos,creation_time,deletion_time,scheduled_time\n"
                       "a,1,500,,LS,0,60,0\n")
    with pytest.raises(ValueError, match="missing column 'cpu_milli'"):
        instances.from_trace("openb", str(missing), nodes=nodes, resources="full")
    assert instances.from_trace("openb", str(missing), nodes=nodes).num_jobs == 1


def test_command_line_resources_full(tmp_path, capsys) -> None:
    out = tmp_path / "day.json"
    argv = ["import", "openb", "openb:default", "--start", str(DAY), "--slot-minutes", "15",
            "--nodes", "openb:nodes", "--num-gpus", "16", "-o", str(out)]
    assert main([*argv, "--resources", "full"]) == 0
    inst = instances.load(out)
    assert inst == instances.from_trace("openb", "openb:default", resources="full", **OPTS)
    assert '"gpu_milli"' in out.read_text() and '"model"' in out.read_text()
    assert main(argv) == 0 and '"gpu_milli"' not in out.read_text()
    capsys.readouterr()
    code = main(["import", "openb", "openb:default", "--resources", "full"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "resources" in err


# ------------------------------------------------------------------ families
def test_openb_day_takes_resources() -> None:
    full = instances.generate("openb-day", seed=15, resources="full")
    assert full.name == "openb-day-s15-resourcesfull" and shares_gpus(full)
    direct = instances.from_trace("openb", "openb:default", hours=24, service="servegen:0.3",
                                  resources="full", **OPTS)
    assert full.jobs == direct.jobs and full.nodes == direct.nodes
    assert instances.generate("openb-day", seed=15, resources="gpus").jobs == \
        instances.generate("openb-day", seed=15).jobs
    with pytest.raises(ValueError, match="resources: must be one of"):
        instances.generate("openb-day", seed=15, resources="al")


def test_openb_shares_family() -> None:
    a = instances.generate("openb-shares", seed=4)
    assert instances.dumps(a) == instances.dumps(instances.generate("openb-shares", seed=4))
    assert instances.dumps(a) != instances.dumps(instances.generate("openb-shares", seed=5))
    shapes = {p[:4] for p in openb_pod_shapes()}
    real = {(int(r["gpu"]), r["model"], int(r["cpu_milli"]), int(r["memory_mib"]))
            for r in _nodes().values()}
    assert a.num_gpus == 16 and a.horizon == 24 and a.nodes is not None
    for n in a.nodes:
        assert (n.gpus, n.model, n.cpu_milli, n.memory_mib) in real
    for j in a.jobs:
        assert (j.gpus, j.gpu_milli, j.cpu_milli, j.memory_mib) in shapes
        assert j.release + j.duration <= a.horizon and 1 <= j.duration <= 8
    assert [j.release for j in a.jobs] == sorted(j.release for j in a.jobs)
    assert instances.instance_from_dict(json.loads(json.dumps(instances.instance_to_dict(a)))) == a


def test_openb_shares_states_its_share_mix() -> None:
    none = instances.generate("openb-shares", seed=1, shared=0.0, num_jobs=50)
    assert not shares_gpus(none) and none.num_jobs == 50
    every = instances.generate("openb-shares", seed=1, shared=1.0, num_jobs=50)
    assert all(j.gpu_milli < 1000 for j in every.jobs)
    many = instances.generate("openb-shares", seed=1, num_jobs=4000)
    frac = sum(j.gpu_milli < 1000 for j in many.jobs) / many.num_jobs
    assert abs(frac - OPENB_SHARED) < 0.03  # binomial sd 0.008: 3.8 sd
    # the default share is the openb trace's own: 3,078 of the 7,064 pods with GPUs
    pods = openb_pod_shapes()
    assert len(pods) == 7064 and sum(p[1] < 1000 for p in pods) == 3078
    assert round(3078 / 7064, 3) == OPENB_SHARED


@pytest.mark.parametrize(
    ("params", "needle"),
    [({"shared": 1.5}, "shared"), ({"shared": "x"}, "shared"), ({"inference_share": -0.1}, "inference_share"),
     ({"contention": 0}, "contention"), ({"horizon": 0}, "horizon")],
)
def test_openb_shares_bad_parameters(params, needle) -> None:
    with pytest.raises(ValueError, match=needle):
        instances.generate("openb-shares", seed=0, **params)
