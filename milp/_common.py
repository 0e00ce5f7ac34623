"""What every backend returns to :func:`milp.solve`, the backend interface, and incumbent hooks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from instances import Status

from .formulation import Formulation
from .progress import Progress

__all__ = ["Backend", "IncumbentHooks", "RawSolve"]


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
        progress: Progress | None,
        **params: Any,
    ) -> RawSolve:
        """Solve ``form`` within ``time_limit`` seconds, starting from ``warm_start``."""
        ...


class IncumbentHooks(Protocol):
    """Work beside a MILP search that trades incumbents with it, as start arrays.

    A backend that takes ``hooks`` (HiGHS) calls :meth:`start` once the
    search is set up, :meth:`incumbent` with every improving solution the
    solver finds, :meth:`offer` whenever the solver takes a solution from
    outside, and :meth:`stop` when the search ends, whatever the reason.
    After :meth:`stop`, :meth:`best` is the best start array the hooks hold:
    :func:`milp.solve` checks it with the solver's own incumbent and keeps
    the better. Every start array is per job (``-1``: not run) and feasible.
    The large-neighbourhood search of :class:`matheuristics.LNSHelper` is one.
    """

    def start(self, form: Formulation, start: np.ndarray, time_limit: float) -> None:
        """The search begins from ``start`` (the warm start, or no job run) for ``time_limit`` s."""
        ...

    def incumbent(self, start: np.ndarray) -> None:
        """The solver found the improving solution ``start``."""
        ...

    def offer(self) -> np.ndarray | None:
        """A solution for the solver to try, or ``None``."""
        ...

    def stop(self) -> None:
        """The search has ended: finish the work beside it before returning."""
        ...

    def best(self) -> np.ndarray | None:
        """The best start array held (``None``: none)."""
        ...

    def summary(self) -> str:
        """One line for the result's message."""
        ...
