"""The named instance families: one generator per family, the family's random stream
first and its parameters as keywords; the first paragraph of a generator's
docstring is the family's description (:data:`instances.FAMILIES`), plain text.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..model import Instance, Service
from ..nodes import openb_node_counts
from ..resources import FULL_GPU_MILLI
from ..servegen import servegen_hourly_rps
from ..traces.cluster import OPENB_TRACE_DAYS
from .arrivals import itp_window, philly_window
from .generators import KindSpec, daily_curve, draw_jobs, expected_job_area
from .openb_shapes import openb_shares
from .wide import wide

__all__ = [
    "GENERATORS",
    "OPENB_DAYS",
    "OPENB_INFERENCE_SHARE",
    "OPENB_MIN_GPUS",
    "SEED_SCENARIOS",
    "TRACE_GPU_THROUGHPUT_RPS",
    "contention",
]

TRACE_GPU_THROUGHPUT_RPS = 40.0
"""Requests per second one GPU serves in the trace-driven family (stated assumption)."""

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
    jobs = draw_jobs(
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
    jobs = draw_jobs(
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
    jobs = draw_jobs(
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


def _trace_servegen(
    rng: np.random.Generator, *, num_gpus: int = 16, days: int = 1,
    throughput_rps: float = TRACE_GPU_THROUGHPUT_RPS, num_jobs: int | None = None,
    start_day: int | None = None, contention: float = 1.5,
) -> Instance:
    """16 GPUs, hourly slots over one day (or more: days=N) of real traffic (ServeGen
    m-large, Apache License 2.0), demand = ceil(rate / 40 req/s per GPU); the start
    day is drawn by the seed; mixed batch work of about 1.5x the capacity left.

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
    jobs = draw_jobs(
        rng, n, mix=mix,
        num_gpus=num_gpus, horizon=T, slot_hours=1.0, release_hours=0.6 * T,
    )
    svc = Service("servegen-m-large", 3.0, tuple(int(x) for x in demand))
    inst = Instance("trace-servegen", num_gpus, T, (svc,), tuple(jobs))
    return inst.replace(meta={"trace_start_day": d0, "throughput_rps": throughput_rps})


OPENB_DAYS: tuple[int, ...] = OPENB_TRACE_DAYS
"""Days of the openb trace the ``openb-day`` family takes (day ``d`` is trace seconds
``[86400 d, 86400 (d + 1))``): days 115 to 149 hold 8,125 of the 8,152 pods; the
trace ends 8.3 hours into day 149. The days before 115 hold 0 to 3 pods each
(:data:`instances.traces.OPENB_TRACE_DAYS`, the days of the whole-cluster instance)."""

OPENB_MIN_GPUS = 8
"""Smallest ``openb-day`` pool: the largest openb pod asks 8 GPUs."""

OPENB_INFERENCE_SHARE = 0.3
"""Default share of the ``openb-day`` pool that the ServeGen series asks at its peak."""


def contention(inst: Instance) -> float:
    """Batch demand over the capacity inference leaves, ``sum_j a_j p_j / sum_t (G - sum_s
    d_s[t])`` with ``a_j`` the GPU amount (``g_j`` on versions 1 and 2, a shared job's
    fraction on version 3): above 1 the jobs cannot all run; infinite when inference
    takes everything.
    """
    demand = sum(j.gpus * j.gpu_milli * j.duration for j in inst.jobs) / FULL_GPU_MILLI
    left = inst.num_gpus * inst.horizon - int(inst.total_demand.sum())
    return demand / left if left > 0 else math.inf


def _openb_day(
    rng: np.random.Generator, *, seed: int = 0, day: int | None = None, num_gpus: int = 16,
    inference_share: float = OPENB_INFERENCE_SHARE, resources: str = "gpus",
) -> Instance:
    """One day of real openb pods (Alibaba cluster-trace-gpu-v2023) as batch jobs in
    15-minute slots, on 16 GPUs of the cluster's real node mix, with a ServeGen series
    asking 30% of the pool at its peak; the seed picks the day (115 + seed mod 35).

    The day is ``day`` or ``OPENB_DAYS[seed % 35]``; the import is
    :func:`instances.from_trace` on the shipped pods with the shipped node list
    taken down to ``num_gpus`` GPUs by :func:`instances.traces.select_nodes`,
    and ``service="servegen:<inference_share>"``. Nothing is drawn: the day
    and the pool decide the instance. ``meta["contention"]`` is
    :func:`contention`. ``resources="full"`` keeps the pods' shares, models,
    CPU and memory and the nodes' (model version 3; ``"gpus"``, the
    default, is version 2)."""
    from ..traces import from_trace

    d = OPENB_DAYS[seed % len(OPENB_DAYS)] if day is None else day
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d not in OPENB_DAYS:
        raise ValueError(
            f"day: must be an integer day of the openb trace in "
            f"{OPENB_DAYS[0]}..{OPENB_DAYS[-1]}, got {d!r}"
        )
    if isinstance(num_gpus, bool) or not isinstance(num_gpus, (int, np.integer)):
        raise ValueError(f"num_gpus: must be an integer, got {num_gpus!r}")
    if num_gpus < OPENB_MIN_GPUS:
        raise ValueError(
            f"num_gpus: {num_gpus} is too small for the openb node list: the day's largest "
            f"pods ask {OPENB_MIN_GPUS} GPUs on one node (at least {OPENB_MIN_GPUS})"
        )
    if isinstance(inference_share, bool) or not isinstance(inference_share, (int, float)) or not (
        0 < inference_share <= 1
    ):
        raise ValueError(f"inference_share: must be a number in (0, 1], got {inference_share!r}")
    cluster = sum(k * c for k, c in openb_node_counts().items())
    if num_gpus > cluster:
        raise ValueError(
            f"num_gpus: {num_gpus} is more than the {cluster} GPUs of the openb node list"
        )
    inst = from_trace(
        "openb", "openb:default", start=86400 * int(d), hours=24, slot_minutes=15,
        nodes="openb:nodes", num_gpus=int(num_gpus), service=f"servegen:{inference_share}",
        resources=resources,
    )
    meta = {"day": int(d), "inference_share": float(inference_share),
            "contention": round(contention(inst), 6), **inst.meta}
    return inst.replace(name="openb-day", meta=meta)


GENERATORS: dict[str, Callable[..., Instance]] = {
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
    "openb-day": _openb_day,
    "openb-shares": openb_shares,
    "itp": itp_window,
    "philly": philly_window,
    "wide": wide,
}
"""Family name -> generator ``(rng, **params) -> Instance``."""

SEED_SCENARIOS: tuple[str, ...] = (
    "hc-training-heavy", "hc-mixed", "hc-multi-service", "hc-bursty", "hc-deadlines",
)
"""The five high-contention scenarios compared with the seed's published band."""
