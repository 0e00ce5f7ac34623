"""Relaxations solved as bounds: ``milp.relaxation(inst, "fluid")`` and its siblings.

Each relaxation of :data:`milp.shares.RELAXATIONS` is the one build with
rows dropped or coarsened (:func:`milp.build` with ``relax=``), solved by
HiGHS. Its dual bound is an upper bound on every feasible schedule of the
instance; its best value is the relaxed model's (a point of the relaxation,
checked against the relaxed rows, not a schedule of the instance), which
the price of sharing needs (:func:`milp.price_of_sharing`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from instances import Instance, Status
from instances.objective import start_worth

from .assemble import tolerance
from .backend import as_solution
from .builder import build
from .core import check_args, solve_arrays
from .formulation import Formulation
from .gpus import first_fit_gpu
from .shares import RELAXATIONS
from .warm import WarmStart

__all__ = ["Relaxed", "relaxation", "relaxed_warm_start"]


@dataclass(frozen=True)
class Relaxed:
    """A solve of a relaxation.

    Attributes
    ----------
    kind
        The relaxation (a key of :data:`milp.shares.RELAXATIONS`).
    status
        ``optimal`` (the relaxation's optimum proven), ``time_limit`` or ``error``.
    value
        The best value of the relaxed model found (0 without one): a lower
        end for the relaxation's optimum.
    upper_bound
        An upper bound on the relaxation's optimum, so on the instance's
        (the smallest of HiGHS's dual bound, the LP bound and the sum of the
        values of the jobs with a column), or ``None`` after an error.
    runtime_s
        Wall-clock seconds.
    message
        The solver's notes.
    start, place
        The best point's start and placement arrays (``None`` without one).
    """

    kind: str
    status: Status
    value: float
    upper_bound: float | None
    runtime_s: float
    message: str = ""
    start: np.ndarray | None = None
    place: np.ndarray | None = None


def relaxation(
    inst: Instance, kind: str = "fluid", *, time_limit: float = 60.0, mip_gap: float = 1e-4,
    threads: int = 1, warm_start: Any = None, **options: Any,
) -> Relaxed:
    """Solve a relaxation of ``inst`` with HiGHS: an upper bound, and the relaxed optimum.

    Parameters
    ----------
    kind
        ``"fluid"`` (default), ``"nodes"`` or ``"flat"`` (or ``"exact"``:
        the model itself, for comparison), see :data:`milp.shares.RELAXATIONS`.
    time_limit, mip_gap, threads
        As for :func:`milp.solve`.
    warm_start
        A start array, or a ``(start, place)`` pair, feasible for the
        relaxation (a schedule of the instance is one), or ``None``.
    **options
        Formulation options of :func:`milp.build` (``rounding``, ``aggregate``, ...).

    Raises
    ------
    ValueError
        For an unknown ``kind`` or a bad argument.
    """
    t0 = time.perf_counter()
    if kind not in RELAXATIONS:
        raise ValueError(f"kind: must be one of {list(RELAXATIONS)}, got {kind!r}")
    check_args("highs", time_limit, mip_gap, threads)
    form = build(inst, relax=kind, **options)
    if kind == "exact" and form.has_slots:
        raise ValueError("kind: 'exact' on an instance with shared jobs is milp.solve's")
    ws = as_solution(warm_start)
    if ws is not None:
        ws = (ws[0], ws[1] if form.has_nodes else None)
        if not form.feasible(*ws):
            ws = None
    raw = solve_arrays(form, time_limit=max(0.0, time_limit - (time.perf_counter() - t0)),
                       mip_gap=mip_gap, threads=threads, warm_start=ws)
    value, start, place = 0.0, raw.start, raw.place
    notes = [f"{kind} relaxation: {raw.message}"]
    if start is not None:
        if form.feasible(start, place):
            value = start_worth(inst, start)
        else:
            notes.append("its incumbent breaks a row of the relaxed model; left out")
            start = place = None
    status, upper = raw.status, None
    if status is not Status.ERROR:
        upper = min([form.trivial_bound] + [b for b in (raw.dual_bound, raw.lp_bound)
                                            if b is not None and math.isfinite(b)])
        if upper < value - tolerance(inst, value):
            notes.append(f"bug: bound {upper!r} below the relaxed value {value!r}")
            status, upper = Status.ERROR, None
        else:
            upper = max(upper, value)
    return Relaxed(kind, status, value, upper, time.perf_counter() - t0, "; ".join(notes),
                   start, place)


def relaxed_warm_start(form: Formulation, relaxed: Relaxed) -> list[WarmStart]:
    """A relaxation's point as a warm start of the exact model ``form``, when it is one.

    Only a ``fluid`` point has placements of the instance (models, CPU and
    memory); its shared jobs get GPU slots first fit (:func:`milp.gpus.first_fit_gpu`)
    and the whole is kept if it satisfies every row of ``form``.
    """
    inst = form.instance
    if relaxed.kind != "fluid" or relaxed.start is None or relaxed.place is None:
        return []
    start, place = relaxed.start, relaxed.place
    if not form.has_slots:
        return [("fluid point", start, place)] if form.feasible(start, place) else []
    gpu = first_fit_gpu(inst, start, place, form.node_free.min(axis=1))
    if gpu is None or not form.feasible(start, place, gpu):
        return []
    return [("fluid point, GPU slots first fit", start, place, gpu)]
