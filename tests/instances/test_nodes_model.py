"""Model version 2: nodes on an instance, placements on a schedule, and their files."""

from __future__ import annotations

import json

import numpy as np
import paths
import pytest

import instances
from instances import Instance, Job, Node, Schedule, Service
from instances.model import subset_sums


def _inst(nodes=(("n0", 8), ("n1", 4), ("n2", 4)), jobs=(("a", 4, 2), ("b", 12, 1))) -> Instance:
    ns = tuple(Node(n, g) for n, g in nodes)
    js = tuple(Job(n, g, p) for n, g, p in jobs)
    return Instance("x", sum(g for _, g in nodes), 4, (Service("s", 1.0, (1, 2, 3, 1)),), js,
                    nodes=ns)


def test_node_fields_are_checked() -> None:
    with pytest.raises(ValueError, match=r"node 'z'\.gpus: must be >= 1, got 0"):
        Node("z", 0)
    with pytest.raises(ValueError, match=r"node\.name: must be a non-empty string"):
        Node("", 4)
    with pytest.raises(ValueError, match=r"node 'z'\.gpus: must be an integer"):
        Node("z", 2.5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("nodes", "jobs", "needle"),
    [
        ((("n0", 8), ("n0", 8)), (), r"nodes\[1\]\.name: duplicate node name 'n0'"),
        ((("n0", 8), ("n1", 4)), (), None),  # control: valid
        ((("n0", 8), ("n1", 8)), (("big", 12, 1),), r"jobs\[0\]\.gpus: job 'big' has no valid"),
        ((("n0", 8), ("n1", 2), ("n2", 2)), (("ok", 10, 1), ("bad", 11, 1)), r"jobs\[1\]\.gpus: job 'bad'"),
    ],
)
def test_instance_node_validation(nodes, jobs, needle) -> None:
    if needle is None:
        assert _inst(nodes, jobs).num_nodes == len(nodes)
        return
    with pytest.raises(ValueError, match=needle):
        _inst(nodes, jobs)


def test_node_sum_must_equal_pool() -> None:
    base = _inst()
    with pytest.raises(ValueError, match=r"nodes: the nodes' GPUs sum to 12, must equal num_gpus \(16\)"):
        base.replace(nodes=(Node("n0", 8), Node("n1", 4)))
    with pytest.raises(ValueError, match=r"nodes: the nodes' GPUs sum to 0"):
        base.replace(nodes=())
    with pytest.raises(ValueError, match=r"nodes\[0\]: must be a Node"):
        base.replace(nodes=({"name": "n0", "gpus": 16},))


def test_subset_sums_by_hand() -> None:
    reach = subset_sums([8, 4, 4], 16)
    assert [k for k in range(17) if (reach >> k) & 1] == [0, 4, 8, 12, 16]
    reach = subset_sums([8] * 1000 + [2], 8002)
    assert (reach >> 8002) & 1 and (reach >> 16) & 1 and not (reach >> 6) & 1
    assert not (reach >> 8003) & 1


def test_node_arrays_and_peak_withholding() -> None:
    inst = _inst()
    assert inst.has_nodes and inst.num_nodes == 3
    assert inst.node_gpus.tolist() == [8, 4, 4]
    assert inst.node_index == {"n0": 0, "n1": 1, "n2": 2}
    assert inst.multi_node.tolist() == [False, True]
    assert inst.max_span == 2  # 12 GPUs: at most the two 4-GPU nodes plus nothing more
    # peak demand 3: all of it from the last node
    assert inst.node_withheld("peak").tolist() == [0, 0, 3]
    assert inst.node_capacity("peak").tolist() == [8, 4, 1]
    assert inst.node_capacity("curve").tolist() == [8, 4, 4]
    # peak 6: the last node in full, then 2 of the one before
    six = inst.replace(services=(Service("s", 1.0, (6, 0, 0, 0)),))
    assert six.node_withheld("peak").tolist() == [0, 2, 4]
    flat = inst.replace(nodes=None)
    assert not flat.has_nodes and flat.num_nodes == 0 and flat.max_span == 1


def test_equality_and_summary_see_the_nodes() -> None:
    inst = _inst()
    assert inst != inst.replace(nodes=None)
    assert "on 3 nodes" in inst.summary()
    assert "nodes" not in inst.replace(nodes=None).summary()


def test_instance_file_round_trip_with_nodes(tmp_path) -> None:
    inst = _inst()
    path = tmp_path / "x.json"
    instances.save(inst, path)
    text = path.read_text()
    assert '"nodes": [\n    {"name": "n0", "gpus": 8},' in text
    back = instances.load(path)
    assert back == inst and back.nodes == inst.nodes
    assert instances.dumps(back) == text


DATA = paths.DATA / "nodes"


def test_version_1_files_are_byte_identical(tmp_path) -> None:
    """Files written by version 1 (before nodes) load as before and are rewritten byte for byte."""
    v1 = DATA / "v1-hc-mixed-3.json"
    inst = instances.load(v1)
    assert inst.nodes is None and not inst.has_nodes
    assert inst == instances.generate("hc-mixed", seed=3)
    assert instances.dumps(inst) == v1.read_text()
    instances.save(inst, tmp_path / "i.json")
    assert (tmp_path / "i.json").read_bytes() == v1.read_bytes()
    sv1 = DATA / "v1-schedule.json"
    sched = instances.load_schedule(sv1)
    assert sched.placement == {}
    instances.save_schedule(sched, tmp_path / "s.json")
    assert (tmp_path / "s.json").read_bytes() == sv1.read_bytes()


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda d: d["nodes"][1].update(gpus=0), r"nodes\[1\]\.gpus"),
        (lambda d: d["nodes"][1].update(name=""), r"nodes\[1\]\.name"),
        (lambda d: d["nodes"][1].update(name="n0"), r"nodes\[1\]\.name: duplicate node name 'n0'"),
        (lambda d: d["nodes"].pop(), r"nodes: the nodes' GPUs sum to 12"),
        (lambda d: d["nodes"][0].update(rack=3), r"nodes\[0\]"),
        (lambda d: d.update(nodes={"n0": 8}), r"nodes"),
        (lambda d: d["jobs"][1].update(gpus=14), r"jobs\[1\]\.gpus: job 'b' has no valid placement"),
    ],
)
def test_instance_dict_errors_name_the_field(edit, needle) -> None:
    data = instances.instance_to_dict(_inst())
    edit(data)
    with pytest.raises(ValueError, match=needle):
        instances.instance_from_dict(data)


def test_schedule_placement_fields() -> None:
    s = Schedule("x", {"a": 0}, {"a": {"n1": 4, "n0": 0}})
    assert dict(s.placement["a"]) == {"n1": 4, "n0": 0}
    with pytest.raises(TypeError):
        s.placement["a"]["n1"] = 3  # type: ignore[index]
    assert s == Schedule("x", {"a": 0}, {"a": {"n0": 0, "n1": 4}})
    assert s != Schedule("x", {"a": 0})
    assert hash(s) == hash(Schedule("x", {"a": 0}, {"a": {"n0": 0, "n1": 4}}))
    for bad, needle in [
        ({"a": {"n0": -1}}, r'placement\["a"\]\["n0"\]: must be an integer'),
        ({"a": {"n0": 2.0}}, r'placement\["a"\]\["n0"\]'),
        ({"a": {"n0": True}}, r'placement\["a"\]\["n0"\]'),
        ({"a": [("n0", 1)]}, r'placement\["a"\]: must be a mapping'),
        ({"a": {"": 1}}, r'placement\["a"\]: node names'),
        ({"": {"n0": 1}}, r"placement: job names"),
    ]:
        with pytest.raises(ValueError, match=needle):
            Schedule("x", {"a": 0}, bad)
    with pytest.raises(ValueError, match=r"placement: must be a mapping"):
        Schedule("x", {}, [1])  # type: ignore[arg-type]


def test_placement_arrays_round_trip() -> None:
    inst = _inst()
    sched = Schedule("x", {"a": 1, "b": 0}, {"a": {"n1": 4}, "b": {"n2": 4, "n0": 8}})
    place = sched.to_placement_array(inst)
    assert place.tolist() == [[1, -1], [0, 2]]
    back = Schedule.from_array(inst, sched.to_array(inst), place)
    assert back == sched
    # zeros are left out; rows of jobs that do not start are dropped by from_array
    z = Schedule("x", {"b": 0}, {"a": {"n1": 4, "n0": 0}, "b": {"n0": 8, "n2": 4}})
    assert z.to_placement_array(inst).tolist() == [[1, -1], [0, 2]]
    assert Schedule.from_array(inst, z.to_array(inst), z.to_placement_array(inst)).placement == {
        "b": {"n0": 8, "n2": 4}
    }
    with pytest.raises(ValueError, match=r'placement\["ghost"\]: no job'):
        Schedule("x", {}, {"ghost": {"n0": 1}}).to_array(inst)
    with pytest.raises(ValueError, match=r'placement\["a"\]\["n9"\]: no node'):
        Schedule("x", {}, {"a": {"n9": 1}}).to_placement_array(inst)
    with pytest.raises(ValueError, match=r"3 nodes, more than"):
        Schedule("x", {}, {"a": {"n0": 1, "n1": 1, "n2": 2}}).to_placement_array(inst)
    with pytest.raises(ValueError, match=r"place: must have shape"):
        Schedule.from_array(inst, np.array([0, 0]), np.array([0, 1]))


def test_schedule_file_round_trip_with_placement(tmp_path) -> None:
    sched = Schedule("x", {"a": 1}, {"a": {"n1": 4}})
    path = tmp_path / "s.json"
    instances.save_schedule(sched, path)
    assert json.loads(path.read_text())["placement"] == {"a": {"n1": 4}}
    assert instances.load_schedule(path) == sched
    data = sched.to_dict()
    data["placement"] = {"a": {"n1": -1}}
    with pytest.raises(ValueError, match=r'placement\["a"\]\["n1"\]'):
        instances.schedule_from_dict(data)
    data["placement"] = {"a": {"n1": 1.5}}
    with pytest.raises(ValueError, match=r'placement\["a"\]\["n1"\]'):
        instances.schedule_from_dict(data)
    data["placement"] = {"a": 4}
    with pytest.raises(ValueError, match=r'placement\["a"\]'):
        instances.schedule_from_dict(data)
