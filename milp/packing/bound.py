"""The bound on the GPU milli any offline placement can hold, and the best offline packing.

A configuration LP over node types (the Gilmore-Gomory model of bin packing,
with CPU, memory, models and GPU by GPU shares in each configuration)::

    max  sum_c value_c x_c
    s.t. sum_{c of type t} x_c <= n_t          (nodes of type t; price mu_t)
         sum_c a_sc x_c <= d_s                 (pods of shape s; price pi_s)

solved by column generation on HiGHS: the restricted LP gives prices, each
node type's pricing MIP (:mod:`.pricing`) the most valuable configuration at
those prices. At every round where every type was priced, the prices prove
``sum_s d_s pi_s + sum_t n_t max(0, z_t)`` (weak duality), whether or not the
LP has converged; the lowest is the bound, and its prices are the
certificate :func:`instances.packing.check_packing_bound` re-checks. The best
offline packing is the restricted master solved as a MIP over the columns
found (and those of any placements given as starts), realized on actual pods
and nodes and passed through the checker.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from instances.packing import (
    Packing,
    PackingCertificate,
    Placement,
    evaluate_placement,
)

from ..highs import silence_banner
from .columns import Column, Groups, group, placement_columns, realize, single_shape_columns
from .pricing import price_type, stdout_closed

__all__ = ["PackingBound", "packing_bound"]

logger = logging.getLogger(__name__)

SAFETY = 1e-6
"""Relative margin added to every pricing bound (the MIP's tolerances)."""

PRICING_SECONDS = 10.0
"""Most seconds one pricing MIP may take (its dual bound still counts when it stops)."""

MIP_SLACK = 30.0
"""The best packing's MIP uses the columns the LP uses and those whose reduced cost is
within this many milli of zero."""

ROUNDING_SHARE = 0.25
"""Share of the time limit kept for the restricted master MIP (the best packing)."""


@dataclass(frozen=True)
class PackingBound:
    """The bound and the best offline packing of a packing's pods.

    Attributes
    ----------
    bound_milli
        No placement of a subset of the pods holds more GPU milli.
    best_milli
        GPU milli of :attr:`best_placement` (checked), the best packing found.
    lp_milli
        The restricted LP's value when the loop ended (the bound once converged).
    status
        ``optimal`` (bound = best), ``converged`` (the LP is solved; its gap is
        the LP's), or ``time_limit``.
    certificate
        The prices that prove the bound.
    best_placement
        A placement of value :attr:`best_milli` (``None`` when nothing is placed).
    iterations, columns, runtime_s
        Rounds of pricing, configurations generated, seconds.
    """

    bound_milli: int
    best_milli: int
    lp_milli: float
    status: str
    certificate: PackingCertificate
    best_placement: Placement | None
    iterations: int
    columns: int
    runtime_s: float

    @property
    def gap_milli(self) -> int:
        """``bound - best``: how far the bound may be from the optimum."""
        return self.bound_milli - self.best_milli


class _Master:
    """The restricted LP, grown one column at a time (HiGHS warm-starts each solve)."""

    def __init__(self, gr: Groups) -> None:
        import highspy

        silence_banner()
        self.gr = gr
        self.h = highspy.Highs()
        self.h.setOptionValue("output_flag", False)
        self.h.setOptionValue("threads", 1)
        inf = highspy.kHighsInf
        self.h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        T, S = gr.num_types, gr.num_shapes
        self.h.addRows(T + S, np.full(T + S, -inf),
                       np.concatenate([gr.t_count, gr.count]).astype(np.float64),
                       0, np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
        self.columns: list[Column] = []
        self.keys: set[tuple] = set()

    def add(self, col: Column) -> bool:
        k = col.key()
        if k in self.keys:
            return False
        a = col.counts(self.gr.num_shapes)
        rows = np.concatenate([[col.node_type], self.gr.num_types + np.flatnonzero(a)])
        vals = np.concatenate([[1.0], a[a > 0].astype(np.float64)])
        value = float(np.dot(a, self.gr.value))
        self.h.addCol(value, 0.0, np.inf, len(rows), rows.astype(np.int32), vals)
        self.columns.append(col)
        self.keys.add(k)
        return True

    def solve(self, time_limit: float) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
        """LP value, column values, node-type prices, shape prices."""
        self.h.setOptionValue("time_limit", max(0.01, time_limit))
        self.h.run()
        sol = self.h.getSolution()
        duals = np.maximum(np.asarray(sol.row_dual, dtype=np.float64), 0.0)
        T = self.gr.num_types
        return (float(self.h.getInfo().objective_function_value),
                np.asarray(sol.col_value, dtype=np.float64), duals[:T], duals[T:])

    def integer(self, time_limit: float, start: np.ndarray | None) -> np.ndarray | None:
        """The restricted master as a MIP over the columns the LP uses or nearly prices in,
        and the start's (``None`` if no solution in time)."""
        import highspy

        n = len(self.columns)
        self.h.setOptionValue("time_limit", max(0.01, time_limit))
        self.h.run()  # the LP again: its solution and reduced costs pick the MIP's columns
        sol = self.h.getSolution()
        keep = ((np.asarray(sol.col_value) > 1e-9) | (np.asarray(sol.col_dual) >= -MIP_SLACK)
                | ((start > 0) if start is not None else False))
        drop = np.flatnonzero(~keep).astype(np.int32)
        if len(drop):
            self.h.changeColsBounds(len(drop), drop, np.zeros(len(drop)), np.zeros(len(drop)))
        self.h.changeColsIntegrality(n, np.arange(n, dtype=np.int32),
                                     np.full(n, highspy.HighsVarType.kInteger))
        self.h.setOptionValue("time_limit", max(0.01, time_limit))
        self.h.setOptionValue("mip_rel_gap", 0.0)
        if start is not None:
            sol = highspy.HighsSolution()
            sol.col_value = list(map(float, start))
            with stdout_closed():  # HiGHS may run a sub-MIP on a given solution, and print
                self.h.setSolution(sol)
        with stdout_closed():
            self.h.run()
        if self.h.getInfo().primal_solution_status != 2:
            return None
        return np.rint(np.asarray(self.h.getSolution().col_value)).astype(np.int64)


def _every_pod(gr: Groups) -> tuple[float, np.ndarray, np.ndarray]:
    """The bound "every pod placed" and the prices that prove it (any prices prove a bound:
    each shape priced at its value leaves no configuration a profit)."""
    return float(np.dot(gr.count, gr.value)), gr.value.astype(np.float64), np.zeros(gr.num_types)


def _in_milli(ub: float, packing: Packing) -> int:
    """A proven bound as whole milli, never above the cluster's (nothing holds more than all
    GPUs)."""
    return min(math.floor(ub + 1e-6), packing.capacity_milli)


def _generate(gr: Groups, m: _Master, budget_end: float, t0: float,
              lower: int) -> tuple[float, np.ndarray, np.ndarray, float, int, str]:
    """Column generation: returns the lowest proven bound, its prices and pricing values,
    the last LP value, the rounds and the status (``lower``: a value known feasible)."""
    ub, prices, values = _every_pod(gr)
    lp, iterations, status = 0.0, 0, "time_limit"
    while gr.num_shapes and time.perf_counter() < budget_end and ub >= lower + 1:
        lp, _, mu, pi = m.solve(budget_end - time.perf_counter())
        iterations += 1
        z = np.zeros(gr.num_types)
        added, proven_all = 0, True
        for t in range(gr.num_types):
            left = budget_end - time.perf_counter()
            if left <= 0:
                z[t], proven_all = math.inf, False
                continue
            got = price_type(gr, t, gr.value - pi, min(left, PRICING_SECONDS))
            z[t] = got.bound
            proven_all &= got.optimal
            if got.column is not None and got.profit - mu[t] > 1e-6 * max(1.0, got.profit):
                added += m.add(got.column)
        if np.all(np.isfinite(z)):
            margin = SAFETY * np.maximum(1.0, np.abs(z))
            proven = float(np.dot(gr.count, pi) + np.dot(gr.t_count, np.maximum(0.0, z + margin)))
            if proven < ub:
                ub, prices, values = proven, pi.copy(), z.copy()
        logger.info("round %d: LP %.1f, bound %.1f, %d columns (+%d), %.1f s", iterations, lp,
                    ub, len(m.columns), added, time.perf_counter() - t0)
        if (not added and proven_all) or ub - lp <= 1e-6 * max(1.0, ub):
            status = "converged"  # no column improves the LP: the LP is solved
            break
    return ub, prices, values, lp, iterations, status


def packing_bound(packing: Packing, *, time_limit: float = 60.0,
                  starts: Sequence[Placement] = ()) -> PackingBound:
    """The bound and the best offline packing of all of ``packing``'s pods.

    Parameters
    ----------
    packing
        Nodes and pods (for the pods arrived by some point, pass ``packing.head(k)``).
    time_limit
        Seconds for the whole computation (a quarter is kept for the best packing).
    starts
        Valid placements whose configurations seed the LP and whose best is the
        first incumbent of the best packing (e.g. the policies' runs).
    """
    t0 = time.perf_counter()
    deadline = t0 + time_limit
    gr = group(packing)
    m = _Master(gr)
    incumbent: Placement | None = None
    best = -1
    x_start: dict[tuple, int] = {}
    for pl in starts:
        value = evaluate_placement(packing, pl).allocated_milli
        cols = placement_columns(packing, gr, pl)
        for col in cols:
            m.add(col)
        if value > best:
            best, incumbent = value, pl
            x_start = {c.key(): k for c, k in cols.items()}
    for col in single_shape_columns(gr):
        m.add(col)
    budget_end = t0 + (1 - ROUNDING_SHARE) * time_limit
    ub, prices, values, lp, iterations, status = _generate(gr, m, budget_end, t0, best)
    # the best offline packing: the restricted master as a MIP, the best start as its start
    if m.columns and best < _in_milli(ub, packing):
        start = np.array([x_start.get(c.key(), 0) for c in m.columns], dtype=np.float64)
        x = m.integer(max(1.0, deadline - time.perf_counter()), start if x_start else None)
        if x is not None:
            pl = realize(packing, gr, m.columns, x)
            value = evaluate_placement(packing, pl).allocated_milli
            if value > best:
                best, incumbent = value, pl
    best = max(best, 0)
    bound = _in_milli(ub, packing)
    if bound < best:  # a bug: no bound is reported below a checked packing
        logger.error("packing bound %d milli is below the best packing's %d: a bug; the bound "
                     "of every pod placed is reported instead", bound, best)
        ub, prices, values = _every_pod(gr)
        bound = _in_milli(ub, packing)
        status = "time_limit"
    if best >= bound:
        status = "optimal"
    cert = PackingCertificate(
        packing=packing.name, pods=len(packing.pods), bound_milli=bound,
        shapes=tuple((int(gr.gpus[s]), int(gr.milli[s]), int(gr.cpu[s]), int(gr.mem[s]),
                      gr.models[s]) for s in range(gr.num_shapes)),
        prices=tuple(float(p) for p in prices),
        types=tuple((int(gr.t_gpus[t]), gr.t_model[t], int(gr.t_cpu[t]), int(gr.t_mem[t]))
                    for t in range(gr.num_types)),
        values=tuple(float(v) for v in values),
    )
    return PackingBound(bound, best, lp, status, cert, incumbent, iterations, len(m.columns),
                        time.perf_counter() - t0)
