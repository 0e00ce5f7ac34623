"""Names kept for callers outside the package that imported them from here.

New code imports :mod:`heuristics.decoder`, :mod:`heuristics.profile` and
:mod:`heuristics.results`. The decoders here take a bare pool row (the model
of a flat pool, whose one node never binds) and update it in place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import decoder
from .decoder import job_arrays
from .profile import Profile
from .results import finish, start_value

__all__ = ["finish", "job_arrays", "serial_starts", "serial_starts_numpy", "start_value"]


def _on_pool_row(decode: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    def run(free: np.ndarray, order: Sequence[int] | np.ndarray, jobs: Any,
            start: np.ndarray | None = None) -> np.ndarray:
        rows = np.array(free, dtype=np.int64, ndmin=2)
        top = rows.max(initial=0)  # one node of the row's most, which never binds
        prof = Profile(rows, np.array([top]), np.ones(1, dtype=np.int64),
                       np.zeros((1, 1), dtype=np.int64), 0, offset=top - rows[0])
        out = decode(prof, order, jobs, start)
        free[:] = prof.pool
        return out

    run.__doc__ = f"{decode.__name__} on the pool row ``free`` (updated in place)."
    return run


serial_starts = _on_pool_row(decoder.serial_starts)
serial_starts_numpy = _on_pool_row(decoder.serial_starts_numpy)


def _compiled_decoder() -> Callable[..., np.ndarray] | None:
    """``(free, order, gpus, dur, rel, dl, start) -> start`` compiled, or ``None`` without numba."""
    if decoder.compiled_decoder() is None:
        return None
    return lambda free, order, *cols_start: serial_starts(free, order, np.stack(cols_start[:4]),
                                                          cols_start[4])
