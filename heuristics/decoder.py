"""The serial schedule-generation scheme (the list decoder) over a profile of any model version.

:func:`serial_starts` is the decoder shared by list scheduling, sampling,
local search, conservative backfilling and the Lagrangian heuristic. When
numba is installed it places a whole order in one compiled call
(``heuristics._compiled``): the numpy decoder pays about a microsecond of
call overhead per array operation, several per job, which dominates on large
instances. :func:`serial_starts_numpy` is the vectorized decoder (the fit
test and occupy of :mod:`heuristics.profile`, job by job); it runs when numba
is missing and the tests hold the two equal.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from instances import Instance

from . import shares
from .profile import AnyProfile, Hint, counts_profile, fit, occupy

__all__ = ["JOB_ROWS", "compiled_decoder", "job_arrays", "serial_starts", "serial_starts_numpy"]

logger = logging.getLogger(__name__)

JOB_ROWS: tuple[str, ...] = ("gpus", "durations", "releases", "deadlines")
"""The rows of :func:`job_arrays`."""

Order = Sequence[int] | np.ndarray
Jobs = np.ndarray | Sequence[Sequence[int]]

_NO_PLACE = np.empty((0, 1), dtype=np.int64)
_COMPILED: list[Any] = []


def job_arrays(inst: Instance) -> np.ndarray:
    """The jobs as one ``(4, n)`` int64 array, rows :data:`JOB_ROWS` (deadlines: end-by slots).

    Unpacks as ``gpus, dur, rel, dl = job_arrays(inst)``; built once per
    decoding run, not per job.
    """
    return np.array([inst.gpus, inst.durations, inst.releases, inst.deadlines], dtype=np.int64)


def compiled_decoder() -> Any:
    """The numba decoder, or ``None`` when numba is not importable (looked up once)."""
    if not _COMPILED:
        try:
            from ._compiled import serial_starts_compiled
        except ImportError as exc:
            logger.info("numba not available (%s): serial decoder runs in numpy", exc)
            _COMPILED.append(None)
        else:
            _COMPILED.append(serial_starts_compiled)
    return _COMPILED[0]


def serial_starts(prof: AnyProfile, order: Order, jobs: Jobs, start: np.ndarray | None = None,
                  place: np.ndarray | None = None) -> np.ndarray:
    """Serial schedule generation: place the jobs of ``order`` one by one, earliest fit.

    Each job ``j`` in turn starts at the earliest slot ``s >= r_j`` from which
    it has a valid placement for ``p_j`` slots (``g_j`` GPUs in the pool and on
    the nodes the profile's rule picks) and ``s + p_j <= min(D_j, T)``; a job
    that fits nowhere is not run. ``prof`` is updated in place.

    Parameters
    ----------
    prof
        The free capacity (modified in place): a
        :class:`~heuristics.profile.Profile`, or on version 3 a
        :class:`~heuristics.shares.SharesProfile`, whose decoder runs.
    order
        Job indices in placement order; jobs absent from it are not placed.
    jobs
        :func:`job_arrays` of the instance (or any four rows of the same meaning).
    start
        Per-job start array to fill (``-1`` for not run); a new one if ``None``.
    place
        The placement array to fill (row ``j``: job ``j``'s node positions,
        ``-1`` padded, as :func:`heuristics.placement.new_place`); ``None``
        records none.

    Returns
    -------
    numpy.ndarray
        The start array.

    Raises
    ------
    IndexError
        If ``order`` holds an index outside ``[-n, n)``.

    Notes
    -----
    Runs the compiled decoder when numba is importable and ``start`` and
    ``place`` are writable ``int64``; otherwise :func:`serial_starts_numpy`.
    Both give the same starts and placements.
    """
    if isinstance(prof, shares.SharesProfile):  # model version 3
        return shares.serial_starts(prof, order, jobs, start, place)
    counts = counts_profile(prof)
    jobs = np.asarray(jobs, dtype=np.int64)
    if start is None:
        start = np.full(jobs.shape[1], -1, dtype=np.int64)
    kernel = _COMPILED[0] if _COMPILED else compiled_decoder()
    if kernel is not None and _kernel_ready(start) and (place is None or _kernel_ready(place)):
        counts.refresh()
        return kernel(  # type: ignore[no-any-return]
            counts.rows, counts.sizes, counts.levels, counts.frag, counts.rule,
            np.asarray(order, dtype=np.int64).reshape(-1),
            jobs, start, _NO_PLACE if place is None else place)
    return serial_starts_numpy(counts, order, jobs, start, place)


def _kernel_ready(a: np.ndarray) -> bool:
    """Whether the compiled decoder can write ``a`` (writable, contiguous ``int64``)."""
    return a.dtype == np.int64 and a.flags.c_contiguous and a.flags.writeable


def serial_starts_numpy(prof: AnyProfile, order: Order, jobs: Jobs,
                        start: np.ndarray | None = None,
                        place: np.ndarray | None = None) -> np.ndarray:
    """:func:`serial_starts` with numpy only: :func:`~heuristics.profile.fit` job by job.

    The vectorized decoder, used when numba is not installed; same parameters
    and result as :func:`serial_starts`.
    """
    if isinstance(prof, shares.SharesProfile):  # model version 3: compiled only
        return shares.serial_starts(prof, order, jobs, start, place)
    counts = counts_profile(prof)
    gpus, dur, rel, dl = (np.asarray(c).tolist() for c in jobs)
    n = len(gpus)
    if start is None:
        start = np.full(n, -1, dtype=np.int64)
    T = counts.pool.shape[0]
    hint: Hint = {}
    for j in np.asarray(order, dtype=np.int64).reshape(-1).tolist():
        if not -n <= j < n:
            raise IndexError(f"order: job index {j} out of range for {n} jobs")
        g, p = gpus[j], dur[j]
        s, ks = fit(counts, g, p, rel[j], min(dl[j], T), hint)
        if s >= 0:
            occupy(counts, g, s, p, ks, place, j)
            start[j] = s
    return start
