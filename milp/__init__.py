"""The exact time-indexed MILP (the specification (docs/model.md)): built as arrays, solved by HiGHS.

::

    form = milp.build(inst)                      # arrays, no solving (flat, or on nodes)
    form.to_pulp(); form.write_mps("m.mps")     # export
    res = milp.solve(inst, time_limit=60, warm_start=None)   # HiGHS
    res = milp.solve(inst, backend="cpsat")      # the independent cross-check
    res = milp.solve(inst, milp.MILPParams(time_limit=60, threads=2))  # the options as one object
    milp.price_of_topology(node_inst, 60)        # flat optimum minus node optimum, or bounds
    milp.relaxation(v3_inst, "fluid")            # a relaxation's bound (model version 3)
    milp.price_of_sharing(v3_inst, 60)           # fluid optimum minus optimum, or bounds

One model for every instance: a flat pool is one node of ``G`` GPUs
(:mod:`instances.capacity`), so an instance with nodes is solved by the same
build, backends and checks, with node rows where they can bind; the
resources of model version 3 (GPU models, shared GPUs, CPU, memory) are
further rows and columns of the same build (:mod:`milp.shares`).

Backends (:data:`BACKENDS`): ``highs`` (method ``milp``), ``pulp``
(``milp-pulp``), ``cpsat`` (``cpsat``), ``portfolio`` (``milp``). Every
result's value is recomputed by the checker and its upper bound is never
below a feasible value.

This package knows no heuristic: a warm start is given to it, and work beside
the search (the LNS helper) comes in through :class:`IncumbentHooks`. The
automatic warm start and the helper are in :mod:`matheuristics`, above both.
"""

from pathlib import Path as _Path

import instances as _instances
from instances import kernel_cache

from .backend import IncumbentHooks, RawSolve, Solution
from .bound import BOUND_METHODS, Bound, bound
from .builder import build
from .formulation import DEFAULT_MAX_COLUMNS, Formulation
from .params import MILPParams
from .progress import Progress
from .relaxation import Relaxed, relaxation
from .shares import RELAXATIONS
from .solver import BACKENDS, METHOD_BACKENDS, METHOD_NAMES, solve, solve_arrays
from .symmetry import SYMMETRY
from .topology import PriceOfSharing, PriceOfTopology, price_of_sharing, price_of_topology

kernel_cache.guard(_Path(__file__).parent, _Path(_instances.__file__).parent)  # its kernels call instances'

__all__ = [
    "BACKENDS",
    "BOUND_METHODS",
    "DEFAULT_MAX_COLUMNS",
    "METHOD_BACKENDS",
    "METHOD_NAMES",
    "RELAXATIONS",
    "SYMMETRY",
    "Bound",
    "Formulation",
    "IncumbentHooks",
    "MILPParams",
    "PriceOfSharing",
    "PriceOfTopology",
    "Progress",
    "RawSolve",
    "Relaxed",
    "Solution",
    "bound",
    "build",
    "price_of_sharing",
    "price_of_topology",
    "relaxation",
    "solve",
    "solve_arrays",
]
