"""The HiGHS backend: the formulation's arrays passed to highspy in one ``passModel``."""

from __future__ import annotations

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

__all__ = ["STATUS", "lp_relaxation", "silence_banner", "solve_highs"]

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
    if _threads_in_use and _threads_in_use[-1] != threads:
        h.resetGlobalScheduler(True)
    _threads_in_use[:] = [threads]
    h.setOptionValue("threads", int(threads))
    return h


def _pass(h: Any, form: Formulation) -> None:
    import highspy

    A = form.A
    status = h.passModel(
        form.num_cols, form.num_rows, form.nnz,
        int(highspy.MatrixFormat.kColwise), int(highspy.ObjSense.kMaximize), 0.0,
        form.c, form.col_lower, form.col_upper, form.row_lower, form.row_upper,
        A.indptr.astype(np.int32), A.indices.astype(np.int32), A.data,
        form.integrality.astype(np.int32),
    )
    if status == highspy.HighsStatus.kError:
        raise RuntimeError("HiGHS refused the model (passModel returned kError)")


def lp_relaxation(form: Formulation, time_limit: float, threads: int = 1) -> float | None:
    """The LP-relaxation bound of ``form`` (``None`` if not solved within ``time_limit``)."""
    h = _new_highs(threads)
    h.setOptionValue("time_limit", max(0.0, float(time_limit)))
    h.setOptionValue("solve_relaxation", True)
    _pass(h, form)
    h.run()
    if h.modelStatusToString(h.getModelStatus()) != "Optimal":
        return None
    return float(h.getInfo().objective_function_value)


class _Progress:
    """A tqdm bar over the time limit showing incumbent, bound and gap."""

    def __init__(self, time_limit: float, name: str) -> None:
        from tqdm.auto import tqdm

        self.bar = tqdm(total=round(time_limit, 1), desc=name, unit="s", leave=True)
        self.last = 0.0

    def __call__(self, e: Any) -> None:
        out = e.data_out
        now = float(out.running_time)
        if now - self.last < 0.2:
            return
        self.bar.update(round(now - self.bar.n, 1))
        self.last = now
        inc, bound = out.mip_primal_bound, out.mip_dual_bound
        self.bar.set_postfix(
            incumbent=f"{inc:.6g}" if math.isfinite(inc) else "-",
            bound=f"{bound:.6g}" if math.isfinite(bound) else "-",
            gap=f"{100 * out.mip_gap:.2f}%" if math.isfinite(out.mip_gap) else "-",
        )

    def close(self) -> None:
        self.bar.close()


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
    **options
        Further HiGHS options by name (``presolve="off"``, ...).
    """
    t0 = time.perf_counter()
    lp_bound = lp_relaxation(form, time_limit, threads) if root_lp else None
    h = _new_highs(threads)
    remaining = max(0.0, time_limit - (time.perf_counter() - t0))
    h.setOptionValue("time_limit", remaining)
    h.setOptionValue("mip_rel_gap", float(mip_gap))
    h.setOptionValue("random_seed", int(seed))
    import highspy

    for key, value in options.items():
        if h.setOptionValue(key, value) != highspy.HighsStatus.kOk:
            raise ValueError(f"params: HiGHS rejects option {key}={value!r}")
    _pass(h, form)
    if warm_start is not None:
        x = form.encode(warm_start)
        h.setSolution(form.num_cols, np.arange(form.num_cols, dtype=np.int32), x)
    bar = _Progress(remaining, "milp") if progress else None
    if bar is not None:
        h.cbMipInterrupt.subscribe(bar)
    if stop is not None:
        def interrupt(e: Any) -> None:
            if stop.is_set():
                e.data_in.user_interrupt = True

        h.cbMipInterrupt.subscribe(interrupt)
    try:
        h.run()
    finally:
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
    dual = float(info.mip_dual_bound) if info.mip_node_count >= 0 else math.inf
    return RawSolve(
        status=status,
        start=start,
        dual_bound=dual if math.isfinite(dual) else None,
        lp_bound=lp_bound,
        nodes=int(info.mip_node_count) if info.mip_node_count >= 0 else None,
        message=f"HiGHS: {name}" if status is not Status.ERROR else f"HiGHS model status: {name}",
    )
