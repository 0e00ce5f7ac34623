"""The LP guide of the LNS: which jobs the LP relaxation runs, and the instance an escape sees.

A window search that has stalled may *escape* (:func:`matheuristics.search.lns_improve`
with a ``guide``): for a while its windows see :func:`guided_instance`, where the running
jobs the LP relaxation mostly leaves out are worth less, so that they give way to the
jobs the LP prefers. The guide is the LP's run mass per job (:func:`lp_guide`).
"""

from __future__ import annotations

import dataclasses
import logging

import numpy as np

import milp
from instances import Instance
from milp.highs import lp_solution

__all__ = ["guided_instance", "lp_guide"]

logger = logging.getLogger(__name__)


def lp_guide(inst: Instance, time_limit: float | None = None) -> np.ndarray | None:
    """How much of each job the LP relaxation of :func:`milp.build`'s model runs, in ``[0, 1]``.

    The ``guide`` of :func:`~matheuristics.search.lns_improve`. ``None`` when the LP is not
    solved within ``time_limit`` seconds (``None``: no limit), or the model cannot be built
    (over its column cap).
    """
    try:
        form = milp.build(inst)
    except ValueError as e:
        logger.info("lns: no LP guide: %s", e)
        return None
    lp = lp_solution(form, np.inf if time_limit is None else time_limit)
    return None if lp is None else form.run_mass(lp[1])


def guided_instance(
    inst: Instance, start: np.ndarray, guide: np.ndarray, weight: float = 0.5
) -> Instance | None:
    """``inst`` where each running job that ``guide`` runs less than half is worth less.

    Such a job's priority (so its value) is multiplied by ``weight``.

    ``guide`` is a per-job run mass in ``[0, 1]``, e.g. how much of each job
    an LP relaxation runs (:meth:`milp.Formulation.run_mass`); the jobs the
    schedule ``start`` runs and the LP mostly does not are the ones an
    escape asks to give way. ``None`` when there is no such job. Only
    priorities change: every schedule of one instance is a schedule of the other.
    """
    if not 0.0 < weight <= 1.0:
        raise ValueError(f"weight: must be in (0, 1], got {weight!r}")
    sel = np.flatnonzero((np.asarray(start) >= 0) & (np.asarray(guide) < 0.5))
    if sel.size == 0:
        return None
    jobs = list(inst.jobs)
    for j in sel.tolist():
        jobs[j] = dataclasses.replace(jobs[j], priority=jobs[j].priority * weight)
    return inst.replace(jobs=tuple(jobs))
