"""Upper bounds at any scale: ``milp.bound`` finds multipliers, the certificate proves them.

Every bound here is the Lagrangian ``L(lam)`` of the specification (docs/model.md) at some
``lam >= 0``, evaluated by :func:`instances.lagrangian_value` (independent of
this module, rounded up). The methods differ in how they find ``lam``:

* ``lagrangian`` (default): the Volume algorithm over ``lam``
  (:func:`volume`), a subgradient method that averages the subgradients;
* ``subgradient``: projected subgradient with a Polyak step against a
  target (the best schedule value known) and step halving
  (:func:`subgradient`);
* ``lp-ipm``: the plain LP relaxation by HiGHS's interior point method
  without crossover, ``lam`` its capacity-row duals clipped at 0;
* ``pdlp``: the same LP by HiGHS's first-order solver (PDLP).

A dual that is not exactly optimal still gives a valid bound this way: only
its value suffers. The target of the step sizes is a feasible value, from
a ``primal`` callable given by the caller (a feasible value at the current
multipliers, e.g. the Lagrangian heuristic of the layer above, every few
iterations), or a fixed ``lower`` value. This package knows no heuristic.

Over 500 lines because the two multiplier searches, the LP-dual bounds and the bounds ``milp.solve`` holds share one oracle and one search state.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from instances import BoundCertificate, Instance, lagrangian_value

__all__ = [
    "BOUND_METHODS", "Bound", "HeldBounds", "LagrangianOracle", "bound", "bound_after_solve",
    "bounds_before_solve", "subgradient", "volume",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class Bound:
    """An upper bound on the value of every feasible schedule, with its certificate.

    Attributes
    ----------
    value
        The bound: ``instances.lagrangian_value(inst, multipliers)``.
    method
        How the multipliers were found (a key of :data:`BOUND_METHODS`).
    multipliers
        One multiplier per slot (read-only float64 array of length ``horizon``).
    runtime_s
        Wall-clock seconds.
    iterations
        Evaluations of ``L`` by the multiplier search (LP methods: 0).
    lower
        The best feasible value the search saw (its step target), or ``None``.
    history
        The best ``L`` (float, not rounded up) after each iteration.
    message
        Notes (why the search stopped, the LP's status).
    """

    value: float
    method: str
    multipliers: np.ndarray | None
    runtime_s: float
    iterations: int = 0
    lower: float | None = None
    history: tuple[float, ...] = field(default=(), repr=False)
    message: str = ""

    def certificate(self, inst: Instance) -> BoundCertificate:
        """The ``gpusched-bound/1`` certificate of this bound for ``inst``.

        Raises
        ------
        ValueError
            If the bound has no multipliers.
        """
        if self.multipliers is None:
            raise ValueError(f"multipliers: method {self.method!r} gives no certificate")
        return BoundCertificate(
            inst.name, self.method, self.value, tuple(float(x) for x in self.multipliers),
            {"runtime_s": round(self.runtime_s, 3), "iterations": self.iterations},
        )


class LagrangianOracle:
    """``L(lam)``, its subgradient and the relaxed solution, in float64 (not rounded).

    The feasible starts of every job are fixed by the instance, so they are
    found once: for each duration, a (jobs x starts) mask. One call then
    costs one prefix sum and one masked minimum per duration, O(jobs x
    slots); the search's values are checked at the end by
    :func:`instances.lagrangian_value`.
    """

    def __init__(self, inst: Instance, compiled: bool | None = None) -> None:
        T = inst.horizon
        self.inst = inst
        self.cap = (inst.num_gpus - inst.total_demand).astype(np.float64)
        g, p, r, end = inst.gpus, inst.durations, inst.releases, inst.deadlines
        capacity = inst.num_gpus - inst.total_demand
        self.groups: list[tuple[int, np.ndarray, np.ndarray]] = []
        for dur in np.unique(p).tolist() if inst.num_jobs else []:
            if dur > T:
                continue
            s = np.arange(T - dur + 1)
            room = np.lib.stride_tricks.sliding_window_view(capacity, dur).min(axis=1)
            js = np.flatnonzero(p == dur)
            ok = (s >= r[js, None]) & (s <= end[js, None] - dur) & (room >= g[js, None])
            has = ok.any(axis=1)
            if has.any():
                # +inf where a start is not feasible: cost = window + penalty
                penalty = np.where(ok[has], 0.0, np.inf)
                self.groups.append((dur, js[has], penalty))
        self.kernel = _compiled_kernel() if compiled is not False else None
        if compiled and self.kernel is None:
            raise ImportError("compiled: numba is not importable")
        if self.kernel is not None and not self.groups:
            self.kernel = None
        if self.kernel is not None:
            # every job's feasible starts, ascending, one run per job (CSR)
            per_job = [np.nonzero(np.isfinite(pen)) for _, _, pen in self.groups]
            counts = np.concatenate([np.bincount(r, minlength=pen.shape[0])
                                     for (r, _), (_, _, pen) in zip(per_job, self.groups)])
            self.offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
            self.starts = np.concatenate([c for _, c in per_job]).astype(np.int64)
            self.groups = [(d, js, pen[:0]) for d, js, pen in self.groups]  # masks not needed
        self.buffers = [np.empty_like(pen) for _, _, pen in self.groups]
        self.rows = [np.arange(js.size) for _, js, _ in self.groups]
        self.jobs = (np.concatenate([j for _, j, _ in self.groups]) if self.groups
                     else np.zeros(0, dtype=np.int64))
        self.v = inst.job_values[self.jobs].astype(np.float64)
        self.g = inst.gpus[self.jobs].astype(np.float64)
        self.p = inst.durations[self.jobs]
        self.calls = 0

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
        if self.kernel is not None:
            self.kernel(prefix, self.offsets, self.starts, self.p, best, arg)
        else:
            at = 0
            for (dur, js, penalty), cost, rows in zip(self.groups, self.buffers, self.rows):
                np.add(penalty, prefix[dur:] - prefix[:-dur], out=cost)
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


def _compiled_kernel() -> Any:
    """The numba inner loop, or ``None`` when numba is not importable (looked up once)."""
    if not _KERNEL:
        kernel: Any = None
        try:
            from ._bound_compiled import cheapest_starts as kernel
        except ImportError as exc:
            logger.info("numba not available (%s): the Lagrangian oracle runs in numpy", exc)
        _KERNEL.append(kernel)
    return _KERNEL[0]


def _initial(oracle: LagrangianOracle) -> np.ndarray:
    """A first price per slot: the median value per GPU-slot on slots demand can overfill."""
    inst = oracle.inst
    lam = np.zeros(inst.horizon)
    if not oracle.has_jobs:
        return lam
    _, sub, _ = oracle(lam)
    density = oracle.v / (oracle.g * oracle.p)
    lam[sub < 0] = 0.5 * float(np.median(density))
    return lam


@dataclass
class _Search:
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


def subgradient(search: _Search, lam: np.ndarray, *, theta: float = 1.0, patience: int = 20,
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


def volume(search: _Search, lam: np.ndarray, *, f: float = 0.1, alpha_max: float = 0.1,
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


def _lp_duals(inst: Instance, solver: str, time_limit: float | None,
              threads: int) -> tuple[list[np.ndarray], str]:
    """Candidate multipliers from the plain LP's capacity-row duals (both sign readings)."""
    from .formulation import ROW_CAPACITY, build
    from .highs import _new_highs
    from .highs import pass_model as _pass

    form = build(inst, rounding=())
    if form.num_cols == 0:
        return [np.zeros(inst.horizon)], "no job can run"
    h = _new_highs(threads)
    h.setOptionValue("solve_relaxation", True)
    h.setOptionValue("solver", solver)
    if solver == "ipm":
        h.setOptionValue("run_crossover", "off")
    if time_limit is not None:
        h.setOptionValue("time_limit", max(0.0, float(time_limit)))
    scale = _pass(h, form)
    h.run()
    status = h.modelStatusToString(h.getModelStatus())
    sol = h.getSolution()
    if not sol.dual_valid:
        return [], f"HiGHS {solver}: {status}, no dual solution"
    duals = np.asarray(sol.row_dual, dtype=np.float64) / scale
    rows = form.row_kind == ROW_CAPACITY
    out = []
    for sign in (1.0, -1.0):
        lam = np.zeros(inst.horizon)
        lam[form.row_ref[rows]] = np.maximum(0.0, sign * duals[rows])
        out.append(lam)
    return out, f"HiGHS {solver}: {status}"


def _finite(x: Any, name: str) -> float | None:
    if x is None:
        return None
    if isinstance(x, bool) or not isinstance(x, (int, float)) or math.isnan(x) or x < 0:
        raise ValueError(f"{name}: must be a number >= 0 or None, got {x!r}")
    return float(x)


BOUND_METHODS: dict[str, str] = {
    "lagrangian": "Volume algorithm over the slot multipliers (default)",
    "subgradient": "projected subgradient, Polyak step against the best value known, step halving",
    "lp-ipm": "plain LP by HiGHS interior point (no crossover); its capacity duals, certified",
    "pdlp": "plain LP by HiGHS's PDLP; its capacity duals, certified",
}
"""Bound method name -> description."""


def bound(
    inst: Instance,
    method: str = "lagrangian",
    time_limit: float | None = None,
    *,
    lower: float | None = None,
    primal: Callable[[np.ndarray], float] | None = None,
    max_iter: int = 3000,
    multipliers: Any = None,
    threads: int = 1,
    gap_tol: float = 1e-6,
    heuristic_every: int = 50,
) -> Bound:
    """An upper bound on every feasible schedule's value, certified by its multipliers.

    Parameters
    ----------
    inst
        The instance.
    method
        A key of :data:`BOUND_METHODS`.
    time_limit
        Wall-clock seconds (``None``: until the search converges or
        ``max_iter``; for the LP methods, no limit).
    lower
        A known feasible value (the step target); without one, ``primal``
        provides it every ``heuristic_every`` iterations (0 if neither).
    primal
        A feasible value at given multipliers, e.g.
        :func:`gpusched.dispatch.lagrangian_primal` (the Lagrangian
        heuristic, from the layer above). It only guides the steps: the
        bound is ``L`` at the multipliers, whatever ``primal`` returns.
    max_iter
        Largest number of evaluations of ``L`` by the search.
    multipliers
        Starting multipliers (length ``horizon``) for the searches.
    threads
        HiGHS threads (LP methods).
    gap_tol
        The search stops when the bound is within this relative distance of
        a feasible value.
    heuristic_every
        Run the Lagrangian heuristic every this many iterations to raise
        the target.

    Returns
    -------
    Bound
        ``value`` is :func:`instances.lagrangian_value` at the multipliers
        (rounded up, never down).

    Raises
    ------
    ValueError
        For an unknown method or a bad argument.
    """
    t0 = time.perf_counter()
    if method not in BOUND_METHODS:
        raise ValueError(f"method: must be one of {list(BOUND_METHODS)}, got {method!r}")
    limit = _finite(time_limit, "time_limit")
    low = _finite(lower, "lower")
    if not (isinstance(max_iter, int) and max_iter >= 1):
        raise ValueError(f"max_iter: must be an integer >= 1, got {max_iter!r}")
    if method in ("lp-ipm", "pdlp"):
        cands, note = _lp_duals(inst, "ipm" if method == "lp-ipm" else "pdlp", limit, threads)
        if not cands:
            cands = [np.zeros(inst.horizon)]
            note += "; multipliers 0 (the sum of values that fit)"
        values = [lagrangian_value(inst, lam) for lam in cands]
        k = int(np.argmin(values))
        lam = cands[k]
        lam.setflags(write=False)
        return Bound(values[k], method, lam, time.perf_counter() - t0, message=note)

    # loading numba's machine code costs 0.4-2 s in a fresh process: a short search
    # that would pay it runs the numpy oracle instead (3x slower per call on medium)
    cold = not _KERNEL and limit is not None and limit < COLD_LIMIT
    oracle = LagrangianOracle(inst, compiled=False if cold else None)
    if multipliers is not None:
        from instances.lagrangian import check_multipliers

        start = check_multipliers(inst, multipliers, where="multipliers")
    else:
        start = _initial(oracle)
    search = _Search(
        inst, oracle, deadline=t0 + (limit if limit is not None else math.inf),
        max_iter=max_iter, lower=low if low is not None else 0.0,
        heuristic_every=max(1, int(heuristic_every)), gap_tol=gap_tol,
        value_at=primal if oracle.has_jobs and low is None else None,
    )
    if not oracle.has_jobs:
        search.best_lam, search.stop_reason, iters = np.zeros(inst.horizon), "no job can run", 0
    else:
        iters = SEARCHES[method](search, start)
    lam = search.best_lam if search.best_lam is not None else start
    lam = np.maximum(lam, 0.0)
    lam.setflags(write=False)
    value = lagrangian_value(inst, lam)
    logger.debug("bound %s on %s: %.6g after %d iterations (%s)", method, inst.name, value,
                 iters, search.stop_reason)
    return Bound(value, method, lam, time.perf_counter() - t0, iters, search.lower,
                 tuple(search.history), search.stop_reason)


# ------------------------------------------------------------ inside milp.solve
LAGRANGIAN_FIRST_COLUMNS = 50_000
"""Models with at least this many columns get a Lagrangian bound before the backend runs."""

LAGRANGIAN_SHARE = 0.1
"""Share of ``milp.solve``'s time limit a Lagrangian bound may take (capped at 20 s)."""


@dataclass
class HeldBounds:
    """What :func:`milp.solve` holds beside the backend: a Lagrangian bound and the fixing.

    Attributes
    ----------
    lagrangian
        The Lagrangian bound, when one was computed.
    floor
        With reduced-cost fixing, the value ``V`` above which the reduced
        model's bounds hold (its dual and LP bounds count as ``max(V, b)``).
    removed
        Columns removed by the fixing.
    """

    lagrangian: Bound | None = None
    floor: float | None = None
    removed: int = 0

    def smallest(self, trivial: float, dual: float | None, lp: float | None,
                 solver_ok: bool) -> tuple[float, str]:
        """The smallest valid bound held and its name."""
        named = [(trivial, "sum-of-values")]
        for b, name in ((dual, "dual"), (lp, "lp")):
            if solver_ok and b is not None and math.isfinite(b):
                if self.floor is not None:
                    b, name = max(b, self.floor), f"{name}+fixing"
                named.append((b, name))
        if self.lagrangian is not None:
            named.append((self.lagrangian.value, "lagrangian"))
        return min(named, key=lambda x: x[0])

    def note(self) -> str:
        """One line for the result's message."""
        parts = []
        if self.lagrangian is not None:
            b = self.lagrangian
            parts.append(f"Lagrangian bound {b.value:.6g} ({b.iterations} iterations, "
                         f"{b.runtime_s:.2f} s)")
        if self.floor is not None:
            parts.append(f"reduced-cost fixing removed {self.removed} columns above {self.floor:.6g}")
        return "; ".join(parts)


def bounds_before_solve(
    form: Any, warm_start: np.ndarray | None, time_limit: float, elapsed: float, *,
    lagrangian: bool | Bound | None, fixing: bool,
) -> tuple[Any, HeldBounds]:
    """The Lagrangian bound (and the fixed formulation) :func:`milp.solve` starts from.

    ``lagrangian=None`` computes it first for models of
    :data:`LAGRANGIAN_FIRST_COLUMNS` columns or more; a :class:`Bound`
    (found earlier for this instance, e.g. by :func:`matheuristics.solve_milp`
    at scale) is held as it is; ``fixing`` needs one and a warm start (the
    fixing is relative to the warm start's value).
    """
    from .fixing import fix_columns, reduced_cost_fixing

    inst = form.instance
    held = HeldBounds()
    given = lagrangian if isinstance(lagrangian, Bound) else None
    if given is not None and (given.multipliers is None
                              or given.multipliers.shape != (inst.horizon,)):
        raise ValueError("lagrangian: a Bound with multipliers of this instance's horizon")
    first = given is not None or (
        lagrangian if lagrangian is not None else form.num_cols >= LAGRANGIAN_FIRST_COLUMNS)
    if not (first or fixing) or form.num_cols == 0:
        return form, held
    value = float(inst.job_values[warm_start >= 0].sum()) if warm_start is not None else None
    budget = min(20.0, LAGRANGIAN_SHARE * time_limit, max(0.0, time_limit - elapsed))
    held.lagrangian = given if given is not None else bound(
        inst, "lagrangian", time_limit=budget, lower=value)
    if fixing and value is not None:
        fx = reduced_cost_fixing(form, held.lagrangian.multipliers, value)
        held.floor, held.removed = value, fx.removed
        form = fix_columns(form, fx)
    return form, held


AFTER_SHARE = 0.05
"""Share of the time limit (capped at 2 s) of the search run when the backend left no bound."""


def bound_after_solve(inst: Instance, held: HeldBounds, dual: float | None, lp: float | None,
                      lagrangian: bool | None, time_limit: float,
                      lower: float | None = None) -> None:
    """A short Lagrangian search when the backend left no bound but the sum of values.

    It takes at most ``AFTER_SHARE`` of ``time_limit`` (capped at 2 s): none
    with a limit of 0.
    """
    budget = min(2.0, AFTER_SHARE * time_limit)
    if (held.lagrangian is None and lagrangian is not False and dual is None and lp is None
            and budget > 0):
        held.lagrangian = bound(inst, "lagrangian", time_limit=budget, lower=lower)
