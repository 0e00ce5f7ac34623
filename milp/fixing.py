"""Reduced-cost fixing: drop the starts that cannot be part of a schedule better than V.

With multipliers ``lam`` the Lagrangian bound of the schedules that start
job ``j`` at ``s`` is

    L(lam) - best_j(lam) + (v_j - g_j * sum_{t in run(s)} lam[t])

(job ``j``'s term in ``L`` replaced by the value of that one start). When it
is below the value ``V`` of a known schedule, no schedule using that start
beats ``V``, and the column can be removed. The reduced model then holds
every schedule better than ``V``; its bound is valid only above ``V``, so the
valid bound is ``max(V, bound of the reduced model)``.

The test is vectorized over all columns of a :class:`~milp.Formulation`;
a group of identical jobs (an integer column) is handled the same way, one
copy forced at ``s``. On nodes the multipliers are the flat relaxation's
(the pool rows relaxed, the node rows dropped: a relaxation of the node
problem), so a column is removed with every placement at its start.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from instances import Instance, lagrangian_value
from instances.lagrangian import capacity_amounts, check_multipliers

from .formulation import Formulation

__all__ = ["Fixing", "column_bounds", "fix_columns", "reduced_cost_fixing"]

FIXING_TOLERANCE = 1e-7
"""Relative margin: a column is removed only when its bound is below ``V`` by this much."""


@dataclass(frozen=True, eq=False)
class Fixing:
    """Which columns survive reduced-cost fixing.

    Attributes
    ----------
    keep
        Boolean mask over the formulation's columns (read-only).
    threshold
        ``V``: the value of the schedule the fixing is relative to.
    bound
        ``L(lam)``, as certified by :func:`instances.lagrangian_value`.
    """

    keep: np.ndarray
    threshold: float
    bound: float

    @property
    def removed(self) -> int:
        """Number of columns removed."""
        return int(self.keep.size - np.count_nonzero(self.keep))

    @property
    def share_removed(self) -> float:
        """Share of the columns removed (0 for a model without columns)."""
        return self.removed / self.keep.size if self.keep.size else 0.0


def column_bounds(inst: Instance, lam: np.ndarray, jobs: np.ndarray, starts: np.ndarray,
                  total: float) -> np.ndarray:
    """The Lagrangian bound with job ``jobs[i]`` forced to start at ``starts[i]``, per column.

    ``total`` is ``L(lam)``; each job's best term is taken over the columns
    given (they must be all of its feasible starts, as a formulation's are).
    """
    prefix = np.concatenate([[0.0], np.cumsum(lam)])
    p = inst.durations[jobs]
    profit = (inst.worth_base[jobs] - inst.worth_slope[jobs] * starts
              - capacity_amounts(inst)[jobs] * (prefix[starts + p] - prefix[starts]))
    best = np.zeros(inst.num_jobs)
    np.maximum.at(best, jobs, profit)
    return total - best[jobs] + profit


def reduced_cost_fixing(form: Formulation, lam: object, value: float) -> Fixing:
    """The columns of ``form`` that a schedule better than ``value`` may use.

    Parameters
    ----------
    form
        The formulation.
    lam
        Multipliers, one per slot, ``>= 0``.
    value
        ``V``, the value of a feasible schedule.

    Returns
    -------
    Fixing
        Columns whose forced bound is below ``V`` by more than
        :data:`FIXING_TOLERANCE` (relative) are removed.
    """
    inst = form.instance
    lam = check_multipliers(inst, lam)
    total = lagrangian_value(inst, lam)
    keep = np.ones(form.num_cols, dtype=bool)  # the running sums of symmetry rows stay
    if form.num_x:
        forced = column_bounds(inst, lam, form.col_job, form.col_start, total)
        slack = FIXING_TOLERANCE * max(abs(value), abs(total), 1e-12)
        keep[: form.num_x] = forced >= value - slack
    keep.setflags(write=False)
    return Fixing(keep, float(value), total)


def fix_columns(form: Formulation, fixing: Fixing) -> Formulation:
    """``form`` with the removed columns' upper bounds set to 0 (presolve drops them)."""
    upper = np.where(fixing.keep, form.col_upper, 0.0)
    upper.setflags(write=False)
    stats = {**form.stats, "columns_fixed": fixing.removed}
    return replace(form, col_upper=upper, stats=stats)
