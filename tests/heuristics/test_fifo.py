"""FIFO and FIFO-curve on tiny instances whose schedules are worked out by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import heuristics
from instances import Instance, Job, Service


def _starts(inst: Instance, method: str) -> dict[str, int]:
    return dict(heuristics.solve(inst, method).schedule.starts)


def test_release_ties_keep_list_order() -> None:
    # G=4, no inference. a (2x3) at 0, b (2x2) beside it at 0, c (4x1) waits for a to end at 3.
    inst = Instance("ties", 4, 6, (), (
        Job("a", 2, 3), Job("b", 2, 2), Job("c", 4, 1),
    ))
    assert _starts(inst, "fifo") == {"a": 0, "b": 0, "c": 3}
    res = heuristics.solve(inst, "fifo")
    assert res.value == 2 * 3 + 2 * 2 + 4 * 1
    assert res.metrics.utilization == pytest.approx(14 / 24)


def test_list_position_breaks_ties_not_name() -> None:
    # The same jobs listed in the other order: z (listed first) goes first.
    inst = Instance("order", 2, 4, (), (Job("z", 2, 2), Job("a", 2, 2)))
    assert _starts(inst, "fifo") == {"z": 0, "a": 2}


def test_release_order_before_list_order() -> None:
    inst = Instance("rel", 2, 6, (), (Job("late", 2, 2, release=1), Job("early", 2, 2, release=0)))
    assert _starts(inst, "fifo") == {"early": 0, "late": 2}


def test_no_job_starts_before_an_earlier_submitted_one() -> None:
    # G=3: a (2x2) at 0; b (2x1) must wait to slot 2; c (1x1) would fit at slot 0
    # beside a, but FIFO never lets it start before b (S_last = 2).
    inst = Instance("slast", 3, 5, (), (Job("a", 2, 2), Job("b", 2, 1), Job("c", 1, 1)))
    assert _starts(inst, "fifo") == {"a": 0, "b": 2, "c": 2}


def test_rejected_job_does_not_block_the_queue() -> None:
    # b needs all 3 GPUs for 3 slots and must end by slot 4: after a it could only
    # start at 2 and end at 5, so it is rejected; S_last stays 0 and c starts at 0.
    inst = Instance("reject", 3, 6, (), (
        Job("a", 2, 2), Job("b", 3, 3, deadline=4), Job("c", 1, 1),
    ))
    res = heuristics.solve(inst, "fifo")
    assert dict(res.schedule.starts) == {"a": 0, "c": 0}
    assert res.metrics.jobs_rejected == 1
    assert res.metrics.jobs_run == 2


def test_job_that_never_fits_under_peak_reservation() -> None:
    # Peak demand 3 of 4 GPUs leaves 1 GPU under peak reservation: x (2 GPUs) never fits.
    # Under the curve, 3 GPUs are free at slot 0.
    svc = Service("chat", 2.0, (1, 3, 1, 1))
    inst = Instance("peak", 4, 4, (svc,), (Job("x", 2, 1),))
    fifo = heuristics.solve(inst, "fifo")
    curve = heuristics.solve(inst, "fifo-curve")
    assert dict(fifo.schedule.starts) == {}
    assert dict(curve.schedule.starts) == {"x": 0}
    # Utilization: inference 6 GPU-slots of 16; FIFO-curve adds 2.
    assert fifo.metrics.utilization == pytest.approx(6 / 16)
    assert curve.metrics.utilization == pytest.approx(8 / 16)
    # Peak reserves 3 GPUs in every slot: 12 reserved, 6 used.
    assert fifo.metrics.reserved_idle == 12 - 6
    assert curve.metrics.reserved_idle == 0
    assert fifo.reservation == "peak" and curve.reservation == "curve"


def test_curve_fits_where_peak_cannot_and_deadline_binds() -> None:
    # Demand (2, 2, 0, 0, 2) of 4 GPUs. j (4 GPUs x 2) fits only in slots 2-3 under the
    # curve; its deadline 4 allows exactly that. k (2 x 1, deadline 1) runs at 0.
    svc = Service("s", 1.0, (2, 2, 0, 0, 2))
    inst = Instance("dl", 4, 5, (svc,), (
        Job("j", 4, 2, deadline=4), Job("k", 2, 1, deadline=1),
    ))
    assert _starts(inst, "fifo-curve") == {"j": 2}  # k must start >= S_last = 2 > its deadline
    assert _starts(inst, "fifo") == {"k": 0}  # peak leaves 2 GPUs: j never fits, k at 0


def test_zero_demand_service_reserves_nothing() -> None:
    svc = Service("idle", 5.0, (0, 0, 0))
    inst = Instance("zero", 2, 3, (svc,), (Job("a", 2, 3),))
    for method in ("fifo", "fifo-curve"):
        res = heuristics.solve(inst, method)
        assert dict(res.schedule.starts) == {"a": 0}
        assert res.metrics.utilization == 1.0
        assert res.metrics.reserved_idle == 0
        assert res.metrics.total_value == res.value  # the service served nothing


def test_fractional_priorities_and_slot_hours() -> None:
    svc = Service("chat", 2.5, (1, 1, 0, 0))
    inst = Instance("frac", 3, 4, (svc,), (
        Job("a", 2, 2, priority=1.5, release=1), Job("b", 1, 1, priority=0.25),
    ), slot_hours=0.5)
    res = heuristics.solve(inst, "fifo")  # peak 1 leaves 2 GPUs
    assert dict(res.schedule.starts) == {"b": 0, "a": 1}
    assert res.value == pytest.approx(1.5 * 2 * 2 * 0.5 + 0.25 * 1 * 1 * 0.5)
    assert res.metrics.total_value == pytest.approx(res.value + 2.5 * 2 * 0.5)
    # Waits: b 0, a 0 -> weighted mean 0.
    assert res.metrics.weighted_mean_wait == 0.0


def test_weighted_mean_wait() -> None:
    inst = Instance("wait", 1, 6, (), (
        Job("a", 1, 2, priority=3.0), Job("b", 1, 2, priority=1.0),
    ))
    res = heuristics.solve(inst, "fifo")
    assert dict(res.schedule.starts) == {"a": 0, "b": 2}
    assert res.metrics.weighted_mean_wait == pytest.approx((3 * 0 + 1 * 2) / 4)


def test_nothing_runs_gives_nan_wait_and_zero_value() -> None:
    inst = Instance("none", 2, 2, (), (Job("a", 2, 2, release=1),))
    res = heuristics.solve(inst, "fifo")  # ends at 3 > horizon 2
    assert res.value == 0 and res.metrics.jobs_run == 0
    assert math.isnan(res.metrics.weighted_mean_wait)


def test_fifo_result_is_a_pandas_row() -> None:
    inst = Instance("row", 2, 3, (), (Job("a", 1, 1),))
    df = pd.DataFrame([heuristics.solve(inst, m).to_row() for m in ("fifo", "fifo-curve")])
    assert list(df["method"]) == ["fifo", "fifo-curve"]
    assert {"value", "utilization", "upper_bound", "runtime_s", "jobs_run"} <= set(df.columns)


def test_unknown_method_and_parameter() -> None:
    inst = Instance("u", 2, 3, (), (Job("a", 1, 1),))
    with pytest.raises(ValueError, match="method"):
        heuristics.solve(inst, "no-such-method")
    with pytest.raises(ValueError, match="params"):
        heuristics.solve(inst, "fifo", bogus=1)
    with pytest.raises(ValueError, match="params: sampling"):
        heuristics.solve(inst, "sampling", passes="many")
