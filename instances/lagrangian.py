"""The Lagrangian bound ``L(lam)`` of the specification (docs/model.md), recomputed from the instance alone.

Relaxing the capacity rows with one multiplier ``lam[t] >= 0`` per slot gives

    L(lam) = sum_t lam[t] c[t]
           + sum_j max(0, max over feasible starts s of (v_j - g_j sum_{t=s}^{s+p_j-1} lam[t]))

with ``c[t] = G - sum_s d_s[t]`` and ``v_j = w_j g_j p_j slot_hours``. A start
``s`` of job ``j`` is feasible when ``r_j <= s``, ``s + p_j <= min(D_j, T)``
and ``g_j <= c[t]`` on every slot of the run. For every ``lam >= 0``,
``L(lam)`` is an upper bound on the value of every feasible schedule.

On model version 3 the capacity rows are the fluid model's: a job counts
its GPU amount ``a_j = g_j gpu_milli_j / 1000`` where ``g_j`` stands above
(and ``v_j = w_j a_j p_j slot_hours``). A GPU busy with shares carries at
most 1000 of them, so ``sum_j a_j <= c[t]`` holds for every feasible
schedule and ``L`` stays an upper bound; a shared job still needs one GPU
free of inference (``g_j = 1 <= c[t]``). Models, CPU and memory only
restrict, and are left out.

Under the ``flow`` objective (section 15) a job's term at ``s`` is its worth there,
``base_j - slope_j s`` (:mod:`instances.objective`), in place of ``v_j``: written
``base_j - a_j (window(s) + delay_j s)`` with ``delay_j = slope_j / a_j``. ``L`` then
bounds the worth ``W = C - F`` from above, so ``C - L`` is a lower bound on ``F``.

This module is the certificate's checker: it shares no code with the
solvers (``milp``) or the heuristics. One evaluation costs O(jobs x slots):
jobs are grouped by duration, the window sums of a duration come from one
prefix sum, and the jobs of a group are handled as a 2-D array (in chunks,
so 10,000 jobs x 168 slots stays within a few MiB).

Rounding: the returned float is never below the exact value of ``L(lam)``
(with ``lam`` read as the exact binary numbers it holds). The sums are
computed in float64 and then raised by an a-priori bound on every rounding
error of the computation (prefix sums, window differences, products,
the correctly rounded :func:`math.fsum` of the job terms), see
:func:`rounding_margin`; the last additions are rounded up with
:func:`math.nextafter`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .model import Instance
from .objective import delay_price
from .resources import gpu_amounts, shares_gpus

__all__ = [
    "UNIT_ROUNDOFF", "capacity_amounts", "check_multipliers", "lagrangian_value",
    "reduced_profits", "rounding_margin",
]

UNIT_ROUNDOFF = 2.0**-53
"""Unit roundoff ``u`` of float64."""

_CHUNK_CELLS = 1 << 19
"""Largest number of (job, start) cells handled at once (about 4.5 MiB of scratch)."""


def check_multipliers(inst: Instance, lam: Any, where: str = "lam") -> np.ndarray:
    """``lam`` as a float64 array of length ``horizon``, every entry finite and ``>= 0``.

    Raises
    ------
    ValueError
        ``lam: must have length 168 (the horizon), got 167``;
        ``lam[5]: must be >= 0, got -0.25``; ``lam[3]: must be finite, got nan``.
    """
    try:
        arr = np.array(lam, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: must be a list of numbers, got {_short(lam)}") from None
    if arr.ndim != 1 or arr.shape[0] != inst.horizon:
        got = arr.shape[0] if arr.ndim == 1 else f"shape {arr.shape}"
        raise ValueError(
            f"{where}: must have length {inst.horizon} (the horizon of {inst.name!r}), got {got}"
        )
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        t = int(bad[0])
        raise ValueError(f"{where}[{t}]: must be finite, got {arr[t]!r}")
    neg = np.flatnonzero(arr < 0)
    if neg.size:
        t = int(neg[0])
        raise ValueError(f"{where}[{t}]: must be >= 0, got {arr[t]!r}")
    return arr + 0.0  # turns -0.0 into 0.0


def capacity_amounts(inst: Instance) -> np.ndarray:
    """Each job's coefficient in the relaxed capacity rows: ``g_j``, or on model version 3
    with shared jobs the fluid amount ``a_j`` (module notes). Float64."""
    return gpu_amounts(inst) if shares_gpus(inst) else inst.gpus.astype(np.float64)


def _short(x: Any) -> str:
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


def _sliding_min(a: np.ndarray, p: int) -> np.ndarray:
    """``min(a[s:s+p])`` for every ``s`` in ``0 .. len(a) - p``."""
    return np.lib.stride_tricks.sliding_window_view(a, p).min(axis=1)


def reduced_profits(inst: Instance, lam: Any) -> tuple[np.ndarray, np.ndarray]:
    """Each job's best ``v_j - g_j * sum of lam over the run`` and the start that gives it.

    Over the job's feasible starts (the earliest among equals); ``-inf`` and
    start ``-1`` for a job with none. Plain float64 (not rounded up): for
    ordering jobs, not for bounds.
    """
    lam = check_multipliers(inst, lam)
    terms, _, starts = _job_terms(inst, lam, clip=False)
    return terms, starts


def _job_terms(
    inst: Instance, lam: np.ndarray, clip: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each job's ``max(0, best reduced value)``, whether it has a feasible start, and the start.

    With ``clip=False``, the best reduced value itself (``-inf`` without a start).
    """
    n, T = inst.num_jobs, inst.horizon
    cap = inst.num_gpus - inst.total_demand
    prefix = np.concatenate([[0.0], np.cumsum(lam)])
    g, p = inst.gpus, inst.durations
    a = capacity_amounts(inst)
    r, end, v = inst.releases, inst.deadlines, inst.worth_base
    delay = delay_price(inst, a)  # 0 under value: the window alone
    terms = np.zeros(n) if clip else np.full(n, -np.inf)
    feasible = np.zeros(n, dtype=bool)
    best_start = np.full(n, -1, dtype=np.int64)
    for dur in np.unique(p).tolist():
        if dur > T:
            continue
        window = prefix[dur:] - prefix[:-dur]  # window[s] = sum lam[s : s + dur]
        room = _sliding_min(cap, dur)  # largest g that fits the run from s
        starts = np.arange(T - dur + 1)
        jobs = np.flatnonzero(p == dur)
        step = max(1, _CHUNK_CELLS // starts.size)
        for lo in range(0, jobs.size, step):
            js = jobs[lo : lo + step]
            ok = (
                (starts[None, :] >= r[js, None])
                & (starts[None, :] <= end[js, None] - dur)
                & (room[None, :] >= g[js, None])
            )
            price = window[None, :] + delay[js, None] * starts[None, :]
            masked = np.where(ok, price, np.inf)
            at = masked.argmin(axis=1)
            cost = masked[np.arange(js.size), at]
            has = np.isfinite(cost)
            feasible[js] = has
            best_start[js] = np.where(has, at, -1)
            best = np.where(has, v[js] - a[js] * np.where(has, cost, 0.0), -np.inf)
            terms[js] = np.maximum(best, 0.0) if clip else best
    return terms, feasible, best_start


def rounding_margin(inst: Instance, lam: np.ndarray, capacity_part: float, job_part: float,
                    feasible: np.ndarray) -> float:
    """An upper bound on the rounding error of :func:`lagrangian_value`'s float sums.

    With ``u = 2^-53``, ``Lam = sum_t lam[t]``, ``n`` jobs and ``T`` slots:

    * each prefix sum is within ``1.01 T u Lam`` of its exact value, so a
      window sum is within ``(2.02 T + 2) u Lam`` (the difference adds one
      rounding); the minimum over starts moves by no more;
    * ``v_j`` (three products) is within ``3 u v_j``; ``g_j * window`` and
      ``v_j - g_j * window`` add ``u (v_j + 2.1 g_j Lam)``;
    * a job's term is then off by at most ``g_j (2.02 T + 2) u Lam +
      u (4 v_j + 2.1 g_j Lam)``, and ``max(0, .)`` does not enlarge it;
    * :func:`math.fsum` of the terms and of the ``lam[t] c[t]`` products is
      correctly rounded (``u`` times the result); each product adds ``u``.

    With shared jobs (model version 3), their ``a_j = gpu_milli_j / 1000``
    is one more rounding: ``u a_j Lam <= u g_j Lam`` on the product and
    ``u v_j`` on the value, added for those jobs.

    The sum of these, doubled, is returned; it is computed from rounded
    numbers, and doubling covers that too.
    """
    u = UNIT_ROUNDOFF
    T = inst.horizon
    Lam = math.fsum(lam.tolist())
    gsum = float(inst.gpus[feasible].sum()) if feasible.any() else 0.0
    vsum = math.fsum(inst.worth_base[feasible].tolist()) if feasible.any() else 0.0
    # under flow a start's delay adds slope_j s <= slope_j T (two roundings, then scaled)
    dsum = T * math.fsum(inst.worth_slope[feasible].tolist()) if feasible.any() else 0.0
    jobs = gsum * ((2.02 * T + 2.0) * u * Lam + 2.1 * u * Lam) + 4.0 * u * (vsum + dsum)
    shared = feasible & (gpu_amounts(inst) < inst.gpus) if shares_gpus(inst) else None
    if shared is not None and shared.any():
        jobs += u * (float(inst.gpus[shared].sum()) * Lam
                     + math.fsum(inst.worth_base[shared].tolist()))
    sums = 2.0 * u * (abs(capacity_part) + abs(job_part)) + u * abs(capacity_part + job_part)
    return 2.0 * (jobs + sums)


def lagrangian_value(inst: Instance, lam: Any) -> float:
    """``L(lam)``: an upper bound on the value of every feasible schedule of ``inst``.

    Parameters
    ----------
    inst
        The instance.
    lam
        One multiplier per slot (length ``horizon``), finite and ``>= 0``.

    Returns
    -------
    float
        ``L(lam)``, rounded up: never below the exact value (see the module
        notes). Its minimum over ``lam`` equals the LP-relaxation bound.

    Raises
    ------
    ValueError
        If ``lam`` has the wrong length, or an entry is negative or not
        finite (the message names ``lam`` and the index).
    """
    lam = check_multipliers(inst, lam)
    cap = (inst.num_gpus - inst.total_demand).astype(np.float64)
    capacity_part = math.fsum((lam * cap).tolist())
    terms, feasible, _ = _job_terms(inst, lam)
    job_part = math.fsum(terms.tolist())
    margin = rounding_margin(inst, lam, capacity_part, job_part, feasible)
    if margin == 0.0:  # no job can run and every lam[t] c[t] is 0: exactly 0
        return capacity_part + job_part
    total = math.nextafter(capacity_part + job_part, math.inf)
    return math.nextafter(total + margin, math.inf)
