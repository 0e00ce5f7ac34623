"""The exact time-indexed MILP (PROBLEM.md section 4): built as arrays, solved by HiGHS.

::

    form = milp.build(inst)                      # arrays, no solving
    form.to_pulp(); form.write_mps("m.mps")     # export
    res = milp.solve(inst, time_limit=60)        # HiGHS, warm-started by a heuristic
    res = milp.solve(inst, backend="cpsat")      # the independent cross-check

Backends (:data:`BACKENDS`): ``highs`` (method ``milp``), ``pulp``
(``milp-pulp``), ``cpsat`` (``cpsat``). Every result's value is recomputed by
the checker and its upper bound is never below a feasible value.
"""

from .bound import BOUND_METHODS, Bound, bound
from .formulation import DEFAULT_MAX_COLUMNS, Formulation, build
from .solver import BACKENDS, METHOD_NAMES, solve, warm_start_schedule

__all__ = [
    "BACKENDS",
    "BOUND_METHODS",
    "DEFAULT_MAX_COLUMNS",
    "METHOD_NAMES",
    "Bound",
    "Formulation",
    "bound",
    "build",
    "solve",
    "warm_start_schedule",
]
