"""The families' building blocks: daily curves and job draws."""

from __future__ import annotations

import numpy as np
import pytest

from instances import JOB_KINDS
from instances.families.generators import KIND_SPECS, daily_curve, draw_jobs, expected_job_area


def test_daily_curve_shape() -> None:
    c = daily_curve(48, 1.0, 2, 6)
    assert c[4] == 2 and c[12] == 6 and c[28] == 2 and c[36] == 6
    assert c.min() == 2 and c.max() == 6
    quarter = daily_curve(96, 0.25, 1, 5)
    assert quarter[16] == 1 and quarter[48] == 5  # 4 AM and noon in 15-minute slots


def test_daily_curve_noise_needs_a_stream_and_stays_in_range() -> None:
    with pytest.raises(ValueError, match="rng"):
        daily_curve(24, 1.0, 2, 6, noise=0.1)
    c = daily_curve(240, 1.0, 2, 6, noise=0.5, rng=np.random.default_rng(0))
    assert c.min() >= 2 and c.max() <= 6 and c.dtype == np.int64


def test_draw_jobs_respects_pool_window_and_order() -> None:
    rng = np.random.default_rng(1)
    jobs = draw_jobs(rng, 400, mix={"training": 0.5, "quantization": 0.5}, num_gpus=4,
                     horizon=20, slot_hours=1.0, release_hours=10.0, deadline_fraction=0.5)
    assert len(jobs) == 400
    assert {j.kind for j in jobs} == {"training", "quantization"}
    assert all(1 <= j.gpus <= 4 and 1 <= j.duration <= 20 for j in jobs)
    assert all(0 <= j.release < 10 for j in jobs)
    releases = [j.release for j in jobs]
    assert releases == sorted(releases)  # submission order
    with_dl = [j for j in jobs if j.deadline is not None]
    assert with_dl and all(j.release + j.duration <= j.deadline <= 20 for j in with_dl)
    assert len({j.name for j in jobs}) == 400
    assert all(j.name.split("-")[0] in {"train", "quant"} for j in jobs)


def test_expected_job_area_matches_draws() -> None:
    mix = {"training": 0.4, "batch_inference": 0.3, "quantization": 0.2, "other": 0.1}
    assert set(KIND_SPECS) == set(JOB_KINDS)
    jobs = draw_jobs(np.random.default_rng(2), 20_000, mix=mix, num_gpus=16, horizon=1000,
                     slot_hours=1.0, release_hours=10.0)
    mean = np.mean([j.gpus * j.duration for j in jobs])
    assert mean == pytest.approx(expected_job_area(mix, 16), rel=0.03)
