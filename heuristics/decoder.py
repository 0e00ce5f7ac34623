"""The serial schedule-generation scheme (the list decoder) over the state of any model version.

:func:`serial_starts` is the decoder shared by list scheduling, sampling,
local search, conservative backfilling and the Lagrangian heuristic: the
state's own :meth:`~heuristics.engine.CapacityState.decode`. On the count
model (:class:`heuristics.profile.Profile`) it places a whole order in one
compiled call when numba is installed: the numpy decoder
(:func:`heuristics.profile.serial_starts_numpy`) pays about a microsecond of
call overhead per array operation, several per job, which dominates on large
instances; it runs when numba is missing and the tests hold the two equal.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from instances import Instance

from .engine import CapacityState
from .profile import compiled_decoder, serial_starts_numpy

__all__ = ["JOB_ROWS", "compiled_decoder", "job_arrays", "serial_starts", "serial_starts_numpy"]

JOB_ROWS: tuple[str, ...] = ("gpus", "durations", "releases", "deadlines")
"""The rows of :func:`job_arrays`."""

Order = Sequence[int] | np.ndarray
Jobs = np.ndarray | Sequence[Sequence[int]]


def job_arrays(inst: Instance) -> np.ndarray:
    """The jobs as one ``(4, n)`` int64 array, rows :data:`JOB_ROWS` (deadlines: end-by slots).

    Unpacks as ``gpus, dur, rel, dl = job_arrays(inst)``; built once per
    decoding run, not per job.
    """
    return np.array([inst.gpus, inst.durations, inst.releases, inst.deadlines], dtype=np.int64)


def serial_starts(prof: CapacityState, order: Order, jobs: Jobs, start: np.ndarray | None = None,
                  place: np.ndarray | None = None) -> np.ndarray:
    """Serial schedule generation: place the jobs of ``order`` one by one, earliest fit.

    Each job ``j`` in turn starts at the earliest slot ``s >= r_j`` from which
    it has a valid placement for ``p_j`` slots (``g_j`` GPUs in the pool and on
    the nodes the profile's rule picks) and ``s + p_j <= min(D_j, T)``; a job
    that fits nowhere is not run. ``prof`` is updated in place.

    Parameters
    ----------
    prof
        The free capacity (modified in place), of any model version
        (:func:`heuristics.engine.new_profile`).
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
    On the count model, the compiled decoder when numba is importable and
    ``start`` and ``place`` are writable ``int64``; otherwise
    :func:`serial_starts_numpy`. Both give the same starts and placements.
    """
    return prof.decode(order, jobs, start, place)
