"""The shipped ServeGen series and the trace family built on it."""

from __future__ import annotations

import numpy as np

import instances
from instances.families import TRACE_GPU_THROUGHPUT_RPS
from instances.servegen import TOTAL_RATE_FILE, hourly_means, read_series, servegen_hourly_rps


def test_hourly_means_skip_zero_windows() -> None:
    rate = np.array([1, 2, 3, 0, 0, 6,   0, 0, 0, 0, 0, 0,   4, 4, 4, 4, 4, 4], dtype=float)
    np.testing.assert_array_equal(hourly_means(rate), [3.0, 3.0, 4.0])
    first_empty = np.array([0, 0, 2, 2, 4, 4], dtype=float)
    np.testing.assert_array_equal(hourly_means(first_empty, windows_per_hour=2), [3.0, 2.0, 4.0])


def test_shipped_series_gives_fourteen_days_of_hours() -> None:
    rate = read_series(TOTAL_RATE_FILE, "total_rate_rps")
    assert rate.shape == (14 * 24 * 6,)
    rps = servegen_hourly_rps()
    assert rps.shape == (14 * 24,) and np.all(rps > 0)
    np.testing.assert_allclose(rps, hourly_means(rate))
    assert rps.min() > 50 and rps.max() < 400  # req/s


def test_trace_family_follows_the_shipped_traffic() -> None:
    rps = servegen_hourly_rps()
    inst = instances.generate("trace-servegen", seed=3, start_day=2)
    expected = np.ceil(rps[48:72] / TRACE_GPU_THROUGHPUT_RPS).astype(int)
    assert inst.services[0].demand == tuple(expected)
    assert inst.meta["throughput_rps"] == TRACE_GPU_THROUGHPUT_RPS
    assert inst.meta["trace_start_day"] == 2
    two = instances.generate("trace-servegen", seed=3, start_day=2, days=2)
    assert two.horizon == 48 and two.services[0].demand[:24] == inst.services[0].demand
