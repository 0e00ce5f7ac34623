"""HiGHS and CP-SAT side by side on one formulation: the ``portfolio`` backend."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from instances import Status

from .backend import RawSolve, Solution, solution_value
from .formulation import Formulation
from .progress import Progress

__all__ = ["portfolio"]

logger = logging.getLogger(__name__)


def portfolio(
    form: Formulation, *, time_limit: float, mip_gap: float, threads: int,
    warm_start: Solution | np.ndarray | None, progress: Progress | None, **params: Any,
) -> RawSolve:
    """HiGHS (one thread) and CP-SAT (``threads - 1`` workers) side by side.

    Both start from the warm start and run in parallel threads (both solvers
    release the GIL); the first to prove optimality stops the other. The
    result keeps both incumbents (the checker picks the better one) and the
    smaller of the two valid upper bounds.
    """
    from .cpsat import solve_cpsat
    from .highs import solve_highs

    stop = threading.Event()

    def run(name: str, fn: Callable[..., RawSolve], **kw: Any) -> RawSolve:
        try:
            raw = fn(form, time_limit=time_limit, mip_gap=mip_gap, warm_start=warm_start,
                     stop=stop, **kw)
        except Exception as e:  # one failed solver leaves the other's answer
            logger.exception("portfolio: %s failed", name)
            raw = RawSolve(Status.ERROR, message=f"{name}: {type(e).__name__}: {e}")
        if raw.status is Status.OPTIMAL:
            stop.set()
        return raw

    # HiGHS in the calling thread: its process-wide thread pool belongs to the thread that
    # last reset it, and a reset in a worker thread left later solves in this one failing
    with ThreadPoolExecutor(1) as pool:
        fc = pool.submit(run, "CP-SAT", solve_cpsat, threads=max(1, threads - 1), progress=None)
        h = run("HiGHS", solve_highs, threads=1, progress=progress, **params)
        c = fc.result()
    ok = [r for r in (h, c) if r.status is not Status.ERROR]
    found = sorted((r.solution for r in ok if r.solution is not None),
                   key=lambda sol: -solution_value(form, sol))
    bounds = [r.dual_bound for r in ok if r.dual_bound is not None]
    if any(r.status is Status.OPTIMAL for r in ok):
        status = Status.OPTIMAL
    elif ok:
        status = Status.TIME_LIMIT
    else:
        status = Status.ERROR
    return RawSolve(
        status=status,
        start=found[0][0] if found else None,
        dual_bound=min(bounds) if bounds else None,
        lp_bound=h.lp_bound if h.status is not Status.ERROR else None,
        nodes=h.nodes,
        message=f"portfolio: {h.message}; {c.message}",
        alternatives=tuple(found[1:]),
        place=found[0][1] if found else None,
        gpu=found[0][2] if found and len(found[0]) > 2 else None,
    )
