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
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from instances import Instance, Result, Schedule, Status, evaluate

__all__ = [
    "RESERVATIONS",
    "earliest_fit",
    "finish",
    "first_fits_now",
    "hinted_fit",
    "job_arrays",
    "occupy",
    "serial_starts",
    "serial_starts_numpy",
    "start_value",
]

logger = logging.getLogger(__name__)

RESERVATIONS: tuple[str, ...] = ("peak", "curve")
"""Reservation policies of the inference capacity (PROBLEM.md section 3)."""


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


def _compiled_decoder() -> Any:
    """The numba decoder, or ``None`` when numba is not importable (looked up once)."""
    if not _COMPILED:
        kernel: Any = None
        try:
            from ._compiled import serial_starts_compiled as kernel
        except ImportError as exc:
            logger.info("numba not available (%s): serial decoder runs in numpy", exc)
        _COMPILED.append(kernel)
    return _COMPILED[0]


def serial_starts(
    free: np.ndarray,
    order: Sequence[int] | np.ndarray,
    jobs: tuple[list[int], list[int], list[int], list[int]],
    start: np.ndarray | None = None,
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

    Returns
    -------
    numpy.ndarray
        The start array.

    Notes
    -----
    Runs the compiled decoder when numba is importable and ``free`` and
    ``start`` are writable ``int64`` arrays; otherwise :func:`serial_starts_numpy`.
    Both give the same starts.
    """
    kernel = _compiled_decoder()
    if start is None:
        start = np.full(len(jobs[0]), -1, dtype=np.int64)
    if (
        kernel is not None
        and free.dtype == np.int64
        and start.dtype == np.int64
        and free.flags.c_contiguous
        and start.flags.c_contiguous
        and free.flags.writeable
        and start.flags.writeable
    ):
        arrays = getattr(jobs, "arrays", None)
        if arrays is None:
            arrays = tuple(np.asarray(c, dtype=np.int64) for c in jobs)
        idx = np.asarray(order, dtype=np.int64).reshape(-1)
        n = arrays[0].shape[0]
        if idx.size and (int(idx.min()) < -n or int(idx.max()) >= n):
            raise IndexError(f"order: job index out of range for {n} jobs")
        idx = np.where(idx < 0, idx + n, idx)
        return kernel(free, idx, *arrays, start)  # type: ignore[no-any-return]
    return serial_starts_numpy(free, order, jobs, start)


def serial_starts_numpy(
    free: np.ndarray,
    order: Sequence[int] | np.ndarray,
    jobs: tuple[list[int], list[int], list[int], list[int]],
    start: np.ndarray | None = None,
) -> np.ndarray:
    """:func:`serial_starts` with numpy only: :func:`hinted_fit` job by job.

    The vectorized decoder, used when numba is not installed; same parameters
    and result as :func:`serial_starts`.
    """
    gpus, dur, rel, dl = jobs
    if start is None:
        start = np.full(len(gpus), -1, dtype=np.int64)
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
) -> Result:
    """Check a heuristic's start array with the independent checker and wrap it.

    Parameters
    ----------
    start
        Per-job start slot, ``-1`` for a job not run.
    reservation
        Reservation the method used; the checker enforces it, so a ``peak``
        method's schedule must respect the peak reservation too.
    started_at
        ``time.perf_counter()`` at the method's start.

    Raises
    ------
    instances.InfeasibleScheduleError
        If the heuristic produced an infeasible schedule (a bug).
    """
    schedule = Schedule.from_array(inst, start)
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
