"""Rows for wide jobs (issue 41): the window rows of milp.wide and the rounded rows over 8,
checked against brute force on small instances of the ``wide`` class (no optimum cut off)."""

from __future__ import annotations

import numpy as np
import pytest
from brute import brute_force

import heuristics
import instances
import milp
from instances import Instance, Job, Service
from milp.core import solve_arrays
from milp.highs import lp_relaxation
from milp.wide import window_rows, with_window_rows

SMALL = {"num_gpus": 8, "horizon": 10, "num_jobs": 6, "peak": 4}
"""A small instance of the class: half-pool jobs of 4 of 8 GPUs under a curve peaking at 4."""


def small_wide(seed: int) -> Instance:
    return instances.generate("wide", seed=seed, **SMALL)


def four_half_pool_jobs() -> Instance:
    """16 GPUs, 8 of them inference, 10 slots; four 8-GPU jobs of 5 to 9 slots: one fits."""
    jobs = tuple(Job(f"w{k}", 8, p, w) for k, (p, w) in enumerate(
        [(9, 1.1), (7, 1.9), (6, 1.1), (5, 2.7)]))
    return Instance("four-wide", 16, 10, (Service("svc", 1.0, (8,) * 10),), jobs)


def test_a_window_row_closes_the_lp_gap_of_a_single_machine() -> None:
    inst = four_half_pool_jobs()
    best, _ = brute_force(inst)
    form = milp.build(inst)
    rows, upper, where = window_rows(form)
    assert rows.shape[0] == 1 and upper.tolist() == [1.0] and where.tolist() == [0]
    plain = lp_relaxation(form, 10)
    strong = lp_relaxation(with_window_rows(form), 10)
    assert plain is not None and strong is not None
    assert best == pytest.approx(108.0)  # the 5-slot job alone: no two fit in 10 slots
    assert plain == pytest.approx(161.2)  # fractions of two jobs spread over the window
    assert strong == pytest.approx(best)


@pytest.mark.parametrize("seed", range(8))
def test_window_rows_cut_off_no_optimum_of_small_wide_instances(seed: int) -> None:
    inst = small_wide(seed)
    best, sched = brute_force(inst)
    form = with_window_rows(milp.build(inst))
    x = form.encode(sched.to_array(inst))
    assert np.all(form.A @ x <= form.row_upper + 1e-9)  # the optimum satisfies every row
    raw = solve_arrays(form, time_limit=30, mip_gap=0)
    assert str(raw.status) == "optimal"
    assert raw.start is not None
    value = instances.evaluate(inst, instances.Schedule.from_array(inst, raw.start)).value
    assert value == pytest.approx(best, rel=1e-9)


@pytest.mark.parametrize("seed", range(8))
def test_rounding_over_eight_keeps_the_optimum_of_small_wide_instances(seed: int) -> None:
    inst = instances.generate("wide", seed=seed, num_gpus=16, horizon=10, num_jobs=6, peak=6)
    best, _ = brute_force(inst)
    res = milp.solve(inst, mip_gap=0, time_limit=30, rounding=(2, 4, 8), warm_start=None)
    assert str(res.status) == "optimal"
    assert res.value == pytest.approx(best, rel=1e-9)
    assert res.lp_bound is None or res.lp_bound >= best - 1e-6


@pytest.mark.parametrize("seed", [0, 1])
def test_window_rows_hold_for_heuristic_schedules_on_the_family(seed: int) -> None:
    inst = instances.generate("wide", seed=seed)
    form = with_window_rows(milp.build(inst))
    assert form.stats.get("window_rows", 0) > 0
    for method in ("fifo", "list", "parallel"):
        sched = heuristics.solve(inst, method).schedule
        x = form.encode(sched.to_array(inst))
        assert np.all(form.A @ x <= form.row_upper + 1e-9), method


@pytest.mark.parametrize("seed", range(4))
def test_solve_with_window_rows_keeps_the_optimum(seed: int) -> None:
    inst = small_wide(seed)
    best, _ = brute_force(inst)
    res = milp.solve(inst, mip_gap=0, time_limit=30, windows=True, warm_start=None)
    assert str(res.status) == "optimal"
    assert res.value == pytest.approx(best, rel=1e-9)
    assert res.params["windows"] == with_window_rows(milp.build(inst)).stats.get("window_rows", 0)


def test_windows_is_a_flag() -> None:
    with pytest.raises(ValueError, match="windows"):
        milp.MILPParams(windows=1)  # type: ignore[arg-type]
