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
from instances.objective import report_bound
from instances.resources import uses_resources

from .builder import build
from .formulation import ROW_CAPACITY
from .highs import new_highs, pass_model
from .lagrange import (
    COLD_LIMIT,
    SEARCHES,
    LagrangianOracle,
    Search,
    initial_multipliers,
    kernel_loaded,
)

__all__ = ["BOUND_METHODS", "LAGRANGIAN_SHARE", "Bound", "LagrangianOracle", "bound"]

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

    def reported(self, inst: Instance) -> float:
        """The bound in the objective's units: an upper bound on ``V``, a lower bound on ``F``
        (:func:`instances.objective.report_bound`; :attr:`value` bounds the worth).
        """
        return report_bound(inst, self.value)

    def certificate(self, inst: Instance) -> BoundCertificate:
        """The ``gpusched-bound/1`` certificate of this bound for ``inst``.

        Raises
        ------
        ValueError
            If the bound has no multipliers.
        """
        if self.multipliers is None:
            raise ValueError(f"multipliers: method {self.method!r} gives no certificate")
        return BoundCertificate(  # the bound in the objective's units (a lower bound on F)
            inst.name, self.method, self.reported(inst), tuple(float(x) for x in self.multipliers),
            {"runtime_s": round(self.runtime_s, 3), "iterations": self.iterations},
        )


def _lp_duals(inst: Instance, solver: str, time_limit: float | None,
              threads: int) -> tuple[list[np.ndarray], str]:
    """Candidate multipliers from the plain LP's capacity-row duals (both sign readings)."""
    if uses_resources(inst):  # the flat model on a_j: the rows the multipliers price
        form = build(inst, rounding=(), relax="flat")
    else:
        form = build(inst.replace(nodes=None) if inst.has_nodes else inst, rounding=())
    if form.num_cols == 0:
        return [np.zeros(inst.horizon)], "no job can run"
    h = new_highs(threads)
    h.setOptionValue("solve_relaxation", True)
    h.setOptionValue("solver", solver)
    if solver == "ipm":
        h.setOptionValue("run_crossover", "off")
    if time_limit is not None:
        h.setOptionValue("time_limit", max(0.0, float(time_limit)))
    scale = pass_model(h, form)
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


LAGRANGIAN_SHARE = 0.1
"""Share of ``milp.solve``'s time limit a Lagrangian bound may take (capped at 20 s)."""

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
    cold = not kernel_loaded() and limit is not None and limit < COLD_LIMIT
    oracle = LagrangianOracle(inst, compiled=False if cold else None)
    if multipliers is not None:
        from instances.lagrangian import check_multipliers

        start = check_multipliers(inst, multipliers, where="multipliers")
    else:
        start = initial_multipliers(oracle)
    search = Search(
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


