"""Building blocks of the families: job sizes by kind, daily demand curves, job draws,
each on arrays from one :class:`numpy.random.Generator` (the same stream, the same jobs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..model import JOB_KINDS, Job

__all__ = ["KIND_SPECS", "RESOLVED", "KindSpec", "daily_curve", "draw_jobs", "expected_job_area"]

RESOLVED = "resolved_params"
"""``meta`` key where a family gives its own spelling of a parameter it was given (the Philly
cluster ``6214e9`` that the command line read as a number): :func:`instances.generate`
names the instance and records its parameters with it, then drops the key."""


@dataclass(frozen=True)
class KindSpec:
    """How jobs of one kind are drawn: GPU counts and their probabilities, a duration range
    in hours and a priority range (both uniform; priorities rounded to two decimals),
    and the job-name prefix (``train-3``).
    """

    gpus: tuple[int, ...]
    gpus_p: tuple[float, ...]
    hours: tuple[float, float]
    priority: tuple[float, float]
    prefix: str


KIND_SPECS: dict[str, KindSpec] = {
    "training": KindSpec((2, 4, 8), (0.35, 0.45, 0.20), (4.0, 12.0), (1.0, 5.0), "train"),
    "batch_inference": KindSpec((1, 2, 4), (0.40, 0.40, 0.20), (1.0, 4.0), (0.5, 3.0), "binf"),
    "quantization": KindSpec((1, 2), (0.60, 0.40), (1.0, 3.0), (0.5, 2.0), "quant"),
    "other": KindSpec((1, 2, 4), (0.50, 0.30, 0.20), (1.0, 6.0), (0.5, 2.0), "job"),
}
"""Default job sizes by kind (a family may override some kinds)."""


def daily_curve(
    horizon: int,
    slot_hours: float,
    trough: float,
    peak: float,
    *,
    trough_hour: float = 4.0,
    peak_hour: float = 12.0,
    shift_hours: float = 0.0,
    noise: float = 0.0,
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """An integer daily demand curve, lowest at ``trough_hour``, highest at ``peak_hour``:
    piecewise linear through trough, peak and an evening shoulder, every 24 hours,
    rounded and clipped to ``[trough, peak]``, with optional multiplicative noise.

    Raises
    ------
    ValueError
        When ``noise > 0`` and no ``rng`` is given.
    """
    hours = (np.arange(horizon) * slot_hours + shift_hours) % 24.0
    mid = 0.5 * (trough + peak)
    evening = (peak_hour + 6.0) % 24.0
    anchors_h = np.array([trough_hour, peak_hour, evening, trough_hour + 24.0])
    anchors_v = np.array([trough, peak, 0.5 * (mid + peak), trough])
    order = np.argsort(anchors_h % 24.0)
    xh = anchors_h[order] % 24.0
    xv = anchors_v[order]
    xh = np.concatenate([xh - 24.0, xh, xh + 24.0])
    xv = np.concatenate([xv, xv, xv])
    curve = np.interp(hours, xh, xv)
    if noise > 0:
        if rng is None:
            raise ValueError("rng: needed when noise > 0")
        curve = curve * (1.0 + noise * rng.standard_normal(horizon))
    return np.clip(np.rint(curve), math.floor(trough), math.ceil(peak)).astype(np.int64)


def draw_jobs(
    rng: np.random.Generator,
    n: int,
    *,
    mix: dict[str, float],
    num_gpus: int,
    horizon: int,
    slot_hours: float,
    release_hours: float,
    gpu_scale: int = 1,
    deadline_fraction: float = 0.0,
    deadline_slack: tuple[float, float] = (1.3, 3.0),
    priority_scale: dict[str, float] | None = None,
    bursts: int = 0,
    specs: dict[str, KindSpec] | None = None,
) -> list[Job]:
    """Draw ``n`` jobs as arrays, sorted by release (submission order).

    Parameters
    ----------
    mix
        Kind -> share of the jobs.
    num_gpus, horizon, slot_hours
        GPU counts are capped at ``num_gpus``, durations at ``horizon``.
    release_hours
        Jobs are submitted over the first ``release_hours`` hours.
    gpu_scale
        Multiplier of every GPU count (large pools).
    deadline_fraction, deadline_slack
        Share of jobs with a deadline, at ``release + duration * slack`` (slack
        uniform in the range).
    priority_scale
        Kind -> multiplier of its priorities.
    bursts
        If positive, releases gather around this many burst slots.
    specs
        Overrides of :data:`KIND_SPECS`.
    """
    specs = {**KIND_SPECS, **(specs or {})}
    kinds = [k for k in JOB_KINDS if mix.get(k, 0.0) > 0]
    p = np.array([mix[k] for k in kinds], dtype=float)
    kind_idx = rng.choice(len(kinds), size=n, p=p / p.sum())
    gpus = np.empty(n, dtype=np.int64)
    dur = np.empty(n, dtype=np.int64)
    prio = np.empty(n, dtype=float)
    for k, kind in enumerate(kinds):
        spec = specs[kind]
        mask = kind_idx == k
        m = int(mask.sum())
        gpus[mask] = rng.choice(np.array(spec.gpus), size=m, p=np.array(spec.gpus_p)) * gpu_scale
        hours = rng.uniform(spec.hours[0], spec.hours[1], size=m)
        dur[mask] = np.maximum(1, np.rint(hours / slot_hours)).astype(np.int64)
        scale = (priority_scale or {}).get(kind, 1.0)
        prio[mask] = np.round(scale * rng.uniform(spec.priority[0], spec.priority[1], size=m), 2)
    gpus = np.minimum(gpus, num_gpus)
    dur = np.minimum(dur, horizon)
    prio = np.maximum(prio, 0.01)
    release_slots = max(1, min(horizon, round(release_hours / slot_hours)))
    if bursts > 0:
        centers = rng.integers(0, release_slots, size=bursts)
        rel = centers[rng.integers(0, bursts, size=n)] + rng.integers(0, 2, size=n)
    else:
        rel = rng.integers(0, release_slots, size=n)
    rel = np.clip(rel, 0, horizon - 1)
    has_dl = rng.random(n) < deadline_fraction
    slack = rng.uniform(deadline_slack[0], deadline_slack[1], size=n)
    dl = rel + np.ceil(dur * slack).astype(np.int64)
    dl = np.minimum(dl, horizon)
    has_dl &= dl >= rel + dur
    order = np.argsort(rel, kind="stable")
    counters = dict.fromkeys(kinds, 0)
    jobs = []
    for i in order:
        kind = kinds[kind_idx[i]]
        counters[kind] += 1
        jobs.append(
            Job(
                name=f"{specs[kind].prefix}-{counters[kind]}",
                gpus=int(gpus[i]),
                duration=int(dur[i]),
                priority=float(prio[i]),
                kind=kind,
                release=int(rel[i]),
                deadline=int(dl[i]) if has_dl[i] else None,
            )
        )
    return jobs


def expected_job_area(
    mix: dict[str, float], num_gpus: int, slot_hours: float = 1.0,
    specs: dict[str, KindSpec] | None = None, gpu_scale: int = 1,
) -> float:
    """Expected GPU-slots of one job drawn by :func:`draw_jobs` with this mix
    (up to the rounding of durations to whole slots)."""
    specs = {**KIND_SPECS, **(specs or {})}
    total = sum(mix.values())
    area = 0.0
    for kind, share in mix.items():
        spec = specs[kind]
        g = sum(p * min(num_gpus, gpu_scale * x) for x, p in zip(spec.gpus, spec.gpus_p))
        slots = max(1.0, 0.5 * (spec.hours[0] + spec.hours[1]) / slot_hours)
        area += share / total * g * slots
    return area
