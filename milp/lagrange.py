"""The Lagrangian oracle and the searches over its multipliers, behind :func:`milp.bound`.

``L(lam)`` relaxes the pool row of every slot with a multiplier ``lam[t] >= 0``
(the specification (docs/model.md)): a relaxation of the flat problem, so of
the node problem too. :class:`LagrangianOracle` evaluates it with its
subgradient; :func:`volume` and :func:`subgradient` search the multipliers
through a :class:`Search`, which keeps the best point and decides when to
stop. The bound reported is recomputed from the multipliers by
:func:`instances.lagrangian_value`, independent of this module.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from instances import Instance
from instances.lagrangian import capacity_amounts
from instances.objective import delay_price

__all__ = ["COLD_LIMIT", "SEARCHES", "LagrangianOracle", "Search", "compiled_kernel",
           "initial_multipliers", "kernel_loaded", "subgradient", "volume"]

logger = logging.getLogger(__name__)


class LagrangianOracle:
    """``L(lam)``, its subgradient and the relaxed solution, in float64 (not rounded).

    The feasible starts of every job are fixed by the instance, so they are
    found once: for each duration, a (jobs x starts) mask. One call then
    costs one prefix sum and one masked minimum per duration, O(jobs x
    slots); the search's values are checked at the end by
    :func:`instances.lagrangian_value`.

    Compiled, where every job may start at any slot from its release to the
    horizon (no deadline binds, no inference: the arrival traces under
    ``flow``), the jobs of one (duration, delay) answer from one scan
    of the slots from the last start down (:attr:`grouped`): O(groups x
    slots) a call, and no table of starts (520 M on Philly whole); the same
    minimum and earliest start as the table's scan (``tests/milp/test_bound.py``;
    ``grouped=False`` keeps the table, for ``benchmarks/bench_bounds.py``).
    """

    def __init__(self, inst: Instance, compiled: bool | None = None,
                 grouped: bool | None = None) -> None:
        T = inst.horizon
        self.inst = inst
        self.cap = (inst.num_gpus - inst.total_demand).astype(np.float64)
        g, p, r, end = inst.gpus, inst.durations, inst.releases, inst.deadlines
        capacity = inst.num_gpus - inst.total_demand
        self.kernel = compiled_kernel() if compiled is not False else None
        if compiled and self.kernel is None:
            raise ImportError("compiled: numba is not importable")
        self.groups: list[tuple[int, np.ndarray, np.ndarray]] = []
        counts: list[np.ndarray] = []  # the kernel's CSR: each job's count of feasible starts
        chunks: list[tuple[int, np.ndarray]] = []  # (duration, its jobs), 256 at a time
        self.grouped = (grouped is not False and self.kernel is not None and inst.num_jobs > 0
                        and bool((capacity == capacity[0]).all()) and bool((end >= T).all()))
        self.group_start = np.zeros(1, dtype=np.int64)
        for dur in np.unique(p).tolist() if inst.num_jobs and not self.grouped else []:
            if dur > T:
                continue
            s = np.arange(T - dur + 1)
            room = np.lib.stride_tricks.sliding_window_view(capacity, dur).min(axis=1)
            js = np.flatnonzero(p == dur)
            if self.kernel is not None:
                # counted first, 256 jobs at a time (no jobs x slots mask), then written into
                # one array below: the CSR is held once (520 M starts, 1.9 GiB, on Philly
                # whole at 15-minute slots), and int32 halves it
                kept = []
                for c in range(0, js.size, 256):
                    jc = js[c : c + 256]
                    ok = (s >= r[jc, None]) & (s <= end[jc, None] - dur) & (room >= g[jc, None])
                    has = ok.any(axis=1)
                    if has.any():
                        counts.append(ok[has].sum(axis=1))
                        kept.append(jc[has])
                        chunks.append((dur, jc[has]))
                if kept:
                    self.groups.append((dur, np.concatenate(kept), np.zeros((0, 0))))
                continue
            ok = (s >= r[js, None]) & (s <= end[js, None] - dur) & (room >= g[js, None])
            has = ok.any(axis=1)
            if has.any():  # +inf where a start is not feasible: cost = window + penalty
                self.groups.append((dur, js[has], np.where(ok[has], 0.0, np.inf)))
        amounts = capacity_amounts(inst)  # g_j, or a_j with shared jobs
        delay = delay_price(inst, amounts)  # per amount and slot of delay; 0 under value
        if self.grouped:
            self._group(inst, int(capacity[0]), delay)
        elif self.kernel is not None and not self.groups:
            self.kernel = None
        if self.kernel is not None and not self.grouped:
            self.offsets = np.concatenate([[0], np.cumsum(np.concatenate(counts))]).astype(np.int64)
            self.starts = np.empty(int(self.offsets[-1]), dtype=np.int32)
            at, last = 0, -1
            for dur, jc in chunks:  # the same masks again, each job's starts ascending
                if dur != last:
                    s = np.arange(T - dur + 1)
                    room = np.lib.stride_tricks.sliding_window_view(capacity, dur).min(axis=1)
                    last = dur
                ok = (s >= r[jc, None]) & (s <= end[jc, None] - dur) & (room >= g[jc, None])
                got = np.flatnonzero(ok) % s.size
                self.starts[at : at + got.size] = got
                at += got.size
        self.buffers = [np.empty_like(pen) for _, _, pen in self.groups]
        self.rows = [np.arange(js.size) for _, js, _ in self.groups]
        if not self.grouped:
            self.jobs = (np.concatenate([j for _, j, _ in self.groups]) if self.groups
                         else np.zeros(0, dtype=np.int64))
        self.v = inst.worth_base[self.jobs].astype(np.float64)  # v_j under value
        self.g = amounts[self.jobs]
        self.p = inst.durations[self.jobs]
        self.delay = delay[self.jobs]
        self.timed = bool(self.delay.any())  # a start's delay costs (flow)
        self.delays = [self.delay[at - js.size:at][:, None] * np.arange(pen.shape[1])[None, :]
                       for at, (_, js, pen) in zip(np.cumsum([j.size for _, j, _ in self.groups]),
                                                  self.groups)] if self.timed else []
        self.release = inst.releases[self.jobs]
        self.calls = 0

    def _group(self, inst: Instance, pool: int, delay: np.ndarray) -> None:
        """:attr:`jobs` of the grouped kernel: those with a start, by (duration, ``delay``)
        and, within a group, latest release first; :attr:`group_start` the groups' offsets."""
        T, p, r = inst.horizon, inst.durations, inst.releases
        keep = np.flatnonzero((r <= T - p) & (inst.gpus <= pool))
        if keep.size == 0:
            self.jobs, self.grouped, self.kernel = keep, False, None
            return
        _, code = np.unique(np.stack([p[keep], delay[keep]]), axis=1,
                            return_inverse=True)
        code = code.reshape(-1)
        order = np.lexsort((-r[keep], code))
        self.jobs = keep[order]
        bounds = np.flatnonzero(np.diff(code[order])) + 1
        self.group_start = np.concatenate([[0], bounds, [keep.size]]).astype(np.int64)

    @property
    def has_jobs(self) -> bool:
        """Whether some job has a feasible start."""
        return self.jobs.size > 0

    def __call__(self, lam: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """``(L(lam), subgradient, starts)``.

        ``subgradient[t] = c[t] - load[t]``, the load of the relaxed solution
        (each job at its cheapest start when its reduced profit is positive);
        ``starts`` is that solution over :attr:`jobs` (``-1``: not run).
        """
        self.calls += 1
        T = lam.shape[0]
        prefix = np.concatenate([[0.0], np.cumsum(lam)])
        best = np.empty(self.jobs.size)
        arg = np.empty(self.jobs.size, dtype=np.int64)
        if self.grouped:
            grouped_kernel()(prefix, self.group_start, self.p, self.delay, self.release, best, arg)
        elif self.kernel is not None:
            self.kernel(prefix, self.offsets, self.starts, self.p, self.delay, best, arg)
        else:
            at = 0
            for k, ((dur, js, penalty), cost, rows) in enumerate(
                    zip(self.groups, self.buffers, self.rows)):
                np.add(penalty, prefix[dur:] - prefix[:-dur], out=cost)
                if self.timed:
                    cost += self.delays[k]
                k = cost.argmin(axis=1)
                best[at : at + js.size] = cost[rows, k]
                arg[at : at + js.size] = k
                at += js.size
        profit = self.v - self.g * best
        run = profit > 0
        value = float(lam @ self.cap) + float(profit[run].sum())
        s, p, g = arg[run], self.p[run], self.g[run]
        load = np.cumsum(np.bincount(s, g, T + 1) - np.bincount(s + p, g, T + 1))[:T]
        return value, self.cap - load, np.where(run, arg, -1)


_KERNEL: list[Any] = []

COLD_LIMIT = 2.0
"""Searches with a time limit below this (seconds) do not load the compiled kernel."""


def kernel_loaded() -> bool:
    """Whether the compiled kernel has been looked up in this process (loading it costs time)."""
    return bool(_KERNEL)


def compiled_kernel() -> Any:
    """The numba inner loop, or ``None`` when numba is not importable (looked up once)."""
    if not _KERNEL:
        kernel: Any = None
        try:
            from ._bound_compiled import cheapest_starts as kernel
        except ImportError as exc:
            logger.info("numba not available (%s): the Lagrangian oracle runs in numpy", exc)
        _KERNEL.append(kernel)
    return _KERNEL[0]


def grouped_kernel() -> Any:
    """The grouped inner loop (:attr:`LagrangianOracle.grouped`; numba is then importable)."""
    from ._bound_compiled import cheapest_from_release
    return cheapest_from_release


def initial_multipliers(oracle: LagrangianOracle) -> np.ndarray:
    """A first price per slot: the median value per GPU-slot on slots demand can overfill;
    0 when starts cost delay (``flow``: ``L(0)`` is then the bound of no waiting, and the
    value scale would price every slot far above the delays, docs/flow.md)."""
    inst = oracle.inst
    lam = np.zeros(inst.horizon)
    if not oracle.has_jobs or oracle.timed:
        return lam
    _, sub, _ = oracle(lam)
    density = oracle.v / (oracle.g * oracle.p)
    lam[sub < 0] = 0.5 * float(np.median(density))
    return lam


@dataclass
class Search:
    """State shared by the multiplier searches: best point, target, stopping."""

    inst: Instance
    oracle: LagrangianOracle
    deadline: float
    max_iter: int
    lower: float
    heuristic_every: int
    gap_tol: float
    best_value: float = math.inf
    best_lam: np.ndarray | None = None
    history: list[float] = field(default_factory=list)
    value_at: Callable[[np.ndarray], float] | None = None
    stop_reason: str = "iteration limit"
    stall_window: int = 300
    stall_tol: float = 1e-6

    def record(self, it: int, lam: np.ndarray, value: float) -> bool:
        """Keep the best point; refresh the target; ``True`` if the search should stop."""
        improved = value < self.best_value
        if improved:
            self.best_value, self.best_lam = value, lam.copy()
        if self.value_at is not None and (it % self.heuristic_every == 0):
            self.lower = max(self.lower, self.value_at(lam))
        self.history.append(self.best_value)
        if self.best_value - self.lower <= self.gap_tol * max(abs(self.best_value), 1e-12):
            self.stop_reason = "bound meets a feasible value"
            return True
        k = self.stall_window
        if len(self.history) > k and (
            self.history[-k - 1] - self.best_value <= self.stall_tol * abs(self.best_value)
        ):
            self.stop_reason = f"converged (improved by under {self.stall_tol:g} in {k} iterations)"
            return True
        if time.perf_counter() > self.deadline:
            self.stop_reason = "time limit"
            return True
        return False


def subgradient(search: Search, lam: np.ndarray, *, theta: float = 1.0, patience: int = 20,
                min_theta: float = 1e-5) -> int:
    """Projected subgradient with a Polyak step; returns the iterations done.

    Step ``theta * (L(lam) - target) / ||s||^2`` along the subgradient
    ``s`` (components that would push a zero multiplier below zero are
    dropped); ``theta`` is halved after ``patience`` iterations without a
    new best ``L``; the search restarts from the best point then.
    """
    stall = 0
    for it in range(search.max_iter):
        value, sub, _ = search.oracle(lam)
        before = search.best_value
        if search.record(it, lam, value):
            return it + 1
        if not math.isfinite(before) or search.best_value < before - 1e-12 * abs(before):
            stall = 0
        else:
            stall += 1
            if stall >= patience:
                theta, stall = theta / 2, 0
                assert search.best_lam is not None
                lam = search.best_lam.copy()
                if theta < min_theta:
                    search.stop_reason = "stopped improving, even at its smallest step"
                    return it + 1
                continue
        d = np.where((lam <= 0) & (sub > 0), 0.0, sub)
        norm2 = float(d @ d)
        if norm2 == 0.0:
            search.stop_reason = "zero subgradient: optimal multipliers"
            return it + 1
        step = theta * max(value - search.lower, 1e-9 * abs(value)) / norm2
        lam = np.maximum(0.0, lam - step * d)
    return search.max_iter


def volume(search: Search, lam: np.ndarray, *, f: float = 0.1, alpha_max: float = 0.1,
           red_limit: int = 20, min_f: float = 1e-5) -> int:
    """The Volume algorithm (Barahona and Anbil, 2000) over ``lam``; returns the iterations.

    Steps leave the best point along the averaged subgradient ``v`` (the
    average is the subgradient of the averaged relaxed solutions, an
    approximate primal solution), ``t = f (L(center) - target) / ||v||^2``.
    A step that improves on the center moves it there (green when the new
    subgradient agrees with ``v``: ``f`` grows by 10%; yellow otherwise); a
    step that does not is red, and ``red_limit`` reds in a row shrink ``f``
    by a third. The averaging weight minimizes ``||a s + (1 - a) v||`` within
    ``[alpha_max / 10, alpha_max]``.
    """
    center = lam.copy()
    value, sub, _ = search.oracle(center)
    if search.record(0, center, value):
        return 1
    center_value, avg = value, sub.copy()
    reds = 0
    for it in range(1, search.max_iter):
        d = np.where((center <= 0) & (avg > 0), 0.0, avg)
        norm2 = float(d @ d)
        if norm2 == 0.0:
            search.stop_reason = "zero averaged subgradient"
            return it
        step = f * max(center_value - search.lower, 1e-9 * abs(center_value)) / norm2
        trial = np.maximum(0.0, center - step * d)
        value, sub, _ = search.oracle(trial)
        diff = sub - avg
        dd = float(diff @ diff)
        a = alpha_max if dd == 0 else min(alpha_max, max(alpha_max / 10, -float(avg @ diff) / dd))
        avg = a * sub + (1 - a) * avg
        if value < center_value:
            if float(sub @ d) < 0:  # the new subgradient points the same way: green
                f = min(2.0, f * 1.1)
            center, center_value, reds = trial, value, 0
        else:
            reds += 1
            if reds >= red_limit:
                f, reds = f * 0.66, 0
                if f < min_f:
                    search.record(it, trial, value)
                    search.stop_reason = "stopped improving, even at its smallest step"
                    return it + 1
        if search.record(it, trial, value):
            return it + 1
    return search.max_iter


SEARCHES: dict[str, Callable[..., int]] = {"lagrangian": volume, "subgradient": subgradient}
"""Multiplier searches by method name."""


