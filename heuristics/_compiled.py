"""The serial list decoder compiled with numba (optional).

One call places a whole order: for each job, a scan of its window that
counts the consecutive slots with ``g`` GPUs free and stops at the first run
of ``p``, then takes the GPUs. Plain loops, compiled, so no per-job call
overhead; :func:`heuristics._core.serial_starts_numpy` is the vectorized
version it is held to, and what runs when numba is not installed.

Importing this module raises :class:`ImportError` when numba is missing;
:func:`heuristics._core.serial_starts` imports it lazily (on first use) and
falls back to the numpy decoder then. ``cache=True`` keeps the machine code
on disk, so only the first process after an install pays the compilation.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["serial_starts_compiled"]


@njit(cache=True, nogil=True)
def serial_starts_compiled(
    free: np.ndarray,
    order: np.ndarray,
    gpus: np.ndarray,
    dur: np.ndarray,
    rel: np.ndarray,
    dl: np.ndarray,
    start: np.ndarray,
) -> np.ndarray:  # pragma: no cover (compiled; tested through its results)
    """Serial schedule generation over ``order`` (all arrays ``int64``).

    Job ``j`` starts at the earliest ``s`` in ``[rel[j], min(dl[j], T) - p]``
    with ``free[s:s+p] >= g``; a job that fits nowhere keeps ``start[j]``.
    ``free`` and ``start`` are updated in place; ``start`` is returned.
    """
    T = free.shape[0]
    for i in range(order.shape[0]):
        j = order[i]
        g = gpus[j]
        p = dur[j]
        lo = rel[j]
        hi = min(dl[j], T)
        if lo < 0 or hi - lo < p:
            continue
        run = 0
        s = -1
        for t in range(lo, hi):
            if free[t] >= g:
                run += 1
                if run >= p:
                    s = t - p + 1
                    break
            else:
                run = 0
        if s >= 0:
            for t in range(s, s + p):
                free[t] -= g
            start[j] = s
    return start
