"""The HiGHS backend: the formulation's arrays passed to highspy in one ``passModel``."""

from __future__ import annotations

import functools
import logging
import math
import os
import sys
import threading
import time
from typing import Any

import numpy as np

from instances import Status

from ._common import RawSolve
from .formulation import Formulation

__all__ = ["STATUS", "Exchange", "lp_relaxation", "lp_solution", "silence_banner", "solve_highs"]

logger = logging.getLogger(__name__)

STATUS: dict[str, Status] = {
    "kOptimal": Status.OPTIMAL,
    "kTimeLimit": Status.TIME_LIMIT,
    "kInterrupt": Status.TIME_LIMIT,
    "kHighsInterrupt": Status.TIME_LIMIT,
    "kIterationLimit": Status.TIME_LIMIT,
    "kSolutionLimit": Status.TIME_LIMIT,
    "kInfeasible": Status.INFEASIBLE,
}
"""HiGHS model status name -> our status (anything else is an error)."""

_threads_in_use: list[int] = []
_banner_lock = threading.Lock()
_banner_done: list[bool] = []
_pool_lock = threading.Lock()


def silence_banner() -> None:
    """Create the process's first ``Highs`` with the C-level stdout closed.

    HiGHS prints its two-line banner to stdout when the first instance of a
    process is created, before any option can turn output off; that would
    break the command line's one-line ``--json`` output. Later instances
    print nothing.
    """
    with _banner_lock:
        if _banner_done:
            return
        import highspy

        sys.stdout.flush()
        saved = os.dup(1)
        try:
            with open(os.devnull, "w") as null:
                os.dup2(null.fileno(), 1)
                highspy.Highs()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        _banner_done.append(True)


def _new_highs(threads: int) -> Any:
    import highspy

    silence_banner()
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    # HiGHS's thread pool is process-wide and fixed at its first use: reset
    # it when a different count is asked for, or ``run`` fails.
    with _pool_lock:
        if _threads_in_use and _threads_in_use[-1] != threads:
            h.resetGlobalScheduler(True)
        _threads_in_use[:] = [threads]
    h.setOptionValue("threads", int(threads))
    return h


def objective_scale(c: np.ndarray) -> float:
    """Power of two that brings the largest objective coefficient near 1,000.

    HiGHS reads a cost of 1e20 or more as infinite and treats costs near its
    tolerances (about 1e-7) as zero, so values far from 1 would give a
    refused model or a wrong optimum. Multiplying by a power of two is exact
    in floating point, and dividing HiGHS's objective and bound by it gives
    them back unchanged. Coefficients whose largest is within
    ``[1e-3, 1e6]`` keep their scale (1.0).
    """
    top = float(np.abs(c).max(initial=0.0))
    if top == 0.0 or 1e-3 <= top <= 1e6:
        return 1.0
    return float(2.0 ** (10 - math.ceil(math.log2(top))))


def _pass(h: Any, form: Formulation) -> float:
    """Pass ``form`` to ``h`` with its objective scaled; return the scale."""
    import highspy

    A = form.A
    scale = objective_scale(form.c)
    status = h.passModel(
        form.num_cols, form.num_rows, form.nnz,
        int(highspy.MatrixFormat.kColwise), int(highspy.ObjSense.kMaximize), 0.0,
        form.c * scale, form.col_lower, form.col_upper, form.row_lower, form.row_upper,
        A.indptr.astype(np.int32), A.indices.astype(np.int32), A.data,
        form.integrality.astype(np.int32),
    )
    if status == highspy.HighsStatus.kError:
        raise RuntimeError("HiGHS refused the model (passModel returned kError)")
    return scale


def lp_solution(
    form: Formulation, time_limit: float, threads: int = 1
) -> tuple[float, np.ndarray] | None:
    """The LP relaxation of ``form``: bound and column vector (``None`` if not solved in time)."""
    h = _new_highs(threads)
    h.setOptionValue("time_limit", max(0.0, float(time_limit)))
    h.setOptionValue("solve_relaxation", True)
    scale = _pass(h, form)
    h.run()
    if h.modelStatusToString(h.getModelStatus()) != "Optimal":
        return None
    return (float(h.getInfo().objective_function_value) / scale,
            np.asarray(h.getSolution().col_value, dtype=np.float64))


def lp_relaxation(form: Formulation, time_limit: float, threads: int = 1) -> float | None:
    """The LP-relaxation bound of ``form`` (``None`` if not solved within ``time_limit``)."""
    lp = lp_solution(form, time_limit, threads)
    return None if lp is None else lp[0]


class _Progress:
    """A tqdm bar over the time limit showing incumbent, bound and gap."""

    def __init__(self, time_limit: float, name: str, scale: float = 1.0) -> None:
        from tqdm.auto import tqdm

        self.bar = tqdm(total=round(time_limit, 1), desc=name, unit="s", leave=True)
        self.last = 0.0
        self.scale = scale

    def __call__(self, e: Any) -> None:
        out = e.data_out
        now = float(out.running_time)
        if now - self.last < 0.2:
            return
        self.bar.update(round(now - self.bar.n, 1))
        self.last = now
        inc, bound = out.mip_primal_bound / self.scale, out.mip_dual_bound / self.scale
        self.bar.set_postfix(
            incumbent=f"{inc:.6g}" if math.isfinite(inc) else "-",
            bound=f"{bound:.6g}" if math.isfinite(bound) else "-",
            gap=f"{100 * out.mip_gap:.2f}%" if math.isfinite(out.mip_gap) else "-",
        )

    def close(self) -> None:
        self.bar.close()


class Exchange:
    """Incumbents traded between HiGHS and a large-neighbourhood search beside it.

    HiGHS proves the bound; the LNS of :func:`heuristics.lns.lns_improve`,
    run in a second thread, finds better schedules than HiGHS's own
    heuristics on the harder instances. Each side hands its improvements to
    the other: the LNS's through HiGHS's user-solution callback (HiGHS
    checks every one it is given), HiGHS's through the improving-solution
    callback, which the LNS picks up before its next window.

    Parameters
    ----------
    form
        The formulation HiGHS solves.
    start
        The warm start both sides begin from (per-job start array).
    """

    def __init__(self, form: Formulation, start: np.ndarray) -> None:
        from heuristics._core import start_value

        self.form = form
        self.value_of = functools.partial(start_value, form.instance)
        self.lock = threading.Lock()
        self.start = np.asarray(start, dtype=np.int64).copy()
        self.value = self.value_of(self.start)
        self.to_highs: np.ndarray | None = None
        self.done = threading.Event()
        self.counts = {"lns": 0, "highs": 0, "given": 0}

    def _compare(self, value: float) -> int:
        """``1`` if ``value`` beats the best so far, ``-1`` if it is behind, else ``0``."""
        slack = 1e-9 * abs(self.value)
        return 1 if value > self.value + slack else -1 if value < self.value - slack else 0

    def from_lns(self, start: np.ndarray, value: float) -> np.ndarray | None:
        """The LNS's current schedule in; a better one (from HiGHS) out, or ``None``."""
        with self.lock:
            side = self._compare(value)
            if side > 0:
                self.start, self.value = start.copy(), value
                self.to_highs = self.form.encode(start)
                self.counts["lns"] += 1
            return self.start.copy() if side < 0 else None

    def from_highs(self, e: Any) -> None:
        """``cbMipImprovingSolution``: keep HiGHS's incumbent if it is the best so far."""
        start = self.form.decode(np.asarray(e.data_out.mip_solution))
        value = self.value_of(start)
        with self.lock:
            if self._compare(value) > 0:
                self.start, self.value = start, value
                self.to_highs = None
                self.counts["highs"] += 1

    def give_highs(self, e: Any) -> None:
        """``cbMipUserSolution``: hand HiGHS the LNS's latest improvement."""
        with self.lock:
            x, self.to_highs = self.to_highs, None
        if x is not None:
            e.data_in.setSolution(x)
            self.counts["given"] += 1

    def run_lns(self, time_limit: float, seed: int) -> None:
        """The LNS loop of the helper thread, until ``time_limit`` or :attr:`done`."""
        from heuristics.lns import lns_improve

        try:
            lns_improve(
                self.form.instance, self.start, time_limit=time_limit, rounds=10**9, seed=seed,
                exchange=self.from_lns, should_stop=self.done.is_set,
            )
        except Exception:  # the helper must never take the solve down with it
            logger.exception("LNS helper failed; HiGHS goes on alone")

    def summary(self) -> str:
        c = self.counts
        return (f"LNS helper: {c['lns']} improvements ({c['given']} handed to HiGHS), "
                f"{c['highs']} from HiGHS")


def solve_highs(
    form: Formulation,
    *,
    time_limit: float,
    mip_gap: float,
    threads: int,
    warm_start: np.ndarray | None,
    progress: bool,
    root_lp: bool = True,
    seed: int = 0,
    stop: threading.Event | None = None,
    lns_helper: bool | None = None,
    **options: Any,
) -> RawSolve:
    """Solve with highspy.

    Parameters
    ----------
    root_lp
        First solve the LP relaxation (its bound is reported as ``lp_bound``
        and its time counts against ``time_limit``).
    seed
        HiGHS ``random_seed``.
    stop
        When set (by another solver of a portfolio), the search stops.
    lns_helper
        Run the large-neighbourhood search of :class:`Exchange` in a second
        thread beside HiGHS, trading incumbents (needs a warm start). HiGHS
        then runs on one thread, whatever ``threads`` says, as the LNS's
        window MILPs do (HiGHS's thread pool is one per process). ``None``
        (default): on when ``threads == 2``, where it gave a better worst
        gap than a second HiGHS worker on the medium family (1% reached on
        12 of 12 seeds against 10, worst 0.88% against 1.61%, same median;
        11 of 12, worst 1.11%, in a second run;
        ``benchmarks/bench_milp.py --threads 2``); above two threads HiGHS
        gets them all. Measured and not kept: HiGHS keeping two workers
        (its parallel tree search, highspy 1.16) beside the LNS, the LNS
        ending once HiGHS led and it had not improved for 10 s. Medium seed
        7 still went over 1% (1 of 16 runs, 0.43-1.36%; bound after 60 s
        2,989-2,997 against 2,993.5-3,001), and seed 5 fell to 0.41-0.99%
        (16 runs) from 0.35-0.58% (9 runs). With the LNS ending once
        HiGHS's search had left the root node instead: seed 7 0.56-0.97% (4
        runs), seed 5 0.60-0.91% (3); the same with the LNS in a process of
        its own (a one-thread pool for its windows): seed 7 0.74, 1.18 and
        0.81%, seed 5 0.49-0.62%.
    **options
        Further HiGHS options by name (``presolve="off"``, ...).
    """
    t0 = time.perf_counter()
    if lns_helper is None:
        lns_helper = threads == 2
    helper = Exchange(form, warm_start) if lns_helper and warm_start is not None else None
    if helper is not None:
        threads = 1  # the LNS's window MILPs run on one thread: one scheduler for both
    lp_bound = lp_relaxation(form, time_limit, threads) if root_lp else None
    h = _new_highs(threads)
    remaining = max(0.0, time_limit - (time.perf_counter() - t0))
    lns = None
    if helper is not None:  # started once HiGHS's thread pool is set up for one thread
        lns = threading.Thread(target=helper.run_lns, args=(max(0.0, remaining - 0.3), seed),
                               daemon=True)
        lns.start()
    h.setOptionValue("time_limit", remaining)
    h.setOptionValue("mip_rel_gap", float(mip_gap))
    h.setOptionValue("random_seed", int(seed))
    import highspy

    for key, value in options.items():
        if h.setOptionValue(key, value) != highspy.HighsStatus.kOk:
            raise ValueError(f"params: HiGHS rejects option {key}={value!r}")
    scale = _pass(h, form)
    if warm_start is not None:
        x = form.encode(warm_start)
        h.setSolution(form.num_cols, np.arange(form.num_cols, dtype=np.int32), x)
    bar = _Progress(remaining, "milp", scale) if progress else None
    if bar is not None:
        h.cbMipInterrupt.subscribe(bar)
    if stop is not None:
        def interrupt(e: Any) -> None:
            if stop.is_set():
                e.data_in.user_interrupt = True

        h.cbMipInterrupt.subscribe(interrupt)
    if helper is not None:
        h.cbMipImprovingSolution.subscribe(helper.from_highs)
        h.cbMipUserSolution.subscribe(helper.give_highs)
    try:
        h.run()
    finally:
        if helper is not None and lns is not None:
            helper.done.set()
            lns.join()
        if bar is not None:
            bar.close()
    name = h.modelStatusToString(h.getModelStatus())
    key = str(h.getModelStatus()).rsplit(".", 1)[-1]
    status = STATUS.get(key, Status.ERROR)
    info = h.getInfo()
    start = None
    if info.primal_solution_status == 2:  # kSolutionStatusFeasible
        start = form.decode(np.asarray(h.getSolution().col_value))
    # the dual bound exists only once the MIP solver has run (node count >= 0)
    dual = float(info.mip_dual_bound) / scale if info.mip_node_count >= 0 else math.inf
    message = f"HiGHS: {name}" if status is not Status.ERROR else f"HiGHS model status: {name}"
    alternatives: tuple[np.ndarray, ...] = ()
    if helper is not None:
        message += f"; {helper.summary()}"
        alternatives = (helper.start,)
    return RawSolve(
        status=status,
        start=start,
        dual_bound=dual if math.isfinite(dual) else None,
        lp_bound=lp_bound,
        nodes=int(info.mip_node_count) if info.mip_node_count >= 0 else None,
        message=message,
        alternatives=alternatives,
    )
