"""One entry point for every method by name: the heuristics' registry, then the exact methods."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

import heuristics
import milp
from heuristics import start_value
from heuristics.lagrangian import lagrangian_starts
from instances import Instance, Result

__all__ = ["EXACT_METHODS", "lagrangian_primal", "method_names", "solve"]

EXACT_METHODS: dict[str, str] = dict(milp.METHOD_BACKENDS)
"""Exact method name -> ``milp.solve`` backend (:data:`milp.METHOD_NAMES` read backwards)."""


def method_names() -> list[str]:
    """Every method ``solve`` accepts: the heuristics (plugins included), then the exact methods."""
    return [*heuristics.METHODS, *EXACT_METHODS]


def solve(inst: Instance, method: str, *, time_limit: float | None = None, **params: Any) -> Result:
    """Run any method by name: an exact method of :data:`EXACT_METHODS` through
    :func:`matheuristics.solve_milp` (warm started by ``best``, with the LNS helper),
    a heuristic of :data:`heuristics.METHODS` through :func:`heuristics.solve`.

    ``time_limit`` is in seconds, for the exact methods (default 60) and the
    heuristics that take a budget; the others ignore it.

    Raises
    ------
    ValueError
        For an unknown method or parameter.
    """
    if method in EXACT_METHODS:
        heuristics.refuse_user_placement(method, params.get("placement"))
        import matheuristics

        return matheuristics.solve_milp(
            inst, time_limit=60.0 if time_limit is None else time_limit,
            backend=EXACT_METHODS[method], **params,
        )
    if method not in heuristics.METHODS:
        raise ValueError(f"method: unknown method {method!r}; known: {', '.join(method_names())}")
    if time_limit is not None and _accepts(heuristics.METHODS[method], "time_limit"):
        params["time_limit"] = time_limit
    return heuristics.solve(inst, method, **params)


def _accepts(fn: Any, name: str) -> bool:
    """Whether ``fn`` takes a parameter ``name``."""
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        return False


def lagrangian_primal(inst: Instance) -> Callable[[np.ndarray], float]:
    """A feasible value at given multipliers: the Lagrangian heuristic's schedule.

    The step target :func:`milp.bound` takes as ``primal`` (milp knows no heuristic).
    """
    def value_at(lam: np.ndarray) -> float:
        return float(start_value(inst, lagrangian_starts(inst, lam)[0]))

    return value_at
