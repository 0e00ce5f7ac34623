"""The two reformulations of ``benchmarks/bench_wide_forms.py`` (issue 41, not in the library):
the step model and the left-shift rows keep the optimum of small wide instances (brute force),
so the proof times that script measures are for the same problem."""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pytest
from brute import brute_force
from paths import ROOT

import heuristics
import instances
import milp

sys.path.insert(0, str(ROOT))  # the benchmarks package

from benchmarks.bench_wide_forms import run, shift_model, step_model

ARGS = argparse.Namespace(threads=1, parallel="off", limit=30.0)


def small_wide(seed: int) -> instances.Instance:
    """16 GPUs, a curve peaking at 6, six jobs of which some ask 8 GPUs, 10 slots."""
    return instances.generate("wide", seed=seed, num_gpus=16, horizon=10, num_jobs=6, peak=6)


@pytest.mark.parametrize("seed", range(8))
def test_both_reformulations_keep_the_optimum_of_small_wide_instances(seed: int) -> None:
    inst = small_wide(seed)
    best, _ = brute_force(inst)
    form = milp.build(inst)
    for model in (step_model(form), shift_model(inst, form, 1), shift_model(inst, form, 8)):
        figures = run(model, form, ARGS, None)
        assert figures["status"] == "Optimal"
        assert figures["value"] == pytest.approx(best, abs=1e-6)


def test_a_schedule_in_cumulative_variables_keeps_its_rows_and_worth() -> None:
    inst = instances.generate("wide", seed=0, num_gpus=16, horizon=24, num_jobs=10, peak=6)
    form = milp.build(inst)
    step = step_model(form)
    c, A, lo, up = step.c, step.A, step.row_lower, step.row_upper
    sched = heuristics.solve(inst, "list").schedule
    x = form.encode(sched.to_array(inst))
    assert x.sum() > 0
    # z: the running sum of x within each job's columns (x = D z)
    total = np.cumsum(x)
    first = np.r_[True, form.col_group[1:] != form.col_group[:-1]]
    z = total - np.maximum.accumulate(np.where(first, total - x, 0.0))
    assert np.all(A @ z <= up + 1e-9) and np.all(A @ z >= lo - 1e-9)
    assert float(c @ z) == pytest.approx(float(form.c @ x))
    assert A.nnz < form.A.nnz


def test_a_left_shift_row_holds_a_late_start_to_a_full_slot_before_it() -> None:
    """Two 8-GPU jobs, 8 GPUs left: the second may start after its release only when the
    first runs in the slot before its start."""
    jobs = (instances.Job("a", 8, 2, 1.0), instances.Job("b", 8, 2, 1.0))
    inst = instances.Instance("two-wide", 16, 4, (instances.Service("svc", 1.0, (8,) * 4),), jobs)
    form = milp.build(inst, aggregate=False)
    shift = shift_model(inst, form, 8)
    A, lo = shift.A.tocsr(), shift.row_lower
    extra = A[form.A.shape[0]:].toarray()
    assert extra.shape[0] > 0 and np.all(lo[form.A.shape[0]:] == 0)
    for row in extra:
        k = int(np.flatnonzero(row < 0)[0])  # the late start the row is about
        x = np.zeros(form.num_x)
        x[k] = 1.0
        assert row @ x < 0  # alone, with the slot before it empty: cut off
        other = np.flatnonzero(row > 0)
        assert other.size > 0
        x[other[0]] = 1.0
        assert row @ x >= 0  # the other job in the slot before: kept
