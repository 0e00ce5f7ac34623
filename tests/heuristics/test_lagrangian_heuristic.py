"""heuristics.lagrangian: checked schedules from any multipliers, better ones from good multipliers."""

from __future__ import annotations

import numpy as np
import paths
import pytest
from brute import brute_force, tiny_instance

import heuristics
import instances
import milp
from heuristics.lagrangian import ORDERS, lagrangian_orders, lagrangian_schedule


@pytest.mark.parametrize("seed", range(6))
def test_schedules_are_feasible_and_below_the_bound(seed: int) -> None:
    inst = tiny_instance(seed, n=6, G=4, T=10)
    opt, _ = brute_force(inst)
    rng = np.random.default_rng(seed)
    for lam in (np.zeros(inst.horizon), rng.exponential(1.0, inst.horizon)):
        res = lagrangian_schedule(inst, lam)
        assert instances.evaluate(inst, res.schedule).value == res.value
        assert res.value <= opt + 1e-9 <= instances.lagrangian_value(inst, lam) + 1e-9


def test_orders_cover_the_jobs_that_can_run_once() -> None:
    inst = instances.generate("medium", seed=2)
    lam = np.random.default_rng(1).exponential(0.5, inst.horizon)
    orders = lagrangian_orders(inst, lam)
    assert set(orders) == set(ORDERS)
    for order in orders.values():
        assert len(set(order.tolist())) == order.size <= inst.num_jobs


def test_good_multipliers_give_a_good_schedule() -> None:
    inst = instances.generate("medium", seed=0)
    b = milp.bound(inst, max_iter=500)
    res = lagrangian_schedule(inst, b.multipliers)
    fifo = heuristics.solve(inst, "fifo-curve")
    assert res.value > fifo.value
    assert res.value <= b.value


def test_bad_multipliers() -> None:
    with pytest.raises(ValueError, match="lam: must have length"):
        lagrangian_schedule(tiny_instance(0), [1.0])


# ---------------------------------------------- the ``lagrangian`` method (matheuristics)
def test_the_lagrangian_method_gives_a_checked_schedule_and_its_certified_bound() -> None:
    import matheuristics
    from matheuristics.lagrangian import lagrangian

    inst = instances.generate("medium", seed=3)
    res = lagrangian(inst, time_limit=2)
    assert res.method == "lagrangian" and res.bound_method == "lagrangian"
    assert instances.evaluate(inst, res.schedule).value == res.value
    assert res.upper_bound >= res.value
    exact = milp.solve(inst, time_limit=60, mip_gap=0)
    assert str(exact.status) == "optimal"
    assert res.value <= exact.value + 1e-9 <= res.upper_bound + 2e-9
    # the registry's spec names this function (entry point gpusched.methods)
    assert matheuristics.LAGRANGIAN_METHOD.fn is lagrangian


def test_the_lagrangian_method_reuses_a_given_bound() -> None:
    from matheuristics.lagrangian import lagrangian

    inst = instances.generate("medium", seed=1)
    b = milp.bound(inst, time_limit=1)
    res = lagrangian(inst, bound=b)
    assert res.upper_bound == max(b.value, res.value)
    assert f"{b.iterations} iterations" in res.message


@pytest.mark.slow
def test_milp_solve_holds_a_given_bound() -> None:
    inst = instances.generate("medium", seed=1)
    b = milp.bound(inst, time_limit=1)
    res = milp.solve(inst, time_limit=3, lagrangian=b)
    assert f"Lagrangian bound {b.value:.6g}" in res.message
    assert res.params["lagrangian"] == "given"
    assert res.upper_bound <= b.value
    wrong = milp.bound(instances.generate("small", seed=0), time_limit=0.2)
    with pytest.raises(ValueError, match="lagrangian"):
        milp.solve(inst, time_limit=3, lagrangian=wrong)


def test_pyproject_names_the_lagrangian_method_as_an_entry_point() -> None:
    """The entry point line (the installed metadata follows it on the next install)."""
    import importlib
    import tomllib

    from heuristics import MethodSpec

    meta = tomllib.loads((paths.ROOT / "pyproject.toml").read_text())
    eps = meta["project"]["entry-points"]["gpusched.methods"]
    assert eps["lagrangian"] == "matheuristics:LAGRANGIAN_METHOD"
    module, _, name = eps["lagrangian"].partition(":")
    spec = getattr(importlib.import_module(module), name)
    assert isinstance(spec, MethodSpec)


@pytest.mark.slow
def test_solve_milp_at_scale_offers_the_lagrangian_heuristic(monkeypatch) -> None:
    """At scale the warm start is the better of best and the Lagrangian heuristic, and the
    bound found for it is the one milp.solve holds (not searched again)."""
    import matheuristics
    from matheuristics import exact

    monkeypatch.setattr(exact, "SCALE_JOBS", 1)
    inst = instances.generate("medium", seed=2)
    res = matheuristics.solve_milp(inst, time_limit=4, threads=1)
    assert res.params["lagrangian"] == "given"
    assert "Lagrangian bound" in res.message
    assert instances.evaluate(inst, res.schedule).value == res.value <= res.upper_bound
