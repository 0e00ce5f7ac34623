"""Bounds on model version 3: the relaxations, the price of sharing, the Lagrangian on fluid amounts.

Each relaxation is an upper bound (fluid <= nodes <= flat, each at least the optimum); the
Lagrangian certificate with ``a_j`` in the capacity rows is never below a feasible value, where
one with ``g_j`` would be; ``Result.bound_method`` names the relaxation that gave the bound.
"""

from __future__ import annotations

import numpy as np
import pytest
from brute_v3 import brute_force_v3, tiny_v3_instance
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import instances
import instances.lagrangian as lagrangian_module
import milp
import milp.core
from instances import Instance, Job, Node, Service, Status
from milp import RawSolve

SHAPES = [(2, 2), (2, 1, 1), (3, 2), (4,)]


@given(st.integers(0, 100_000), st.sampled_from(SHAPES))
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_each_relaxation_is_an_upper_bound_coarser_than_the_last(seed: int, shape: tuple) -> None:
    inst = tiny_v3_instance(seed, n=6, shape=shape, T=5, shared=0.7)
    best, _ = brute_force_v3(inst)
    ends = []
    for kind in ("fluid", "nodes", "flat"):
        r = milp.relaxation(inst, kind, time_limit=20, mip_gap=0)
        assert r.status == "optimal", r.message
        assert r.upper_bound is not None and r.upper_bound >= best - 1e-6
        assert r.value == pytest.approx(r.upper_bound, rel=1e-6)
        ends.append(r.value)
    assert ends[0] <= ends[1] + 1e-6 and ends[1] <= ends[2] + 1e-6
    lam = milp.bound(inst, time_limit=2)
    assert lam.value >= best - 1e-9
    assert instances.lagrangian_value(inst, lam.multipliers) == lam.value


def three_sixties() -> Instance:
    """Two GPUs, three shared jobs of 600 over the same two slots: 2 run; fluid (1.8 <= 2): 3."""
    jobs = tuple(Job(f"s{k}", 1, 2, 1.0, gpu_milli=600) for k in range(3))
    return Instance("sixties", 2, 2, (), jobs, nodes=(Node("n", 2),))


def test_the_price_of_sharing_by_hand() -> None:
    inst = three_sixties()
    price = milp.price_of_sharing(inst, time_limit=20)
    assert price.exact and price.value == pytest.approx(1.2)
    assert price.fluid.value == pytest.approx(3.6) and price.optimum.value == pytest.approx(2.4)
    assert price.lower <= price.value <= price.upper
    assert "price of sharing 1.2" in price.summary()
    with pytest.raises(ValueError, match="has no shared job"):
        milp.price_of_sharing(Instance("w", 2, 1, (), (Job("a", 1, 1),), nodes=(Node("n", 2),)))


def test_the_price_of_sharing_on_the_openb_shares_family() -> None:
    inst = instances.generate("openb-shares", seed=1, num_gpus=6, num_jobs=10, horizon=6)
    price = milp.price_of_sharing(inst, time_limit=30)
    instances.evaluate(inst, price.optimum.schedule)
    assert 0 <= price.lower <= price.upper
    assert price.fluid.upper_bound >= price.optimum.value - 1e-6


def halves() -> Instance:
    """One GPU, two shared jobs of 500 at the same slot: both run (value 1.0) on the one GPU."""
    jobs = (Job("a", 1, 1, 1.0, gpu_milli=500), Job("b", 1, 1, 1.0, gpu_milli=500))
    return Instance("halves", 1, 1, (), jobs, nodes=(Node("n", 1),))


def test_the_lagrangian_counts_the_fluid_amounts(monkeypatch: pytest.MonkeyPatch) -> None:
    inst = halves()
    best, _ = brute_force_v3(inst)
    assert best == pytest.approx(1.0)
    for lam in ([0.0], [0.25], [0.5], [1.0], [3.0]):
        assert instances.lagrangian_value(inst, lam) >= best
    assert milp.bound(inst, time_limit=2).value >= best
    # with g_j in the capacity rows (a share charged as a whole GPU) it undercuts the schedule
    monkeypatch.setattr(lagrangian_module, "capacity_amounts",
                        lambda i: i.gpus.astype(np.float64))
    assert instances.lagrangian_value(inst, [0.5]) == pytest.approx(0.5)


def test_the_lagrangian_certificate_at_scale_is_never_below_a_schedule() -> None:
    """The openb-shares family as generated (16 GPUs, a day, about a hundred jobs)."""
    inst = instances.generate("openb-shares", seed=0)
    assert any(j.gpu_milli < 1000 for j in inst.jobs)
    b = milp.bound(inst, time_limit=5)
    res = milp.solve(inst, time_limit=20)
    instances.evaluate(inst, res.schedule)
    assert res.value > 0 and b.value >= res.value
    assert res.upper_bound <= b.value + 1e-9 * b.value or res.bound_method != "lagrangian"
    assert instances.lagrangian_value(inst, b.multipliers) == b.value


@pytest.mark.parametrize("kind", ["fluid", "nodes", "flat"])
def test_bound_method_names_the_relaxation(monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """A backend that leaves no bound: the relaxation held beside it gives the result's bound."""
    inst = tiny_v3_instance(11, n=5, shape=(2, 2), T=5, shared=0.7)
    best, _ = brute_force_v3(inst)
    real = milp.core.BACKENDS["highs"]

    def no_bound(form, **kw):
        if form.relax != "exact":
            return real(form, **kw)
        return RawSolve(Status.TIME_LIMIT, message="no search")

    monkeypatch.setitem(milp.core.BACKENDS, "highs", no_bound)
    res = milp.solve(inst, time_limit=10, mip_gap=0, relaxation=kind, lagrangian=False)
    assert res.bound_method == kind
    assert res.upper_bound >= best - 1e-6 and f"{kind} relaxation" in res.message
    assert res.params["relaxation"] == kind


def test_fixing_and_the_lagrangian_keep_the_optimum() -> None:
    inst = tiny_v3_instance(7, n=6, shape=(2, 2), T=5, shared=0.7)
    best, schedule = brute_force_v3(inst)
    res = milp.solve(inst, time_limit=20, mip_gap=0, warm_start=schedule, lagrangian=True,
                     fixing=True)
    instances.evaluate(inst, res.schedule)
    assert res.status == "optimal" and res.value == pytest.approx(best)
    assert res.upper_bound >= best - 1e-6


@pytest.mark.parametrize("seed", [0, 1])
def test_on_version_2_the_relaxations_are_the_models_they_relax(seed: int) -> None:
    """``fluid`` and ``nodes`` build the node model itself; ``flat`` the flat one."""
    from brute_nodes import tiny_node_instance

    inst = tiny_node_instance(seed, n=5, shape=(2, 2, 1))
    exact = milp.build(inst)
    flat = milp.build(inst.replace(nodes=None))
    for kind, same in (("fluid", exact), ("nodes", exact), ("flat", flat)):
        form = milp.build(inst, relax=kind)
        assert (form.A != same.A).nnz == 0
        for name in ("c", "row_upper", "col_upper", "col_start", "col_place"):
            assert np.array_equal(getattr(form, name), getattr(same, name))
    svc = Service("s", 1.0, (1,) * inst.horizon)
    assert milp.relaxation(inst.replace(services=(svc,)), "flat", time_limit=5).status == "optimal"
