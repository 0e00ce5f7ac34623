"""The flow heuristics of docs/flow.md: the held scheme at Lagrangian prices, the block search on
the serial order, and ``best`` under flow: every schedule feasible (the checker's flow), never
below the brute-force optimum, never worse than where it started; the bound of the held search a
lower bound on every feasible flow, recomputed from its multipliers.
"""

from __future__ import annotations

import numpy as np
import pytest
from brute import brute_force, flow_of, tiny_instance
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import instances
from heuristics import start_value
from heuristics.flow_search import flow_local_search
from heuristics.held import held_instance, held_starts, left_shift
from heuristics.listsched import parallel_starts
from heuristics.rules import order_by
from instances import Instance, Schedule
from instances.objective import report, report_bound
from matheuristics.best import best
from matheuristics.held import held_search


def flow_instance(seed: int, n: int = 6) -> Instance:
    return tiny_instance(seed, n=n).replace(objective="flow")


def checked_flow(inst: Instance, start: np.ndarray) -> float:
    """The checker's F of a start array (feasibility checked)."""
    sched = Schedule.from_array(inst, start)
    metrics = instances.evaluate(inst, sched)
    assert metrics.value == pytest.approx(flow_of(inst, dict(sched.starts)), rel=1e-12)
    return metrics.value


@given(st.integers(0, 100_000), st.integers(2, 6), st.floats(0.0, 3.0))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_held_starts_feasible_and_not_below_optimum(seed: int, n: int, price: float) -> None:
    inst = flow_instance(seed, n)
    opt, _ = brute_force(inst)
    lam = np.random.default_rng(seed).uniform(0, price, inst.horizon)
    start, name = held_starts(inst, lam)
    assert name.startswith("held order=")
    assert checked_flow(inst, start) >= opt - 1e-9 * max(opt, 1.0)


@given(st.integers(0, 100_000), st.integers(2, 6))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_left_shift_moves_no_job_later(seed: int, n: int) -> None:
    inst = flow_instance(seed, n)
    start = parallel_starts(inst, order_by(inst, "sjf"))
    shifted = left_shift(inst, start)
    run = start >= 0
    assert (shifted[run] >= 0).all() and (shifted[run] <= start[run]).all()
    assert checked_flow(inst, shifted) <= checked_flow(inst, start) + 1e-9


def test_held_instance_only_delays_releases() -> None:
    inst = flow_instance(3, 6)
    held = held_instance(inst, inst.releases + 100)  # clipped to the last feasible start
    assert (held.releases >= inst.releases).all()
    assert (held.releases <= np.maximum(inst.releases, inst.deadlines - inst.durations)).all()
    assert held_instance(inst, inst.releases - 5).releases.tolist() == inst.releases.tolist()


@given(st.integers(0, 100_000), st.integers(2, 6))
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_flow_search_never_worse_and_feasible(seed: int, n: int) -> None:
    inst = flow_instance(seed, n)
    opt, _ = brute_force(inst)
    start = parallel_starts(inst, order_by(inst, "priority"))
    out, tries, better = flow_local_search(inst, start, time_limit=None, iterations=50, seed=seed)
    assert 0 <= better <= tries <= 50
    f = checked_flow(inst, out)
    assert f <= checked_flow(inst, start) + 1e-9
    assert f >= opt - 1e-9 * max(opt, 1.0)


def test_flow_search_needs_a_budget() -> None:
    inst = flow_instance(0)
    with pytest.raises(ValueError, match="time_limit, iterations"):
        flow_local_search(inst, np.full(inst.num_jobs, -1), time_limit=None)


@given(st.integers(0, 100_000), st.integers(2, 6))
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_held_search_bound_below_every_feasible_flow(seed: int, n: int) -> None:
    inst = flow_instance(seed, n)
    opt, _ = brute_force(inst)
    start = parallel_starts(inst, order_by(inst, "sjf"))
    run = held_search(inst, start, time_limit=0.3, every=5)
    assert start_value(inst, run.start) >= start_value(inst, start)
    f = checked_flow(inst, run.start)
    assert run.bound is not None
    lower = report_bound(inst, instances.lagrangian_value(inst, run.bound.multipliers))
    assert lower <= opt + 1e-9 * max(opt, 1.0) and opt <= f + 1e-9
    assert report_bound(inst, run.bound.value) == pytest.approx(lower)


def test_best_under_flow_runs_the_flow_phases() -> None:
    inst = flow_instance(7, 6)
    opt, _ = brute_force(inst)
    res = best(inst, time_limit=3.0)
    assert "held search" in res.message and "flow search" in res.message
    assert res.value >= opt - 1e-9 * max(opt, 1.0)
    assert res.value == pytest.approx(report(inst, start_value(inst, res.schedule.to_array(inst))))


def test_best_under_value_has_no_flow_phases() -> None:
    res = best(tiny_instance(7, n=6), time_limit=1.0)
    assert "held search" not in res.message


@given(st.integers(0, 100_000), st.integers(2, 6))
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_flow_search_chunk_changes_no_schedule(seed: int, n: int) -> None:
    inst = flow_instance(seed, n)
    start = parallel_starts(inst, order_by(inst, "priority"))
    a = flow_local_search(inst, start, time_limit=None, iterations=30, seed=seed, chunk=16)
    b = flow_local_search(inst, start, time_limit=None, iterations=30, seed=seed, chunk=2)
    assert a[0].tolist() == b[0].tolist() and a[1:] == b[1:]


def test_held_search_without_time_for_the_search_decodes_once() -> None:
    inst = flow_instance(5, 6)
    start = parallel_starts(inst, order_by(inst, "sjf"))
    run = held_search(inst, start, time_limit=0.0)
    assert run.bound is None and run.calls == 1
    assert start_value(inst, run.start) >= start_value(inst, start)
