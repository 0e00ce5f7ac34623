"""A solver's bound rounded down to the integers where every schedule's worth is one
(``instances.objective.integral_bound``): no optimum cut off, certificates untouched."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from brute import brute_force

import instances
import milp
from instances import Instance, Job, Service
from instances.objective import integral_bound
from milp.highs import lp_relaxation

SMALL = {"num_gpus": 8, "horizon": 10, "num_jobs": 6, "peak": 4}


def small_wide(seed: int) -> Instance:
    return instances.generate("wide", seed=seed, **SMALL)


def test_an_integral_instance_rounds_down_and_keeps_integers() -> None:
    inst = small_wide(0)
    assert np.array_equal(inst.job_values, np.round(inst.job_values))
    assert integral_bound(inst, 10.7) == 10.0
    assert integral_bound(inst, 11.0 - 1e-9) == 11.0 - 1e-9  # a rounding error: kept
    assert integral_bound(inst, 2.28e21 + 2.0**20) == 2.28e21 + 2.0**20  # no fraction to drop
    assert integral_bound(inst, 11.0) == 11.0
    assert integral_bound(inst, math.inf) == math.inf


def test_fractional_worths_keep_the_bound() -> None:
    inst = Instance("fractional", 16, 10, (Service("svc", 1.0, (8,) * 10),),
                    (Job("a", 8, 5, 1.1), Job("b", 8, 4, 2.7)))
    assert not np.array_equal(inst.job_values, np.round(inst.job_values))
    assert integral_bound(inst, 10.7) == 10.7


def test_flow_worths_round_only_where_their_terms_are_integers() -> None:
    inst = small_wide(1).replace(objective="flow")
    assert integral_bound(inst, 10.7) == 10.0  # priorities 1/2/4, hourly slots
    half = inst.replace(slot_hours=0.5)
    assert integral_bound(half, 10.7) == 10.7  # w h = 0.5 for priority 1


@pytest.mark.parametrize("seed", range(8))
def test_no_optimum_is_cut_off_of_small_wide_instances(seed: int) -> None:
    inst = small_wide(seed)
    best, _ = brute_force(inst)
    lp = lp_relaxation(milp.build(inst), 10)
    assert lp is not None and integral_bound(inst, lp) >= best
    # the root's bound only (one node): the reported bound is the solver's rounded down
    res = milp.solve(inst, time_limit=30, mip_gap=0.0, mip_max_nodes=1, lagrangian=False)
    assert res.upper_bound is not None and res.upper_bound >= best - 1e-9
    assert res.value <= best + 1e-9
    if res.bound_method and res.bound_method.startswith("dual"):
        assert res.upper_bound == math.floor(res.upper_bound)


@pytest.mark.parametrize("integral", [True, False])
def test_a_solve_rounds_a_fractional_dual_bound_of_an_integral_instance(monkeypatch, integral) -> None:
    """HiGHS's answer with its dual bound raised by 0.7: the solve reports the optimum as
    its bound (and optimal) where every worth is an integer, the raised bound otherwise."""
    inst = small_wide(2)
    if not integral:  # priorities 1.1 times as large: fractional worths
        inst = inst.replace(jobs=tuple(dataclasses.replace(j, priority=j.priority * 1.1)
                                       for j in inst.jobs))
    best, _ = brute_force(inst)
    real = milp.core.BACKENDS["highs"]

    def raised(*args, **kwargs):
        raw = real(*args, **kwargs)
        return dataclasses.replace(raw, status=instances.Status.TIME_LIMIT,
                                   dual_bound=raw.dual_bound + 0.7)

    monkeypatch.setitem(milp.core.BACKENDS, "highs", raised)
    res = milp.solve(inst, time_limit=30, mip_gap=0.0, lagrangian=False)
    assert res.value == pytest.approx(best)
    if integral:
        assert res.upper_bound == best and str(res.status) == "optimal"
        assert "rounded down" in res.message
    else:
        assert res.upper_bound == pytest.approx(best + 0.7)
        assert str(res.status) == "time_limit" and "rounded down" not in res.message
