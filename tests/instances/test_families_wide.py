"""The ``wide`` family (issue 41): deterministic per seed, and the shape its description states."""

from __future__ import annotations

import pytest

import instances
from instances.families.wide import wide_demand

SEEDS = range(12)


@pytest.mark.parametrize("seed", SEEDS)
def test_wide_is_deterministic_per_seed(seed) -> None:
    a = instances.dumps(instances.generate("wide", seed=seed))
    assert a == instances.dumps(instances.generate("wide", seed=seed))
    if seed > 0:
        assert a != instances.dumps(instances.generate("wide", seed=seed - 1))


@pytest.mark.parametrize("seed", SEEDS)
def test_wide_has_the_stated_shape(seed) -> None:
    inst = instances.generate("wide", seed=seed)
    G, T = inst.num_gpus, inst.horizon
    assert (G, T, inst.slot_hours, inst.num_jobs) == (16, 168, 1.0, 60)
    gpus = [j.gpus for j in inst.jobs]
    assert gpus.count(8) == 20 and gpus.count(4) == 9
    assert all(g in (1, 2) for g in gpus if g not in (4, 8))
    assert all(j.kind == "training" for j in inst.jobs if j.gpus >= 4)
    assert {j.priority for j in inst.jobs} <= {1.0, 2.0, 4.0}
    assert sum(j.deadline is not None for j in inst.jobs) == 12
    # two services from the ServeGen series, 10 GPUs at their combined peak, about 6.6 on average
    assert len(inst.services) == 2
    d = inst.total_demand
    assert int(d.max()) == 10 and 6.0 <= float(d.mean()) <= 7.6
    # batch work 0.89 of the pool's GPU-hours (rounding of durations), load about 1.3x the pool
    work = sum(j.gpus * j.duration for j in inst.jobs)
    assert abs(work / (G * T) - 0.89) <= 0.02
    assert 1.25 <= (work + int(d.sum())) / (G * T) <= 1.4
    # releases over the first 60% of the horizon, in submission order; deadlines valid
    rel = [j.release for j in inst.jobs]
    assert rel == sorted(rel) and max(rel) < round(0.6 * T)
    for j in inst.jobs:
        assert j.release + j.duration <= (T if j.deadline is None else j.deadline) <= T


def test_wide_curve_is_two_scaled_servegen_windows() -> None:
    import numpy as np

    rng = np.random.default_rng(3)
    d1, d2, starts, f = wide_demand(rng, 168, 10)
    assert (d1 + d2).max() <= 10 and 0.5 <= f < 2
    assert all(0 <= s <= 336 - 168 for s in starts)
    assert d1.max() <= np.ceil(6 * f) and d2.max() <= np.ceil(4 * f)


def test_wide_parameters_are_checked() -> None:
    small = instances.generate("wide", seed=0, num_jobs=12, horizon=24, num_gpus=8, peak=4)
    assert [j.gpus for j in small.jobs].count(4) == 4  # half of 8 GPUs
    with pytest.raises(ValueError, match="peak"):
        instances.generate("wide", seed=0, peak=20)
    with pytest.raises(ValueError, match="num_gpus"):
        instances.generate("wide", seed=0, num_gpus=2, peak=1)
    with pytest.raises(ValueError, match="horizon"):
        instances.generate("wide", seed=0, horizon=400)
