"""LP-guided schedules: the LP relaxation's start times decoded by the serial decoder.

The time-indexed LP says which jobs to run and, fractionally, when. On
large instances its run set is almost integral (``large`` 2,000 jobs: 508
jobs run whole, 1,489 not at all, 3 in part) while its starts are spread
(``docs/milp.md``), so the schedule it suggests is near the bound: the jobs
it runs, in the order of their LP start times (*alpha-points*), each at its
earliest fit (:func:`heuristics.listsched.list_starts`), then the others
by value. :func:`lp_schedule` decodes a few such orders and keeps the best;
:class:`LPStart` solves the LP in a thread beside the warm start, and
:func:`matheuristics.solve_milp` starts from the better of the two schedules
and holds the LP's bound.

A group of identical jobs shares its columns: its ``i``-th member takes the
slice ``[i, i + 1]`` of the group's cumulative LP mass over its starts.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from typing import Any

import numpy as np

from heuristics import start_value
from heuristics.listsched import list_starts
from heuristics.placement import new_place

__all__ = ["LP", "ORDERS", "LPStart", "lp_keys", "lp_schedule", "solve_lp"]

logger = logging.getLogger(__name__)

LP = "lp"
"""The origin of the LP-guided schedules."""

ORDERS: tuple[tuple[float, str, str], ...] = tuple(
    (mass, key, tail) for mass in (0.5, 0.9) for key in ("mean", "alpha-0.5", "alpha-0.75")
    for tail in ("value", "density"))
"""The orders :func:`lp_schedule` decodes: the jobs the LP runs at least ``mass`` of, by their
LP start (the mean of their slice, or its ``alpha``-point), then the others by value or by
value per GPU-slot. Measured on ``large`` 2,000 jobs seed 0: 108,437-109,759, against
108,662 for ``best`` (10 s); docs/milp.md."""


def lp_keys(form: Any, x: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Each job's LP mass, and its LP start as the mean and the alpha-points of its slice.

    Returns
    -------
    (numpy.ndarray, dict)
        The mass (``[0, 1]`` per job) and, per key name (``mean``, ``alpha-0.5``,
        ``alpha-0.75``), a start per job (``inf`` for a job the LP does not run).
    """
    inst = form.instance
    n = inst.num_jobs
    xs = np.clip(np.asarray(x, dtype=np.float64)[: form.num_x], 0.0, None)
    order = np.lexsort((form.col_start, form.col_group))
    grp, s, v = form.col_group[order], form.col_start[order].astype(np.float64), xs[order]
    cum = np.cumsum(v)
    first = np.r_[True, grp[1:] != grp[:-1]]
    base = np.maximum.accumulate(np.where(first, cum - v, 0.0))  # cumulative mass before the group
    hi = cum - base
    lo = hi - v
    mass = np.zeros(n)
    keys = {name: np.full(n, math.inf) for name in ("mean", "alpha-0.5", "alpha-0.75")}
    biggest = max((g.size for g in form.groups), default=0)
    members = [np.asarray(g) for g in form.groups]
    for i in range(biggest):
        part = np.clip(np.minimum(hi, i + 1) - np.maximum(lo, i), 0.0, None)
        m = np.bincount(grp, weights=part, minlength=len(members))
        mean = np.bincount(grp, weights=part * s, minlength=len(members)) / np.maximum(m, 1e-12)
        alphas = {}
        for a in (0.5, 0.75):
            reached = (hi >= i + a * m[grp] - 1e-12) & (part > 1e-12)
            at = np.full(len(members), math.inf)
            np.minimum.at(at, grp[reached], s[reached])
            alphas[f"alpha-{a}"] = at
        has = np.flatnonzero([g.size > i for g in members])
        jobs = np.array([members[k][i] for k in has], dtype=np.int64)
        mass[jobs] = m[has]
        run = m[has] > 1e-9
        keys["mean"][jobs[run]] = mean[has][run]
        for name, at in alphas.items():
            keys[name][jobs[run]] = at[has][run]
    return np.clip(mass, 0.0, 1.0), keys


def lp_schedule(form: Any, x: np.ndarray) -> tuple[np.ndarray, np.ndarray | None, str]:
    """The best schedule of the :data:`ORDERS` of the LP solution ``x`` of ``form``.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray or None, str)
        The start array, the placement array on an instance with nodes (``None`` flat),
        and the order that gave them. Feasible: the serial decoder places each job only
        where it fits.
    """
    inst = form.instance
    mass, keys = lp_keys(form, x)
    area = (inst.gpus * inst.durations).astype(np.float64)
    tails = {"value": -inst.job_values, "density": -inst.job_values / np.maximum(area, 1.0)}
    best: tuple[float, np.ndarray, np.ndarray | None, str] | None = None
    for floor, key, tail in ORDERS:
        chosen = mass >= floor
        head = np.flatnonzero(chosen)
        rest = np.flatnonzero(~chosen)
        order = np.concatenate([head[np.argsort(keys[key][head], kind="stable")],
                                rest[np.argsort(tails[tail][rest], kind="stable")]])
        place = new_place(inst) if inst.has_nodes else None
        start = list_starts(inst, order, place=place)
        value = start_value(inst, start)
        if best is None or value > best[0]:
            best = (value, start, place, f"mass >= {floor}, {key}, then by {tail}")
    assert best is not None
    return best[1], best[2], best[3]


def solve_lp(form: Any, time_limit: float) -> tuple[float, np.ndarray] | None:
    """The LP relaxation of ``form`` on one thread: its value and solution, or ``None``.

    ``None`` also when it is not expected to end in ``time_limit`` seconds
    (:func:`milp.highs.root_lp_fits` with the whole limit) or does not. No
    interrupt callback: each of its calls waits for the GIL while another
    thread (the LNS) holds it, which slowed the LP 2.5 times (docs/milp.md).
    """
    from milp.highs import ROOT_LP_SHARE, lp_solution, root_lp_fits

    if not root_lp_fits(form.nnz, time_limit / ROOT_LP_SHARE):
        return None
    return lp_solution(form, time_limit, threads=1)


class LPStart:
    """The LP relaxation solved in a thread of its own, and the schedule it suggests.

    Made before the warm start (:func:`matheuristics.solve_milp`), so that the
    LP and the ``best`` heuristic share the two cores; :meth:`result` waits for
    it. The LP gets at most ``time_limit`` seconds (:func:`solve_lp`).
    """

    def __init__(self, inst: Any, time_limit: float) -> None:
        self.inst = inst
        self.time_limit = time_limit
        self.bound: float | None = None
        self.start: np.ndarray | None = None
        self.place: np.ndarray | None = None
        self.value: float | None = None
        self.order = ""
        self.seconds = 0.0
        self._thread = threading.Thread(target=self._run, daemon=True, name="lp-start")
        self._thread.start()

    def _run(self) -> None:
        import milp

        t0 = time.perf_counter()
        try:
            form = milp.build(self.inst)
            lp = solve_lp(form, self.time_limit - (time.perf_counter() - t0))
            if lp is not None:
                self.bound = lp[0]
                self.start, self.place, self.order = lp_schedule(form, lp[1])
                self.value = start_value(self.inst, self.start)
        except Exception:  # the LP must never take the solve down with it
            logger.exception("LP start failed; the solve goes on without it")
        self.seconds = time.perf_counter() - t0

    def result(self) -> LPStart:
        """Wait for the LP (at most its time limit) and return ``self``."""
        self._thread.join()
        return self

    def summary(self) -> str:
        """The LP's bound and its schedule's value, or why there is none."""
        if self.value is None:
            return f"LP: not solved in {self.time_limit:.0f} s"
        return (f"LP: bound {self.bound:.6g} in {self.seconds:.1f} s, schedule {self.value:.6g} "
                f"({self.order})")
