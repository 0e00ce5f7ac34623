"""The model's validation rules, its derived arrays, and the checker's metrics."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from instances import (
    InfeasibleScheduleError,
    Instance,
    Job,
    Schedule,
    Service,
    evaluate,
    gain,
    gap,
)


def _inst(**kw):
    base = {"name": "t", "num_gpus": 4, "horizon": 4, "services": (Service("s", 1.0, (1, 2, 1, 0)),),
                "jobs": (Job("a", 2, 2),)}
    base.update(kw)
    return Instance(**base)


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: _inst(num_gpus=0), "num_gpus"),
        (lambda: _inst(num_gpus=2.5), "num_gpus"),
        (lambda: _inst(horizon=0), "horizon"),
        (lambda: _inst(slot_hours=0), "slot_hours"),
        (lambda: _inst(slot_hours=float("nan")), "slot_hours"),
        (lambda: _inst(services=(Service("s", 1.0, (1, 2, 1)),)), "services[0].demand"),
        (lambda: _inst(services=(Service("s", 1.0, (1, 5, 1, 0)),)), "services[0].demand[1]"),
        (lambda: _inst(services=(Service("a", 1.0, (3, 0, 0, 0)), Service("b", 1.0, (2, 0, 0, 0)))),
         "summed demand at slot 0"),
        (lambda: _inst(services=(Service("a", 1.0, (0,) * 4), Service("a", 1.0, (0,) * 4))),
         "services[1].name"),
        (lambda: Service("s", 0.0, (1,)), "priority"),
        (lambda: Service("s", 1.0, (1, -1)), "demand[1]"),
        (lambda: _inst(jobs=(Job("a", 5, 1),)), "jobs[0].gpus"),
        (lambda: Job("a", 0, 1), "gpus"),
        (lambda: Job("a", 1, 0), "duration"),
        (lambda: Job("a", 1, -2), "duration"),
        (lambda: Job("a", 1, 1, priority=-1), "priority"),
        (lambda: Job("a", 1, 1, priority=float("inf")), "priority"),
        (lambda: Job("a", 1, 1, kind="gaming"), "kind"),
        (lambda: Job("a", 1, 1, release=-1), "release"),
        (lambda: Job("a", 1, 3, release=2, deadline=4), "deadline"),
        (lambda: Job("a", True, 1), "gpus"),
        (lambda: Job("", 1, 1), "name"),
        (lambda: _inst(jobs=(Job("a", 1, 1, release=4),)), "jobs[0].release"),
        (lambda: _inst(jobs=(Job("a", 1, 1, deadline=5),)), "jobs[0].deadline"),
        (lambda: _inst(jobs=(Job("a", 1, 1), Job("a", 1, 1))), "jobs[1].name"),
        (lambda: _inst(horizon=10**9), "horizon"),
    ],
)
def test_validation_names_the_field(build, field) -> None:
    with pytest.raises(ValueError, match=field.replace("[", r"\[").replace("]", r"\]")):
        build()


def test_instance_is_immutable_and_arrays_read_only() -> None:
    inst = _inst()
    with pytest.raises(dataclasses.FrozenInstanceError):
        inst.num_gpus = 8  # type: ignore[misc]
    with pytest.raises(ValueError):
        inst.gpus[0] = 3
    assert inst.total_demand.tolist() == [1, 2, 1, 0]
    assert inst.deadlines.tolist() == [4]
    cap = inst.batch_capacity("peak")
    cap[0] = 0  # a fresh writable copy; the instance is untouched
    assert inst.batch_capacity("peak").tolist() == [2, 2, 2, 2]
    assert inst.batch_capacity("curve").tolist() == [3, 2, 3, 4]
    changed = inst.replace(num_gpus=8)
    assert changed.batch_capacity("curve").tolist() == [7, 6, 7, 8] and inst.num_gpus == 4


def test_peak_capacity_never_negative() -> None:
    # Peaks at different slots sum to 6 > 4: the static reservation leaves nothing.
    svcs = (Service("a", 1.0, (3, 0)), Service("b", 1.0, (0, 3)))
    inst = Instance("p", 4, 2, svcs, ())
    assert inst.batch_capacity("peak").tolist() == [0, 0]
    m = evaluate(inst, Schedule("p", {}), "peak")
    assert m.reserved_idle == 2 * 4 - 6  # reservation capped at the pool


def test_checker_metrics_by_hand() -> None:
    svc = Service("chat", 2.0, (1, 1, 1, 0))
    inst = Instance("m", 4, 4, (svc,), (
        Job("a", 2, 2, priority=1.5, release=0), Job("b", 1, 3, priority=1.0, release=1),
        Job("c", 4, 1, priority=9.0),
    ), slot_hours=2.0)
    m = evaluate(inst, Schedule("m", {"a": 0, "b": 1}), "peak")
    assert m.value == pytest.approx(1.5 * 4 * 2 + 1.0 * 3 * 2)
    assert m.utilization == pytest.approx((3 + 4 + 3) / 16)
    assert m.reserved_idle == 4 * 1 - 3
    assert (m.jobs_run, m.jobs_rejected) == (2, 1)
    assert m.weighted_mean_wait == pytest.approx(0.0)
    assert m.total_value == pytest.approx(m.value + 2.0 * 3 * 2)
    assert (m.inference_gpu_slots, m.batch_gpu_slots, m.capacity_gpu_slots) == (3, 7, 16)
    late = evaluate(inst, Schedule("m", {"a": 2}), "curve")
    assert late.weighted_mean_wait == pytest.approx(2.0)
    assert late.reserved_idle == 0


@pytest.mark.parametrize(
    ("starts", "needle"),
    [
        ({"a": 0, "c": 0}, r"slot 0: 1 GPU\(s\) over capacity"),  # 4 batch + 1 inference > 4
        ({"b": 0}, "before its release 1"),
        ({"a": 3}, "after its horizon 4"),
        ({"zz": 0}, "no job of that name"),
    ],
)
def test_checker_rejects(starts, needle) -> None:
    svc = Service("chat", 2.0, (1, 2, 1, 0))
    inst = Instance("m", 4, 4, (svc,), (Job("a", 2, 2), Job("b", 1, 3, release=1), Job("c", 2, 1)))
    with pytest.raises(InfeasibleScheduleError, match=needle) as err:
        evaluate(inst, Schedule("m", starts))
    assert isinstance(err.value, ValueError)


def test_checker_boundary_touching_is_legal_and_one_over_is_not() -> None:
    inst = Instance("b", 2, 4, (), (Job("a", 2, 2), Job("b", 2, 2), Job("c", 1, 1)))
    m = evaluate(inst, Schedule("b", {"a": 0, "b": 2}))
    assert m.utilization == 1.0
    with pytest.raises(InfeasibleScheduleError) as err:
        evaluate(inst, Schedule("b", {"a": 0, "b": 2, "c": 3}))
    assert (err.value.slot, err.value.amount) == (3, 1)


def test_deadline_violation_and_enforced_reservation() -> None:
    svc = Service("s", 1.0, (3, 0, 0, 0))
    inst = Instance("d", 4, 4, (svc,), (Job("a", 1, 2, deadline=2), Job("w", 2, 1)))
    with pytest.raises(InfeasibleScheduleError, match="deadline 2"):
        evaluate(inst, Schedule("d", {"a": 1}))
    # w (2 GPUs) at slot 1: free under the curve (4 GPUs idle), but the peak
    # reservation holds 3 GPUs all day and leaves only 1.
    wide = Schedule("d", {"a": 0, "w": 1})
    assert evaluate(inst, wide, "peak").jobs_run == 2
    with pytest.raises(InfeasibleScheduleError, match="peak-reserved") as err:
        evaluate(inst, wide, "peak", enforce_reservation=True)
    assert (err.value.job, err.value.slot, err.value.amount) == ("w", 1, 2)  # a (1) and w (2) at slot 1, limit 1


def test_gain_and_gap() -> None:
    inst = Instance("g", 2, 2, (), (Job("a", 1, 2), Job("b", 1, 2)))
    base = evaluate(inst, Schedule("g", {"a": 0}))
    better = evaluate(inst, Schedule("g", {"a": 0, "b": 0}))
    g = gain(better, base)
    assert g["utilization_pp"] == pytest.approx(50.0)
    assert g["value_pct"] == pytest.approx(100.0)
    empty = evaluate(inst, Schedule("g", {}))
    assert gain(better, empty)["value_pct"] is None  # V_fifo = 0: undefined, not a division
    # With inference served, the total-value gain is diluted by the inference value.
    svc = Service("s", 2.0, (1, 1))
    inst2 = Instance("g2", 3, 2, (svc,), (Job("a", 1, 2), Job("b", 1, 2)))
    g2 = gain(evaluate(inst2, Schedule("g2", {"a": 0, "b": 0})),
              evaluate(inst2, Schedule("g2", {"a": 0})))
    assert g2["value_pct"] == pytest.approx(100.0)  # V: 2 -> 4
    assert g2["total_value_pct"] == pytest.approx(100.0 * (8 - 6) / 6)  # 2+4 -> 4+4
    assert gap(9.0, 10.0) == pytest.approx(0.1)
    assert gap(5.0, None) is None
    assert gap(0.0, 0.0) == 0.0


def test_schedule_round_trip_arrays() -> None:
    inst = Instance("r", 2, 4, (), (Job("a", 1, 1), Job("b", 1, 1), Job("c", 1, 1)))
    start = np.array([2, -1, 0])
    sched = Schedule.from_array(inst, start)
    assert dict(sched.starts) == {"a": 2, "c": 0}
    assert sched.to_array(inst).tolist() == [2, -1, 0]
    with pytest.raises(ValueError, match="starts"):
        Schedule("r", {"a": 1.5})
