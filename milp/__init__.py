"""The exact time-indexed MILP (the specification (docs/model.md)): built as arrays, solved by HiGHS.

::

    form = milp.build(inst)                      # arrays, no solving (flat, or on nodes)
    form.to_pulp(); form.write_mps("m.mps")     # export
    res = milp.solve(inst, time_limit=60, warm_start=None)   # HiGHS
    res = milp.solve(inst, backend="cpsat")      # the independent cross-check
    milp.price_of_topology(node_inst, 60)        # flat optimum minus node optimum, or bounds

One model for every instance: a flat pool is one node of ``G`` GPUs
(:mod:`instances.capacity`), so an instance with nodes is solved by the same
build, backends and checks, with node rows where they can bind.

Backends (:data:`BACKENDS`): ``highs`` (method ``milp``), ``pulp``
(``milp-pulp``), ``cpsat`` (``cpsat``), ``portfolio`` (``milp``). Every
result's value is recomputed by the checker and its upper bound is never
below a feasible value.

This package knows no heuristic: a warm start is given to it, and work beside
the search (the LNS helper) comes in through :class:`IncumbentHooks`. The
automatic warm start and the helper are in :mod:`matheuristics`, above both.
"""

from .backend import IncumbentHooks, RawSolve, Solution
from .bound import BOUND_METHODS, Bound, bound
from .builder import build
from .formulation import DEFAULT_MAX_COLUMNS, Formulation
from .progress import Progress
from .solver import BACKENDS, METHOD_BACKENDS, METHOD_NAMES, solve, solve_arrays
from .symmetry import SYMMETRY
from .topology import PriceOfTopology, price_of_topology

__all__ = [
    "BACKENDS",
    "BOUND_METHODS",
    "DEFAULT_MAX_COLUMNS",
    "METHOD_BACKENDS",
    "METHOD_NAMES",
    "SYMMETRY",
    "Bound",
    "Formulation",
    "IncumbentHooks",
    "PriceOfTopology",
    "Progress",
    "RawSolve",
    "Solution",
    "bound",
    "build",
    "price_of_topology",
    "solve",
    "solve_arrays",
]
