"""The names of the node model from before it became the one model, kept while callers move.

The node model is :func:`milp.build` and :func:`milp.solve` on an instance
with nodes (docs/nodes-milp.md). Each name here is the one-model piece it
stands for, or a thin call of it with the old defaults.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from instances import Instance, Result, Status
from instances.capacity import DEFAULT_MAX_PLACEMENTS, place_starts

from .backend import RawSolve
from .builder import build
from .formulation import DEFAULT_MAX_COLUMNS, DEFAULT_ROUNDING, Formulation
from .highs import solve_highs
from .solver import solve
from .topology import PriceOfTopology, price_of_topology

__all__ = [
    "NodeFormulation", "NodeRaw", "PriceOfTopology", "build_nodes", "place_schedule",
    "price_of_topology", "solve_highs_nodes", "solve_nodes",
]

NodeFormulation = Formulation
"""The formulation of an instance with nodes is a :class:`milp.Formulation`."""


def NodeRaw(
    status: Status, start: np.ndarray | None = None, place: np.ndarray | None = None,
    dual_bound: float | None = None, lp_bound: float | None = None, nodes: int | None = None,
    message: str = "",
) -> RawSolve:
    """A :class:`milp.RawSolve` from the old positional order (``place`` third)."""
    return RawSolve(status, start, dual_bound, lp_bound, nodes, message, place=place)


def build_nodes(
    inst: Instance, max_columns: int = DEFAULT_MAX_COLUMNS, *, symmetry: str = "fix",
    rounding: Sequence[int] = DEFAULT_ROUNDING, max_placements: int = DEFAULT_MAX_PLACEMENTS,
    reserved: np.ndarray | None = None, aggregate: bool = False,
) -> Formulation:
    """:func:`milp.build` of an instance with nodes (without aggregation, as before).

    Raises ``ValueError`` for an instance without nodes, or what :func:`milp.build` refuses.
    """
    _need_nodes(inst, "milp.build")
    return build(inst, max_columns, aggregate=aggregate, rounding=rounding, symmetry=symmetry,
                 max_placements=max_placements, reserved=reserved)


def solve_highs_nodes(form: Formulation, **options: Any) -> RawSolve:
    """:func:`milp.highs.solve_highs` without a progress bar."""
    return solve_highs(form, progress=None, **options)


def solve_nodes(inst: Instance, **options: Any) -> Result:
    """:func:`milp.solve` of an instance with nodes (``ValueError`` for one without)."""
    _need_nodes(inst, "milp.solve")
    return solve(inst, **options)


def _need_nodes(inst: Instance, instead: str) -> None:
    if inst.nodes is None:
        raise ValueError(f"inst: instance {inst.name!r} has no nodes; use {instead}")


def place_schedule(
    inst: Instance, start: np.ndarray, *, fill: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`instances.capacity.place_starts` (filling in, by default)."""
    return place_starts(inst, start, fill=fill)

