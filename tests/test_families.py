"""Families: valid, deterministic, and what their descriptions say."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import heuristics
import instances
from instances.families import (
    SEED_SCENARIOS,
    TRACE_GPU_THROUGHPUT_RPS,
    daily_curve,
    servegen_hourly_rps,
)

FAST_FAMILIES = [f for f in instances.FAMILIES if f != "large"]


def test_every_family_is_described() -> None:
    assert {"seed-training-heavy", "small", "medium", "large", "trace-servegen"} <= set(instances.FAMILIES)
    assert len(SEED_SCENARIOS) == 5 and set(SEED_SCENARIOS) <= set(instances.FAMILIES)
    assert all(isinstance(d, str) and d for d in instances.FAMILIES.values())


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


def test_seed_family_matches_its_description() -> None:
    inst = instances.generate("seed-training-heavy", seed=0)
    assert (inst.num_gpus, inst.horizon, inst.slot_hours) == (8, 24, 1.0)
    (svc,) = inst.services
    assert svc.demand[4] == 2 and svc.demand[12] == 6  # 2 GPUs at 4 AM, 6 at noon
    assert min(svc.demand) == 2 and max(svc.demand) == 6
    kinds = [j.kind for j in inst.jobs]
    assert kinds.count("training") > len(kinds) / 3


def test_scaling_families_ranges() -> None:
    for seed in range(5):
        s = instances.generate("small", seed=seed)
        assert 4 <= s.num_gpus <= 8 and 12 <= s.horizon <= 24 and 6 <= s.num_jobs <= 12
        m = instances.generate("medium", seed=seed)
        assert 8 <= m.num_gpus <= 16 and 50 <= m.num_jobs <= 150
        assert 0.25 <= m.slot_hours <= 1.0 and 24 <= m.horizon * m.slot_hours <= 168
    big = instances.generate("large", seed=0, num_jobs=10_000, num_gpus=1024)
    assert big.num_jobs == 10_000 and big.num_gpus == 1024 and big.horizon == 168


def test_family_parameters_are_checked() -> None:
    with pytest.raises(ValueError, match="family"):
        instances.generate("no-such-family")
    with pytest.raises(ValueError, match="bogus"):
        instances.generate("small", bogus=3)
    with pytest.raises(ValueError, match="seed"):
        instances.generate("small", seed=-1)
    with pytest.raises(ValueError, match="num_gpus"):
        instances.generate("trace-servegen", num_gpus=2)


def test_trace_family_follows_the_shipped_traffic() -> None:
    rps = servegen_hourly_rps()
    assert len(rps) == 14 * 24 and np.all(rps > 0)
    inst = instances.generate("trace-servegen", seed=3, start_day=2)
    expected = np.ceil(rps[48:72] / TRACE_GPU_THROUGHPUT_RPS).astype(int)
    assert inst.services[0].demand == tuple(expected)
    assert inst.meta["throughput_rps"] == TRACE_GPU_THROUGHPUT_RPS


def test_daily_curve_shape() -> None:
    c = daily_curve(48, 1.0, 2, 6)
    assert c[4] == 2 and c[12] == 6 and c[28] == 2 and c[36] == 6
    assert c.min() == 2 and c.max() == 6
    quarter = daily_curve(96, 0.25, 1, 5)
    assert quarter[16] == 1 and quarter[48] == 5  # 4 AM and noon in 15-minute slots
