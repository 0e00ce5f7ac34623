"""The LNS helper: a large-neighbourhood search beside HiGHS, trading incumbents with it.

:class:`LNSSource` is the LNS as a source of a portfolio
(:class:`matheuristics.incumbents.Source`): :func:`~matheuristics.search.lns_improve`
from the best schedule known, handing each improvement to the shared
incumbents and continuing from a better one when another source found it.
:class:`LNSHelper` is the incumbent hooks with the LNS as its one source,
what :func:`matheuristics.solve_milp` runs beside HiGHS on two threads.

One code path for a flat instance and one with nodes: the schedules are
start and placement arrays (the placement ``None`` on a flat instance, its
one internal node); what is offered to the solver is first checked to have
columns in the model (``encode``; on a model with a symmetry reduction,
relabelled to its canonical form first), by :class:`~matheuristics.incumbents.SharedHooks`.
"""

from __future__ import annotations

import dataclasses
import logging

import numpy as np

from heuristics.stop import MaxRuntime, MultipleCriteria, StopFlag, StoppingCriterion

from .gpus import indices_of_solution, shared_gpu
from .incumbents import MARGIN_S, Arrays, Incumbents, SharedHooks
from .params import LNSParams
from .search import lns_improve, lns_improve_indices

__all__ = ["HELPER_MARGIN_S", "LNS", "LNSHelper", "LNSSource"]

logger = logging.getLogger(__name__)

HELPER_MARGIN_S = MARGIN_S
"""The LNS thread stops this long before the solve's time limit."""

LNS = "lns"
"""The origin of the LNS's schedules."""


class LNSSource:
    """The LNS as a source of a portfolio: windows re-solved from the best schedule known.

    Parameters
    ----------
    params
        The LNS's parameters (default: :class:`~matheuristics.params.LNSParams`).
    """

    name = LNS

    def __init__(self, params: LNSParams | None = None) -> None:
        self.params = LNSParams() if params is None else params
        self.rounds = 0

    def sibling(self) -> LNSSource:
        """The LNS from the next seed (for a core the solver leaves idle)."""
        return LNSSource(dataclasses.replace(self.params, seed=self.params.seed + 1))

    def run(self, pool: Incumbents, stop: StoppingCriterion) -> None:
        """:func:`~matheuristics.search.lns_improve` until ``stop``, its exchange ``pool``'s."""
        inst = pool.form.instance
        if inst.has_nodes and inst.jobs_use_resources:
            self._run_indices(pool, stop)
            return
        (start, place), *_ = pool.best()

        def exchange(s: np.ndarray, p: np.ndarray | None, value: float) -> Arrays | None:
            return pool.exchange(s, p, value, LNS)

        try:
            run = lns_improve(pool.form.instance, start, place, params=self.params, stop=stop,
                              exchange=exchange)
            pool.put(run.start, run.place, LNS)  # the last round's, if it came after the exchange
            self.rounds = run.rounds
        except Exception:  # the helper must never take the solve down with it
            logger.exception("LNS helper failed; HiGHS goes on alone")

    def _run_indices(self, pool: Incumbents, stop: StoppingCriterion) -> None:
        """On model version 3: the pool's arrays (shared jobs' GPU slots among them) given GPU
        indices by colouring, and the LNS's indices traded as the shared jobs' GPUs."""
        inst = pool.form.instance
        slots = pool.gpu is not None

        def indices(arrays: Arrays) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            s, p = arrays[0], arrays[1]
            assert p is not None
            gpu = arrays[2] if len(arrays) > 2 else None  # type: ignore[misc]
            return s, p, indices_of_solution(inst, s, p, gpu)

        def exchange(s: np.ndarray, p: np.ndarray, i: np.ndarray,
                     value: float) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
            got = pool.exchange(s, p, value, LNS, gpu=shared_gpu(inst, s, i) if slots else None)
            return None if got is None else indices(got)

        try:
            start, place, idx = indices(pool.best()[0])
            run = lns_improve_indices(inst, start, place, idx, params=self.params, stop=stop,
                                      exchange=exchange)
            pool.put(run.start, run.place, LNS,
                     gpu=shared_gpu(inst, run.start, run.idx) if slots else None)
            self.rounds = run.rounds
        except Exception:  # the helper must never take the solve down with it
            logger.exception("LNS helper failed; HiGHS goes on alone")

    def summary(self) -> str:
        return f"LNS: {self.rounds} rounds"


class LNSHelper(SharedHooks):
    """Incumbent hooks (:class:`milp.IncumbentHooks`) that run the LNS beside the solver.

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
        super().__init__([LNSSource(self.params)])

    def from_lns(self, start: np.ndarray, place: np.ndarray | None, value: float) -> Arrays | None:
        """The LNS's current schedule in; a better one (from HiGHS) out, or ``None``.

        The :data:`~matheuristics.search.Exchange` of the LNS.
        """
        assert self.pool is not None
        return self.pool.exchange(start, place, value, LNS)

    def run_lns(self, time_limit: float) -> None:
        """The LNS loop of the helper thread, until ``time_limit`` or :meth:`stop`."""
        assert self.pool is not None
        self.sources[0].run(self.pool, MultipleCriteria([MaxRuntime(time_limit),
                                                         StopFlag(self.done.is_set)]))

    def summary(self) -> str:
        """Improvements found by each side, and how many were handed to HiGHS."""
        c = self.counts
        return (f"LNS helper: {c.get(LNS, 0)} improvements ({c['given']} handed to HiGHS), "
                f"{c.get('highs', 0)} from HiGHS")
