"""milp.solve with the bounds of milp.bound: the smallest valid bound, named; fixing stays exact."""

from __future__ import annotations

import pytest
from brute import brute_force, tiny_instance

import heuristics
import instances
import milp


@pytest.mark.parametrize("seed", range(6))
def test_fixing_keeps_the_optimum_of_tiny_instances(seed: int) -> None:
    inst = tiny_instance(seed, n=6, G=4, T=10)
    opt, _ = brute_force(inst)
    res = milp.solve(inst, time_limit=20, mip_gap=0, fixing=True)
    assert res.value == pytest.approx(opt)
    assert res.upper_bound is not None and res.upper_bound >= opt - 1e-9
    assert res.bound_method is not None


def test_fixing_on_medium_never_cuts_below_the_optimum() -> None:
    inst = instances.generate("medium", seed=3)
    exact = milp.solve(inst, time_limit=60, mip_gap=0)
    assert str(exact.status) == "optimal"
    fixed = milp.solve(inst, time_limit=60, mip_gap=0, fixing=True,
                       warm_start=heuristics.solve(inst, "list"))
    assert fixed.value == pytest.approx(exact.value, rel=1e-9)
    assert fixed.upper_bound >= exact.value - 1e-6
    assert "reduced-cost fixing removed" in fixed.message


def test_a_backend_without_a_bound_leaves_a_lagrangian_one(monkeypatch) -> None:
    from instances import Status
    from milp import RawSolve, solver

    inst = instances.generate("medium", seed=1)
    trivial = milp.build(inst).trivial_bound
    monkeypatch.setitem(solver.BACKENDS, "highs",
                        lambda form, **kw: RawSolve(Status.TIME_LIMIT, message="stub: no bound"))
    res = milp.solve(inst, time_limit=10, warm_start=None)
    assert res.bound_method == "lagrangian"
    assert res.upper_bound is not None and res.upper_bound < 0.95 * trivial
    assert res.to_row()["bound_method"] == "lagrangian"
    off = milp.solve(inst, time_limit=10, warm_start=None, lagrangian=False)
    assert off.bound_method == "sum-of-values" and off.upper_bound == pytest.approx(trivial)
    # a limit of 0 leaves no time for a search: the sum of values, as before
    zero = milp.solve(inst, time_limit=0, warm_start=None)
    assert zero.bound_method == "sum-of-values"
    # asked for, the Lagrangian bound is computed even then (one evaluation)
    asked = milp.solve(inst, time_limit=0, warm_start=None, lagrangian=True)
    assert asked.bound_method == "lagrangian" and asked.upper_bound < trivial


@pytest.mark.slow
def test_lagrangian_first_and_the_smallest_bound_wins() -> None:
    inst = instances.generate("medium", seed=2)
    res = milp.solve(inst, time_limit=3, lagrangian=True)
    assert "Lagrangian bound" in res.message
    held = float(res.message.split("Lagrangian bound ")[1].split()[0])
    assert res.upper_bound <= held * (1 + 1e-6)  # the smallest bound held wins (6 digits shown)
    # a 0.3 s search (a tenth of the limit; numpy when numba is not loaded yet): far
    # below the sum of values (how close to the converged bound depends on the machine)
    assert res.upper_bound < 0.5 * milp.build(inst).trivial_bound
    assert res.bound_method in {"dual", "lp", "lagrangian"}
    assert res.value <= res.upper_bound
