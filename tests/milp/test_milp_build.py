"""milp.build: the arrays against a plain reference, encode/decode, feasibility of a start."""

from __future__ import annotations

import numpy as np
import pytest
from brute import tiny_instance
from hypothesis import given, settings
from hypothesis import strategies as st

import instances
import milp
from instances import Instance, Job, Service

tiny = tiny_instance


def reference_columns(inst: Instance) -> set[tuple[int, int]]:
    """(job, start) pairs a feasible schedule can use: window and capacity alone."""
    cap = [inst.num_gpus - sum(s.demand[t] for s in inst.services) for t in range(inst.horizon)]
    out = set()
    for j, job in enumerate(inst.jobs):
        end_by = inst.horizon if job.deadline is None else job.deadline
        for s in range(job.release, end_by - job.duration + 1):
            if all(cap[t] >= job.gpus for t in range(s, s + job.duration)):
                out.add((j, s))
    return out


@pytest.mark.parametrize("seed", range(8))
def test_columns_are_exactly_the_usable_starts(seed: int) -> None:
    inst = tiny(seed)
    form = milp.build(inst, aggregate=False)
    got = set(zip(form.col_job.tolist(), form.col_start.tolist()))
    assert got == reference_columns(inst)
    assert len(got) == form.num_cols  # no duplicate column
    assert np.allclose(form.c, inst.job_values[form.col_job])


@pytest.mark.parametrize("seed", range(8))
def test_capacity_rows_match_a_per_slot_reference(seed: int) -> None:
    inst = tiny(seed, n=6, G=4, T=10)
    form = milp.build(inst, aggregate=False)
    cap = inst.batch_capacity("curve")
    A = form.A.toarray()
    kept = {int(t): r for r, t in enumerate(form.row_ref) if form.row_kind[r] == 1}
    for t in range(inst.horizon):
        coef = np.array([
            inst.gpus[j] if s <= t < s + inst.durations[j] else 0
            for j, s in zip(form.col_job, form.col_start)
        ])
        if t in kept:
            assert np.array_equal(A[kept[t]], coef)
            assert form.row_upper[kept[t]] == cap[t]
        else:
            # a dropped row can never bind: every job covering t at once still fits
            jobs_covering = {int(j) for j, c in zip(form.col_job, coef) if c}
            assert sum(int(inst.gpus[j]) for j in jobs_covering) <= cap[t]


def test_assignment_rows_only_for_jobs_with_several_starts() -> None:
    inst = Instance("a", 4, 6, (), (Job("one", 2, 6), Job("many", 2, 2), Job("none", 4, 6, deadline=6)))
    form = milp.build(inst)
    # "one" and "none" have one column each, "many" has five
    assign = [int(r) for r, k in zip(form.row_ref, form.row_kind) if k == 0]
    assert [form.groups[g][0] for g in assign] == [1]
    assert form.stats["assignment_rows"] == 1


def test_aggregation_merges_identical_jobs_and_keeps_the_optimum() -> None:
    jobs = [Job(f"same-{k}", 2, 3, 1.5) for k in range(4)] + [Job("other", 3, 2, 2.0)]
    inst = Instance("agg", 4, 8, (Service("s", 1.0, (1, 1, 0, 0, 0, 0, 1, 1)),), tuple(jobs))
    agg = milp.build(inst, aggregate=True)
    plain = milp.build(inst, aggregate=False)
    assert len(agg.groups) == 2 and agg.stats["aggregated_jobs"] == 3
    assert agg.num_cols < plain.num_cols
    assert agg.col_upper.max() == 4
    a = milp.solve(inst, aggregate=True, warm_start=None, time_limit=20)
    b = milp.solve(inst, aggregate=False, warm_start=None, time_limit=20)
    assert a.status == b.status == "optimal"
    assert a.value == pytest.approx(b.value)
    instances.evaluate(inst, a.schedule)


@given(st.integers(0, 10_000))
@settings(max_examples=25, deadline=None)
def test_encode_decode_round_trip(seed: int) -> None:
    inst = tiny(seed)
    form = milp.build(inst)
    rng = np.random.default_rng(seed)
    start = np.full(inst.num_jobs, -1)
    for j in range(inst.num_jobs):  # any usable start, feasible or not together
        cols = np.flatnonzero(form.col_group == next(
            k for k, g in enumerate(form.groups) if j in g.tolist()))
        if cols.size and rng.random() < 0.7:
            start[j] = form.col_start[rng.choice(cols)]
    x = form.encode(start)
    assert x.sum() == np.count_nonzero(start >= 0)
    got, place = form.decode(x)
    assert np.array_equal(got, start) and place is None  # a flat schedule carries no placement


def test_encode_rejects_a_start_without_column() -> None:
    inst = Instance("e", 4, 6, (), (Job("a", 2, 3, release=2),))
    form = milp.build(inst)
    with pytest.raises(ValueError, match="no column"):
        form.encode(np.array([0]))


def test_feasible_agrees_with_the_checker() -> None:
    rng = np.random.default_rng(3)
    for seed in range(12):
        inst = tiny(seed)
        form = milp.build(inst)
        for _ in range(20):
            start = np.full(inst.num_jobs, -1, dtype=np.int64)
            for j in range(inst.num_jobs):
                if rng.random() < 0.6:
                    start[j] = rng.integers(0, inst.horizon)
            try:
                instances.evaluate(inst, instances.Schedule.from_array(inst, start))
                ok = True
            except instances.InfeasibleScheduleError:
                ok = False
            assert form.feasible(start) is ok, (seed, start.tolist())


def test_clique_rows_are_valid_and_keep_the_optimum() -> None:
    inst = instances.generate("hc-training-heavy", seed=0)
    with_q = milp.build(inst, cliques=True)
    assert with_q.stats["clique_rows"] > 0
    a = milp.solve(inst, cliques=True, time_limit=20, mip_gap=0)
    b = milp.solve(inst, cliques=False, time_limit=20, mip_gap=0)
    if a.status == b.status == "optimal":
        assert a.value == pytest.approx(b.value)
    assert a.upper_bound >= b.value - 1e-6 and b.upper_bound >= a.value - 1e-6


def test_large_model_counts() -> None:
    inst = instances.generate("large", seed=0, num_jobs=1200, num_gpus=128)
    form = milp.build(inst, rounding=())
    assert form.num_cols > 50_000
    assert form.A.shape == (form.num_rows, form.num_cols)
    # nonzeros: one per column in an assignment row, one per covered kept slot
    kept = np.zeros(inst.horizon + 1, dtype=np.int64)
    kept[form.row_ref[form.row_kind == 1]] = 1
    csum = np.concatenate([[0], np.cumsum(kept)])
    p = inst.durations[form.col_job]
    covered = csum[form.col_start + p] - csum[form.col_start]
    assign_groups = set(form.row_ref[form.row_kind == 0].tolist())
    in_assign = np.isin(form.col_group, list(assign_groups))
    assert form.nnz == int(covered.sum() + in_assign.sum())
