"""The array-level solve: a formulation and a solution in, a :class:`RawSolve` out.

:func:`solve_arrays` hands a built formulation to a backend (:data:`BACKENDS`)
with no :class:`~instances.Schedule` and no checker: :func:`milp.solve`
runs it, so do :func:`milp.relaxation` and the large-neighbourhood search of
:mod:`matheuristics`, window after window.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np

from instances import Status

from .backend import Backend, IncumbentHooks, RawSolve, Solution
from .formulation import Formulation
from .progress import Progress

__all__ = ["BACKENDS", "HOOK_BACKENDS", "METHOD_BACKENDS", "METHOD_NAMES", "check_args",
           "solve_arrays"]

logger = logging.getLogger(__name__)


def _highs(*args: Any, **kwargs: Any) -> RawSolve:
    from .highs import solve_highs

    return solve_highs(*args, **kwargs)


def _pulp(*args: Any, **kwargs: Any) -> RawSolve:
    from .pulp_backend import solve_pulp

    return solve_pulp(*args, **kwargs)


def _cpsat(*args: Any, **kwargs: Any) -> RawSolve:
    from .cpsat import solve_cpsat

    return solve_cpsat(*args, **kwargs)


def _portfolio(*args: Any, **kwargs: Any) -> RawSolve:
    from .portfolio import portfolio

    return portfolio(*args, **kwargs)


BACKENDS: dict[str, Backend] = {
    "highs": _highs, "pulp": _pulp, "cpsat": _cpsat, "portfolio": _portfolio,
}
"""Backend name -> solver function (imported lazily)."""

METHOD_NAMES: dict[str, str] = {
    "highs": "milp", "pulp": "milp-pulp", "cpsat": "cpsat", "portfolio": "milp",
}
"""Backend name -> ``Result.method``."""

METHOD_BACKENDS: dict[str, str] = {
    m: next(b for b, name in METHOD_NAMES.items() if name == m)
    for m in dict.fromkeys(METHOD_NAMES.values())
}
"""Method name -> backend: :data:`METHOD_NAMES` read backwards, the first backend of a
method winning (``milp`` is ``highs``, not ``portfolio``)."""

HOOK_BACKENDS: frozenset[str] = frozenset({"highs"})
"""Backends that call :class:`IncumbentHooks`."""

def check_args(backend: str, time_limit: Any, mip_gap: Any, threads: Any) -> None:
    """Refuse an unknown backend or a bad time limit, gap or thread count (``ValueError``)."""
    if backend not in BACKENDS:
        raise ValueError(f"backend: must be one of {list(BACKENDS)}, got {backend!r}")
    if not (isinstance(time_limit, (int, float)) and time_limit >= 0 and not math.isnan(time_limit)):
        raise ValueError(f"time_limit: must be a number >= 0, got {time_limit!r}")
    if not (isinstance(mip_gap, (int, float)) and 0 <= mip_gap < 1):
        raise ValueError(f"mip_gap: must be in [0, 1), got {mip_gap!r}")
    if not (isinstance(threads, int) and threads >= 1):
        raise ValueError(f"threads: must be an integer >= 1, got {threads!r}")


def solve_arrays(
    form: Formulation, *, time_limit: float, mip_gap: float = 1e-4, threads: int = 1,
    warm_start: Solution | np.ndarray | None = None, backend: str = "highs",
    progress: Progress | None = None, hooks: IncumbentHooks | None = None, **params: Any,
) -> RawSolve:
    """Solve a built formulation from a solution: the array-level core of :func:`solve`.

    Nothing here builds a :class:`~instances.Schedule` or runs the checker;
    :func:`solve` does both on what this returns. A solver failure is a
    :class:`RawSolve` of status ``error``, never an exception.

    Parameters
    ----------
    form
        The formulation (:func:`milp.build`).
    time_limit
        Seconds for the backend.
    warm_start
        A feasible start array (flat), a ``(start, place)`` pair
        (:data:`milp.backend.Solution`; on nodes), or ``None``; not checked here.
    backend, mip_gap, threads, progress, hooks, **params
        As for :func:`solve`.

    Returns
    -------
    RawSolve
        Status, the solver's incumbent (``start``, and ``place`` on nodes),
        the dual bound and the LP bound.

    Raises
    ------
    ValueError
        For a bad argument or backend option (``params: ...``).
    """
    check_args(backend, time_limit, mip_gap, threads)
    if hooks is not None and backend not in HOOK_BACKENDS:
        raise ValueError(f"hooks: backend {backend!r} takes none (only {sorted(HOOK_BACKENDS)})")
    if form.num_cols == 0:
        return RawSolve(Status.OPTIMAL, None, 0.0, 0.0, 0, "no job can run: nothing to solve")
    if time_limit <= 0:
        return RawSolve(Status.TIME_LIMIT, message="time limit reached before the solver started")
    if hooks is not None:
        params["hooks"] = hooks
    try:
        return BACKENDS[backend](
            form, time_limit=time_limit, mip_gap=mip_gap, threads=threads,
            warm_start=warm_start, progress=progress, **params,
        )
    except (ValueError, TypeError, ImportError) as e:
        if isinstance(e, ValueError) and str(e).startswith("params:"):
            raise
        if isinstance(e, TypeError) and "unexpected keyword argument" in str(e):
            raise ValueError(f"params: backend {backend!r}: {e}") from None
        return RawSolve(Status.ERROR, message=f"{type(e).__name__}: {e}")
    except Exception as e:  # a solver failure must not crash the caller
        logger.exception("backend %s failed", backend)
        return RawSolve(Status.ERROR, message=f"{type(e).__name__}: {e}")
