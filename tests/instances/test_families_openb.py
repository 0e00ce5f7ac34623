"""The ``openb-day`` family: determinism, the seed-to-day map, the pool's nodes,
contention by hand, and bad parameters (library and command line)."""

from __future__ import annotations

import math

import pytest

import instances
from gpusched.cli import main
from instances import Instance, Job, Service
from instances.families import OPENB_DAYS, OPENB_MIN_GPUS, contention
from instances.traces import read_nodes, shipped


def test_same_day_and_pool_give_byte_identical_files(tmp_path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    instances.save(instances.generate("openb-day", seed=5, num_gpus=12), a)
    instances.save(instances.generate("openb-day", seed=5, num_gpus=12), b)
    assert a.read_bytes() == b.read_bytes()
    assert instances.load(a) == instances.generate("openb-day", seed=5, num_gpus=12)
    other = instances.dumps(instances.generate("openb-day", seed=5, num_gpus=16))
    assert other != a.read_text()


def test_the_seed_picks_the_day_and_the_day_is_the_trace_window() -> None:
    assert tuple(range(115, 150)) == OPENB_DAYS
    assert instances.generate("openb-day", seed=0).meta["day"] == 115
    assert instances.generate("openb-day", seed=15).meta["day"] == 130
    assert instances.generate("openb-day", seed=35).meta["day"] == 115  # 115 + seed mod 35
    by_seed = instances.generate("openb-day", seed=15, num_gpus=16)
    by_day = instances.generate("openb-day", seed=3, day=130, num_gpus=16)
    assert by_seed.jobs == by_day.jobs and by_seed.services == by_day.services
    direct = instances.from_trace(
        "openb", "openb:default", start=130 * 86400, hours=24, slot_minutes=15,
        nodes="openb:nodes", num_gpus=16, service="servegen:0.3",
    )
    assert by_seed.jobs == direct.jobs and by_seed.nodes == direct.nodes
    assert by_seed.services == direct.services
    assert (by_seed.horizon, by_seed.slot_hours) == (96, 0.25)
    imp = by_seed.meta["import"]
    assert imp["kept"] == by_seed.num_jobs == 304 and imp["start"] == 130 * 86400


@pytest.mark.parametrize("gpus", [8, 13, 16, 32, 100])
def test_nodes_are_openb_nodes_summing_to_the_pool(gpus) -> None:
    inst = instances.generate("openb-day", seed=2, num_gpus=gpus)
    real = dict(read_nodes(str(shipped("openb:nodes"))))
    assert inst.nodes is not None
    assert sum(n.gpus for n in inst.nodes) == inst.num_gpus == gpus
    for n in inst.nodes:
        assert real[n.name] == n.gpus
    # the pods of the day are the same on every pool of at least 8 GPUs: none is too large
    assert inst.meta["import"]["skipped"]["too_large"] == 0


def test_contention_by_hand() -> None:
    # 4 GPUs, 3 slots; inference asks 1, 2, 0: it leaves 3 + 2 + 4 = 9 GPU-slots.
    # Jobs: 2 GPUs x 2 slots and 1 GPU x 3 slots: 4 + 3 = 7 GPU-slots.
    inst = Instance("tiny", 4, 3, (Service("s", 1.0, (1, 2, 0)),),
                    (Job("a", 2, 2, 1.0), Job("b", 1, 3, 1.0)))
    assert contention(inst) == pytest.approx(7 / 9)
    full = Instance("full", 2, 2, (Service("s", 1.0, (2, 2)),), (Job("a", 1, 1, 1.0),))
    assert contention(full) == math.inf


def test_meta_contention_is_recomputed_from_the_instance() -> None:
    inst = instances.generate("openb-day", day=130, num_gpus=8)
    area = sum(j.gpus * j.duration for j in inst.jobs)
    left = sum(inst.num_gpus - sum(s.demand[t] for s in inst.services) for t in range(inst.horizon))
    assert inst.meta["contention"] == pytest.approx(area / left, abs=1e-6)
    assert inst.meta["contention"] > 2  # the busiest day on the smallest pool
    (svc,) = inst.services
    assert max(svc.demand) == math.ceil(0.3 * 8)  # the stated share at the peak
    bigger = instances.generate("openb-day", day=130, num_gpus=32)
    assert bigger.meta["contention"] < inst.meta["contention"] / 3


@pytest.mark.parametrize(("params", "field"), [
    ({"day": 114}, "day"),
    ({"day": 150}, "day"),
    ({"day": "130"}, "day"),
    ({"num_gpus": OPENB_MIN_GPUS - 1}, "num_gpus"),
    ({"num_gpus": 100_000}, "num_gpus"),
    ({"num_gpus": 8.5}, "num_gpus"),
    ({"inference_share": 0}, "inference_share"),
    ({"inference_share": 1.5}, "inference_share"),
    ({"seed": -1}, "seed"),
])
def test_bad_parameters_name_the_parameter(params, field) -> None:
    with pytest.raises(ValueError, match=rf"^{field}"):
        instances.generate("openb-day", **params)


@pytest.mark.parametrize("param", ["day=3", "num_gpus=4"])
def test_bad_parameters_exit_2_with_one_line(param, capsys, tmp_path) -> None:
    assert main(["generate", "openb-day", "-p", param, "-o", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and param.split("=")[0] in err[0]
