"""Seeded, deterministic instance families (PROBLEM.md section 6).

``generate(family, seed)`` gives the same :class:`Instance` (and so the same
file bytes) for the same family, seed and parameters. Every random draw comes
from one :class:`numpy.random.Generator` seeded with ``seed``, and jobs are
drawn as arrays, so even the 10,000-job ``large`` family builds in well under
a second.

Job sizes by kind (GPUs scaled with the pool for large pools, hours turned into
slots by ``slot_hours``) are in :data:`KIND_SPECS`. Every family documents its
defaults in its generator's docstring; keyword parameters override them.
"""

from __future__ import annotations

import csv
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np

from .model import JOB_KINDS, Instance, Job, Service, check_size_params

__all__ = [
    "FAMILIES",
    "KIND_SPECS",
    "SEED_SCENARIOS",
    "TRACE_GPU_THROUGHPUT_RPS",
    "daily_curve",
    "generate",
    "servegen_hourly_rps",
]

TRACE_GPU_THROUGHPUT_RPS = 40.0
"""Requests per second one GPU serves in the trace-driven family (stated assumption)."""


@dataclass(frozen=True)
class KindSpec:
    """How jobs of one kind are drawn."""

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
    """An integer daily demand curve: lowest at ``trough_hour``, highest at ``peak_hour``.

    Piecewise linear through the trough, the peak and a shoulder in the evening,
    repeated every 24 hours, rounded to whole GPUs and clipped to
    ``[trough, peak]``. Optional multiplicative noise (``rng`` required).
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


def _draw_jobs(
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

    ``specs`` overrides :data:`KIND_SPECS` for some kinds."""
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
    """Expected GPU-slots of one job drawn by :func:`_draw_jobs` with this mix
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


# ---------------------------------------------------------------- families
SEED_TRAINING_SPECS: dict[str, KindSpec] = {
    "training": KindSpec((3, 4, 6), (0.30, 0.55, 0.15), (3.0, 8.0), (1.0, 5.0), "train"),
    "batch_inference": KindSpec((1, 2), (0.5, 0.5), (1.0, 3.0), (0.5, 3.0), "binf"),
    "quantization": KindSpec((1,), (1.0,), (1.0, 2.0), (0.5, 2.0), "quant"),
}
"""Job sizes of the seed test: training blocks of 3-6 GPUs (wider than what the
peak reservation leaves), small inference and quantization jobs."""


def _seed_training_heavy(rng: np.random.Generator, *, num_jobs: int = 14) -> Instance:
    """8 GPUs, 24 hourly slots; one chat service from 2 GPUs at 4 AM to 6 at noon;
    training-heavy batch mix (70% training blocks of 3-6 GPUs, 20% batch inference,
    10% quantization) submitted over the first 10 hours."""
    G, T = 8, 24
    demand = daily_curve(T, 1.0, 2, 6)
    jobs = _draw_jobs(
        rng, num_jobs,
        mix={"training": 0.7, "batch_inference": 0.2, "quantization": 0.1},
        num_gpus=G, horizon=T, slot_hours=1.0, release_hours=10.0, specs=SEED_TRAINING_SPECS,
    )
    return Instance("seed-training-heavy", G, T, (Service("chat", 3.0, tuple(demand)),), tuple(jobs))


def _contention(
    rng: np.random.Generator,
    name: str,
    *,
    num_gpus: int,
    horizon: int,
    num_jobs: int,
    mix: dict[str, float],
    services: list[tuple[str, float, float, float, float]],
    release_hours: float,
    deadline_fraction: float = 0.0,
    bursts: int = 0,
) -> Instance:
    svcs = []
    for sname, prio, trough, peak, shift in services:
        d = daily_curve(horizon, 1.0, trough, peak, shift_hours=shift, noise=0.08, rng=rng)
        svcs.append(Service(sname, prio, tuple(int(x) for x in d)))
    jobs = _draw_jobs(
        rng, num_jobs, mix=mix, num_gpus=num_gpus, horizon=horizon, slot_hours=1.0,
        release_hours=release_hours, deadline_fraction=deadline_fraction, bursts=bursts,
    )
    return Instance(name, num_gpus, horizon, tuple(svcs), tuple(jobs))


def _hc_training_heavy(rng: np.random.Generator, *, num_jobs: int = 20) -> Instance:
    """8 GPUs, 36 hourly slots, one service (2-6 GPUs), 70% training jobs."""
    return _contention(
        rng, "hc-training-heavy", num_gpus=8, horizon=36, num_jobs=num_jobs,
        mix={"training": 0.7, "batch_inference": 0.2, "quantization": 0.1},
        services=[("chat", 3.0, 2, 6, 0.0)], release_hours=16.0,
    )


def _hc_mixed(rng: np.random.Generator, *, num_jobs: int = 26) -> Instance:
    """12 GPUs, 36 hourly slots, one service (3-8 GPUs), an even mix of all kinds."""
    return _contention(
        rng, "hc-mixed", num_gpus=12, horizon=36, num_jobs=num_jobs,
        mix={"training": 0.35, "batch_inference": 0.3, "quantization": 0.2, "other": 0.15},
        services=[("chat", 3.0, 3, 8, 0.0)], release_hours=18.0,
    )


def _hc_multi_service(rng: np.random.Generator, *, num_jobs: int = 24) -> Instance:
    """16 GPUs, 36 hourly slots, three services peaking at different hours."""
    return _contention(
        rng, "hc-multi-service", num_gpus=16, horizon=36, num_jobs=num_jobs,
        mix={"training": 0.5, "batch_inference": 0.3, "quantization": 0.2},
        services=[
            ("chat", 3.0, 1, 5, 0.0), ("search", 2.0, 1, 4, 6.0), ("vision", 2.0, 1, 4, 12.0),
        ],
        release_hours=18.0,
    )


def _hc_bursty(rng: np.random.Generator, *, num_jobs: int = 24) -> Instance:
    """8 GPUs, 36 hourly slots, one service (2-6 GPUs), jobs arriving in 3 bursts."""
    return _contention(
        rng, "hc-bursty", num_gpus=8, horizon=36, num_jobs=num_jobs,
        mix={"training": 0.5, "batch_inference": 0.3, "quantization": 0.2},
        services=[("chat", 3.0, 2, 6, 0.0)], release_hours=24.0, bursts=3,
    )


def _hc_deadlines(rng: np.random.Generator, *, num_jobs: int = 24) -> Instance:
    """8 GPUs, 36 hourly slots, one service (2-6 GPUs), 60% of jobs with deadlines."""
    return _contention(
        rng, "hc-deadlines", num_gpus=8, horizon=36, num_jobs=num_jobs,
        mix={"training": 0.5, "batch_inference": 0.3, "quantization": 0.2},
        services=[("chat", 3.0, 2, 6, 0.0)], release_hours=20.0, deadline_fraction=0.6,
    )


def _services_for(
    rng: np.random.Generator, num_gpus: int, horizon: int, slot_hours: float, count: int,
    share: float,
) -> tuple[Service, ...]:
    """``count`` daily curves whose peaks sum to about ``share`` of the pool."""
    peaks = rng.dirichlet(np.ones(count)) * share * num_gpus
    out = []
    for k in range(count):
        peak = max(1.0, math.floor(peaks[k]))
        trough = max(0.0, math.floor(peak * rng.uniform(0.25, 0.45)))
        shift = float(rng.uniform(-3.0, 3.0))
        d = daily_curve(horizon, slot_hours, trough, peak, shift_hours=shift)
        out.append(Service(f"svc-{k + 1}", round(float(rng.uniform(2.0, 4.0)), 2), tuple(int(x) for x in d)))
    return tuple(out)


def _scaled(
    rng: np.random.Generator, name: str, num_gpus: int, horizon: int, slot_hours: float,
    num_jobs: int, num_services: int, gpu_scale: int, release_fraction: float = 0.7,
) -> Instance:
    services = _services_for(rng, num_gpus, horizon, slot_hours, num_services, share=0.5)
    jobs = _draw_jobs(
        rng, num_jobs,
        mix={"training": 0.4, "batch_inference": 0.3, "quantization": 0.2, "other": 0.1},
        num_gpus=num_gpus, horizon=horizon, slot_hours=slot_hours,
        release_hours=release_fraction * horizon * slot_hours, gpu_scale=gpu_scale,
        deadline_fraction=0.2,
    )
    return Instance(name, num_gpus, horizon, services, tuple(jobs), slot_hours)


def _small(
    rng: np.random.Generator, *, num_gpus: int | None = None, horizon: int | None = None,
    num_jobs: int | None = None,
) -> Instance:
    """4-8 GPUs, 12-24 hourly slots, 6-12 jobs, one service: solved to optimality in seconds."""
    G = num_gpus if num_gpus is not None else int(rng.choice([4, 6, 8]))
    T = horizon if horizon is not None else int(rng.integers(12, 25))
    n = num_jobs if num_jobs is not None else int(rng.integers(6, 13))
    return _scaled(rng, "small", G, T, 1.0, n, 1, 1)


_MEDIUM_GRID = ((1.0, 24), (1.0, 72), (1.0, 168), (0.5, 96), (0.25, 96))


def _medium(
    rng: np.random.Generator, *, num_gpus: int | None = None, horizon: int | None = None,
    slot_hours: float | None = None, num_jobs: int | None = None,
) -> Instance:
    """8-16 GPUs, a day to a week in 15-minute to hourly slots, 50-150 jobs, 1-2 services."""
    G = num_gpus if num_gpus is not None else int(rng.integers(8, 17))
    sh, T = _MEDIUM_GRID[int(rng.integers(len(_MEDIUM_GRID)))]
    sh = slot_hours if slot_hours is not None else sh
    T = horizon if horizon is not None else T
    n = num_jobs if num_jobs is not None else int(rng.integers(50, 151))
    return _scaled(rng, "medium", G, T, sh, n, int(rng.integers(1, 3)), 1)


def _large(
    rng: np.random.Generator, *, num_gpus: int | None = None, horizon: int = 168,
    num_jobs: int | None = None,
) -> Instance:
    """64-1024 GPUs, a week of hourly slots, 500-10,000 jobs (about 8 per GPU), 2-4 services.

    Job GPU counts scale with the pool: above 128 GPUs, sizes are multiplied by
    ``num_gpus // 128``."""
    G = num_gpus if num_gpus is not None else int(rng.choice([64, 128, 256, 512, 1024]))
    n = num_jobs if num_jobs is not None else int(np.clip(round(8 * G * rng.uniform(0.8, 1.25)), 500, 10_000))
    scale = max(1, G // 128)
    return _scaled(rng, "large", G, horizon, 1.0, n, int(rng.integers(2, 5)), scale)


def _read_series(filename: str, column: str) -> np.ndarray:
    text = resources.files("instances").joinpath(f"data/{filename}").read_text()
    rows = list(csv.DictReader(text.splitlines()))
    return np.array([float(r[column]) for r in rows])


def servegen_hourly_rps() -> np.ndarray:
    """Hourly mean request rate (req/s) over 14 days, from the shipped ServeGen series.

    The 10-minute totals (ServeGen, alibaba/ServeGen, Apache License 2.0) are
    averaged per hour; zero windows (gaps in the data) are left out of a mean,
    and an hour with no data takes the value of the previous hour.
    """
    rate = _read_series("language_m-large_total_rate_10min.csv", "total_rate_rps")
    hours = rate.reshape(-1, 6)
    valid = hours > 0
    counts = valid.sum(axis=1)
    means = np.where(counts > 0, (hours * valid).sum(axis=1) / np.maximum(counts, 1), np.nan)
    for i in range(len(means)):
        if np.isnan(means[i]):
            means[i] = means[i - 1] if i > 0 else np.nanmean(means)
    return means


def _trace_servegen(
    rng: np.random.Generator, *, num_gpus: int = 16, days: int = 1,
    throughput_rps: float = TRACE_GPU_THROUGHPUT_RPS, num_jobs: int | None = None,
    start_day: int | None = None, contention: float = 1.5,
) -> Instance:
    """16 GPUs, hourly slots over ``days`` days of real traffic (ServeGen m-large,
    Apache License 2.0), demand = ceil(rate / 40 req/s per GPU); the start day is
    drawn by the seed; mixed batch work of about 1.5x the capacity left.

    Unless ``num_jobs`` is given, the number of jobs is drawn so that their
    expected GPU-slots are ``contention`` (default 1.5) times the GPU-slots the
    traffic leaves free, within +-10%."""
    rps = servegen_hourly_rps()
    total_days = len(rps) // 24
    if not 1 <= days <= total_days:
        raise ValueError(f"days: must be between 1 and {total_days}, got {days}")
    d0 = start_day if start_day is not None else int(rng.integers(0, total_days - days + 1))
    if not 0 <= d0 <= total_days - days:
        raise ValueError(f"start_day: must be between 0 and {total_days - days}, got {d0}")
    window = rps[24 * d0 : 24 * (d0 + days)]
    demand = np.ceil(window / throughput_rps).astype(np.int64)
    if demand.max() > num_gpus:
        raise ValueError(
            f"num_gpus: {num_gpus} is below the traffic's peak demand of {int(demand.max())} GPUs"
        )
    T = 24 * days
    mix = {"training": 0.45, "batch_inference": 0.35, "quantization": 0.2}
    if num_jobs is None:
        free = float(num_gpus * T - demand.sum())
        target = contention * free / expected_job_area(mix, num_gpus, slot_hours=1.0)
        n = max(1, round(target * rng.uniform(0.9, 1.1)))
    else:
        n = num_jobs
    jobs = _draw_jobs(
        rng, n, mix=mix,
        num_gpus=num_gpus, horizon=T, slot_hours=1.0, release_hours=0.6 * T,
    )
    svc = Service("servegen-m-large", 3.0, tuple(int(x) for x in demand))
    inst = Instance("trace-servegen", num_gpus, T, (svc,), tuple(jobs))
    return inst.replace(meta={"trace_start_day": d0, "throughput_rps": throughput_rps})


_GENERATORS: dict[str, Callable[..., Instance]] = {
    "seed-training-heavy": _seed_training_heavy,
    "hc-training-heavy": _hc_training_heavy,
    "hc-mixed": _hc_mixed,
    "hc-multi-service": _hc_multi_service,
    "hc-bursty": _hc_bursty,
    "hc-deadlines": _hc_deadlines,
    "small": _small,
    "medium": _medium,
    "large": _large,
    "trace-servegen": _trace_servegen,
}

SEED_SCENARIOS: tuple[str, ...] = (
    "hc-training-heavy", "hc-mixed", "hc-multi-service", "hc-bursty", "hc-deadlines",
)
"""The five high-contention scenarios compared with the seed's published band."""


def _first_line(fn: Callable[..., Any]) -> str:
    doc = inspect.getdoc(fn) or ""
    return " ".join(doc.split("\n\n")[0].split())


FAMILIES: dict[str, str] = {name: _first_line(fn) for name, fn in _GENERATORS.items()}
"""Family name -> one-line description."""


def generate(family: str, seed: int = 0, **params: Any) -> Instance:
    """Generate an instance of a named family.

    Parameters
    ----------
    family
        A key of :data:`FAMILIES`.
    seed
        Seed of the random stream; the same family, seed and parameters give
        the same instance.
    **params
        Family parameters (``num_jobs``, ``num_gpus``, ...) overriding the
        defaults that the seed would draw.

    Returns
    -------
    Instance
        Named ``<family>-s<seed>``, with the family, seed and parameters in
        ``meta``.

    Raises
    ------
    ValueError
        For an unknown family, a negative seed or a bad parameter.
    """
    if family not in _GENERATORS:
        raise ValueError(f"family: unknown family {family!r}; known: {', '.join(_GENERATORS)}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed: must be a non-negative integer, got {seed!r}")
    fn = _GENERATORS[family]
    accepted = set(inspect.signature(fn).parameters) - {"rng"}
    unknown = set(params) - accepted
    if unknown:
        raise ValueError(
            f"{sorted(unknown)[0]}: not a parameter of family {family!r}; "
            f"accepted: {sorted(accepted)}"
        )
    check_size_params(params)
    rng = np.random.default_rng([int(seed), _family_key(family)])
    inst = fn(rng, **params)
    name = f"{family}-s{int(seed)}" + "".join(f"-{k}{v}" for k, v in sorted(params.items()))
    meta = {"family": family, "seed": int(seed), "params": dict(sorted(params.items())), **inst.meta}
    return inst.replace(name=name, meta=meta)


def _family_key(family: str) -> int:
    """A stable integer per family name, so families draw independent streams."""
    return int.from_bytes(family.encode(), "little") % (2**63)
