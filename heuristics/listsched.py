"""List scheduling: the serial and the parallel schedule-generation schemes.

``list`` is the constraint-aware allocator of the seed claim: jobs in the order
of a priority rule, each at its earliest fit under the elastic ``curve``
reservation. ``list-peak`` is the same under the static ``peak`` reservation,
so the gain over FIFO splits into a reservation part and an ordering part.
``parallel`` steps through time instead of through the list.

On an instance with nodes every method places each job on nodes: it starts
at the earliest slot from which it has a valid placement, and the
``placement`` rule (:data:`heuristics.placement_rules.PLACEMENT_RULES`) picks
the node. A user's rule (section 14 of the specification) runs in
:mod:`heuristics.user_decode`; ``rule`` may be a user's priority key too.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from instances import Instance, Result

from . import user_decode
from .decoder import job_arrays, serial_starts
from .engine import new_profile
from .placement import new_place
from .placement_rules import PlacementRule, resolve_placement
from .results import finish
from .rules import order_by, rule_name

__all__ = ["list_schedule", "list_starts", "parallel_schedule", "parallel_starts"]


def _user(placement: Any) -> PlacementRule | None:
    """The user's rule ``placement`` names or is, or ``None`` for a built-in."""
    entry = resolve_placement(placement)
    return None if entry.builtin else entry


def _params(inst: Instance, rule: Any, placement: Any, **more: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"rule": rule_name(rule), **more}
    if inst.has_nodes:
        params["placement"] = resolve_placement(placement).name
    return params


def list_starts(
    inst: Instance, order: np.ndarray, reservation: str = "curve", *,
    placement: Any = "first-fit", place: np.ndarray | None = None,
) -> np.ndarray:
    """Start array of the serial decoder for a job order (``-1``: not run).

    On an instance with nodes, the jobs are placed by the ``placement`` rule
    (a built-in's name, or a user's rule) and their nodes written into
    ``place`` when given.
    """
    entry = _user(placement)
    if entry is not None:
        return user_decode.serial_starts(inst, order, entry, reservation, place)
    return serial_starts(new_profile(inst, reservation, placement), order, job_arrays(inst), None, place)


def list_schedule(
    inst: Instance, *, rule: Any = "priority", reservation: str = "curve",
    placement: Any = "first-fit",
) -> Result:
    """Serial list scheduling with earliest fit.

    Jobs are taken in the order of ``rule`` (see :data:`heuristics.rules.RULES`;
    ties by ``w`` desc, ``w g p`` desc, list position). Each starts at the
    earliest slot ``s >= r_j`` from which it fits for ``p_j`` slots and ends by
    ``min(D_j, T)``, in the capacity left by inference (under ``reservation``)
    and the jobs placed before it; a job that fits nowhere is not run. Unlike
    FIFO, a job may start before one placed earlier.

    Parameters
    ----------
    rule
        Priority rule: a name of :data:`heuristics.rules.RULES` (default
        ``priority``: ``w`` descending), ``MODULE:NAME``, or a key ``key(inst)``.
    reservation
        ``curve`` (method ``list``) or ``peak`` (method ``list-peak``).
    placement
        On nodes: ``first-fit`` (default), ``best-fit``, ``frag``, FGD's six
        on version 3, or a user's rule (name, ``MODULE:NAME`` or the rule).
    """
    t0 = time.perf_counter()
    place = new_place(inst) if inst.has_nodes else None
    start = list_starts(inst, order_by(inst, rule), reservation, placement=placement, place=place)
    name = "list" if reservation == "curve" else "list-peak"
    params = _params(inst, rule, placement)
    return finish(
        inst, name, start, reservation=reservation, started_at=t0, params=params, place=place,
    )


def parallel_starts(
    inst: Instance, order: np.ndarray, reservation: str = "curve", *,
    placement: Any = "first-fit", place: np.ndarray | None = None,
) -> np.ndarray:
    """Start array of the parallel (time-stepping) scheme for a job order.

    On an instance with nodes, a job starts at ``t`` when it has a valid
    placement from ``t``, chosen by the ``placement`` rule and written into
    ``place``.
    """
    entry = _user(placement)
    if entry is not None:
        return user_decode.parallel_starts(inst, order, entry, reservation, place)
    prof = new_profile(inst, reservation, placement)  # any model version
    start = np.full(inst.num_jobs, -1, dtype=np.int64)
    return prof.parallel(order, job_arrays(inst), start, place)


def parallel_schedule(
    inst: Instance, *, rule: Any = "priority", reservation: str = "curve",
    placement: Any = "first-fit",
) -> Result:
    """Parallel (time-stepping) schedule generation.

    For ``t = 0, 1, ..., T-1``: the jobs released by ``t`` that are not yet
    started and can still end by ``min(D_j, T)`` if started at ``t`` are
    scanned in the order of ``rule``; each one that fits in slots
    ``t .. t+p_j-1`` starts at ``t``. A job whose last feasible start passes
    is not run. Every scan is one vectorized test over all candidates.

    Parameters
    ----------
    rule
        Priority rule name (default ``priority``).
    reservation
        ``curve`` (default) or ``peak``.
    placement
        On nodes: ``first-fit`` (default), ``best-fit`` or ``frag``.
    """
    t0 = time.perf_counter()
    place = new_place(inst) if inst.has_nodes else None
    start = parallel_starts(inst, order_by(inst, rule), reservation, placement=placement,
                            place=place)
    params = _params(inst, rule, placement, reservation=reservation)
    return finish(
        inst, "parallel", start, reservation=reservation, started_at=t0, params=params,
        place=place,
    )
