"""Stopping criteria: when a search ends, as objects to combine instead of floats and counters.

A search asks its criterion once per iteration, with the best value found so
far (values are maximized), and stops when it answers true. Every criterion
also says how many seconds it leaves (:meth:`StoppingCriterion.time_left`,
``math.inf`` when it is not a clock), so that a method can hand a share of
its budget to each phase. The design follows PyVRP's ``pyvrp.stop``
(a ``StoppingCriterion`` protocol, ``MaxRuntime``, ``MaxIterations``,
``NoImprovement``, ``MultipleCriteria``); the clock here starts when the
criterion is made, so that a method's phases share one deadline.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from typing import Protocol, runtime_checkable

__all__ = [
    "MaxIterations", "MaxRuntime", "MultipleCriteria", "NoImprovement", "StopFlag",
    "StoppingCriterion", "budget", "time_share",
]


@runtime_checkable
class StoppingCriterion(Protocol):
    """Whether a search should stop, asked once per iteration with its best value."""

    def __call__(self, best: float) -> bool:
        """True when the search should stop (``best``: the highest value found so far)."""
        ...

    def time_left(self) -> float:
        """Seconds this criterion leaves (``math.inf`` when it does not look at the clock)."""
        ...


def _count(iterations: int) -> int:
    """``iterations`` if it is an integer >= 0, else :class:`ValueError`."""
    if not (isinstance(iterations, int) and iterations >= 0):
        raise ValueError(f"iterations: must be an integer >= 0, got {iterations!r}")
    return iterations


class MaxRuntime:
    """Stops once ``seconds`` have passed since the criterion was made.

    Parameters
    ----------
    seconds
        The budget; ``None``: no limit (never stops, :meth:`time_left` is ``inf``).

    Raises
    ------
    ValueError
        If ``seconds`` is negative or not a number.
    """

    def __init__(self, seconds: float | None) -> None:
        if seconds is not None and not (isinstance(seconds, (int, float)) and seconds >= 0):
            raise ValueError(f"seconds: must be a number >= 0 or None, got {seconds!r}")
        self.seconds = math.inf if seconds is None else float(seconds)
        self.started = time.perf_counter()

    def elapsed(self) -> float:
        """Seconds since the criterion was made."""
        return time.perf_counter() - self.started

    def time_left(self) -> float:
        """Seconds left of the budget, never below 0."""
        return max(0.0, self.seconds - self.elapsed())

    def __call__(self, best: float) -> bool:
        return self.time_left() <= 0.0


class _Untimed:
    """A criterion that does not look at the clock."""

    def time_left(self) -> float:
        """``math.inf``: no limit in seconds."""
        return math.inf


class MaxIterations(_Untimed):
    """Stops at the call after the ``iterations``-th (an integer >= 0, else :class:`ValueError`):
    a search asking before each of its iterations runs exactly ``iterations`` of them."""

    def __init__(self, iterations: int) -> None:
        self.iterations = _count(iterations)
        self.calls = 0

    def __call__(self, best: float) -> bool:
        self.calls += 1
        return self.calls > self.iterations


class NoImprovement(_Untimed):
    """Stops once ``iterations`` calls in a row (an integer >= 0, else :class:`ValueError`)
    have not raised the best value."""

    def __init__(self, iterations: int) -> None:
        self.iterations = _count(iterations)
        self.target = -math.inf
        self.stalled = 0

    def __call__(self, best: float) -> bool:
        if best > self.target:
            self.target, self.stalled = best, 0
        else:
            self.stalled += 1
        return self.stalled >= self.iterations


class StopFlag(_Untimed):
    """Stops when ``is_set()`` is true, e.g. a ``threading.Event``'s ``is_set``: another
    thread's request to stop."""

    def __init__(self, is_set: Callable[[], bool]) -> None:
        self.is_set = is_set

    def __call__(self, best: float) -> bool:
        return bool(self.is_set())


class MultipleCriteria:
    """Stops when any of ``criteria`` does; each is asked at every call, so counters stay
    in step. Its time left is the least of theirs.

    Raises
    ------
    ValueError
        If ``criteria`` is empty.
    """

    def __init__(self, criteria: Iterable[StoppingCriterion]) -> None:
        self.criteria = tuple(criteria)
        if not self.criteria:
            raise ValueError("criteria: expected at least one stopping criterion")

    def time_left(self) -> float:
        return min(c.time_left() for c in self.criteria)

    def __call__(self, best: float) -> bool:
        stops = [c(best) for c in self.criteria]
        return any(stops)


def budget(time_limit: float | None = None, iterations: int | None = None) -> StoppingCriterion:
    """The usual budget of a method: ``time_limit`` seconds from now and at most ``iterations``.

    ``None`` leaves out that limit; with both ``None`` the criterion never stops.
    """
    clock = MaxRuntime(time_limit)
    return clock if iterations is None else MultipleCriteria([clock, MaxIterations(iterations)])


def time_share(stop: StoppingCriterion, fraction: float) -> float | None:
    """``fraction`` of the seconds ``stop`` leaves, or ``None`` when it is not a clock.

    The time limit to hand a phase of a method (the heuristics take ``None`` for no limit).
    """
    left = stop.time_left()
    return None if math.isinf(left) else fraction * left
