"""Matheuristics: the methods that use both the heuristics and the MILP, above both.

- :mod:`matheuristics.lns` (``lns``): the large-neighbourhood search of
  :func:`lns_improve` (:mod:`matheuristics.search`: time windows of
  :mod:`~matheuristics.windows` re-solved exactly by :mod:`~matheuristics.subsolve`,
  on arrays, with the LP guide of :mod:`~matheuristics.guide`; its parameters
  one :class:`LNSParams`, its end a stopping criterion of :mod:`heuristics.stop`);
- :mod:`matheuristics.best` (``best``): the best of the fast heuristics and
  the LNS in one budget;
- on model version 3 the LNS keeps GPU indices (:func:`lns_improve_indices`;
  the windows' fixed use by GPU index, :mod:`~matheuristics.gpus`,
  :mod:`~matheuristics.resources`);
- :mod:`matheuristics.lagrangian` (``lagrangian``): the Lagrangian heuristic
  at the multipliers of :func:`milp.bound`, with their certified bound;
- :class:`LNSHelper` (:mod:`matheuristics.helper`): the LNS beside HiGHS,
  trading incumbents with it through :class:`milp.IncumbentHooks`;
- :func:`solve_milp` (:mod:`matheuristics.exact`): :func:`milp.solve` with
  the automatic warm start (``best``) and the LNS helper on two threads, as
  ``gpusched.solve(inst, "milp")`` runs it.

``heuristics`` and ``milp`` import nothing from here, nor from each other.
``lns``, ``best`` and ``lagrangian`` stay reachable as ``heuristics.solve(inst, "lns")`` and
``heuristics.solve(inst, "best")``: the entry points ``gpusched.methods``
name :data:`LNS_METHOD`, :data:`BEST_METHOD` and :data:`LAGRANGIAN_METHOD` (see
:mod:`heuristics`).
"""

from heuristics import MethodSpec

from . import (
    best,
    exact,
    gpus,
    guide,
    helper,
    lagrangian,
    lns,
    params,
    resources,
    search,
    subsolve,
    windows,
)
from .best import CONSTRUCTIVE_MEMBERS
from .exact import solve_milp, warm_start_schedule
from .helper import LNSHelper
from .params import LNSParams
from .search import IndexedRun, LNSRun, lns_improve, lns_improve_indices

__all__ = [
    "BEST_METHOD", "CONSTRUCTIVE_MEMBERS", "LAGRANGIAN_METHOD", "LNS_METHOD", "IndexedRun",
    "LNSHelper", "LNSParams", "LNSRun", "best", "exact", "gpus", "guide", "helper", "lagrangian",
    "lns", "lns_improve", "lns_improve_indices", "params", "resources", "search", "solve_milp",
    "subsolve", "warm_start_schedule", "windows",
]

LNS_METHOD = MethodSpec(
    lns.lns,
    "sampling + local search, then windows re-solved exactly by the MILP "
    "(time_limit=, rounds=, seed=, guided=)",
)
"""The ``lns`` method of the registry (entry point ``gpusched.methods``)."""

BEST_METHOD = MethodSpec(
    best.best, "best of the fast methods within a budget (time_limit=10 s by default)"
)
"""The ``best`` method of the registry (entry point ``gpusched.methods``)."""

LAGRANGIAN_METHOD = MethodSpec(
    lagrangian.lagrangian,
    "the Lagrangian heuristic at the Volume multipliers, with their certified bound "
    "(time_limit=10 s for the multipliers)",
)
"""The ``lagrangian`` method of the registry (entry point ``gpusched.methods``)."""
