"""The rounded capacity rows of milp.build: valid for every schedule, tighter LP, same optimum."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from brute import brute_force

import heuristics
import instances
import milp
from instances import Instance, Job
from milp.cuts import rounded_coefficients
from milp.formulation import ROW_ROUNDED
from milp.highs import lp_relaxation


@pytest.mark.parametrize("d", [2, 3, 4, 5])
def test_rounded_coefficients_hold_for_every_load_that_fits(d: int) -> None:
    sizes = np.array([1, 2, 3, 4, 8])
    for cap in range(14):
        a = rounded_coefficients(sizes, np.full(sizes.size, cap), d)
        worst = 0.0
        ranges = [range(cap // int(g) + 1) for g in sizes]
        for counts in itertools.product(*ranges):
            n = np.array(counts)
            if n @ sizes <= cap:
                worst = max(worst, float(n @ a))
        assert worst <= cap // d + 1e-12, (cap, d, a)
        if cap % d == 0:
            assert np.allclose(a, sizes / d)  # the capacity row over d: no row is added


def two_gpu_jobs() -> Instance:
    """Three GPUs, two slots, three one-slot jobs of two GPUs: one job per slot fits."""
    jobs = tuple(Job(f"j{k}", 2, 1, 1.0 + k / 10) for k in range(3))
    return Instance("odd", 3, 2, (), jobs)


def test_rounded_rows_close_the_lp_gap_of_an_odd_capacity() -> None:
    inst = two_gpu_jobs()
    best, _ = brute_force(inst)
    plain = milp.build(inst, rounding=())
    rounded = milp.build(inst)
    assert rounded.stats["rounded_rows"] == 2
    assert plain.stats["rounded_rows"] == 0
    lp_plain = lp_relaxation(plain, 10)
    lp_rounded = lp_relaxation(rounded, 10)
    assert lp_plain is not None and lp_rounded is not None
    assert lp_plain > best + 1.0  # half a third job fits in the plain relaxation
    assert lp_rounded == pytest.approx(best)
    assert rounded.to_pulp().get_constraint_by_name("round_t0") is not None


@pytest.mark.parametrize(
    "family,seed", [("small", 0), ("small", 3), ("hc-bursty", 0), ("hc-multi-service", 0),
                    ("hc-deadlines", 1)]
)
def test_rounded_rows_hold_for_every_heuristic_schedule(family: str, seed: int) -> None:
    inst = instances.generate(family, seed=seed)
    form = milp.build(inst)
    assert form.stats["rounded_rows"] > 0
    rows = form.row_kind == ROW_ROUNDED
    for method, params in [("fifo", {}), ("easy-curve", {}), ("list", {}), ("parallel", {}),
                           ("sampling", {"passes": 20, "seed": seed}), ("best", {"time_limit": 1.0})]:
        res = heuristics.solve(inst, method, **params)  # a peak reservation fits the curve too
        x = form.encode(res.schedule.to_array(inst))
        load = form.A @ x
        assert np.all(load[rows] <= form.row_upper[rows] + 1e-9), method


@pytest.mark.parametrize("family,seed", [("small", 1), ("small", 2), ("hc-bursty", 0)])
def test_rounded_rows_keep_the_optimum(family: str, seed: int) -> None:
    inst = instances.generate(family, seed=seed)
    a = milp.solve(inst, mip_gap=0, time_limit=30)
    b = milp.solve(inst, mip_gap=0, time_limit=30, rounding=())
    assert a.status == b.status == "optimal", (a.message, b.message)
    assert a.value == pytest.approx(b.value, rel=1e-9)
    assert a.lp_bound <= b.lp_bound + 1e-6  # never a weaker relaxation


@pytest.mark.parametrize("bad", [(1,), (2, 0), (2.5,), 2, "24"])
def test_a_bad_divisor_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="rounding"):
        milp.build(two_gpu_jobs(), rounding=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="rounding"):
        milp.solve(two_gpu_jobs(), rounding=bad, warm_start=None)  # type: ignore[arg-type]
