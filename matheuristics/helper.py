"""The LNS helper: a large-neighbourhood search beside HiGHS, trading incumbents with it.

One code path for a flat instance and one with nodes: the helper holds a
schedule as its start and placement arrays (the placement ``None`` on a flat
instance, its one internal node), and speaks to the solver in the form the
solver speaks to it: bare start arrays where the model's schedules are start
arrays (the flat model), ``(start, place)`` pairs where they carry a
placement (the node model: its ``decode(x)`` gives pairs, its
``encode(start, place)`` takes them). What it offers the solver is first
checked to have columns in the model (``encode``; on a model with a symmetry
reduction, relabelled to its canonical form first).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import numpy as np

from heuristics import start_value
from heuristics.stop import MaxRuntime, MultipleCriteria, StopFlag

from .params import LNSParams
from .search import lns_improve

__all__ = ["HELPER_MARGIN_S", "LNSHelper"]

logger = logging.getLogger(__name__)

HELPER_MARGIN_S = 0.3
"""The LNS thread stops this long before the solve's time limit."""

Arrays = tuple[np.ndarray, "np.ndarray | None"]


def _split(solution: Any) -> Arrays:
    """``(start, place)`` of a bare start array or of a ``(start, place)`` pair (copies)."""
    if isinstance(solution, tuple):
        start, place = solution
        return (np.array(start, dtype=np.int64),
                None if place is None else np.array(place, dtype=np.int64))
    return np.array(solution, dtype=np.int64), None


class LNSHelper:
    """Incumbent hooks (:class:`milp.IncumbentHooks`) that run
    :func:`~matheuristics.search.lns_improve` beside the solver.

    HiGHS proves the bound; the LNS, in a thread of its own, finds better
    schedules than HiGHS's own heuristics on the harder instances. Each side
    hands its improvements to the other: the LNS's through HiGHS's
    user-solution callback (:meth:`offer`; HiGHS checks every one it is
    given), HiGHS's through its improving-solution callback
    (:meth:`incumbent`), which the LNS picks up before its next window
    (:meth:`from_lns`).

    Parameters
    ----------
    seed
        Seed of the LNS (``params.seed`` when ``params`` is given).
    params
        The LNS's parameters (default: :class:`~matheuristics.params.LNSParams` with ``seed``).
    """

    def __init__(self, seed: int = 0, params: LNSParams | None = None) -> None:
        self.params = LNSParams(seed=seed) if params is None else params
        self.seed = self.params.seed
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.form: Any = None
        self.start_array: np.ndarray | None = None
        self.place: np.ndarray | None = None
        self.pairs = False  # the solver's schedules are (start, place) pairs
        self.value = -np.inf
        self.to_highs: Arrays | None = None
        self.counts = {"lns": 0, "highs": 0, "given": 0}
        self._thread: threading.Thread | None = None

    def attach(self, form: Any, solution: Any) -> None:
        """Begin from ``solution`` (a start array, or ``(start, place)``) on ``form``'s
        instance, without starting the search."""
        self.form = form
        self.pairs = isinstance(solution, tuple)
        self.start_array, self.place = _split(solution)
        self.value = start_value(form.instance, self.start_array)
        self.to_highs = None
        self.done.clear()

    def _compare(self, value: float) -> int:
        """``1`` if ``value`` beats the best so far, ``-1`` if it is behind, else ``0``."""
        slack = 1e-9 * abs(self.value)
        return 1 if value > self.value + slack else -1 if value < self.value - slack else 0

    def _out(self, start: np.ndarray, place: np.ndarray | None) -> Any:
        """The arrays in the solver's form: a pair, or a bare start array."""
        return (start, place) if self.pairs else start

    # ------------------------------------------------------ the LNS's side
    def from_lns(self, start: np.ndarray, place: np.ndarray | None, value: float) -> Arrays | None:
        """The LNS's current schedule in; a better one (from HiGHS) out, or ``None``.

        The :data:`~matheuristics.search.Exchange` of the LNS.
        """
        with self.lock:
            side = self._compare(value)
            if side > 0:
                self.start_array, self.place, self.value = start.copy(), _copy(place), value
                self.to_highs = (start.copy(), _copy(place))
                self.counts["lns"] += 1
            assert self.start_array is not None
            return (self.start_array.copy(), _copy(self.place)) if side < 0 else None

    def run_lns(self, time_limit: float) -> None:
        """The LNS loop of the helper thread, until ``time_limit`` or :meth:`stop`."""
        assert self.form is not None and self.start_array is not None
        try:
            lns_improve(self.form.instance, self.start_array, self.place, params=self.params,
                        stop=MultipleCriteria([MaxRuntime(time_limit), StopFlag(self.done.is_set)]),
                        exchange=self.from_lns)
        except Exception:  # the helper must never take the solve down with it
            logger.exception("LNS helper failed; HiGHS goes on alone")

    # ---------------------------------------------- milp.IncumbentHooks
    def start(self, form: Any, start: Any, time_limit: float, place: Any = None) -> None:
        """Start the LNS thread from ``start``, for ``time_limit`` less :data:`HELPER_MARGIN_S`.

        On an instance with nodes the solver gives the placement as ``place=``.
        """
        self.attach(form, start if place is None else (start, place))
        self._thread = threading.Thread(target=self.run_lns,
                                        args=(max(0.0, time_limit - HELPER_MARGIN_S),), daemon=True)
        self._thread.start()

    def incumbent(self, start: Any, place: Any = None) -> None:
        """HiGHS's improving solution (with ``place=`` on nodes): kept if it is the best so far."""
        assert self.form is not None
        arrays, place = _split(start if place is None else (start, place))
        value = start_value(self.form.instance, arrays)
        with self.lock:
            if self._compare(value) > 0:
                self.start_array, self.place, self.value = arrays, place, value
                self.to_highs = None  # HiGHS has it already
                self.counts["highs"] += 1

    def offer(self) -> Any:
        """The LNS's latest improvement, once, for HiGHS, in the model's columns; or ``None``."""
        with self.lock:
            arrays, self.to_highs = self.to_highs, None
        if arrays is None:
            return None
        start, place = arrays
        if place is not None and hasattr(self.form, "canonical"):
            place = self.form.canonical(start, place)  # the columns a symmetry reduction keeps
        try:
            self.form.encode(start) if place is None else self.form.encode(start, place)
        except ValueError as e:  # a schedule the model has no column for: not offered
            logger.warning("LNS helper: an improvement the model cannot take: %s", e)
            return None
        self.counts["given"] += 1
        return self._out(start, place)

    def stop(self) -> None:
        """Tell the LNS to stop and wait for its thread."""
        self.done.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def best(self) -> Any:
        """The best schedule seen (the LNS's or HiGHS's), in the solver's form."""
        with self.lock:
            if self.start_array is None:
                return None
            return self._out(self.start_array.copy(), _copy(self.place))

    def summary(self) -> str:
        """Improvements found by each side, and how many were handed to HiGHS."""
        c = self.counts
        return (f"LNS helper: {c['lns']} improvements ({c['given']} handed to HiGHS), "
                f"{c['highs']} from HiGHS")


def _copy(a: np.ndarray | None) -> np.ndarray | None:
    return None if a is None else a.copy()
