"""``lns`` and ``best`` on model version 3: the LNS on the heuristics' placements with GPU indices.

On a version 3 instance the heuristics place jobs with GPU indices
(:func:`heuristics.placement.new_place`: nodes, then indices, in one row per
job). :func:`improve_wide` runs the LNS (:func:`~matheuristics.search.lns_improve_indices`)
on such arrays, and :func:`attempt` runs a member so that one refusing the
instance is named with its reason (``params["skipped"]`` and the message,
:func:`skip_note`), never dropped silently.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import NamedTuple, TypeVar

import numpy as np

from heuristics.stop import StoppingCriterion
from instances import Instance

from .gpus import index_width, join_wide, split_wide
from .params import LNSParams
from .search import lns_improve_indices

__all__ = ["Candidate", "attempt", "empty", "improve_wide", "skip_note"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


class Candidate(NamedTuple):
    """A schedule as arrays with GPU indices (:mod:`~matheuristics.gpus`)."""

    start: np.ndarray
    place: np.ndarray
    idx: np.ndarray


def empty(inst: Instance) -> Candidate:
    """The schedule that runs nothing (feasible on every instance)."""
    n = inst.num_jobs
    return Candidate(np.full(n, -1, dtype=np.int64), np.full((n, inst.max_span), -1, dtype=np.int64),
                     np.full((n, index_width(inst)), -1, dtype=np.int64))


def attempt(fn: Callable[[], T], name: str, skipped: list[str]) -> T | None:
    """``fn()``, or ``None`` with ``"name: reason"`` appended to ``skipped`` when it refuses
    the instance (``ValueError``)."""
    try:
        return fn()
    except ValueError as e:
        skipped.append(f"{name}: {e}")
        logger.info("%s skipped: %s", name, e)
        return None


def improve_wide(inst: Instance, start: np.ndarray, wide: np.ndarray, *, params: LNSParams,
                 stop: StoppingCriterion) -> tuple[np.ndarray, np.ndarray, int, int]:
    """The LNS from a heuristic's arrays (``wide``: nodes, then GPU indices): the better
    arrays in the same form, rounds done and rounds improving."""
    place, idx = split_wide(inst, wide)
    run = lns_improve_indices(inst, start, place, idx, params=params, stop=stop)
    return run.start, join_wide(inst, run.place, run.idx, wide.shape[1]), run.rounds, run.improved


def skip_note(skipped: list[str]) -> str:
    """The message's note on the methods skipped (their reasons are in ``params["skipped"]``)."""
    if not skipped:
        return ""
    return f"; {len(skipped)} skipped (reasons in params['skipped']; first: {skipped[0]})"
