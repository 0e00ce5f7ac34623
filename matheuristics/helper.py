"""The LNS helper: a large-neighbourhood search beside HiGHS, trading incumbents with it."""

from __future__ import annotations

import logging
import threading

import numpy as np

from heuristics import start_value
from milp import Formulation

from . import lns

__all__ = ["LNSHelper"]

logger = logging.getLogger(__name__)


class LNSHelper:
    """Incumbent hooks (:class:`milp.IncumbentHooks`) that run :func:`~matheuristics.lns.lns_improve`.

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
        Seed of the LNS.
    """

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.form: Formulation | None = None
        self.start_array: np.ndarray | None = None
        self.value = -np.inf
        self.to_highs: np.ndarray | None = None
        self.counts = {"lns": 0, "highs": 0, "given": 0}
        self._thread: threading.Thread | None = None

    def attach(self, form: Formulation, start: np.ndarray) -> None:
        """Begin from ``start`` on ``form``'s instance, without starting the search."""
        self.form = form
        self.start_array = np.asarray(start, dtype=np.int64).copy()
        self.value = start_value(form.instance, self.start_array)
        self.to_highs = None
        self.done.clear()

    def _compare(self, value: float) -> int:
        """``1`` if ``value`` beats the best so far, ``-1`` if it is behind, else ``0``."""
        slack = 1e-9 * abs(self.value)
        return 1 if value > self.value + slack else -1 if value < self.value - slack else 0

    # ------------------------------------------------------ the LNS's side
    def from_lns(self, start: np.ndarray, value: float) -> np.ndarray | None:
        """The LNS's current schedule in; a better one (from HiGHS) out, or ``None``."""
        with self.lock:
            side = self._compare(value)
            if side > 0:
                self.start_array, self.value = start.copy(), value
                self.to_highs = start.copy()
                self.counts["lns"] += 1
            assert self.start_array is not None
            return self.start_array.copy() if side < 0 else None

    def run_lns(self, time_limit: float) -> None:
        """The LNS loop of the helper thread, until ``time_limit`` or :meth:`stop`."""
        assert self.form is not None and self.start_array is not None
        try:
            lns.lns_improve(
                self.form.instance, self.start_array, time_limit=time_limit, rounds=10**9,
                seed=self.seed, exchange=self.from_lns, should_stop=self.done.is_set,
            )
        except Exception:  # the helper must never take the solve down with it
            logger.exception("LNS helper failed; HiGHS goes on alone")

    # ---------------------------------------------- milp.IncumbentHooks
    def start(self, form: Formulation, start: np.ndarray, time_limit: float) -> None:
        """Start the LNS thread from ``start``, for ``time_limit`` less 0.3 s."""
        self.attach(form, start)
        self._thread = threading.Thread(target=self.run_lns, args=(max(0.0, time_limit - 0.3),),
                                        daemon=True)
        self._thread.start()

    def incumbent(self, start: np.ndarray) -> None:
        """HiGHS's improving solution: kept if it is the best so far."""
        assert self.form is not None
        value = start_value(self.form.instance, start)
        with self.lock:
            if self._compare(value) > 0:
                self.start_array, self.value = start.copy(), value
                self.to_highs = None  # HiGHS has it already
                self.counts["highs"] += 1

    def offer(self) -> np.ndarray | None:
        """The LNS's latest improvement, once, for HiGHS."""
        with self.lock:
            start, self.to_highs = self.to_highs, None
        if start is not None:
            self.counts["given"] += 1
        return start

    def stop(self) -> None:
        """Tell the LNS to stop and wait for its thread."""
        self.done.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def best(self) -> np.ndarray | None:
        """The best start array seen (the LNS's or HiGHS's)."""
        with self.lock:
            return None if self.start_array is None else self.start_array.copy()

    def summary(self) -> str:
        """Improvements found by each side, and how many were handed to HiGHS."""
        c = self.counts
        return (f"LNS helper: {c['lns']} improvements ({c['given']} handed to HiGHS), "
                f"{c['highs']} from HiGHS")
