"""The result of a solve: the best checked schedule, and an honest bound beside it.

Whatever the backend says, the :class:`~instances.Result` holds

* the best *checked* schedule among the solver's incumbent, further
  incumbents (a portfolio's, the hooks' best) and the warm starts (its value
  recomputed by :func:`instances.evaluate`, never the solver's objective);
* an ``upper_bound`` that is the smallest of the valid bounds at hand
  (:meth:`milp.held.HeldBounds.smallest`), and never below the schedule's
  value: a bound below a checked value by more than :func:`tolerance` is a
  bug, reported as status ``error`` with the figures in ``message``.

The status is the backend's, but for one case: a search stopped by its time
limit whose value a solve of the flat model beside it (on nodes) or of a
relaxation (model version 3) proves optimal is ``optimal``.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np

from instances import InfeasibleScheduleError, Instance, Result, Status, evaluate
from instances.arrays import Reservation
from instances.objective import integral_bound, report
from instances.rounding import tolerance as rounding_tolerance

from .backend import RawSolve
from .formulation import Formulation
from .gpus import schedule_of
from .held import HeldBounds
from .warm import WarmStart

__all__ = ["assemble", "tolerance"]

logger = logging.getLogger(__name__)


def tolerance(inst: Instance, value: float) -> float:
    """Slack for comparing values and bounds: relative, on the scale of the job values.

    ``1e-6`` times the larger of ``|value|`` and the smallest positive job
    value, so that instances whose values are all far below 1 are held to
    the same relative standard as the others.
    """
    values = inst.job_values[inst.job_values > 0]
    floor = float(values.min()) if values.size else 1.0
    return rounding_tolerance(value, floor)


def assemble(
    inst: Instance, method: str, form: Formulation, raw: RawSolve, warm: list[WarmStart],
    call: dict[str, Any], t0: float, held: HeldBounds, reservation: Reservation = "curve",
) -> Result:
    """The :class:`~instances.Result` of a solve: the best checked schedule and the bound.

    Under ``reservation="peak"`` the schedules keep to the GPUs the model offers
    (the withheld ones, highest-indexed, stay free) and are checked with the
    peak reservation enforced.
    """
    offered = form.node_free.min(axis=1) if reservation == "peak" and form.has_nodes else None
    status = raw.status
    notes = [raw.message] if raw.message else []
    candidates: list[WarmStart] = []
    if raw.solution is not None:
        candidates.append(("solver", *raw.solution))
    candidates += [("solver", *sol) for sol in raw.alternatives]
    candidates += [(f"warm start ({w[0]})", *w[1:]) for w in warm]
    candidates.append(("empty schedule", np.full(inst.num_jobs, -1, dtype=np.int64), None))
    best = None
    for label, *sol in candidates:
        try:
            schedule = schedule_of(inst, *sol, offered=offered)  # type: ignore[arg-type,misc]
            metrics = evaluate(inst, schedule, reservation, enforce_reservation=reservation == "peak")
        except (InfeasibleScheduleError, ValueError) as e:
            notes.append(f"{label} rejected by the checker: {e}")
            status = Status.ERROR
            continue
        worth = report(inst, metrics.value)  # the model's objective: larger is better
        if best is None or worth > best[3] + tolerance(inst, worth):
            best = (label, schedule, metrics, worth)
    assert best is not None  # the empty schedule is always feasible
    label, schedule, metrics, value = best
    if label != "solver" and raw.start is not None:
        notes.append(f"incumbent from the {label}")
    elif raw.start is None and status is not Status.OPTIMAL:
        notes.append(f"solver has no incumbent; returning the {label}")

    upper: float | None
    bound_method: str | None
    # on the worth, as the model maximises it
    upper, bound_method = held.smallest(form.trivial_bound, raw.dual_bound, raw.lp_bound,
                                        status is not Status.ERROR)
    if held.note():
        notes.append(held.note())
    if upper < value - tolerance(inst, value):
        notes.append(
            f"bug: upper bound {upper!r} ({bound_method}) below the checked value {value!r} "
            f"(dual {raw.dual_bound!r}, lp {raw.lp_bound!r})"
        )
        logger.error("%s on %s: %s", method, inst.name, notes[-1])
        status, upper, bound_method = Status.ERROR, None, None
    else:
        proved = upper
        if bound_method is not None and bound_method.split("+")[0] == "dual":
            # a solver's proof, rounded to the worths' integers (a certificate stays as it computes)
            upper = integral_bound(inst, proved)
            if upper < proved:
                notes.append(f"bound {proved:.10g} rounded down to {upper:.0f}: every worth is an integer")
        upper = max(upper, value)
        if (status is Status.TIME_LIMIT
                and (held.flat is not None or held.relaxed is not None or upper < proved)
                and upper - value <= tolerance(inst, value)):
            status = Status.OPTIMAL
    return Result(  # the figures in the objective's units (V, or F and a lower bound on it)
        method=method,
        status=status,
        schedule=schedule,
        value=metrics.value,
        upper_bound=None if upper is None else report(inst, upper),
        runtime_s=time.perf_counter() - t0,
        metrics=metrics,
        reservation=reservation,
        params=call,
        lp_bound=None if raw.lp_bound is None else report(inst, raw.lp_bound),
        nodes=raw.nodes,
        message="; ".join(notes),
        bound_method=bound_method,
    )
