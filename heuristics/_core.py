"""Shared machinery of the heuristics: the capacity profile, earliest fit, results.

The hot loop of every constructive heuristic is "find the earliest slot from
which ``g`` GPUs stay free for ``p`` slots". :func:`earliest_fit` answers it
with array operations over the window (a cumulative count of the slots that
have room), never a Python loop over slots. ``tests/reference.py`` keeps a
plain per-slot version that the tests hold it to.

:func:`serial_starts` is the serial schedule-generation scheme (the list
decoder) shared by list scheduling, sampling, local search and conservative
backfilling; :func:`first_fits_now` is the vectorized "which job of this list
can start at slot ``t``" test of the time-stepping methods.

When numba is installed, :func:`serial_starts` places a whole order in one
compiled call (``heuristics._compiled``): the numpy decoder pays about a
microsecond of call overhead per array operation, several per job, which
dominates on large instances. :func:`serial_starts_numpy` is the vectorized
decoder; it runs when numba is missing and the tests hold the two equal.

On an instance with nodes the same functions take a
:class:`~heuristics.placement.NodeProfile` (``nodes=``) beside the pool's
profile ``free`` and fill a placement array (``place=``, the form of
:meth:`instances.Schedule.to_placement_array`); :func:`finish` then turns
both into a schedule with its placement.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from instances import Instance, Result, Schedule, Status, evaluate

from .placement import NodeProfile, new_place, node_fit, node_occupy

__all__ = [
    "RESERVATIONS",
    "earliest_fit",
    "finish",
    "first_fits_now",
    "hinted_fit",
    "job_arrays",
    "new_place",
    "occupy",
    "serial_starts",
    "serial_starts_numpy",
    "start_value",
]

logger = logging.getLogger(__name__)

RESERVATIONS: tuple[str, ...] = ("peak", "curve")
"""Reservation policies of the inference capacity (the specification (docs/model.md))."""


def check_reservation(reservation: str) -> str:
    """Return ``reservation`` or raise :class:`ValueError` naming it."""
    if reservation not in RESERVATIONS:
        raise ValueError(f"reservation: must be 'peak' or 'curve', got {reservation!r}")
    return reservation


def earliest_fit(free: np.ndarray, g: int, p: int, lo: int, hi: int) -> int:
    """Earliest start ``s`` in ``[lo, hi - p]`` with ``free[s:s+p] >= g``, or ``-1``.

    Parameters
    ----------
    free
        Free GPUs per slot.
    g, p
        GPUs and duration (slots) of the block.
    lo, hi
        The block must start at or after ``lo`` and end at or before ``hi``.

    Returns
    -------
    int
        The start slot, or ``-1`` when no window fits.
    """
    n = hi - lo
    if n < p or lo < 0:
        return -1
    ok = free[lo:hi] >= g
    if p == 1:
        k = int(ok.argmax())
        return lo + k if ok[k] else -1
    c = np.empty(n + 1, dtype=np.int64)
    c[0] = 0
    np.cumsum(ok, out=c[1:])
    full = (c[p:] - c[:-p]) == p
    k = int(full.argmax())
    return lo + k if full[k] else -1


def start_value(inst: Instance, start: np.ndarray) -> float:
    """Value ``V`` of a start array (``-1``: not run), to compare candidates.

    Only for choosing between candidates inside a method: the value a method
    reports is always the checker's (:func:`finish`).
    """
    return float(inst.job_values[start >= 0].sum())


def occupy(free: np.ndarray, s: int, g: int, p: int) -> None:
    """Take ``g`` GPUs in slots ``s .. s+p-1`` of the profile, in place."""
    free[s : s + p] -= g


class _JobLists(tuple):  # type: ignore[type-arg]
    """The four job lists, plus the same columns as ``int64`` arrays in ``arrays``."""

    arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def job_arrays(inst: Instance) -> tuple[list[int], list[int], list[int], list[int]]:
    """``(gpus, durations, releases, deadlines)`` as plain ``int`` lists (fast to index).

    The tuple also carries the columns as contiguous ``int64`` arrays (for the
    compiled decoder), so they are converted once per instance, not per call.
    """
    cols = (inst.gpus, inst.durations, inst.releases, inst.deadlines)
    out = _JobLists(c.tolist() for c in cols)
    out.arrays = tuple(np.ascontiguousarray(c, dtype=np.int64) for c in cols)  # type: ignore[assignment]
    return out  # type: ignore[return-value]


_COMPILED: list[Any] = []


def _compiled_decoder(nodes: bool = False) -> Any:
    """The numba decoder (flat, or on nodes), or ``None`` when numba is not importable.

    Looked up once; ``_COMPILED`` holds ``[flat kernel, node kernel]`` (or ``[None]``).
    """
    if not _COMPILED:
        try:
            from ._compiled import serial_starts_compiled, serial_starts_nodes_compiled
        except ImportError as exc:
            logger.info("numba not available (%s): serial decoder runs in numpy", exc)
            _COMPILED.append(None)
        else:
            _COMPILED.extend([serial_starts_compiled, serial_starts_nodes_compiled])
    if _COMPILED[0] is None:
        return None
    return _COMPILED[1] if nodes else _COMPILED[0]


def _writable_int64(*arrays: np.ndarray) -> bool:
    return all(
        a.dtype == np.int64 and a.flags.c_contiguous and a.flags.writeable for a in arrays
    )


def serial_starts(
    free: np.ndarray,
    order: Sequence[int] | np.ndarray,
    jobs: tuple[list[int], list[int], list[int], list[int]],
    start: np.ndarray | None = None,
    *,
    nodes: NodeProfile | None = None,
    place: np.ndarray | None = None,
) -> np.ndarray:
    """Serial schedule generation: place the jobs of ``order`` one by one, earliest fit.

    Each job ``j`` in turn starts at the earliest slot ``s >= r_j`` from which
    ``g_j`` GPUs stay free for ``p_j`` slots and ``s + p_j <= min(D_j, T)``;
    a job that fits nowhere is not run. ``free`` is updated in place.

    Parameters
    ----------
    free
        Free GPUs per slot (modified in place).
    order
        Job indices in placement order; jobs absent from it are not placed.
    jobs
        :func:`job_arrays` of the instance.
    start
        Per-job start array to fill (``-1`` for not run); a new one if ``None``.
    nodes
        On an instance with nodes, its :class:`~heuristics.placement.NodeProfile`
        (modified in place): each job then starts at the earliest slot from
        which it has a valid placement, chosen by the profile's rule.
    place
        With ``nodes``, the placement array to fill (row ``j``: job ``j``'s
        node positions, ``-1`` padded); a new one, discarded, if ``None``.

    Returns
    -------
    numpy.ndarray
        The start array.

    Notes
    -----
    Runs the compiled decoder when numba is importable and the arrays are
    writable ``int64``; otherwise :func:`serial_starts_numpy`. Both give the
    same starts (and placements).
    """
    n_jobs = len(jobs[0])
    if start is None:
        start = np.full(n_jobs, -1, dtype=np.int64)
    if nodes is not None and place is None:
        place = np.full((n_jobs, 1 if n_jobs == 0 else _span(nodes, jobs)), -1, dtype=np.int64)
    kernel = _compiled_decoder(nodes is not None)
    ok = kernel is not None and _writable_int64(free, start)
    if ok and nodes is not None:
        assert place is not None
        ok = _writable_int64(place, nodes.free, nodes.maxfree, nodes.nmax, nodes.whole)
    if ok:
        arrays = getattr(jobs, "arrays", None)
        if arrays is None:
            arrays = tuple(np.asarray(c, dtype=np.int64) for c in jobs)
        idx = np.asarray(order, dtype=np.int64).reshape(-1)
        n = arrays[0].shape[0]
        if idx.size and (int(idx.min()) < -n or int(idx.max()) >= n):
            raise IndexError(f"order: job index out of range for {n} jobs")
        idx = np.where(idx < 0, idx + n, idx)
        if nodes is None:
            return kernel(free, idx, *arrays, start)  # type: ignore[no-any-return]
        return kernel(  # type: ignore[no-any-return]
            free, nodes.free, nodes.sizes, nodes.maxfree, nodes.nmax, nodes.whole, nodes.multi,
            nodes.frag,
            nodes.rule, idx, *arrays, start, place,
        )
    return serial_starts_numpy(free, order, jobs, start, nodes=nodes, place=place)


def _span(nodes: NodeProfile, jobs: tuple[list[int], ...]) -> int:
    """Enough columns for any placement: the most nodes a multi-node job could take."""
    g = np.asarray(jobs[0], dtype=np.int64)
    if not nodes.multi.any():
        return 1
    cum = np.cumsum(np.sort(nodes.sizes))
    return max(1, int(np.searchsorted(cum, int(g[nodes.multi].max()), side="right")))


def serial_starts_numpy(
    free: np.ndarray,
    order: Sequence[int] | np.ndarray,
    jobs: tuple[list[int], list[int], list[int], list[int]],
    start: np.ndarray | None = None,
    *,
    nodes: NodeProfile | None = None,
    place: np.ndarray | None = None,
) -> np.ndarray:
    """:func:`serial_starts` with numpy only: :func:`hinted_fit` (or ``node_fit``) job by job.

    The vectorized decoder, used when numba is not installed; same parameters
    and result as :func:`serial_starts`.
    """
    gpus, dur, rel, dl = jobs
    if start is None:
        start = np.full(len(gpus), -1, dtype=np.int64)
    if nodes is not None:
        for j in order.tolist() if isinstance(order, np.ndarray) else order:
            j = int(j)
            g, p = int(gpus[j]), int(dur[j])
            s, ks = node_fit(free, nodes, j, g, p, int(rel[j]), min(int(dl[j]), free.shape[0]))
            if s >= 0:
                node_occupy(free, nodes, j, g, s, p, ks, place)
                start[j] = s
        return start
    hint: dict[tuple[int, int], tuple[int, int]] = {}
    for j in order.tolist() if isinstance(order, np.ndarray) else order:
        g, p = gpus[j], dur[j]
        s = hinted_fit(free, g, p, rel[j], dl[j], hint)
        if s >= 0:
            free[s : s + p] -= g
            start[j] = s
    return start


def hinted_fit(
    free: np.ndarray, g: int, p: int, lo: int, hi: int, hint: dict[tuple[int, int], tuple[int, int]]
) -> int:
    """:func:`earliest_fit` for a profile that only shrinks between calls.

    The earliest fit of a block ``(g, p)`` from a slot ``lo`` can then only
    move later: ``hint[(g, p)] = (lo, s)`` keeps the last answer (``s`` found
    ignoring the deadline, ``-1`` for none), and a later query from
    ``lo' >= lo`` starts its search at ``max(lo', s)``. The window at the
    search's first slot is tested alone first (the common hit). Use a fresh
    ``hint`` for each profile.
    """
    key = (g, p)
    h = hint.get(key)
    a = lo
    if h is not None and h[0] <= lo:
        if h[1] < 0:
            return -1
        if h[1] > a:
            a = h[1]
    if a + p > hi:
        return -1
    s = a if free[a : a + p].min() >= g else earliest_fit(free, g, p, a + 1, free.shape[0])
    hint[key] = (lo, s)
    return s if s >= 0 and s + p <= hi else -1


def first_fits_now(
    free: np.ndarray, t: int, cand: np.ndarray, gpus: np.ndarray, dur: np.ndarray
) -> int:
    """Position in ``cand`` of the first job that can start at slot ``t``, or ``-1``.

    A job fits now when ``free[t:t+p] >= g``; the caller guarantees
    ``t + p <= min(D, T)`` for every candidate. One cumulative minimum of the
    profile from ``t`` answers every candidate at once.
    """
    if cand.size == 0:
        return -1
    cm = np.minimum.accumulate(free[t:])
    ok = cm[dur[cand] - 1] >= gpus[cand]
    k = int(ok.argmax())
    return k if ok[k] else -1


def finish(
    inst: Instance,
    method: str,
    start: np.ndarray,
    *,
    reservation: str,
    started_at: float,
    params: Mapping[str, Any] | None = None,
    message: str = "",
    place: np.ndarray | None = None,
) -> Result:
    """Check a heuristic's start array with the independent checker and wrap it.

    Parameters
    ----------
    start
        Per-job start slot, ``-1`` for a job not run.
    place
        On an instance with nodes, the placement array (see :func:`new_place`);
        required there.
    reservation
        Reservation the method used; the checker enforces it, so a ``peak``
        method's schedule must respect the peak reservation too.
    started_at
        ``time.perf_counter()`` at the method's start.

    Raises
    ------
    instances.InfeasibleScheduleError
        If the heuristic produced an infeasible schedule (a bug).
    ValueError
        If the instance has nodes and ``place`` is missing.
    """
    if inst.has_nodes and place is None:
        raise ValueError(f"place: required for instance {inst.name!r}, which has nodes")
    schedule = Schedule.from_array(inst, start, place if inst.has_nodes else None)
    metrics = evaluate(inst, schedule, reservation, enforce_reservation=True)  # type: ignore[arg-type]
    return Result(
        method=method,
        status=Status.FEASIBLE,
        schedule=schedule,
        value=metrics.value,
        upper_bound=None,
        runtime_s=time.perf_counter() - started_at,
        metrics=metrics,
        reservation=reservation,
        params=dict(params or {}),
        message=message,
    )
