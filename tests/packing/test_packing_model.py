"""The packing model: every field validated at the door, with the field named."""

from __future__ import annotations

import pytest
from packing_cases import node, pod

from instances.packing import Packing, PackNode, Placement, Pod


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"gpus": 0}, "gpus"),
    ({"gpus": 65}, "gpus"),
    ({"gpus": True}, "gpus"),
    ({"model": ""}, "model"),
    ({"cpu_milli": -1}, "cpu_milli"),
    ({"memory_mib": 1.5}, "memory_mib"),
    ({"name": ""}, "name"),
])
def test_bad_node_fields(kwargs, field):
    args = {"name": "n", "gpus": 2, "model": "A", "cpu_milli": 1, "memory_mib": 1, **kwargs}
    with pytest.raises(ValueError, match=field):
        PackNode(**args)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"gpus": 0, "gpu_milli": 500}, "gpu_milli: must be 0 when gpus == 0"),
    ({"gpus": 1, "gpu_milli": 0}, "gpu_milli: must be >= 1"),
    ({"gpus": 2, "gpu_milli": 500}, "gpu_milli: must be 1000 when gpus > 1"),
    ({"gpu_milli": 1001}, "gpu_milli"),
    ({"gpus": -1}, "gpus"),
    ({"cpu_milli": "8"}, "cpu_milli"),
    ({"gpu_models": ("A", "A")}, "gpu_models: a model is listed twice"),
    ({"gpu_models": "A"}, "gpu_models"),
    ({"gpu_models": ("",)}, r"gpu_models\[0\]"),
])
def test_bad_pod_fields(kwargs, message):
    args = {"name": "p", "gpus": 1, "gpu_milli": 1000, "cpu_milli": 1, "memory_mib": 1, **kwargs}
    with pytest.raises(ValueError, match=message):
        Pod(**args)


def test_packing_refuses_duplicate_names_and_no_nodes():
    with pytest.raises(ValueError, match=r"nodes\[1\].name: 'a' is used twice"):
        Packing("x", (node("a", 1), node("a", 2)), ())
    with pytest.raises(ValueError, match=r"pods\[1\].name"):
        Packing("x", (node("a", 1),), (pod("p"), pod("p")))
    with pytest.raises(ValueError, match="nodes: at least one node"):
        Packing("x", (), ())


def test_arrays_and_head():
    p = Packing("x", (node("a", 2, model="A"), node("b", 4, model="B")),
                (pod("p", 1, 300, models=("B",)), pod("q", 0), pod("r", 2)))
    a = p.arrays
    assert a.models == ("A", "B")
    assert a.pod_allowed.tolist() == [[False, True], [True, True], [True, True]]
    assert a.pod_request.tolist() == [300, 0, 2000]
    assert not a.pod_cpu.flags.writeable
    assert p.capacity_milli == 6000 and p.request_milli == 2300
    assert [x.name for x in p.head(2).pods] == ["p", "q"]


def test_placement_validates_its_entries():
    with pytest.raises(ValueError, match="packing"):
        Placement("", {})
    with pytest.raises(ValueError, match=r"placement\['p'\]"):
        Placement("x", {"p": ("n", (-1,))})
    pl = Placement("x", {"p": ("n", (0, 1)), "c": ("n", ())})
    assert pl.to_dict() == {"format": "gpusched-placement/1", "packing": "x",
                            "placement": {"p": {"n": [0, 1]}, "c": {"n": []}}}
