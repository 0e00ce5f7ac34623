"""CP-SAT as a source of a portfolio: its solutions to the others, the best known as its hints.

:class:`CPSATSource` runs :func:`milp.cpsat.solve_cpsat` on the search's own
formulation (so every schedule it finds has columns in HiGHS's model), from
the best schedule known as solution hints. Each solution CP-SAT finds goes
into the shared incumbents (:class:`~matheuristics.incumbents.Incumbents`)
as it is found, through CP-SAT's solution callback. CP-SAT cannot be
re-hinted during a search, so it is restarted instead: when another source
leads and CP-SAT's own search has not improved for :data:`RESTART_STALL_S`
seconds, the search is stopped and begun again from the best schedule known
(a new random seed). Each search's bound is valid for the model; a search
that proves optimality ends every source (:meth:`Incumbents.prove`).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from heuristics import start_value
from heuristics.stop import StoppingCriterion
from instances import Status
from milp.backend import Solution

from .incumbents import Incumbents

__all__ = ["CPSAT", "POLL_S", "RESTART_STALL_S", "CPSATSource"]

logger = logging.getLogger(__name__)

CPSAT = "cpsat"
"""The origin of CP-SAT's schedules."""

RESTART_STALL_S = 5.0
"""CP-SAT is restarted from a better schedule found elsewhere once its own search has not
improved for this long."""

POLL_S = 0.1
"""How often the stopping criterion and the restart rule are asked during a search."""


class CPSATSource:
    """CP-SAT beside the search, trading schedules through the shared incumbents.

    Parameters
    ----------
    workers
        CP-SAT's search workers (``num_workers``).
    interleave
        Run CP-SAT's several subsolvers in turn on the workers (``interleave_search``);
        on one worker it found more than without on medium seed 5 (docs/milp.md).
    seed
        Random seed of the first search (each restart adds one).
    mip_gap
        Relative gap at which a search counts as optimal.
    bounds
        Prove the searches' bounds to the incumbents (``False`` where the model is a
        restriction, e.g. after reduced-cost fixing, whose bound is not the instance's).
    restart_stall
        Seconds without an improvement of its own after which CP-SAT, behind another
        source, is restarted from the best schedule known (``inf``: never).
    """

    name = CPSAT

    def __init__(self, workers: int = 1, interleave: bool = True, seed: int = 0,
                 mip_gap: float = 1e-4, bounds: bool = True,
                 restart_stall: float = RESTART_STALL_S) -> None:
        if not (isinstance(workers, int) and workers >= 1):
            raise ValueError(f"workers: must be an integer >= 1, got {workers!r}")
        self.workers, self.interleave, self.seed = workers, interleave, seed
        self.mip_gap, self.bounds, self.restart_stall = mip_gap, bounds, restart_stall
        self.searches = 0
        self.found = 0
        self.status: Status | None = None
        self.bound: float | None = None

    def run(self, pool: Incumbents, stop: StoppingCriterion) -> None:
        """Searches from the best schedule known, until ``stop`` or a proof of optimality."""
        from milp.cpsat import solve_cpsat

        options: dict[str, Any] = {"interleave_search": True} if self.interleave else {}
        while True:
            (start, place), value, _, _ = pool.best()
            left = stop.time_left()
            if stop(value) or left <= 2 * POLL_S:
                return
            own = _Progress(value)
            segment = threading.Event()
            watcher = threading.Thread(target=self._watch, args=(pool, stop, own, segment),
                                       daemon=True, name="cpsat-watch")
            watcher.start()

            def found(sol: Solution, own: _Progress = own) -> None:
                try:
                    v = start_value(pool.form.instance, sol[0])
                    own.improved(v)
                    self.found += pool.put(sol[0], sol[1], CPSAT, value=v)
                except Exception:  # a failure here must not reach CP-SAT's thread
                    logger.exception("CP-SAT source: a solution could not be taken")

            hint: Any = start if place is None else (start, place)
            began = time.perf_counter()
            try:
                raw = solve_cpsat(pool.form, time_limit=left, mip_gap=self.mip_gap,
                                  threads=self.workers, warm_start=hint, progress=None,
                                  seed=self.seed + self.searches, stop=segment,
                                  on_solution=found, **options)
            finally:
                own.ended.set()
                watcher.join()
            self.searches += 1
            self.status = raw.status
            if raw.solution is not None:
                self.found += pool.put(raw.solution[0], raw.solution[1], CPSAT)
            if self.bounds and raw.dual_bound is not None and raw.status in (
                    Status.OPTIMAL, Status.TIME_LIMIT):
                self.bound = raw.dual_bound if self.bound is None else min(self.bound,
                                                                           raw.dual_bound)
                pool.prove(raw.dual_bound, CPSAT)
            if raw.status is Status.OPTIMAL and self.bounds:
                pool.proven.set()
                return
            if raw.status not in (Status.OPTIMAL, Status.TIME_LIMIT):
                logger.warning("CP-SAT source ends: %s", raw.message)
                return
            if not segment.is_set() and time.perf_counter() - began < POLL_S:
                return  # a search that ends at once, unasked, would only end at once again

    def _watch(self, pool: Incumbents, stop: StoppingCriterion, own: _Progress,
               segment: threading.Event) -> None:
        """Ends the search (``segment``) on ``stop``, or to restart it from a better schedule."""
        while not own.ended.wait(POLL_S):
            _, value, _, _ = pool.best()
            if stop(value) or (value > own.value + 1e-9 * abs(value)
                               and time.perf_counter() - own.since >= self.restart_stall):
                segment.set()
                return

    def summary(self) -> str:
        """Searches made, improvements found, and the last status."""
        status = "" if self.status is None else f", last {self.status}"
        return f"CP-SAT: {self.searches} searches on {self.workers} worker(s), {self.found} " \
               f"improvements{status}"


class _Progress:
    """A CP-SAT search's own best value and when it last improved (read by its watcher)."""

    def __init__(self, value: float) -> None:
        self.value = value
        self.since = time.perf_counter()
        self.ended = threading.Event()

    def improved(self, value: float) -> None:
        if value > self.value + 1e-9 * abs(self.value):
            self.value, self.since = value, time.perf_counter()

