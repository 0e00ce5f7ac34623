"""The exact methods under the ``flow`` objective (section 15): the time-indexed MILP on HiGHS and
CP-SAT against brute force (which computes ``F`` from its definition), flat, on nodes and on
version 3; the lower bound never above a feasible flow; a hand-worked censoring case.
"""

from __future__ import annotations

import pytest
from brute import brute_force, flow_of, tiny_instance
from brute_nodes import brute_force_nodes, tiny_node_instance
from brute_v3 import brute_force_v3, tiny_v3_instance
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import instances
import milp
from instances import Instance, Job, Schedule


def flow(inst: Instance) -> Instance:
    return inst.replace(objective="flow")


def check_flow(inst: Instance, res: instances.Result, best: float) -> None:
    """An optimal flow result: its value is the checker's F, equal to brute force, bound below it."""
    assert res.objective == "flow"
    again = instances.evaluate(inst, res.schedule)
    assert again.value == pytest.approx(res.value, abs=1e-9)
    assert again.flow_hours == pytest.approx(flow_of(inst, dict(res.schedule.starts)), rel=1e-12)
    assert res.status == "optimal", res.message
    assert res.value == pytest.approx(best, rel=1e-9, abs=1e-9)
    assert res.bound is not None and res.bound <= res.value + 1e-9 * res.value
    assert res.bound == pytest.approx(best, rel=1e-6)


@given(st.integers(0, 100_000), st.integers(2, 6))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_flat_milp_and_cpsat_equal_brute_force(seed: int, n: int) -> None:
    inst = flow(tiny_instance(seed, n=n))
    best, schedule = brute_force(inst)
    assert instances.evaluate(inst, schedule).value == pytest.approx(best)
    for backend in ("highs", "cpsat"):
        check_flow(inst, milp.solve(inst, backend=backend, time_limit=20, mip_gap=0), best)


@given(st.integers(0, 100_000), st.sampled_from([(2, 2), (4, 2), (2, 2, 2)]), st.integers(2, 5))
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_node_milp_and_cpsat_equal_brute_force(seed: int, shape: tuple, n: int) -> None:
    inst = flow(tiny_node_instance(seed, n=n, shape=shape))
    best, schedule = brute_force_nodes(inst)
    assert instances.evaluate(inst, schedule).value == pytest.approx(best)
    for backend in ("highs", "cpsat"):
        check_flow(inst, milp.solve(inst, backend=backend, time_limit=20, mip_gap=0), best)


@given(st.integers(0, 100_000), st.sampled_from([(2, 2), (2, 1, 1), (4,)]), st.integers(2, 5))
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_v3_milp_and_cpsat_equal_brute_force(seed: int, shape: tuple, n: int) -> None:
    inst = flow(tiny_v3_instance(seed, n=n, shape=shape, T=5, shared=0.6))
    best, schedule = brute_force_v3(inst)
    assert instances.evaluate(inst, schedule).value == pytest.approx(best)
    for backend in ("highs", "cpsat"):
        check_flow(inst, milp.solve(inst, backend=backend, time_limit=20, mip_gap=0), best)


def test_censoring_by_hand() -> None:
    # G = 2, T = 4, h = 0.5. a (2 GPUs, p 2, r 0, w 1); b (2 GPUs, p 2, r 1, w 3); c (1 GPU,
    # p 3, r 0, w 2, deadline 3: it can only start at 0).
    inst = Instance("censor", 2, 4, (), (
        Job("a", 2, 2, 1.0, release=0), Job("b", 2, 2, 3.0, release=1),
        Job("c", 1, 3, 2.0, release=0, deadline=3)), slot_hours=0.5, objective="flow")
    # a at 0 ends 2 (flow 2 slots), b at 2 ends 4 (flow 3 slots), c not run: ends T + p = 7.
    m = instances.evaluate(inst, Schedule("censor", {"a": 0, "b": 2}))
    assert m.flow_hours == pytest.approx((1 * 2 + 3 * 3 + 2 * 7) * 0.5)  # 12.5
    assert m.value == m.flow_hours and m.objective == "flow"
    assert m.jobs_censored == 1
    assert m.mean_jct_hours == pytest.approx((2 + 3 + 7) * 0.5 / 3)
    assert m.batch_value == pytest.approx((1 * 2 * 2 + 3 * 2 * 2) * 0.5)  # V of the same schedule
    # nothing run: every job censored
    empty = instances.evaluate(inst, Schedule("censor", {}))
    assert empty.value == pytest.approx((1 * 6 + 3 * 5 + 2 * 7) * 0.5)
    # the optimum: c at 0 (slots 0-2) leaves one GPU, so a and b (2 GPUs each) could start at 3
    # at the earliest and end past T: both censored, F = (2*3 + 1*6 + 3*5) * 0.5 = 13.5. b alone
    # at 1: (1*6 + 3*2 + 2*7) * 0.5 = 13. a at 0 and b at 2 (c censored) give 12.5, the least.
    best, _ = brute_force(inst)
    res = milp.solve(inst, time_limit=10, mip_gap=0)
    assert res.value == pytest.approx(best) and res.status == "optimal"
    assert best == pytest.approx(12.5)  # a at 0, b at 2, c censored (c at 0 would cost more)


def test_objective_field_errors_name_it() -> None:
    with pytest.raises(ValueError, match=r"^objective: must be one of value, flow, got 'jct'"):
        Instance("x", 1, 2, objective="jct")
    data = instances.instance_to_dict(Instance("x", 1, 2))
    data["objective"] = "flow-time"
    with pytest.raises(ValueError, match="objective"):
        instances.instance_from_dict(data)


def test_value_files_unchanged_and_flow_round_trips() -> None:
    inst = tiny_instance(3)
    assert "objective" not in instances.instance_to_dict(inst)
    f = flow(inst)
    back = instances.instance_from_dict(instances.instance_to_dict(f))
    assert back.objective == "flow" and back == f
