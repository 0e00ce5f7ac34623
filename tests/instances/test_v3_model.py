"""Model version 3 (section 12): the fields of nodes and jobs, their files, placements with GPU
indices, the arrays, and the code that refuses what it does not read yet."""

from __future__ import annotations

import json

import numpy as np
import paths
import pytest

import instances
from instances import Instance, Job, Node, Schedule, Service
from instances.capacity import capacity
from instances.resources import (
    has_placement,
    jobs_use_resources,
    resources,
    shares_gpus,
    uses_resources,
    withheld_indices,
)

DATA = paths.DATA / "nodes"


def _nodes() -> tuple[Node, ...]:
    return (Node("n0", 4, "T4", 16000, 65536), Node("n1", 2, "V100", 8000, 32768),
            Node("n2", 2))


def _inst(jobs=None, nodes=None, services=()) -> Instance:
    nodes = _nodes() if nodes is None else nodes
    jobs = (
        Job("whole", 2, 2, 2.0, gpu_models=["T4", "V100"], cpu_milli=4000, memory_mib=1024),
        Job("half", 1, 3, 1.0, gpu_milli=500, cpu_milli=1000),
        Job("plain", 1, 1),
    ) if jobs is None else jobs
    return Instance("v3", sum(n.gpus for n in nodes), 6, services, jobs, nodes=nodes)


# ------------------------------------------------------------------ fields
@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"model": ""}, r"node 'z'\.model: must be a non-empty string, got ''"),
        ({"model": 3}, r"node 'z'\.model: must be a non-empty string, got 3"),
        ({"cpu_milli": -1}, r"node 'z'\.cpu_milli: must be >= 0, got -1"),
        ({"cpu_milli": 1.5}, r"node 'z'\.cpu_milli: must be an integer, got 1\.5"),
        ({"memory_mib": True}, r"node 'z'\.memory_mib: must be an integer, got True"),
        ({"memory_mib": -5}, r"node 'z'\.memory_mib: must be >= 0, got -5"),
    ],
)
def test_node_fields_name_the_field_and_value(kwargs, needle) -> None:
    with pytest.raises(ValueError, match=needle):
        Node("z", 2, **kwargs)


def test_node_fields_default_to_absent() -> None:
    n = Node("z", 2)
    assert (n.model, n.cpu_milli, n.memory_mib) == (None, None, None)
    assert Node("z", 2, "T4", 0, 0).cpu_milli == 0  # zero is a valid limit


@pytest.mark.parametrize(
    ("gpus", "kwargs", "needle"),
    [
        (1, {"gpu_milli": 0}, r"job 'j'\.gpu_milli: must be >= 1, got 0"),
        (1, {"gpu_milli": 1001}, r"job 'j'\.gpu_milli: must be <= 1000, got 1001"),
        (1, {"gpu_milli": 500.0}, r"job 'j'\.gpu_milli: must be an integer, got 500\.0"),
        (2, {"gpu_milli": 500}, r"job 'j'\.gpu_milli: a share below 1000 needs gpus == 1, got 500 with gpus 2"),
        (1, {"gpu_models": []}, r"job 'j'\.gpu_models: must be a non-empty list of model names"),
        (1, {"gpu_models": "T4"}, r"job 'j'\.gpu_models: must be a non-empty list of model names, got 'T4'"),
        (1, {"gpu_models": ["T4", ""]}, r"job 'j'\.gpu_models\[1\]: must be a non-empty string"),
        (1, {"gpu_models": ["T4", "T4"]}, r"job 'j'\.gpu_models\[1\]: model 'T4' is listed twice"),
        (1, {"gpu_models": [7]}, r"job 'j'\.gpu_models\[0\]: must be a non-empty string, got 7"),
        (1, {"cpu_milli": -1}, r"job 'j'\.cpu_milli: must be >= 0, got -1"),
        (1, {"memory_mib": "1"}, r"job 'j'\.memory_mib: must be an integer, got '1'"),
    ],
)
def test_job_fields_name_the_field_and_value(gpus, kwargs, needle) -> None:
    with pytest.raises(ValueError, match=needle):
        Job("j", gpus, 1, **kwargs)


def test_job_fields_defaults_and_normal_form() -> None:
    j = Job("j", 3, 1)
    assert (j.gpu_milli, j.gpu_models, j.cpu_milli, j.memory_mib) == (1000, None, 0, 0)
    assert Job("j", 1, 1, gpu_milli=1).gpu_milli == 1 and Job("j", 2, 1, gpu_milli=1000).gpus == 2
    assert Job("j", 1, 1, gpu_models=["A", "B"]).gpu_models == ("A", "B")  # a tuple: hashable
    assert Job("j", 1, 1, gpu_models=["A"]) == Job("j", 1, 1, gpu_models=("A",))
    assert Job("j", 1, 1, gpu_milli=999) != Job("j", 1, 1)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"gpu_milli": 500}, "gpu_milli"), ({"gpu_models": ["T4"]}, "gpu_models"),
     ({"cpu_milli": 1}, "cpu_milli"), ({"memory_mib": 1}, "memory_mib")],
)
def test_job_fields_only_on_an_instance_with_nodes(kwargs, field) -> None:
    with pytest.raises(ValueError, match=rf"jobs\[1\]\.{field}: valid only on an instance with nodes"):
        Instance("flat", 4, 2, (), (Job("a", 1, 1), Job("b", 1, 1, **kwargs)))
    Instance("nodes", 4, 2, (), (Job("a", 1, 1), Job("b", 1, 1, **kwargs)),
             nodes=(Node("n", 4, "T4"),))  # control: valid on nodes


def test_a_file_without_nodes_refuses_the_field_even_at_its_default() -> None:
    data = instances.instance_to_dict(Instance("flat", 4, 2, (), (Job("a", 1, 1),)))
    data["jobs"][0]["cpu_milli"] = 0
    with pytest.raises(ValueError, match=r"^jobs\[0\]\.cpu_milli: valid only on an instance with nodes, got 0"):
        instances.instance_from_dict(data)


# ------------------------------------------------- a placement on the empty cluster
@pytest.mark.parametrize(
    ("job", "ok"),
    [
        (Job("j", 4, 1, gpu_models=["T4"]), True),
        (Job("j", 4, 1, gpu_models=["V100"]), False),  # the V100 node has 2 GPUs
        (Job("j", 2, 1, gpu_models=["V100"], cpu_milli=8000), True),
        (Job("j", 2, 1, gpu_models=["V100"], cpu_milli=8001), False),
        (Job("j", 1, 1, gpu_models=["A10"]), False),  # no node of that model
        (Job("j", 1, 1, gpu_models=["T4"], memory_mib=65536), True),
        (Job("j", 1, 1, memory_mib=65537), True),  # n2 states no memory: unlimited
        (Job("j", 1, 1, gpu_models=["T4", "V100"], memory_mib=65537), False),  # n2 has no model
        (Job("j", 1, 1, gpu_milli=1, cpu_milli=16000), True),
        (Job("j", 1, 1, gpu_milli=1, cpu_milli=16001), True),  # n2: no CPU limit
    ],
)
def test_every_job_needs_a_placement_on_the_empty_cluster(job, ok) -> None:
    if ok:
        assert _inst((job,)).num_jobs == 1
        return
    with pytest.raises(ValueError, match=r"jobs\[0\]: job 'j' has no valid placement on the empty cluster"):
        _inst((job,))


def test_a_multi_node_job_charges_each_node_in_proportion_exactly() -> None:
    # 12 GPUs on nodes of 8 and 4 (larger than the largest node: whole nodes); CPU 1200
    # charges the 8-GPU node 800 and the 4-GPU node 400: exact, no rounding.
    def inst(cap4: int, cpu: int) -> Instance:
        return Instance("m", 12, 2, (), (Job("big", 12, 1, cpu_milli=cpu),),
                        nodes=(Node("a", 8, cpu_milli=800), Node("b", 4, cpu_milli=cap4)))

    assert inst(400, 1200).num_jobs == 1
    with pytest.raises(ValueError, match="no valid placement"):
        inst(399, 1200)
    # 1000 charges 333.33... to the 4-GPU node: 333 is too little, 334 enough
    with pytest.raises(ValueError, match="no valid placement"):
        inst(333, 1000)
    assert inst(334, 1000).num_jobs == 1
    assert has_placement([8, 4], [None, None], [800, 334], [None, None], 12, None, 1000, 0)
    assert not has_placement([8, 4], ["X", None], [None, None], [None, None], 12, ["X"], 0, 0)


# ------------------------------------------------------------------ files
def test_version_3_file_round_trip(tmp_path) -> None:
    inst = _inst()
    path = tmp_path / "v3.json"
    instances.save(inst, path)
    text = path.read_text()
    assert '{"name": "n0", "gpus": 4, "model": "T4", "cpu_milli": 16000, "memory_mib": 65536}' in text
    assert '{"name": "n2", "gpus": 2},' not in text and '{"name": "n2", "gpus": 2}\n' in text
    assert '"priority": 1.0, "gpu_milli": 500, "cpu_milli": 1000}' in text
    assert '"gpu_models": ["T4", "V100"], "cpu_milli": 4000, "memory_mib": 1024}' in text
    assert '"name": "plain", "kind": "other", "gpus": 1, "duration": 1, "release": 0, ' \
           '"deadline": null, "priority": 1.0}' in text  # defaults are not written
    back = instances.load(path)
    assert back == inst and back.jobs == inst.jobs and back.nodes == inst.nodes
    assert instances.dumps(back) == text


@pytest.mark.parametrize(
    "name", ["v1-hc-mixed-3.json", "v2-hc-mixed-3-node8.json", "v2-openb-day-3.json"]
)
def test_version_1_and_2_files_are_byte_identical(tmp_path, name) -> None:
    """Files written before version 3 load as before and are written back byte for byte."""
    path = DATA / name
    inst = instances.load(path)
    assert not uses_resources(inst)
    instances.save(inst, tmp_path / "i.json")
    assert (tmp_path / "i.json").read_bytes() == path.read_bytes()
    generated = {
        "v1-hc-mixed-3.json": lambda: instances.generate("hc-mixed", seed=3),
        "v2-hc-mixed-3-node8.json": lambda: instances.generate("hc-mixed", seed=3, node_gpus=8),
        "v2-openb-day-3.json": lambda: instances.generate("openb-day", seed=3),
    }[name]()
    assert instances.dumps(generated) == path.read_text()


def test_version_2_schedule_is_byte_identical_and_still_checks(tmp_path) -> None:
    path = DATA / "v2-schedule.json"
    sched = instances.load_schedule(path)
    assert not sched.lists_indices and sched.placement
    instances.save_schedule(sched, tmp_path / "s.json")
    assert (tmp_path / "s.json").read_bytes() == path.read_bytes()
    inst = instances.load(DATA / "v2-hc-mixed-3-node8.json")
    m = instances.evaluate(inst, sched, "peak", enforce_reservation=True)
    assert m.fgd_fragmentation is None  # not a version 3 instance
    assert m.batch_gpu_milli_slots == 1000 * m.batch_gpu_slots


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda d: d["jobs"][0].update(gpu_mili=500), r"jobs\[0\]"),  # unknown field, as before
        (lambda d: d["nodes"][0].update(modle="T4"), r"nodes\[0\]"),
        (lambda d: d["jobs"][1].update(gpu_milli=0), r"jobs\[1\]\.gpu_milli"),
        (lambda d: d["jobs"][1].update(gpu_milli=1001), r"jobs\[1\]\.gpu_milli"),
        (lambda d: d["jobs"][0].update(gpu_milli=500), r"jobs\[0\]\.gpu_milli: a share below 1000 needs gpus == 1"),
        (lambda d: d["jobs"][0].update(gpu_models=[]), r"jobs\[0\]\.gpu_models"),
        (lambda d: d["jobs"][0].update(gpu_models=["T4", "T4"]), r"jobs\[0\]\.gpu_models"),
        (lambda d: d["jobs"][0].update(cpu_milli=-1), r"jobs\[0\]\.cpu_milli"),
        (lambda d: d["nodes"][0].update(model=""), r"nodes\[0\]\.model"),
        (lambda d: d["nodes"][1].update(memory_mib=-2), r"nodes\[1\]\.memory_mib"),
        (lambda d: d["jobs"][0].update(gpu_models=["A10"]), r"jobs\[0\]: job 'whole' has no valid placement"),
    ],
)
def test_file_errors_name_the_field(edit, needle) -> None:
    data = instances.instance_to_dict(_inst())
    edit(data)
    with pytest.raises(ValueError, match=needle):
        instances.instance_from_dict(data)


def test_schema_lists_the_new_fields_and_still_refuses_unknown_ones() -> None:
    s = instances.schema("instance")
    job = s["properties"]["jobs"]["items"]
    node = s["properties"]["nodes"]["items"]
    assert {"gpu_milli", "gpu_models", "cpu_milli", "memory_mib"} <= set(job["properties"])
    assert {"model", "cpu_milli", "memory_mib"} <= set(node["properties"])
    assert job["additionalProperties"] is False and node["additionalProperties"] is False
    assert job["properties"]["gpu_milli"]["maximum"] == 1000


# ------------------------------------------------------------------ placements
def test_placements_with_gpu_indices() -> None:
    s = Schedule("v3", {"half": 0}, {"half": {"n0": [3]}, "whole": {"n1": [1, 0]}})
    assert s.indices["whole"]["n1"] == (0, 1) and s.lists_indices
    assert s.placement["whole"]["n1"] == 2 and s.placement["half"]["n0"] == 1  # counts, always
    assert s == Schedule("v3", {"half": 0}, indices={"half": {"n0": [3]}, "whole": {"n1": (0, 1)}})
    assert s != Schedule("v3", {"half": 0}, {"half": {"n0": 1}, "whole": {"n1": 2}})
    assert s.to_dict()["placement"] == {"half": {"n0": [3]}, "whole": {"n1": [0, 1]}}
    assert s == Schedule("v3", {"half": 0}, {"half": {"n0": (3,)}, "whole": {"n1": [0, 1]}})
    assert hash(s) == hash(Schedule("v3", {"half": 0}, {"half": {"n0": [3]}, "whole": {"n1": [0, 1]}}))
    assert not Schedule("v3", {"a": 0}, {"a": {"n0": 2}}).lists_indices
    inst = _inst()
    assert s.to_placement_array(inst).tolist() == [[1], [0], [-1]]  # whole on n1, half on n0
    for bad, needle in [
        ({"a": {"n0": [1, 1]}}, r'placement\["a"\]\["n0"\]: GPU index 1 is listed twice'),
        ({"a": {"n0": [-1]}}, r'placement\["a"\]\["n0"\]\[0\]: must be an integer GPU index'),
        ({"a": {"n0": [0.0]}}, r'placement\["a"\]\["n0"\]\[0\]'),
        ({"a": {"n0": [True]}}, r'placement\["a"\]\["n0"\]\[0\]'),
        ({"a": {"n0": 1}, "b": {"n1": [0]}}, r'placement\["b"\]\["n1"\]: a list of GPU indices, but '
                                             r'placement\["a"\]\["n0"\] gives a GPU count'),
        ({"a": {"n0": "2"}}, r'placement\["a"\]\["n0"\]: must be an integer number of GPUs'),
    ]:
        with pytest.raises(ValueError, match=needle):
            Schedule("v3", {"a": 0}, bad)
    # counts of 0 and empty lists are ignored, also by the one-form rule
    assert Schedule("v3", {"a": 0}, {"a": {"n0": 0, "n1": [0]}}).lists_indices
    with pytest.raises(ValueError, match=r'indices\["b"\]\["n1"\]: a list of GPU indices, but placement'):
        Schedule("v3", {"a": 0}, {"a": {"n0": 1}}, indices={"b": {"n1": [0]}})
    with pytest.raises(ValueError, match=r'indices\["b"\]\["n1"\]: must be a list of GPU indices'):
        Schedule("v3", {"a": 0}, indices={"b": {"n1": 1}})  # type: ignore[dict-item]


def test_schedule_file_with_indices_round_trips(tmp_path) -> None:
    s = Schedule("v3", {"half": 1}, {"half": {"n0": [2]}})
    path = tmp_path / "s.json"
    instances.save_schedule(s, path)
    assert json.loads(path.read_text())["placement"] == {"half": {"n0": [2]}}
    assert instances.load_schedule(path) == s
    for bad, needle in [([2, 2], ": .*non-unique"), ([-1], r"\[0\]: "), ("x", ": ")]:
        data = s.to_dict()
        data["placement"]["half"]["n0"] = bad
        with pytest.raises(ValueError, match=r'placement\["half"\]\["n0"\]' + needle):
            instances.schedule_from_dict(data)


def test_a_count_on_an_instance_with_a_shared_job_is_refused() -> None:
    inst = _inst()
    count = Schedule("v3", {"plain": 0}, {"plain": {"n0": 1}})
    with pytest.raises(ValueError, match=r'placement\["plain"\]\["n0"\]: a GPU count \(1\), but instance '
                                         r"'v3' has a shared job \('half'\)"):
        count.to_array(inst)
    with pytest.raises(instances.InfeasibleScheduleError, match="every placement lists GPU indices"):
        instances.evaluate(inst, count)
    Schedule("v3", {}, {"plain": {"n0": 1}}).to_array(inst)  # a job that does not start: ignored
    # no shared job: the count form stays valid
    plain = _inst((Job("a", 2, 1, cpu_milli=5), Job("b", 1, 1, gpu_models=["V100"])))
    assert not shares_gpus(plain) and jobs_use_resources(plain)
    s = Schedule("v3", {"a": 0, "b": 0}, {"a": {"n0": 2}, "b": {"n1": 1}})
    s.to_array(plain)
    assert instances.evaluate(plain, s).jobs_run == 2


# ------------------------------------------------------------------ arrays
def test_resource_arrays() -> None:
    inst = _inst()
    r = resources(inst)
    assert r.gpu_milli.tolist() == [1000, 500, 1000]
    assert r.amount.tolist() == [2.0, 0.5, 1.0] and r.shared.tolist() == [False, True, False]
    assert r.eligible.tolist() == [[True, True, False], [True, True, True], [True, True, True]]
    assert r.job_cpu.tolist() == [4000, 1000, 0] and r.job_memory.tolist() == [1024, 0, 0]
    assert r.node_cpu.tolist() == [16000.0, 8000.0, np.inf]
    assert r.node_memory.tolist() == [65536.0, 32768.0, np.inf]
    assert r.node_models.tolist() == ["T4", "V100", None]
    assert not r.amount.flags.writeable and not r.eligible.flags.writeable
    # the value uses a_j: 2 * 2 * 2, 1 * 0.5 * 3, 1 * 1 * 1
    assert inst.job_values.tolist() == [8.0, 1.5, 1.0]
    flat = instances.generate("small", seed=1)
    assert resources(flat).amount.tolist() == flat.gpus.astype(float).tolist()


def test_peak_withholds_the_last_nodes_highest_indices() -> None:
    inst = _inst(services=(Service("s", 1.0, (3, 1, 0, 0, 0, 0)),))
    assert inst.node_withheld("peak").tolist() == [0, 1, 2]
    assert withheld_indices(inst, "peak") == [range(4, 4), range(1, 2), range(0, 2)]
    assert withheld_indices(inst, "curve") == [range(4, 4), range(2, 2), range(2, 2)]


def test_code_that_reads_version_2_only_refuses_version_3() -> None:
    inst = _inst()
    # job_placements and the Lagrangian bound read version 3 (tests/milp/test_milp_v3*.py)
    with pytest.raises(ValueError, match=r"not supported by Schedule\.from_array yet"):
        Schedule.from_array(inst, np.zeros(3, dtype=np.int64), np.zeros((3, 1), dtype=np.int64))
    # models, CPU and memory alone leave the Lagrangian bound valid (they only restrict)
    plain = _inst((Job("a", 2, 1, cpu_milli=5),))
    assert instances.lagrangian_value(plain, np.zeros(plain.horizon)) >= 0


def test_capacity_carries_the_version_3_state_and_leaves_version_2_as_it_was() -> None:
    inst = _inst(services=(Service("s", 1.0, (3, 1, 0, 0, 0, 0)),))
    cap = capacity(inst, "peak")
    sh = cap.shares
    assert sh is not None
    assert sh.gpu_offset.tolist() == [0, 4, 6, 8]
    # peak withholds 3 GPUs by index: n2's two, then n1's GPU 1
    assert sh.gpu_milli.tolist() == [1000] * 4 + [1000, 0] + [0, 0]
    assert sh.job_milli.tolist() == [1000, 500, 1000]
    assert sh.node_cpu.tolist()[:2] == [16000, 8000] and sh.node_cpu[2] > 2**60
    assert sh.eligible.tolist() == capacity(inst, "curve").shares.eligible.tolist()  # type: ignore[union-attr]
    flat = instances.generate("small", seed=1)
    nodes = instances.with_nodes(flat, 4)
    for v2 in (flat, nodes):
        assert capacity(v2).shares is None
