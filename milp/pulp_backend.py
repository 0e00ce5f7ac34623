"""The PuLP backend: the same model through PuLP, solved by HiGHS (or CBC).

PuLP reports "Optimal" after a time limit when it holds an incumbent, so the
status and the bound are read from the solver itself: HiGHS's model status and
``mip_dual_bound``; for CBC, ``sol_status`` tells a proven optimum from an
incumbent and the bound after a time limit falls back to the LP relaxation.
"""

from __future__ import annotations

import logging
import math
import warnings
from typing import Any

import numpy as np

from instances import Status

from .backend import RawSolve, Solution, as_solution
from .formulation import Formulation
from .highs import STATUS, lp_relaxation, silence_banner
from .progress import Progress

__all__ = ["solve_pulp"]

logger = logging.getLogger(__name__)


def solve_pulp(
    form: Formulation, *, time_limit: float, mip_gap: float, threads: int,
    warm_start: Solution | np.ndarray | None, progress: Progress | None, solver: str = "auto",
    root_lp: bool = True,
) -> RawSolve:
    """Solve ``form`` through PuLP.

    Parameters
    ----------
    solver
        ``"highs"``, ``"cbc"`` or ``"auto"`` (HiGHS if PuLP can use it, else CBC).
    root_lp
        Also compute the LP-relaxation bound (with HiGHS on the arrays).
    """
    import pulp

    ws = as_solution(warm_start)
    if solver not in ("auto", "highs", "cbc"):
        raise ValueError(f"params: solver must be 'auto', 'highs' or 'cbc', got {solver!r}")
    silence_banner()
    lp_bound = lp_relaxation(form, time_limit, threads) if root_lp else None
    prob, xs = form.pulp_model()
    use_highs = solver == "highs" or (solver == "auto" and pulp.HiGHS().available())
    notes = []
    if use_highs:
        cmd: Any = pulp.HiGHS(
            msg=False, timeLimit=float(time_limit), gapRel=float(mip_gap), threads=int(threads)
        )
        if ws is not None:
            notes.append("PuLP's HiGHS interface takes no warm start")
    else:
        if ws is not None:
            for v, val in zip(xs, form.encode(*ws).tolist()):
                v.setInitialValue(val)
        with warnings.catch_warnings():  # PuLP 3.3 deprecates its bundled CBC, still works
            warnings.simplefilter("ignore", DeprecationWarning)
            cmd = pulp.PULP_CBC_CMD(
                msg=False, timeLimit=float(time_limit), gapRel=float(mip_gap),
                threads=int(threads), warmStart=ws is not None,
            )
    prob.solve(cmd)
    values = [v.varValue for v in xs]
    has_solution = all(v is not None for v in values) and prob.sol_status in (
        pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible,
    )
    start, place, gpu = (form.decode_all(np.asarray(values, dtype=np.float64)) if has_solution
                         else (None, None, None))
    if use_highs:
        h = prob.solverModel
        key = str(h.getModelStatus()).rsplit(".", 1)[-1]
        status = STATUS.get(key, Status.ERROR)
        info = h.getInfo()
        dual = float(info.mip_dual_bound) if info.mip_node_count >= 0 else math.inf
        # PuLP may hand HiGHS the negated objective to minimize: undo it
        import highspy

        _, sense = h.getObjectiveSense()
        if sense == highspy.ObjSense.kMinimize and prob.sense == pulp.LpMaximize:
            dual = -dual
        nodes = int(info.mip_node_count) if info.mip_node_count >= 0 else None
        notes.insert(0, f"PuLP/HiGHS: {h.modelStatusToString(h.getModelStatus())}")
    else:
        nodes = None
        if prob.sol_status == pulp.LpSolutionOptimal:
            status = Status.OPTIMAL
            # CBC stops within gapRel of its bound: the optimum is at most this
            obj = float(pulp.value(prob.objective) or 0.0)
            dual = obj / (1.0 - mip_gap) + 1e-9 * max(1.0, abs(obj)) if obj > 0 else 0.0
        elif prob.sol_status == pulp.LpSolutionIntegerFeasible or prob.status == pulp.LpStatusNotSolved:
            status, dual = Status.TIME_LIMIT, math.inf
        else:
            status, dual = Status.ERROR, math.inf
        notes.insert(0, f"PuLP/CBC: {pulp.LpStatus[prob.status]}, solution {prob.sol_status}")
    return RawSolve(
        status=status,
        start=start,
        dual_bound=dual if math.isfinite(dual) else None,
        lp_bound=lp_bound,
        nodes=nodes,
        message="; ".join(notes),
        place=place,
        gpu=gpu,
    )
