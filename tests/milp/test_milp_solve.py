"""milp.solve cross-checked: brute force, three backends, every heuristic, bounds, warm starts."""

from __future__ import annotations

import inspect
from dataclasses import replace

import numpy as np
import pytest
from brute import brute_force, tiny_instance
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpusched
import heuristics
import instances
import milp
from instances import Instance, Job, Service
from matheuristics import solve_milp
from milp.cpsat import objective_scale

BACKENDS = ["highs", "pulp", "cpsat"]


def check(inst: Instance, res: instances.Result, time_limit: float = 60.0) -> None:
    """Properties every MILP result has, each against a figure computed apart from it.

    The value is the checker's; the bound (never below the value: ``Result``
    refuses that at construction) is at most the LP bound when one was
    computed and at most the value of every job run at once; the run took
    time, and not much more than its limit.
    """
    again = instances.evaluate(inst, res.schedule)
    assert again.value == pytest.approx(res.value, abs=1e-9)
    assert res.upper_bound is not None
    everything = float(inst.job_values.sum())
    assert res.upper_bound <= everything * (1 + 1e-9) + 1e-12
    if res.lp_bound is not None:
        assert res.upper_bound <= res.lp_bound * (1 + 1e-6) + 1e-12
    if res.status == "optimal":
        assert res.gap is not None and res.gap <= float(res.params["mip_gap"]) + 1e-6
    assert 0 < res.runtime_s <= 1.5 * time_limit + 2.0


@given(st.integers(0, 100_000), st.integers(2, 6))
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_brute_force_agrees_on_tiny_instances(seed: int, n: int) -> None:
    inst = tiny_instance(seed, n=n, G=4, T=8)
    best, schedule = brute_force(inst)
    assert instances.evaluate(inst, schedule).value == pytest.approx(best)
    for backend in BACKENDS:
        res = milp.solve(inst, backend=backend, mip_gap=0, time_limit=20, warm_start=None)
        check(inst, res, 20)
        assert res.status == "optimal", (backend, res.message)
        assert res.value == pytest.approx(best, abs=1e-6), backend
        assert res.upper_bound == pytest.approx(best, rel=1e-6), backend


@pytest.mark.parametrize(
    "family,seed", [("small", 0), ("small", 1), ("small", 2), ("seed-training-heavy", 0),
                    ("hc-deadlines", 0)]
)
def test_backends_agree_on_the_optimum(family: str, seed: int) -> None:
    inst = instances.generate(family, seed=seed)
    results = {b: milp.solve(inst, backend=b, mip_gap=0, time_limit=30) for b in BACKENDS}
    for b, res in results.items():
        check(inst, res, 30)
        assert res.status == "optimal", (b, res.message)
    values = [r.value for r in results.values()]
    assert max(values) - min(values) <= 1e-6 * max(1.0, max(values))
    # the LP relaxation bounds the optimum from above
    assert results["highs"].lp_bound >= results["highs"].value - 1e-6


@pytest.mark.slow
def test_portfolio_agrees_and_keeps_the_tighter_bound() -> None:
    inst = instances.generate("hc-mixed", seed=1)
    res = milp.solve(inst, backend="portfolio", threads=2, mip_gap=0, time_limit=30, warm_start=None)
    check(inst, res, 30)
    assert res.method == "milp" and res.status == "optimal", res.message
    alone = milp.solve(inst, mip_gap=0, time_limit=30, warm_start=None)
    assert res.value == pytest.approx(alone.value)
    assert "HiGHS" in res.message and "CP-SAT" in res.message


def _heuristic_results(inst: Instance) -> dict[str, instances.Result]:
    out = {}
    for name, fn in heuristics.METHODS.items():
        params = {}
        if "time_limit" in inspect.signature(fn).parameters:
            params["time_limit"] = 0.3
        out[name] = heuristics.solve(inst, name, **params)
    return out


@pytest.mark.parametrize("family,seed", [("hc-mixed", 1), ("small", 3), ("hc-bursty", 0)])
@pytest.mark.slow
def test_optimum_is_at_least_every_heuristic(family: str, seed: int) -> None:
    inst = instances.generate(family, seed=seed)
    res = solve_milp(inst, time_limit=30, mip_gap=0)
    check(inst, res, 30)
    heur = _heuristic_results(inst)
    assert {"fifo", "fifo-curve"} <= set(heur)
    for name, h in heur.items():
        # every heuristic is below the bound; at optimality, below the value too
        assert res.upper_bound >= h.value - 1e-6, name
        if res.status == "optimal":
            assert res.value >= h.value - 1e-6, name


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.slow
def test_bounds_dominate_every_feasible_value_on_medium(seed: int) -> None:
    inst = instances.generate("medium", seed=seed)
    exact = [
        solve_milp(inst, backend="highs", time_limit=2),
        milp.solve(inst, backend="cpsat", time_limit=2, warm_start=None),
        milp.solve(inst, backend="highs", time_limit=1, warm_start=None, root_lp=False),
    ]
    for res in exact:
        check(inst, res, 2)
    feasible = [r.value for r in exact] + [h.value for h in _heuristic_results(inst).values()]
    for res in exact:
        assert res.upper_bound >= max(feasible) - 1e-6 * max(feasible), (res.method, res.message)


@pytest.mark.slow
def test_loose_gap_reports_the_dual_bound_not_the_incumbent() -> None:
    inst = instances.generate("hc-mixed", seed=1)
    loose = milp.solve(inst, mip_gap=0.05, time_limit=10, warm_start=None)
    tight = solve_milp(inst, mip_gap=0, time_limit=15)
    check(inst, loose, 10)
    check(inst, tight, 15)
    # the loose run's bound must still bound every schedule, the tight one included
    assert loose.upper_bound >= tight.value - 1e-6
    assert tight.upper_bound >= loose.value - 1e-6


@pytest.mark.slow
def test_warm_start_is_kept_and_used() -> None:
    inst = instances.generate("hc-multi-service", seed=0)
    start = heuristics.solve(inst, "list")
    array = start.schedule.to_array(inst)
    for ws in (start, start.schedule, array):
        res = milp.solve(inst, warm_start=ws, time_limit=2)
        check(inst, res, 2)
        assert res.value >= start.value - 1e-9
        assert res.params["warm_start"] in ("list", "given schedule", "given start array")
    cp = milp.solve(inst, backend="cpsat", warm_start=start, time_limit=2)
    assert cp.value >= start.value - 1e-9


def test_auto_is_resolved_above_the_milp() -> None:
    inst = instances.generate("small", seed=4)
    with pytest.raises(ValueError, match=r"matheuristics\.solve_milp"):
        milp.solve(inst, time_limit=5, warm_start="auto")
    with pytest.raises(ValueError, match=r"lns_helper.*matheuristics"):
        milp.solve(inst, time_limit=5, threads=2, lns_helper=True)
    res = milp.solve(inst, time_limit=5)  # the default: no warm start
    assert "warm_start" not in res.params


def test_gpusched_dispatches_exact_methods() -> None:
    inst = instances.generate("small", seed=1)
    for method in ("milp", "milp-pulp", "cpsat"):
        res = gpusched.solve(inst, method, time_limit=10)
        assert res.method == method
        assert res.params["warm_start"] == "best"  # the automatic warm start, as before
        check(inst, res, 10)


def test_progress_bar_runs(capsys: pytest.CaptureFixture[str]) -> None:
    inst = instances.generate("hc-mixed", seed=2)
    res = milp.solve(inst, time_limit=1.5, progress=True, warm_start=None)
    check(inst, res, 1.5)
    err = capsys.readouterr().err
    assert "milp" in err and "/1.5 s" in err


@given(st.lists(st.floats(0.001, 1e6, allow_nan=False), min_size=1, max_size=20))
@settings(max_examples=200, deadline=None)
def test_cpsat_scaled_coefficients_never_understate_a_value(values: list[float]) -> None:
    v = np.array(values)
    scale, coef = objective_scale(v)
    assert np.all(coef / scale >= v * (1 - 1e-9))
    assert np.all(coef >= 0)
    assert coef.max() < 2**52


def test_cpsat_scale_is_exact_for_two_decimal_priorities() -> None:
    inst = Instance("d", 8, 6, (), (Job("a", 3, 2, 1.37), Job("b", 2, 5, 0.05), Job("c", 1, 1, 2.5)))
    scale, coef = objective_scale(inst.job_values)
    assert scale == 100
    assert np.array_equal(coef, np.rint(inst.job_values * 100))


def test_arbitrary_float_priorities_keep_a_valid_cpsat_bound() -> None:
    rng = np.random.default_rng(7)
    jobs = tuple(
        Job(f"j{k}", int(rng.integers(1, 4)), int(rng.integers(1, 4)), float(rng.uniform(0.1, 3)))
        for k in range(6)
    )
    inst = Instance("f", 4, 7, (Service("s", 1.0, (1, 0, 0, 2, 0, 0, 1)),), jobs)
    best, _ = brute_force(inst)
    res = milp.solve(inst, backend="cpsat", mip_gap=0, time_limit=10, warm_start=None)
    check(inst, res, 10)
    assert res.value == pytest.approx(best)
    assert res.upper_bound == pytest.approx(best, rel=1e-6)


@pytest.mark.parametrize("factor", [1e-12, 1e-9, 1e-4, 1e9, 1e20, 1e25])
@pytest.mark.parametrize("seed", [3, 11])
def test_highs_is_exact_whatever_the_scale_of_the_values(seed: int, factor: float) -> None:
    """Values far from 1 (HiGHS reads a cost of 1e20 as infinite, 1e-9 as zero) are scaled."""
    base = tiny_instance(seed, n=5, G=4, T=8)
    inst = Instance(base.name, base.num_gpus, base.horizon, base.services,
                    tuple(replace(j, priority=j.priority * factor) for j in base.jobs),
                    base.slot_hours)
    best, _ = brute_force(inst)
    for res in (milp.solve(inst, mip_gap=0, time_limit=20, warm_start=None),
                solve_milp(inst, mip_gap=0, time_limit=20)):  # warm-started by best
        check(inst, res, 20)
        assert res.status == "optimal", res.message
        assert res.value == pytest.approx(best, rel=1e-9)
        assert res.upper_bound == pytest.approx(best, rel=1e-6)
        assert res.lp_bound is not None and res.lp_bound >= best * (1 - 1e-6)


def test_cpsat_options_by_name() -> None:
    pytest.importorskip("ortools")
    inst = instances.generate("small", seed=1)
    res = milp.solve(inst, backend="cpsat", time_limit=5, interleave_search=True, num_workers=2)
    assert res.status == "optimal"
    with pytest.raises(ValueError, match="params: CP-SAT has no parameter"):
        milp.solve(inst, backend="cpsat", time_limit=5, no_such_option=1)
