"""Incumbents shared by the sources of a portfolio, and the hooks that run them beside HiGHS.

:class:`Incumbents` holds the best schedule known (its arrays, value and the
source that found it) for every source at once: a source puts what it finds
(:meth:`Incumbents.put`) and takes a better one when it is behind
(:meth:`Incumbents.exchange`). :class:`SharedHooks` are the incumbent hooks
(:class:`milp.IncumbentHooks`) of a MILP search with any number of sources
beside it, each in a thread of its own (:class:`Source`: the LNS of
:mod:`matheuristics.helper`, CP-SAT of :mod:`matheuristics.cpsat_source`):
HiGHS's improving solutions go into the pool as the source ``highs``, and
what the others found goes back to HiGHS, once, through :meth:`SharedHooks.offer`.
Every source ends on one stopping criterion (:mod:`heuristics.stop`): the
time the search leaves them, the caller's criterion, and a flag raised when
the search ends or a source proves its schedule optimal.

One code path for a flat instance and one with nodes: schedules are held as
start and placement arrays (the placement ``None`` on a flat instance), and
handed to the solver in its own form: bare start arrays for the flat model,
``(start, place)`` pairs for the node model.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import numpy as np

from heuristics import start_value
from heuristics.stop import MaxRuntime, MultipleCriteria, StopFlag, StoppingCriterion

__all__ = ["HIGHS", "MARGIN_S", "WARM", "Arrays", "Incumbents", "SharedHooks", "Source", "split"]

logger = logging.getLogger(__name__)

MARGIN_S = 0.3
"""The sources stop this long before the search's time limit."""

HIGHS = "highs"
"""The origin of the schedules HiGHS's search found."""

WARM = "warm start"
"""The origin of the schedule the search began from."""

Arrays = tuple[np.ndarray, "np.ndarray | None"]
"""A schedule as its start array and placement array (``None`` on a flat instance); on model
version 3 with shared jobs a triple, the shared jobs' GPU slots third (:data:`milp.Solution`)."""


def split(solution: Any) -> Arrays:
    """``(start, place)`` of a bare start array or of a ``(start, place)`` pair (copies); a
    ``(start, place, gpu)`` triple stays one."""
    if isinstance(solution, tuple):
        start, place = solution[0], solution[1]
        pair = (np.array(start, dtype=np.int64),
                None if place is None else np.array(place, dtype=np.int64))
        if len(solution) > 2 and solution[2] is not None:
            return (*pair, np.array(solution[2], dtype=np.int64))  # type: ignore[return-value]
        return pair
    return np.array(solution, dtype=np.int64), None


def _copy(a: np.ndarray | None) -> np.ndarray | None:
    return None if a is None else a.copy()


class Incumbents:
    """The best schedule known to a portfolio, with its value and the source that found it.

    Thread-safe. Every schedule put here is feasible (each source checks its
    own); values are compared with a relative slack of 1e-9, so a tie keeps
    the schedule held.

    Parameters
    ----------
    form
        The formulation of the search (its instance values the schedules).
    solution
        The first schedule: a start array or a ``(start, place)`` pair.
    names
        The sources that may put schedules (each gets a count of its improvements).
    """

    def __init__(self, form: Any, solution: Any, names: Iterable[str] = ()) -> None:
        self.form = form
        self.lock = threading.Lock()
        first = split(solution)
        self.start, self.place = first[0], first[1]
        self.gpu: np.ndarray | None = first[2] if len(first) > 2 else None  # type: ignore[misc]
        self.value = start_value(form.instance, self.start)
        self.origin = WARM
        self.version = 0
        self.counts = dict.fromkeys([*names, HIGHS], 0)
        self.bound = math.inf
        self.bound_origin: str | None = None
        self.proven = threading.Event()

    def _compare(self, value: float) -> int:
        """``1`` if ``value`` beats the best so far, ``-1`` if it is behind, else ``0``."""
        slack = 1e-9 * abs(self.value)
        return 1 if value > self.value + slack else -1 if value < self.value - slack else 0

    def _keep(self, start: np.ndarray, place: np.ndarray | None, value: float, origin: str,
              gpu: np.ndarray | None = None) -> None:
        self.start, self.place, self.value, self.origin = start, place, value, origin
        if self.gpu is not None:
            assert gpu is not None, "a schedule without its shared jobs' GPUs"
            self.gpu = gpu
        self.version += 1
        self.counts[origin] = self.counts.get(origin, 0) + 1

    def _arrays(self) -> Arrays:
        pair = (self.start.copy(), _copy(self.place))
        return pair if self.gpu is None else (*pair, self.gpu.copy())  # type: ignore[return-value]

    def put(self, start: np.ndarray, place: np.ndarray | None, origin: str,
            value: float | None = None, gpu: np.ndarray | None = None) -> bool:
        """Keep ``(start, place)`` (copied; with GPU slots ``gpu`` too) if it beats the best;
        whether it did."""
        v = start_value(self.form.instance, start) if value is None else value
        with self.lock:
            if self._compare(v) <= 0:
                return False
            self._keep(np.array(start, dtype=np.int64), _copy(place), v, origin, _copy(gpu))
            return True

    def exchange(self, start: np.ndarray, place: np.ndarray | None, value: float,
                 origin: str, gpu: np.ndarray | None = None) -> Arrays | None:
        """A source's current schedule in; the best (copies) out when it is behind, else ``None``.

        The :data:`~matheuristics.search.Exchange` of the LNS, for the source ``origin``
        (with GPU slots, ``gpu`` in and a triple out).
        """
        with self.lock:
            side = self._compare(value)
            if side > 0:
                self._keep(start.copy(), _copy(place), value, origin, _copy(gpu))
            return self._arrays() if side < 0 else None

    def best(self) -> tuple[Arrays, float, str, int]:
        """The best schedule (copies), its value, its origin and its version."""
        with self.lock:
            return self._arrays(), self.value, self.origin, self.version

    def prove(self, bound: float, origin: str) -> None:
        """A source proved ``bound`` (an upper bound on the optimum of the search's model)."""
        with self.lock:
            if bound < self.bound:
                self.bound, self.bound_origin = bound, origin

    def summary(self) -> str:
        """The improvements each source found."""
        with self.lock:
            parts = [f"{n} {c}" for n, c in self.counts.items()]
            return f"improvements: {', '.join(parts)}; best from {self.origin}"


class Source(Protocol):
    """Work beside the search that finds schedules: run in a thread by :class:`SharedHooks`."""

    name: str
    """The origin of its schedules in :class:`Incumbents`."""

    def run(self, pool: Incumbents, stop: StoppingCriterion) -> None:
        """Search until ``stop`` says so, trading schedules with ``pool``; never raise."""
        ...

    def summary(self) -> str:
        """One line for the result's message."""
        ...


class SharedHooks:
    """Incumbent hooks (:class:`milp.IncumbentHooks`) running ``sources`` beside the solver.

    Parameters
    ----------
    sources
        What runs beside the search, each in a thread of its own.
    stop
        A stopping criterion of the caller's, asked beside the search's own.
    halt
        An event set when a source proves its schedule optimal (handed to the
        solver as its ``stop``, so that the search ends too); ``None``: none.
    """

    def __init__(self, sources: Sequence[Source], stop: StoppingCriterion | None = None,
                 halt: threading.Event | None = None) -> None:
        self.sources = tuple(sources)
        self.outer = stop
        self.halt = halt
        self.done = threading.Event()
        self.pool: Incumbents | None = None
        self.pairs = False  # the solver's schedules are (start, place) pairs
        self.given_version = 0  # the last version HiGHS has
        self.given = 0
        self._threads: list[threading.Thread] = []
        self._stop: StoppingCriterion | None = None  # the sources' rule, once started

    @property
    def counts(self) -> dict[str, int]:
        """Improvements per origin, and ``given``: schedules handed to the solver."""
        base = {} if self.pool is None else dict(self.pool.counts)
        return {**base, "given": self.given}

    @property
    def value(self) -> float:
        """The value of the best schedule held (``-inf`` before :meth:`attach`)."""
        return -math.inf if self.pool is None else self.pool.value

    def attach(self, form: Any, solution: Any) -> None:
        """Begin from ``solution`` (a start array, or ``(start, place)``) without starting."""
        self.pairs = isinstance(solution, tuple)
        self.pool = Incumbents(form, solution, [s.name for s in self.sources])
        self.given_version, self.given = 0, 0
        self.done.clear()

    def criterion(self, time_limit: float) -> StoppingCriterion:
        """The sources' one stopping rule: ``time_limit`` s, the done flag, the caller's."""
        parts: list[StoppingCriterion] = [MaxRuntime(max(0.0, time_limit)), StopFlag(self.done.is_set)]
        if self.outer is not None:
            parts.append(self.outer)
        return MultipleCriteria(parts)

    def _out(self, arrays: Arrays) -> Any:
        """The arrays in the solver's form: a pair, or a bare start array."""
        return arrays if self.pairs else arrays[0]

    def _run(self, source: Source, stop: StoppingCriterion) -> None:
        assert self.pool is not None
        try:
            source.run(self.pool, stop)
        except Exception:  # a source must never take the solve down with it
            logger.exception("%s failed; the search goes on without it", source.name)
        if self.pool.proven.is_set():
            self.done.set()
            if self.halt is not None:
                self.halt.set()

    # ---------------------------------------------- milp.IncumbentHooks
    def start(self, form: Any, start: Any, time_limit: float, place: Any = None,
              gpu: Any = None) -> None:
        """Start every source from ``start`` for ``time_limit`` less :data:`MARGIN_S`.

        On an instance with nodes the solver gives the placement as ``place=``, and with
        GPU slots (model version 3) the shared jobs' slots as ``gpu=``.
        """
        self.attach(form, start if place is None else (start, place) if gpu is None
                    else (start, place, gpu))
        stop = self._stop = self.criterion(time_limit - MARGIN_S)
        self._threads = [threading.Thread(target=self._run, args=(s, stop), daemon=True,
                                          name=f"source-{s.name}") for s in self.sources]
        for t in self._threads:
            t.start()

    def solver_idle(self) -> None:
        """The solver does not search (HiGHS not run: its presolve would outlast the limit):
        the core it leaves goes to one more copy of the first source that can make one
        (``sibling()``: the LNS from the next seed), on the same stop rule."""
        if self._stop is None:  # (not started)
            return
        for source in self.sources:
            make = getattr(source, "sibling", None)
            if make is None:
                continue
            extra = make()
            self.sources = (*self.sources, extra)
            thread = threading.Thread(target=self._run, args=(extra, self._stop), daemon=True,
                                      name=f"source-{extra.name}-2")
            self._threads.append(thread)
            thread.start()
            return

    def incumbent(self, start: Any, place: Any = None, gpu: Any = None) -> None:
        """HiGHS's improving solution (with ``place=`` on nodes, ``gpu=`` with GPU slots):
        kept if it is the best so far."""
        assert self.pool is not None
        arrays = split(start if place is None else (start, place) if gpu is None
                       else (start, place, gpu))
        if self.pool.put(arrays[0], arrays[1], HIGHS,
                         gpu=arrays[2] if len(arrays) > 2 else None):  # type: ignore[misc]
            self.given_version = self.pool.version  # HiGHS has it already

    def offer(self) -> Any:
        """The best schedule, once, for HiGHS, in the model's columns, if HiGHS lacks it."""
        assert self.pool is not None
        arrays, _, origin, version = self.pool.best()
        if version <= self.given_version or origin == HIGHS:
            return None
        self.given_version = version
        start, place = arrays[0], arrays[1]
        gpu = arrays[2] if len(arrays) > 2 else None  # type: ignore[misc]
        form = self.pool.form
        if place is not None and hasattr(form, "canonical"):
            place = form.canonical(start, place)  # the columns a symmetry reduction keeps
        try:
            form.encode(start) if place is None else form.encode(start, place, gpu)
        except ValueError as e:  # a schedule the model has no column for: not offered
            logger.warning("%s: a schedule the model cannot take: %s", origin, e)
            return None
        self.given += 1
        return self._out((start, place) if gpu is None else (start, place, gpu))  # type: ignore[arg-type]

    def stop(self) -> None:
        """Tell the sources to stop and wait for their threads."""
        self.done.set()
        for t in self._threads:
            t.join()
        self._threads = []

    def best(self) -> Any:
        """The best schedule seen (any source's or HiGHS's), in the solver's form."""
        if self.pool is None:
            return None
        return self._out(self.pool.best()[0])

    def summary(self) -> str:
        """What each source did, and how many schedules were handed to HiGHS."""
        parts = [s.summary() for s in self.sources]
        if self.pool is not None:
            parts.append(f"{self.pool.summary()} ({self.given} handed to HiGHS)")
        return "; ".join(parts)
