"""What every backend returns to :func:`milp.solve`, the backend interface, and incumbent hooks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from instances import Status
from instances.objective import start_worth

from .formulation import Formulation
from .progress import Progress

__all__ = ["Backend", "IncumbentHooks", "RawSolve", "Solution", "as_solution", "solution_value"]

Solution = tuple[np.ndarray, np.ndarray | None] | tuple[np.ndarray, np.ndarray | None, np.ndarray]
"""A schedule as arrays: the per-job start array (``-1``: not run) and, on an instance
with nodes, its placement array (``Schedule.to_placement_array``'s form; ``None`` flat);
on model version 3 with shared jobs a third array, each shared job's GPU (slot) on its
node (``-1`` for the others; :mod:`milp.gpus`)."""


def as_solution(x: Any) -> Solution | None:
    """``x`` as a :data:`Solution`: a start array alone (flat), a pair or a triple, or ``None``."""
    if x is None:
        return None
    if isinstance(x, tuple):
        start = np.asarray(x[0], dtype=np.int64)
        place = None if x[1] is None else np.asarray(x[1])
        if len(x) > 2 and x[2] is not None:
            return start, place, np.asarray(x[2], dtype=np.int64)
        return start, place
    return np.asarray(x, dtype=np.int64), None


def solution_value(form: Formulation, sol: Solution) -> float:
    """The worth of a solution (its value under ``value``)."""
    return start_worth(form.instance, sol[0])


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
        Further incumbents (:data:`Solution` pairs) to check, best first (portfolio, hooks).
    place
        The incumbent's placement array on an instance with nodes (else ``None``).
    gpu
        With GPU slots (model version 3, shared jobs), each shared job's slot on its node.
    """

    status: Status
    start: np.ndarray | None = None
    dual_bound: float | None = None
    lp_bound: float | None = None
    nodes: int | None = None
    message: str = ""
    alternatives: tuple[Solution, ...] = ()
    place: np.ndarray | None = None
    gpu: np.ndarray | None = None

    @property
    def solution(self) -> Solution | None:
        """The incumbent as a :data:`Solution`, or ``None``."""
        if self.start is None:
            return None
        return (self.start, self.place) if self.gpu is None else (self.start, self.place, self.gpu)


class Backend(Protocol):
    """A solver behind :func:`milp.solve`.

    ``warm_start`` is a :data:`Solution` (or a start array on a flat
    instance), feasible, or ``None``.
    """

    def __call__(
        self, form: Formulation, *, time_limit: float, mip_gap: float, threads: int,
        warm_start: Solution | np.ndarray | None, progress: Progress | None, **params: Any,
    ) -> RawSolve:
        """Solve ``form`` within ``time_limit`` seconds, starting from ``warm_start``."""
        ...


class IncumbentHooks(Protocol):
    """Work beside a MILP search that trades incumbents with it, as arrays.

    A backend that takes ``hooks`` (HiGHS) calls :meth:`start` once the
    search is set up, :meth:`incumbent` with every improving solution the
    solver finds, :meth:`offer` whenever the solver takes a solution from
    outside, and :meth:`stop` when the search ends, whatever the reason.
    After :meth:`stop`, :meth:`best` is the best solution the hooks hold:
    :func:`milp.solve` checks it with the solver's own incumbent and keeps
    the better. Every start array is per job (``-1``: not run) and feasible.
    On an instance with nodes the placement comes beside it: :meth:`start`
    and :meth:`incumbent` are also given ``place=`` (a keyword the hooks of
    a flat instance are never passed), and :meth:`offer` and :meth:`best`
    return ``(start, place)`` pairs (:data:`Solution`); the formulation's
    :meth:`~milp.Formulation.encode` and :meth:`~milp.Formulation.decode`
    take and give the same. With GPU slots (model version 3, shared jobs)
    :meth:`start` and :meth:`incumbent` are also given ``gpu=`` (each shared
    job's slot), and :meth:`offer` and :meth:`best` return triples. The
    large-neighbourhood search of :class:`matheuristics.LNSHelper` is one.
    """

    def start(self, form: Formulation, start: np.ndarray, time_limit: float) -> None:
        """The search begins from ``start`` (the warm start, or no job run) for ``time_limit`` s."""
        ...

    def incumbent(self, start: np.ndarray) -> None:
        """The solver found the improving solution ``start``."""
        ...

    def offer(self) -> Solution | np.ndarray | None:
        """A solution for the solver to try, or ``None``."""
        ...

    def stop(self) -> None:
        """The search has ended: finish the work beside it before returning."""
        ...

    def best(self) -> Solution | np.ndarray | None:
        """The best solution held (``None``: none)."""
        ...

    def summary(self) -> str:
        """One line for the result's message."""
        ...
