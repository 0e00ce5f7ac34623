"""What every backend returns to :func:`milp.solve`, and the backend interface."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from instances import Status

from .formulation import Formulation

__all__ = ["Backend", "RawSolve"]


@dataclass(frozen=True)
class RawSolve:
    """A backend's answer, before the independent checker has seen it.

    Attributes
    ----------
    status
        ``optimal``, ``time_limit``, ``infeasible`` or ``error``.
    start
        Per-job start array of the solver's incumbent (``-1``: not run), or
        ``None`` when the solver has none.
    dual_bound
        The solver's proven upper bound on the objective, or ``None``.
    lp_bound
        The LP-relaxation bound, when the backend computed one.
    nodes
        Branch-and-bound nodes (CP-SAT: branches).
    message
        Notes, or the error.
    alternatives
        Further incumbents (start arrays) to check, best first (portfolio).
    """

    status: Status
    start: np.ndarray | None = None
    dual_bound: float | None = None
    lp_bound: float | None = None
    nodes: int | None = None
    message: str = ""
    alternatives: tuple[np.ndarray, ...] = ()


class Backend(Protocol):
    """A solver behind :func:`milp.solve`."""

    def __call__(
        self,
        form: Formulation,
        *,
        time_limit: float,
        mip_gap: float,
        threads: int,
        warm_start: np.ndarray | None,
        progress: bool,
        **params: Any,
    ) -> RawSolve:
        """Solve ``form`` within ``time_limit`` seconds, starting from ``warm_start``."""
        ...
