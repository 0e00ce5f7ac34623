"""milp.bound: every method's value is its certificate's, above brute force, near the LP."""

from __future__ import annotations

import numpy as np
import pytest
from brute import brute_force, tiny_instance

import instances
import milp
from instances import Instance, Job
from milp.bound import BOUND_METHODS, LagrangianOracle
from milp.highs import lp_relaxation


@pytest.mark.parametrize("method", list(BOUND_METHODS))
@pytest.mark.parametrize("seed", range(4))
def test_every_method_bounds_the_brute_force_optimum(method: str, seed: int) -> None:
    inst = tiny_instance(seed, n=6, G=4, T=10)
    opt, _ = brute_force(inst)
    b = milp.bound(inst, method, max_iter=300)
    assert b.value >= opt - 1e-9
    assert b.multipliers is not None and b.multipliers.shape == (inst.horizon,)
    assert b.value == instances.lagrangian_value(inst, b.multipliers)
    ok, recomputed = instances.check_bound(inst, b.certificate(inst))
    assert ok and recomputed == b.value


@pytest.mark.parametrize("method", ["lagrangian", "subgradient", "lp-ipm", "pdlp"])
def test_medium_bound_is_within_one_percent_of_the_lp(method: str) -> None:
    inst = instances.generate("medium", seed=1)
    lp = lp_relaxation(milp.build(inst, rounding=()), 60)
    assert lp is not None
    b = milp.bound(inst, method)
    assert b.value >= lp * (1 - 1e-7)  # min over lam of L is the LP bound
    assert b.value <= lp * 1.01
    if method in ("lagrangian", "subgradient"):
        assert b.iterations > 1 and b.lower is not None and b.lower <= b.value
        assert len(b.history) == b.iterations
        assert all(a >= c for a, c in zip(b.history, b.history[1:]))


def test_oracle_agrees_with_the_certificate() -> None:
    inst = instances.generate("small", seed=2)
    oracle = LagrangianOracle(inst)
    rng = np.random.default_rng(0)
    for _ in range(10):
        lam = rng.exponential(1.0, inst.horizon)
        value, sub, starts = oracle(lam)
        assert instances.lagrangian_value(inst, lam) == pytest.approx(value, rel=1e-12)
        assert instances.lagrangian_value(inst, lam) >= value
        load = np.zeros(inst.horizon)
        for k, s in zip(oracle.jobs.tolist(), starts.tolist()):
            if s >= 0:
                load[s : s + inst.jobs[k].duration] += inst.jobs[k].gpus
        assert np.allclose(sub, inst.batch_capacity() - load)


def test_search_is_deterministic_without_a_time_limit() -> None:
    inst = instances.generate("medium", seed=3)
    a, b = milp.bound(inst, max_iter=400), milp.bound(inst, max_iter=400)
    assert a.value == b.value and np.array_equal(a.multipliers, b.multipliers)


def test_given_multipliers_and_lower_are_used() -> None:
    inst = instances.generate("medium", seed=4)
    first = milp.bound(inst, max_iter=200)
    again = milp.bound(inst, multipliers=first.multipliers, lower=first.lower, max_iter=50)
    assert again.value <= first.value


def test_no_job_can_run() -> None:
    inst = Instance("none", 2, 4, (), (Job("late", 1, 2, 1.0, release=3),))
    for method in BOUND_METHODS:
        b = milp.bound(inst, method)
        assert b.value == 0.0


def test_bad_arguments() -> None:
    inst = tiny_instance(0)
    with pytest.raises(ValueError, match="method"):
        milp.bound(inst, "simplex")
    with pytest.raises(ValueError, match="time_limit"):
        milp.bound(inst, time_limit=-1)
    with pytest.raises(ValueError, match="max_iter"):
        milp.bound(inst, max_iter=0)
    with pytest.raises(ValueError, match=r"multipliers\[2\]: must be >= 0"):
        milp.bound(inst, multipliers=[0, 0, -1] + [0] * 7)
    with pytest.raises(ValueError, match="multipliers: must have length 10"):
        milp.bound(inst, multipliers=[0.0])


@pytest.mark.parametrize("family", ["small", "medium"])
def test_compiled_and_numpy_oracles_agree(family: str) -> None:
    from milp.lagrange import compiled_kernel

    assert compiled_kernel() is not None  # numba is a dependency: the compiled oracle exists
    inst = instances.generate(family, seed=5)
    a, b = LagrangianOracle(inst, compiled=False), LagrangianOracle(inst, compiled=True)
    rng = np.random.default_rng(3)
    for _ in range(8):
        lam = rng.exponential(1.0, inst.horizon) * (rng.random(inst.horizon) < 0.7)
        x, y = a(lam), b(lam)
        assert x[0] == y[0]
        assert np.array_equal(x[1], y[1]) and np.array_equal(x[2], y[2])


@pytest.mark.parametrize(("family", "seed"), [("itp", 1), ("itp", 2), ("philly", 3)])
def test_the_grouped_oracle_equals_the_numpy_one_under_flow(family: str, seed: int) -> None:
    """Every job free from its release to the horizon (an arrival trace under ``flow``): the
    compiled oracle answers by (duration, delay) groups; the same minimum and earliest start
    per job as the numpy oracle's masked scan, at prices with ties (zeros) and without."""
    inst = instances.generate(family, seed=seed, objective="flow")
    a, b = LagrangianOracle(inst, compiled=False), LagrangianOracle(inst, compiled=True)
    assert b.grouped and not a.grouped
    assert len(b.group_start) - 1 < b.jobs.size  # groups, not one job each
    assert sorted(a.jobs.tolist()) == sorted(b.jobs.tolist())
    rng = np.random.default_rng(seed)
    for k in range(8):
        lam = rng.exponential(0.2, inst.horizon) * (rng.random(inst.horizon) < 0.5 + k / 16)
        x, y = a(lam), b(lam)
        assert y[0] == pytest.approx(x[0], rel=1e-12, abs=1e-9)
        assert np.array_equal(x[1], y[1])
        sa, sb = (np.full(inst.num_jobs, -2) for _ in range(2))
        sa[a.jobs], sb[b.jobs] = x[2], y[2]
        assert np.array_equal(sa, sb)
