"""The bounds :func:`milp.solve` holds beside its backend: a Lagrangian bound, the fixing, a relaxation.

Before the backend runs (:func:`bounds_before_solve`): a Lagrangian bound
for large models and reduced-cost fixing relative to the warm start's value.
After it (:func:`bound_after_solve`): a short Lagrangian search when the
backend left no bound. On nodes, the flat model's bound (a relaxation) is
held too. :meth:`HeldBounds.smallest` picks the smallest valid one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from instances import Instance
from instances.objective import start_worth

from .bound import LAGRANGIAN_SHARE, Bound, bound
from .fixing import fix_columns, reduced_cost_fixing

__all__ = ["AFTER_SHARE", "LAGRANGIAN_FIRST_COLUMNS", "HeldBounds", "bound_after_solve",
           "bounds_before_solve"]

LAGRANGIAN_FIRST_COLUMNS = 50_000
"""Models with at least this many columns get a Lagrangian bound before the backend runs."""


@dataclass
class HeldBounds:
    """What :func:`milp.solve` holds beside the backend: a Lagrangian bound, the fixing, a relaxation.

    Attributes
    ----------
    lagrangian
        The Lagrangian bound, when one was computed.
    floor
        With reduced-cost fixing, the value ``V`` above which the reduced
        model's bounds hold (its dual and LP bounds count as ``max(V, b)``).
    removed
        Columns removed by the fixing.
    flat
        On nodes, the bound of a solve of the flat model (a relaxation), and that solve's status.
    relaxed
        On model version 3, the bound of a solve of a relaxation, its status and its kind
        (:func:`milp.relaxation`; the kind names the bound).
    """

    lagrangian: Bound | None = None
    floor: float | None = None
    removed: int = 0
    flat: tuple[float, str] | None = None
    relaxed: tuple[float, str, str] | None = None

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
        if self.flat is not None:
            named.append((self.flat[0], "flat"))
        if self.relaxed is not None:
            named.append((self.relaxed[0], self.relaxed[2]))
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
        if self.flat is not None:
            parts.append(f"flat model: {self.flat[1]}, bound {self.flat[0]:.6g}")
        if self.relaxed is not None:
            value, status, kind = self.relaxed
            parts.append(f"{kind} relaxation: {status}, bound {value:.6g}")
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
    value = start_worth(inst, warm_start) if warm_start is not None else None
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
    """A short Lagrangian search when the backend left no bound but the sum of values (nor a
    flat model's).

    It takes at most ``AFTER_SHARE`` of ``time_limit`` (capped at 2 s): none
    with a limit of 0.
    """
    budget = min(2.0, AFTER_SHARE * time_limit)
    if (held.lagrangian is None and held.flat is None and held.relaxed is None
            and lagrangian is not False and dual is None and lp is None and budget > 0):
        held.lagrangian = bound(inst, "lagrangian", time_limit=budget, lower=lower)
