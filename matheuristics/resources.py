"""``lns`` and ``best`` on model version 3: heuristics by name, then the LNS with GPU indices.

On a version 3 instance the candidates are schedules with GPU indices, so
the heuristics are run by name (:func:`heuristics.solve`, each result
checked by its method) and their schedules read back as arrays with indices
(:func:`~matheuristics.gpus.index_array`). A heuristic that refuses the
instance is not dropped silently: its name and reason go into the result's
``params["skipped"]`` and message. The LNS
(:func:`~matheuristics.search.lns_improve_indices`) then improves the best of
them, or the empty schedule when none runs, and the winner is checked once
(:func:`finish_indices`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import Any, NamedTuple

import numpy as np

import heuristics
from heuristics.stop import StoppingCriterion
from instances import Instance, Result, Status, evaluate

from .gpus import index_array, index_schedule, index_width
from .params import LNSParams
from .search import lns_improve_indices

__all__ = ["Candidate", "candidates", "empty", "finish_indices", "improve", "skip_note"]

logger = logging.getLogger(__name__)


class Candidate(NamedTuple):
    """A schedule as arrays with GPU indices, its value and where it came from."""

    start: np.ndarray
    place: np.ndarray
    idx: np.ndarray
    value: float
    name: str


def empty(inst: Instance) -> Candidate:
    """The schedule that runs nothing (feasible on every instance)."""
    n = inst.num_jobs
    return Candidate(np.full(n, -1, dtype=np.int64), np.full((n, inst.max_span), -1, dtype=np.int64),
                     np.full((n, index_width(inst)), -1, dtype=np.int64), 0.0, "empty schedule")


def candidates(inst: Instance, runs: Iterable[tuple[str, dict[str, Any]]],
               skipped: list[str]) -> list[Candidate]:
    """Each named heuristic's checked schedule as a :class:`Candidate`, in order.

    A method that raises ``ValueError`` on the instance (one not yet written
    for model version 3) is left out, and ``"name: reason"`` appended to
    ``skipped``.
    """
    out = []
    for method, params in runs:
        name = method + "".join(f" {k}={v}" for k, v in params.items() if k != "time_limit")
        try:
            res = heuristics.solve(inst, method, **params)
        except ValueError as e:
            skipped.append(f"{name}: {e}")
            logger.info("%s skipped on %s: %s", name, inst.name, e)
            continue
        s = res.schedule
        out.append(Candidate(s.to_array(inst), s.to_placement_array(inst), index_array(inst, s),
                             float(res.value), name))
    return out


def improve(inst: Instance, first: Candidate, *, stop: StoppingCriterion,
            params: LNSParams) -> tuple[Candidate, int, int]:
    """The LNS from ``first``: the better schedule, rounds done and rounds improving."""
    run = lns_improve_indices(inst, first.start, first.place, first.idx, params=params, stop=stop)
    value = float(inst.job_values[run.start >= 0].sum())
    return Candidate(run.start, run.place, run.idx, value, "lns"), run.rounds, run.improved


def finish_indices(inst: Instance, method: str, best: Candidate, *, started_at: float,
                   params: dict[str, Any], message: str) -> Result:
    """The checked :class:`~instances.Result` of a candidate (``curve``), its schedule with indices.

    Raises
    ------
    instances.InfeasibleScheduleError
        If the candidate is infeasible (a bug).
    """
    schedule = index_schedule(inst, best.start, best.place, best.idx)
    metrics = evaluate(inst, schedule, "curve", enforce_reservation=True)
    return Result(method=method, status=Status.FEASIBLE, schedule=schedule, value=metrics.value,
                  upper_bound=None, runtime_s=time.perf_counter() - started_at, metrics=metrics,
                  reservation="curve", params=params, message=message)


def skip_note(skipped: list[str]) -> str:
    """The message's note on the methods skipped (their reasons are in ``params["skipped"]``)."""
    if not skipped:
        return ""
    return f"; {len(skipped)} skipped (reasons in params['skipped']; first: {skipped[0]})"
