"""The family registry: names, plain descriptions, parameters, determinism, frozen outputs."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import instances
from instances.families import SEED_SCENARIOS, plain_text

FROZEN_SHA256: dict[tuple[str, int, tuple[tuple[str, int], ...]], str] = {
    ("seed-training-heavy", 0, ()): "623e25b094b650646fac182d57df936ea2955d7919331bfae6aa99e2e7b4568f",
    ("hc-training-heavy", 1, ()): "848ba1942a29ca49fb32f4ed974546736f37971078d922ff807543a1e9f31689",
    ("hc-mixed", 3, ()): "a1afb6570f240249d5655ccdfb30150588f7ee6c8e768ab4007b6ba203f10ffb",
    ("hc-multi-service", 2, ()): "62227061029907dd063bea5b789992c0f312619778cd9ca78976e449ae1f6489",
    ("hc-bursty", 4, ()): "cc86f052b653cc82674e331900526b1ff6d8bcd3d18bead8d0eba34629074b12",
    ("hc-deadlines", 0, ()): "cf1e77176a3db25646cf4277b921bf1aee94acea529148eceb6f397511b96018",
    ("small", 2, ()): "ab98991b48591d692b77888afe69fb4c7f69f2bae83b3885dd97175d88968163",
    ("small", 3, (("num_jobs", 9),)): "4ea53523c301e26d81635c490161a9cdce2f079fcc5757b0196e6b43939321cd",
    ("medium", 4, ()): "41145eebb920d0b4beb53c4dac439f9fdbfdca8367f48bb37945f621f5a90e50",
    ("large", 1, ()): "5c5c723fc9d00a1aeced00f09f88ae9157c88bf08791919115828c2d4b32ddcd",
    ("trace-servegen", 4, ()): "c016d642f40e708d6306f0473216edd278f0cbaabee5ef6493b6a9282875972e",
    ("trace-servegen", 1, (("days", 2),)): "b053c196f9f566167420aa5e6734efe397d54287b8702efb7e9841ae29463f40",
}
"""sha256 of ``instances.dumps`` of these instances, computed with version 1's
single-file ``instances/families.py`` before it was split. A generator that
changes its output (a draw reordered, a default changed) fails here: change
the hashes only on purpose, and say so in the changelog of the families."""


@pytest.mark.parametrize(("family", "seed", "params"), list(FROZEN_SHA256), ids=str)
def test_generated_files_are_frozen(family, seed, params) -> None:
    text = instances.dumps(instances.generate(family, seed=seed, **dict(params)))
    assert hashlib.sha256(text.encode()).hexdigest() == FROZEN_SHA256[(family, seed, params)]


def test_every_family_is_described_in_plain_text() -> None:
    assert {"seed-training-heavy", "small", "medium", "large", "trace-servegen"} <= set(instances.FAMILIES)
    assert len(SEED_SCENARIOS) == 5 and set(SEED_SCENARIOS) <= set(instances.FAMILIES)
    for name, desc in instances.FAMILIES.items():
        assert isinstance(desc, str) and desc, name
        assert "`" not in desc and "\n" not in desc, (name, desc)


def test_plain_text_unwraps_markup() -> None:
    assert plain_text("over ``days`` days,\n  see :data:`instances.FAMILIES`") == (
        "over days days, see instances.FAMILIES"
    )
    assert plain_text(":func:`~milp.solve` and `x`") == "milp.solve and x"


@settings(max_examples=10, deadline=None)
@given(family=st.sampled_from(list(instances.FAMILIES)), seed=st.integers(0, 10_000))
def test_generation_is_deterministic(family, seed) -> None:
    params = {"num_jobs": 600} if family == "large" else {}
    a = instances.dumps(instances.generate(family, seed=seed, **params))
    b = instances.dumps(instances.generate(family, seed=seed, **params))
    assert a == b


def test_seeds_differ_and_files_are_byte_identical(tmp_path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    instances.save(instances.generate("seed-training-heavy", seed=0), a)
    instances.save(instances.generate("seed-training-heavy", seed=0), b)
    assert a.read_bytes() == b.read_bytes()
    assert instances.load(a) == instances.generate("seed-training-heavy", seed=0)
    other = instances.dumps(instances.generate("seed-training-heavy", seed=1))
    assert other != a.read_text()


def test_name_and_meta_record_the_call() -> None:
    inst = instances.generate("small", seed=3, num_jobs=9)
    assert inst.name == "small-s3-num_jobs9"
    assert inst.meta["family"] == "small" and inst.meta["seed"] == 3
    assert inst.meta["params"] == {"num_jobs": 9}


def test_family_parameters_are_checked() -> None:
    with pytest.raises(ValueError, match="family"):
        instances.generate("no-such-family")
    with pytest.raises(ValueError, match="bogus"):
        instances.generate("small", bogus=3)
    with pytest.raises(ValueError, match="seed"):
        instances.generate("small", seed=-1)
    with pytest.raises(ValueError, match="seed"):
        instances.generate("small", seed=True)
    with pytest.raises(ValueError, match="num_gpus"):
        instances.generate("trace-servegen", num_gpus=2)


# ---------------------------------------------------------------- node shapes
@pytest.mark.parametrize("family", list(instances.FAMILIES))
def test_every_family_takes_a_node_shape(family) -> None:
    params = {"num_jobs": 300, "num_gpus": 64} if family == "large" else {}
    flat = instances.generate(family, seed=2, **params)
    for shape in (8, "openb"):
        inst = instances.generate(family, seed=2, node_gpus=shape, **params)
        assert inst.nodes is not None and sum(n.gpus for n in inst.nodes) == flat.num_gpus
        assert inst.jobs == flat.jobs and inst.services == flat.services
        assert inst.meta["node_gpus"] == shape and inst.meta["params"]["node_gpus"] == shape
        assert inst.name == f"{flat.name}-node_gpus{shape}"
        if shape == 8:
            assert [n.gpus for n in inst.nodes] == instances.nodes.uniform_nodes(flat.num_gpus, 8)
        else:
            assert sorted(n.gpus for n in inst.nodes) == sorted(
                instances.openb_node_mix(flat.num_gpus, seed=2))
        # through the file and back, nodes and shape kept
        back = instances.instance_from_dict(instances.instance_to_dict(inst))
        assert back == inst and back.meta["node_gpus"] == shape


def test_node_shape_list_and_openb_order_follow_the_seed() -> None:
    inst = instances.generate("hc-mixed", seed=3, node_gpus=[8, 2, 2])
    assert [(n.name, n.gpus) for n in inst.nodes] == [("node-0", 8), ("node-1", 2), ("node-2", 2)]
    assert inst.name == "hc-mixed-s3-node_gpus8,2,2"
    assert instances.families.node_shape_label(inst) == "8,2,2"
    assert instances.families.node_shape_label(instances.generate("hc-mixed", seed=3)) == ""
    big = [instances.generate("medium", seed=s, num_gpus=48, node_gpus="openb") for s in (0, 1)]
    sizes = [[n.gpus for n in b.nodes] for b in big]
    assert sizes[0] == instances.openb_node_mix(48, seed=0)
    assert sizes[1] == instances.openb_node_mix(48, seed=1)
    assert sorted(sizes[0]) == sorted(sizes[1])  # the same mix, in the seed's order
    a = instances.dumps(instances.generate("hc-mixed", seed=3, node_gpus="openb"))
    assert a == instances.dumps(instances.generate("hc-mixed", seed=3, node_gpus="openb"))


def test_no_node_shape_is_the_flat_file() -> None:
    flat = instances.dumps(instances.generate("hc-bursty", seed=4))
    assert instances.dumps(instances.generate("hc-bursty", seed=4, node_gpus=None)) == flat
    assert '"nodes"' not in flat


@pytest.mark.parametrize(("shape", "match"), [
    (0, "node_gpus: must be"), (-8, "node_gpus: must be"), (True, "node_gpus: must be"),
    (2.5, "node_gpus: must be"), ("eight", "node_gpus: must be"), ([], "node_gpus: must be"),
    ([8, "4"], "node_gpus: must be"), ([8, 0, 4], r"node_gpus\[1\]"),
    ([8, 8], "node_gpus: .*sum to 16, must equal num_gpus \\(12\\)"),
    ([5, 5, 2], "node_gpus: .*no valid placement"),  # hc-mixed s3 has 8-GPU jobs
])
def test_bad_node_shapes_name_node_gpus(shape, match) -> None:
    with pytest.raises(ValueError, match=match):
        instances.generate("hc-mixed", seed=3, node_gpus=shape)


def test_a_job_with_no_placement_names_the_job() -> None:
    # seed-training-heavy s0 has a 6-GPU training job: on 4-GPU nodes no whole nodes give 6
    with pytest.raises(ValueError, match=r"node_gpus: 4: jobs\[\d+\]\.gpus: job 'train-\d+'"):
        instances.generate("seed-training-heavy", seed=0, node_gpus=4)


def test_unknown_parameter_lists_node_gpus() -> None:
    with pytest.raises(ValueError, match="node_gpus"):
        instances.generate("small", bogus=1)
