"""The ``itp`` and ``philly`` families: windows of the shipped arrival logs (docs/arrivals.md).

A window is ``days`` days of submits from a start day (drawn by the seed unless
given), imported by :func:`instances.from_trace` with a drain after it, on a pool
sized so that the window is contended as asked, with an optional ServeGen
inference share, judged by ``value`` or ``flow``; ``load`` divides the submit
times (from the window's start), so load 2 doubles the arrival rate on the same
pool. Nothing else is drawn: the seed picks the start day only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..model import Instance, is_int
from ..objective import OBJECTIVES
from ..traces import ITP_CLUSTERS, from_trace
from ..traces._core import service_curve
from .generators import RESOLVED

__all__ = [
    "ARRIVAL_CONTENTION",
    "ARRIVAL_DAYS",
    "ARRIVAL_DRAIN_HOURS",
    "ARRIVAL_SLOT_MINUTES",
    "ITP_DAYS",
    "PHILLY_BUSY_DAYS",
    "PHILLY_DAY0",
    "PHILLY_DAYS",
    "Window",
    "itp_window",
    "philly_window",
]

ITP_DAYS: dict[int, tuple[int, int]] = {
    1: (22, 56), 2: (0, 59), 3: (10, 59), 4: (0, 59), 5: (0, 59),
    6: (0, 59), 7: (0, 59), 8: (0, 42), 9: (0, 52), 10: (26, 59),
}
"""ITP cluster -> its first and last submit day (day ``d``: trace seconds ``[86400 d,
86400 (d + 1))`` from the start of collection)."""

PHILLY_DAY0 = 1_504_483_200
"""Day 0 of the Philly log: 2017-09-04 00:00:00 UTC, in Unix seconds."""

PHILLY_DAYS: dict[str | None, tuple[int, int]] = {
    None: (0, 109),
    "6214e9": (3, 109), "11cb48": (20, 109), "6c71a0": (19, 109), "b436b2": (15, 107),
    "103959": (17, 109), "ee9e8c": (17, 109), "0e4a51": (22, 108), "ed69ec": (16, 92),
    "7f04ca": (0, 109), "2869ce": (20, 109), "e13805": (17, 109), "23dbec": (22, 24),
    "51b7ef": (73, 93), "925e2b": (85, 88), "795a4c": (58, 58),
}
"""Philly virtual cluster (``None``: all of them) -> its first and last submit day
(day ``d``: Unix seconds ``[PHILLY_DAY0 + 86400 d, PHILLY_DAY0 + 86400 (d + 1))``)."""

PHILLY_BUSY_DAYS = (20, 99)
"""The days of the Philly log a seed draws its windows from: days 0 to 19 hold 69
jobs, days 100 to 105 hold 138 (then 1,338 in days 106 to 109); the 80 days between
hold 80,702 of the 82,247 (a ``start_day`` outside them is taken as given)."""

ARRIVAL_DAYS = 3
"""Default submit window of both families, in days."""

ARRIVAL_DRAIN_HOURS = 72.0
"""Default drain after the window (hours): the horizon is ``days`` plus 3 days."""

ARRIVAL_SLOT_MINUTES = 15.0
"""Default slot length of both families."""

ARRIVAL_CONTENTION = 1.0
"""Default contention the pool is sized to (see :func:`itp_window`)."""


@dataclass(frozen=True)
class Window:
    """Where a family's window is cut: the trace file, its format and options."""

    format: str
    path: str
    day0: float
    first_day: int
    last_day: int
    cluster: str | None = None
    busy: tuple[int, int] | None = None
    """The days a seed draws the window from (default all of the log's)."""


def _check_number(key: str, v: Any, lo: float, *, strict: bool = True) -> float:
    ok = not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v)
    if not ok or (v <= lo if strict else v < lo):
        rel = ">" if strict else ">="
        raise ValueError(f"{key}: must be a finite number {rel} {lo:g}, got {v!r}")
    return float(v)


def _pool(
    work: float, contention: float, largest: int, window_slots: int, service: str | None,
    horizon: int, slot_seconds: float,
) -> int:
    """The smallest pool of at least ``largest`` GPUs on which ``work`` GPU-slots are at most
    ``contention`` times the GPU-slots of the first ``window_slots`` slots that the
    service leaves (its demand as :func:`instances.traces.from_trace` builds it)."""

    def left(G: int) -> int:
        if service is None:
            return G * window_slots
        demand = service_curve(service, G, horizon, slot_seconds).demand
        return G * window_slots - sum(demand[:window_slots])

    def fits(G: int) -> bool:
        return work <= contention * left(G) * (1 + 1e-12)

    share = 0.0
    if service is not None:  # a first guess from the curve's shape on a large pool
        big = 1_000_000
        share = 1.0 - left(big) / (big * window_slots)
    pool = max(largest, math.ceil(work / (contention * window_slots * max(1e-9, 1.0 - share))))
    while not fits(pool):
        pool += 1
    while pool > largest and fits(pool - 1):
        pool -= 1
    return pool


def cut_window(
    rng: np.random.Generator, family: str, where: Window, *, days: int, start_day: int | None,
    num_gpus: int | None, contention: float | None, slot_minutes: float, drain_hours: float,
    inference_share: float | None, objective: str, load: float,
) -> Instance:
    """The window of ``where`` a family asks for (the parameters: :func:`itp_window`)."""
    if not is_int(days) or days < 1:
        raise ValueError(f"days: must be an integer >= 1, got {days!r}")
    span = where.last_day - where.first_day + 1
    if days > span:
        raise ValueError(f"days: the log holds {span} days of submits, got {days}")
    lo, hi = where.first_day, where.last_day - days + 1
    if start_day is None:
        a, b = lo, hi
        if where.busy is not None and max(lo, where.busy[0]) <= min(hi, where.busy[1] - days + 1):
            a, b = max(lo, where.busy[0]), min(hi, where.busy[1] - days + 1)
        d0 = int(rng.integers(a, b + 1))
    elif not is_int(start_day) or not lo <= start_day <= hi:
        raise ValueError(f"start_day: must be an integer in {lo}..{hi} for {days} days, "
                         f"got {start_day!r}")
    else:
        d0 = int(start_day)
    if num_gpus is not None and (not is_int(num_gpus) or num_gpus < 1):
        raise ValueError(f"num_gpus: must be an integer >= 1, got {num_gpus!r}")
    if num_gpus is not None and contention is not None:
        raise ValueError("contention: the pool is sized by num_gpus or by contention, not both")
    c = ARRIVAL_CONTENTION if contention is None else _check_number("contention", contention, 0)
    _check_number("slot_minutes", slot_minutes, 0)
    _check_number("drain_hours", drain_hours, 0, strict=False)
    _check_number("load", load, 0)
    if inference_share is not None:
        _check_number("inference_share", inference_share, 0)
        if inference_share > 1:
            raise ValueError(f"inference_share: must be in (0, 1], got {inference_share!r}")
    if objective not in OBJECTIVES:
        raise ValueError(f"objective: must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    service = None if inference_share is None else f"servegen:{inference_share}"
    options: dict[str, Any] = {
        "start": where.day0 + 86400.0 * d0, "hours": 24.0 * days,
        "slot_minutes": float(slot_minutes), "drain": float(drain_hours),
        "cluster": where.cluster,
    }
    window_slots = math.ceil(3600.0 * 24 * days / (60.0 * slot_minutes))
    if num_gpus is None:
        # The pool of the window at load 1, so that a load sweep keeps one pool.
        base = from_trace(where.format, where.path, **options)
        work = float(np.sum(base.gpus.astype(np.float64) * base.durations))
        G = _pool(work, c, base.num_gpus, window_slots, service, base.horizon,
                  60.0 * slot_minutes)
    else:
        G = int(num_gpus)
    inst = from_trace(where.format, where.path, num_gpus=G, service=service, load=float(load),
                      **options)
    work = float(np.sum(inst.gpus.astype(np.float64) * inst.durations))
    left = G * window_slots - (
        sum(inst.services[0].demand[:window_slots]) if inst.services else 0)
    meta = {
        "trace": where.format, "cluster": where.cluster, "start_day": d0, "days": int(days),
        "load": float(load), "window_contention": round(work / left, 6) if left > 0 else None,
        "pool": "num_gpus" if num_gpus is not None else f"contention {c:g}",
        **inst.meta,
    }
    return inst.replace(name=family, objective=objective, meta=meta)


def itp_window(
    rng: np.random.Generator, *, cluster: int = 4, days: int = ARRIVAL_DAYS,
    start_day: int | None = None, num_gpus: int | None = None,
    contention: float | None = None, slot_minutes: float = ARRIVAL_SLOT_MINUTES,
    drain_hours: float = ARRIVAL_DRAIN_HOURS, inference_share: float | None = None,
    objective: str = "value", load: float = 1.0,
) -> Instance:
    """Microsoft ITP cluster 04 (MIT licence): 3 days of real job submits from a start
    day the seed draws, in 15-minute slots with a 72-hour drain, on a pool sized so that
    the jobs ask as many GPU-slots as the window holds (contention 1).

    ``cluster`` is 1 to 10; ``start_day`` (default drawn uniformly among the days that
    keep the window inside the cluster's log, :data:`ITP_DAYS`) counts days from the
    start of collection. The import is :func:`instances.from_trace` of the shipped file
    (``"itp:cluster04"``) with ``hours = 24 * days`` and ``drain = drain_hours``: a job
    is kept when it can end inside the horizon. The pool is ``num_gpus``, or, by
    default, the smallest with the window's jobs at load 1 asking at most
    ``contention`` times the GPU-slots of the submit window that inference leaves
    (``meta["window_contention"]``), and at least the largest job. ``inference_share``
    adds a ServeGen series asking that share of the pool at its peak (section 9's
    ``--service``). ``load`` divides the submit times from the window's start (2 doubles
    the arrival rate: the window reads ``2 * days`` of the log, on the same pool).
    ``objective`` is ``"value"`` or ``"flow"``."""
    if not is_int(cluster) or not 1 <= cluster <= len(ITP_CLUSTERS):
        raise ValueError(f"cluster: must be an ITP cluster 1..{len(ITP_CLUSTERS)}, got {cluster!r}")
    first, last = ITP_DAYS[int(cluster)]
    where = Window("itp", f"itp:{ITP_CLUSTERS[int(cluster) - 1]}", 0.0, first, last)
    inst = cut_window(
        rng, "itp", where, days=days, start_day=start_day, num_gpus=num_gpus,
        contention=contention, slot_minutes=slot_minutes, drain_hours=drain_hours,
        inference_share=inference_share, objective=objective, load=load,
    )
    return inst.replace(meta={**inst.meta, "cluster": int(cluster)})


def _numeric_id(cluster: Any) -> Any:
    """The Philly cluster id that reads as the number ``cluster`` (``6214e9``, ``103959``, as
    ``gpusched generate -p cluster=6214e9`` parses them), else ``cluster`` unchanged."""
    if isinstance(cluster, bool) or not isinstance(cluster, (int, float)):
        return cluster
    for key in PHILLY_DAYS:
        try:
            if key is not None and float(key) == cluster:
                return key
        except ValueError:
            continue
    return cluster


def philly_window(
    rng: np.random.Generator, *, cluster: str | None = None, days: int = ARRIVAL_DAYS,
    start_day: int | None = None, num_gpus: int | None = None,
    contention: float | None = None, slot_minutes: float = ARRIVAL_SLOT_MINUTES,
    drain_hours: float = ARRIVAL_DRAIN_HOURS, inference_share: float | None = None,
    objective: str = "value", load: float = 1.0,
) -> Instance:
    """Microsoft Philly as Pollux ships it (CC BY 4.0): 3 days of real job submits of
    all its virtual clusters from a start day the seed draws, in 15-minute slots with a
    72-hour drain, on a pool sized to contention 1, as the itp family.

    ``cluster`` keeps one virtual cluster (``"6214e9"``, ...; default all of them; an id
    that reads as a number may be given as that number);
    ``start_day`` counts days from 2017-09-04 00:00 UTC (:data:`PHILLY_DAYS`), drawn by
    default so that the window lies in days 20 to 99 (:data:`PHILLY_BUSY_DAYS`); the import
    is :func:`instances.from_trace` of ``"philly-csv:default"``. The other parameters are
    those of the ``itp`` family."""
    if cluster is not None and not isinstance(cluster, str):
        cluster = _numeric_id(cluster)
    if cluster is not None and cluster not in PHILLY_DAYS:
        known = ", ".join(str(k) for k in PHILLY_DAYS if k is not None)
        raise ValueError(f"cluster: unknown Philly virtual cluster {cluster!r}; known: {known}")
    first, last = PHILLY_DAYS[cluster]
    where = Window("philly-csv", "philly-csv:default", float(PHILLY_DAY0), first, last, cluster,
                   PHILLY_BUSY_DAYS)
    inst = cut_window(
        rng, "philly", where, days=days, start_day=start_day, num_gpus=num_gpus,
        contention=contention, slot_minutes=slot_minutes, drain_hours=drain_hours,
        inference_share=inference_share, objective=objective, load=load,
    )
    if cluster is None:
        return inst
    return inst.replace(meta={**inst.meta, RESOLVED: {"cluster": cluster}})
