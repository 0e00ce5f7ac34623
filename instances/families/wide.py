"""The ``wide`` family: half-pool and quarter-pool jobs under a two-service inference curve.

The class of issue 41 (the seed's own hard case): 16 GPUs, a week of hourly
slots, 60 jobs of which 20 ask half the pool (8 GPUs) and 9 a quarter (4),
under the sum of two ServeGen week-long windows scaled so that together they
ask 10 GPUs at their peak (about 6.6 on average). At most one 8-GPU job runs
at a time wherever the curve asks more than zero, and none where it asks more
than 8: the rounding that the LP relaxation of the time-indexed model does not
see.
"""

from __future__ import annotations

import numpy as np

from ..model import Instance, Job, Service
from ..servegen import servegen_hourly_rps

__all__ = ["WIDE_SHAPE", "wide", "wide_demand"]

WIDE_SHAPE: tuple[tuple[int, int], ...] = ((8, 20), (4, 9))
"""``(gpus, count)`` of the wide jobs; the other jobs ask 1 or 2 GPUs."""

SMALL_GPUS = (1, 2)
"""GPUs of the small jobs, drawn with equal probability."""

HOURS = {8: (6.0, 16.0), 4: (4.0, 14.0), 0: (2.0, 10.0)}
"""Raw duration ranges in hours (uniform) by width (``0``: the small jobs), before the
durations are scaled so that the batch work is ``batch_share`` of the pool."""

SMALL_KINDS = ("batch_inference", "quantization", "other")
"""Kinds of the small jobs, drawn with equal probability (the wide ones are training)."""

PREFIX = {"training": "train", "batch_inference": "binf", "quantization": "quant", "other": "job"}

PRIORITIES = (1.0, 2.0, 4.0)
"""Job priorities, drawn with equal probability."""

SERVICE_SHARES = (0.6, 0.4)
"""Each service's share of the combined peak before the common scale (6 : 4 of 10 GPUs)."""


def wide_demand(
    rng: np.random.Generator, horizon: int, peak: int,
) -> tuple[np.ndarray, np.ndarray, tuple[int, int], float]:
    """Two services' demand curves from two windows of the ServeGen series.

    Each window of ``horizon`` hours starts at an hour drawn uniformly from the
    14-day series; service ``s`` asks ``ceil(f * P_s * rate_s[t] / max rate_s)``
    GPUs with ``P = (0.6, 0.4) * peak`` and ``f`` the largest multiple of 0.01 in
    (0, 2) whose combined peak is at most ``peak``.

    Returns
    -------
    tuple
        The two curves, the two start hours and ``f``.

    Raises
    ------
    ValueError
        When ``horizon`` exceeds the series.
    """
    rps = servegen_hourly_rps()
    if peak < 2:
        raise ValueError(f"peak: must be at least 2 (one GPU per service), got {peak}")
    if not 1 <= horizon <= len(rps):
        raise ValueError(f"horizon: must be between 1 and {len(rps)}, got {horizon}")
    starts = rng.integers(0, len(rps) - horizon + 1, size=2)
    w = [rps[s : s + horizon] for s in starts]
    shape = [share * peak * x / x.max() for share, x in zip(SERVICE_SHARES, w)]
    f = 0.01
    for k in range(1, 200):
        g = k / 100
        if (np.ceil(g * shape[0] - 1e-9) + np.ceil(g * shape[1] - 1e-9)).max() > peak:
            break
        f = g
    d1, d2 = (np.ceil(f * x - 1e-9).astype(np.int64) for x in shape)
    return d1, d2, (int(starts[0]), int(starts[1])), f


def wide(
    rng: np.random.Generator, *, num_gpus: int = 16, horizon: int = 168, num_jobs: int = 60,
    peak: int = 10, batch_share: float = 0.89, deadline_share: float = 0.2,
) -> Instance:
    """16 GPUs, 168 hourly slots, 60 jobs of which 20 ask 8 GPUs (half the pool) and 9 ask 4,
    the rest 1-2; two ServeGen services asking 10 GPUs at their peak (about 6.6 on average);
    priorities 1, 2 or 4; deadlines on a fifth of the jobs; batch work 0.89 of the pool's
    GPU-hours (with inference, a load of about 1.3 times the pool).

    The two services are windows of the ServeGen series starting at hours drawn by
    the seed (:func:`wide_demand`), scaled together to ``peak`` GPUs at their
    combined peak. Wide jobs are ``training``; the small ones ``batch_inference``,
    ``quantization`` or ``other``. Raw durations are uniform in 6-16 hours (8 GPUs),
    4-14 (4 GPUs) and 2-10 (small), then multiplied by one factor so that the batch
    GPU-hours are ``batch_share`` of ``num_gpus * horizon`` (up to rounding to whole
    slots). Releases are uniform over the first 60% of the horizon (no later than
    the horizon less the duration); ``round(deadline_share * num_jobs)`` jobs, drawn
    without replacement, get a deadline at ``release + ceil(duration * slack)``
    (slack uniform in 1.3-3.0), capped at the horizon. The counts of wide jobs are
    those of :data:`WIDE_SHAPE` scaled by ``num_jobs / 60`` (rounded), the pool's
    halves and quarters by ``num_gpus``. ``meta`` holds the start hours and the
    scale of the curve.
    """
    for name, v in (("num_gpus", num_gpus), ("horizon", horizon), ("num_jobs", num_jobs),
                    ("peak", peak)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name}: must be a positive integer, got {v!r}")
    if num_gpus < 4:
        raise ValueError(f"num_gpus: must be at least 4 (half and quarter pool jobs), got {num_gpus}")
    if peak > num_gpus:
        raise ValueError(f"peak: must be at most num_gpus ({num_gpus}), got {peak}")
    for name, x in (("batch_share", batch_share), ("deadline_share", deadline_share)):
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not 0 <= x <= 10:
            raise ValueError(f"{name}: must be a number in [0, 10], got {x!r}")
    if deadline_share > 1:
        raise ValueError(f"deadline_share: must be in [0, 1], got {deadline_share!r}")
    G, T, n = int(num_gpus), int(horizon), int(num_jobs)
    d1, d2, starts, f = wide_demand(rng, T, int(peak))
    n8 = min(n, round(WIDE_SHAPE[0][1] * n / 60))
    n4 = min(n - n8, round(WIDE_SHAPE[1][1] * n / 60))
    band = np.array([8] * n8 + [4] * n4 + [0] * (n - n8 - n4), dtype=np.int64)
    small = rng.choice(np.array(SMALL_GPUS), size=n - n8 - n4)
    gpus = np.minimum(np.concatenate([np.full(n8, G // 2), np.full(n4, G // 4), small]), G)
    lo = np.array([HOURS[int(b)][0] for b in band])
    hi_ = np.array([HOURS[int(b)][1] for b in band])
    raw = rng.uniform(lo, hi_)
    target = batch_share * G * T
    scale = target / float((gpus * raw).sum()) if target > 0 else 1.0
    dur = np.clip(np.rint(raw * scale), 1, T).astype(np.int64)
    prio = rng.choice(np.array(PRIORITIES), size=n)
    kinds = ["training"] * (n8 + n4) + [SMALL_KINDS[int(k)] for k in
                                     rng.integers(0, len(SMALL_KINDS), size=n - (n8 + n4))]
    last = max(1, round(0.6 * T))
    rel = np.minimum(rng.integers(0, last, size=n), T - dur)
    has_dl = np.zeros(n, dtype=bool)
    has_dl[rng.permutation(n)[: round(deadline_share * n)]] = True
    slack = rng.uniform(1.3, 3.0, size=n)
    dl = np.minimum(rel + np.ceil(dur * slack).astype(np.int64), T)
    order = np.argsort(rel, kind="stable")
    counters: dict[str, int] = {}
    jobs = []
    for i in order:
        kind = kinds[i]
        counters[kind] = counters.get(kind, 0) + 1
        jobs.append(Job(
            name=f"{PREFIX[kind]}-{counters[kind]}", gpus=int(gpus[i]), duration=int(dur[i]),
            priority=float(prio[i]), kind=kind, release=int(rel[i]),
            deadline=int(dl[i]) if has_dl[i] else None,
        ))
    svcs = (Service("servegen-a", 3.0, tuple(int(x) for x in d1)),
            Service("servegen-b", 3.0, tuple(int(x) for x in d2)))
    meta = {"trace_start_hours": list(starts), "curve_scale": round(f, 2),
            "batch_share": float(batch_share)}
    return Instance("wide", G, T, svcs, tuple(jobs)).replace(meta=meta)

