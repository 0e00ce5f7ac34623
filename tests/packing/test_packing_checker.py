"""The independent checker against hand-made placements, and check-pack's exit codes."""

from __future__ import annotations

import json

import pytest
from packing_cases import node, pod

from gpusched.cli import main
from instances.packing import (
    InvalidPlacementError,
    Packing,
    Placement,
    evaluate_placement,
    placement_violations,
    save_packing,
    save_placement,
)

PACKING = Packing("hand", (node("a", 2, cpu=4000, mem=4096, model="A"),
                           node("b", 4, cpu=64000, mem=65536, model="B")),
                  (pod("w2", 2, cpu=1000), pod("s3", 1, 300), pod("s8", 1, 800),
                   pod("cpu", 0, cpu=3000, mem=4000), pod("onlyB", 1, models=("B",)),
                   pod("w1", 1)))


def _one(assign):
    bad = placement_violations(PACKING, Placement("hand", assign))
    assert len(bad) == 1, bad
    return bad[0]


def test_a_valid_placement():
    pl = Placement("hand", {"w2": ("b", (0, 1)), "s3": ("b", (2,)), "s8": ("a", (0,)),
                            "cpu": ("b", ()), "onlyB": ("b", (3,))})
    m = evaluate_placement(PACKING, pl)
    assert (m.allocated_milli, m.placed, m.failed) == (4100, 5, 1)
    assert m.capacity_milli == 6000 and m.request_milli == 5100
    assert m.allocated_pct == pytest.approx(100 * 4100 / 6000)


def test_shares_may_share_a_gpu_up_to_1000():
    pl = Placement("hand", {"s3": ("a", (1,)), "s8": ("b", (1,))})
    assert placement_violations(PACKING, pl) == []
    v = _one({"s3": ("a", (1,)), "s8": ("a", (1,))})
    assert (v.pod, v.node, v.gpu, v.resource) == ("s8", "a", 1, "gpu_milli")
    assert "1100 > 1000" in v.message


def test_a_whole_gpu_is_held_alone():
    v = _one({"w2": ("b", (0, 1)), "s3": ("b", (1,))})
    assert (v.pod, v.node, v.gpu, v.resource) == ("s3", "b", 1, "GPU")
    assert "held whole by pod 'w2'" in v.message
    v = _one({"w1": ("b", (2,)), "onlyB": ("b", (2,))})
    assert (v.pod, v.gpu) == ("onlyB", 2)


def test_model_gpu_count_and_index():
    v = _one({"onlyB": ("a", (0,))})
    assert (v.pod, v.node, v.resource) == ("onlyB", "a", "model")
    v = _one({"w2": ("b", (0,))})
    assert (v.resource, v.pod) == ("gpus", "w2")
    v = _one({"cpu": ("b", (0,))})
    assert v.resource == "gpus"  # a CPU-only pod lists no GPU
    v = _one({"s3": ("a", (2,))})
    assert (v.resource, v.gpu) == ("GPU index", 2)


def test_cpu_and_memory_per_node():
    # node a: 4000 CPU milli and 4096 MiB; "cpu" asks 3000 and 4000, every other pod 1000 and 1024
    pk = Packing("hand", PACKING.nodes, (pod("c1", 0, cpu=3000, mem=0), pod("s3", 1, 300),
                                         pod("s8", 1, 600), pod("big", 0, cpu=0, mem=4000)))
    bad = placement_violations(pk, Placement("hand", {"c1": ("a", ()), "s3": ("a", (0,)),
                                                      "s8": ("a", (0,))}))
    assert [(v.pod, v.node, v.gpu, v.resource) for v in bad] == [("s8", "a", None, "cpu_milli")]
    assert "cpu_milli 5000 > 4000 (3 pods on the node)" in bad[0].message
    bad = placement_violations(pk, Placement("hand", {"big": ("a", ()), "s3": ("a", (1,))}))
    assert [(v.node, v.resource) for v in bad] == [("a", "memory_mib")]
    assert "5024 > 4096" in bad[0].message
    ok = placement_violations(pk, Placement("hand", {"c1": ("a", ()), "s3": ("a", (0,))}))
    assert ok == []  # exactly full: 4000 CPU milli


def test_every_violation_is_listed():
    pl = Placement("hand", {"onlyB": ("a", (5,)), "cpu": ("a", ()), "w2": ("a", (0, 1))})
    with pytest.raises(InvalidPlacementError) as e:
        evaluate_placement(PACKING, pl)
    assert {v.resource for v in e.value.violations} == {"model", "GPU index", "cpu_milli",
                                                        "memory_mib"}


def test_unknown_pods_and_nodes_are_bad_input():
    with pytest.raises(ValueError, match="no pod 'ghost'"):
        placement_violations(PACKING, Placement("hand", {"ghost": ("a", ())}))
    with pytest.raises(ValueError, match="no node 'z'"):
        placement_violations(PACKING, Placement("hand", {"cpu": ("z", ())}))


def test_check_pack_exit_codes(tmp_path, capsys):
    save_packing(PACKING, tmp_path / "p.json")
    save_placement(Placement("hand", {"s3": ("a", (0,))}), tmp_path / "ok.json")
    save_placement(Placement("hand", {"s3": ("a", (0,)), "s8": ("a", (0,))}), tmp_path / "bad.json")
    save_placement(Placement("hand", {"ghost": ("a", ())}), tmp_path / "ghost.json")
    assert main(["check-pack", str(tmp_path / "p.json"), str(tmp_path / "ok.json")]) == 0
    assert "valid: allocated 300" in capsys.readouterr().out
    assert main(["check-pack", str(tmp_path / "p.json"), str(tmp_path / "bad.json"),
                 "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["valid"] is False and out["violations"][0]["gpu"] == 0
    assert main(["check-pack", str(tmp_path / "p.json"), str(tmp_path / "ghost.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "ghost.json" in err[0] and "ghost" in err[0]
