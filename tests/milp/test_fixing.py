"""milp.fixing: the forced bound per column, checked by brute force and by a loop."""

from __future__ import annotations

import numpy as np
import pytest
from brute import brute_force, tiny_instance

import instances
import milp
from milp.fixing import column_bounds, fix_columns, reduced_cost_fixing


def _forced_by_loop(inst, lam, j, s):
    """L(lam) with job j's term replaced by the value of starting it at s (plain loops)."""
    total = instances.lagrangian_value(inst, lam)
    job = inst.jobs[j]
    cap = inst.batch_capacity()
    best = 0.0
    end = inst.deadlines[j]
    for t in range(job.release, end - job.duration + 1):
        if all(cap[u] >= job.gpus for u in range(t, t + job.duration)):
            best = max(best, inst.job_values[j] - job.gpus * sum(lam[t : t + job.duration]))
    return total - best + inst.job_values[j] - job.gpus * sum(lam[s : s + job.duration])


def test_column_bounds_match_a_loop() -> None:
    inst = instances.generate("small", seed=1)
    form = milp.build(inst, aggregate=False)
    lam = np.random.default_rng(2).exponential(1.0, inst.horizon)
    total = instances.lagrangian_value(inst, lam)
    got = column_bounds(inst, lam, form.col_job, form.col_start, total)
    for i in range(0, form.num_cols, 7):
        want = _forced_by_loop(inst, lam, int(form.col_job[i]), int(form.col_start[i]))
        assert got[i] == pytest.approx(want, rel=1e-12, abs=1e-9)


@pytest.mark.parametrize("seed", range(10))
def test_no_column_of_an_optimal_schedule_is_removed(seed: int) -> None:
    inst = tiny_instance(seed, n=6, G=4, T=10)
    opt, schedule = brute_force(inst)
    form = milp.build(inst, aggregate=False)
    lam = milp.bound(inst).multipliers
    # relative to any value up to the optimum, the optimal schedule survives
    for v in (0.5 * opt, opt):
        fx = reduced_cost_fixing(form, lam, v)
        x = form.encode(schedule.to_array(inst))
        assert np.all(fx.keep[x > 0])
        assert fx.bound >= opt - 1e-9


def test_fixing_above_the_optimum_removes_columns_and_reduced_model_is_below() -> None:
    inst = instances.generate("medium", seed=11)
    b = milp.bound(inst)
    form = milp.build(inst)
    best = milp.solve(inst, time_limit=30, mip_gap=0)
    fx = reduced_cost_fixing(form, b.multipliers, best.value)
    assert 0 < fx.removed < form.num_cols and 0 < fx.share_removed < 1
    fixed = fix_columns(form, fx)
    assert fixed.stats["columns_fixed"] == fx.removed
    assert np.all(fixed.col_upper[~fx.keep] == 0)
    # the best schedule's columns are kept
    assert np.all(fx.keep[form.encode(best.schedule.to_array(inst)) > 0])


def test_empty_model() -> None:
    inst = instances.Instance("e", 2, 3, (), ())
    fx = reduced_cost_fixing(milp.build(inst), np.zeros(3), 0.0)
    assert fx.removed == 0 and fx.share_removed == 0.0
