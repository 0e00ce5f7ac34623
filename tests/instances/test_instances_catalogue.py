"""The families of the catalogue: valid, checked by FIFO, and what their descriptions say."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import heuristics
import instances

FAST_FAMILIES = [f for f in instances.FAMILIES if f != "large"]


@settings(max_examples=25, deadline=None)
@given(family=st.sampled_from(FAST_FAMILIES), seed=st.integers(0, 10_000))
def test_generated_instances_validate_and_fifo_passes_the_checker(family, seed) -> None:
    inst = instances.generate(family, seed=seed)
    # Round trip through the file format re-runs every validation rule.
    again = instances.instance_from_dict(instances.instance_to_dict(inst))
    assert again == inst
    for method in ("fifo", "fifo-curve"):
        res = heuristics.solve(inst, method)
        m = instances.evaluate(inst, res.schedule, res.reservation, enforce_reservation=True)
        assert m.value == res.value


def test_seed_family_matches_its_description() -> None:
    inst = instances.generate("seed-training-heavy", seed=0)
    assert (inst.num_gpus, inst.horizon, inst.slot_hours) == (8, 24, 1.0)
    (svc,) = inst.services
    assert svc.demand[4] == 2 and svc.demand[12] == 6  # 2 GPUs at 4 AM, 6 at noon
    assert min(svc.demand) == 2 and max(svc.demand) == 6
    kinds = [j.kind for j in inst.jobs]
    assert kinds.count("training") > len(kinds) / 3
    assert all(3 <= j.gpus <= 6 for j in inst.jobs if j.kind == "training")


def test_contention_scenarios_match_their_descriptions() -> None:
    pools = {"hc-training-heavy": 8, "hc-mixed": 12, "hc-multi-service": 16,
             "hc-bursty": 8, "hc-deadlines": 8}
    for family, gpus in pools.items():
        inst = instances.generate(family, seed=1)
        assert (inst.num_gpus, inst.horizon) == (gpus, 36), family
        assert len(inst.services) == (3 if family == "hc-multi-service" else 1), family
        # batch demand well above what inference leaves
        area = sum(j.gpus * j.duration for j in inst.jobs)
        assert area > inst.num_gpus * inst.horizon - int(inst.total_demand.sum()), family
    dl = instances.generate("hc-deadlines", seed=1)
    assert sum(j.deadline is not None for j in dl.jobs) > len(dl.jobs) / 3


def test_scaling_families_ranges() -> None:
    for seed in range(5):
        s = instances.generate("small", seed=seed)
        assert 4 <= s.num_gpus <= 8 and 12 <= s.horizon <= 24 and 6 <= s.num_jobs <= 12
        m = instances.generate("medium", seed=seed)
        assert 8 <= m.num_gpus <= 16 and 50 <= m.num_jobs <= 150
        assert 0.25 <= m.slot_hours <= 1.0 and 24 <= m.horizon * m.slot_hours <= 168
    big = instances.generate("large", seed=0, num_jobs=10_000, num_gpus=1024)
    assert big.num_jobs == 10_000 and big.num_gpus == 1024 and big.horizon == 168
    assert max(j.gpus for j in big.jobs) > 8  # sizes scale with the pool above 128 GPUs
