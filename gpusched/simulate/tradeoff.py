"""The trade-off of headroom: one method replayed at several headrooms, beside a baseline."""

from __future__ import annotations

from typing import Any

import numpy as np

from instances import Instance, Scenario

from .replay import simulate
from .result import ClairvoyantBound, SimResult, clairvoyant_bound

__all__ = ["headroom_sweep", "peak_headroom"]


def peak_headroom(inst: Instance) -> float:
    """The headroom from which the scaled forecast reserves the peak in every slot forecast
    above 0: ``max_t P / F[t] - 1`` (``F`` the services' total, ``P`` its peak); 0
    without inference.
    """
    total = inst.total_demand
    pos = total[total > 0]
    if pos.size == 0:
        return 0.0
    return float(total.max() / pos.min() - 1.0)


def headroom_sweep(
    inst: Instance,
    scenario: Scenario,
    method: str = "list",
    headrooms: Any = None,
    *,
    replan: int | None = None,
    preempt: bool = True,
    baseline: str | None = "fifo",
    clairvoyant: bool | ClairvoyantBound = True,
    bound_time_limit: float = 60.0,
    **method_params: Any,
) -> tuple[list[SimResult], SimResult | None]:
    """``method`` replayed at each ``H`` of ``headrooms``, and a baseline.

    Parameters
    ----------
    headrooms
        Default 9 values from 0 to :func:`peak_headroom`.
    baseline
        A method replayed once with ``replan=None`` and ``H = 0`` (default ``fifo``,
        the static end of the trade-off); ``None``: none.
    clairvoyant
        As in :func:`simulate`; the bound is computed once for the sweep.

    Returns
    -------
    (results, baseline)
        One :class:`SimResult` per headroom, in order, and the baseline's.
    """
    if headrooms is None:
        headrooms = np.linspace(0.0, peak_headroom(inst), 9)
    cb: bool | ClairvoyantBound = clairvoyant
    if clairvoyant is True:
        cb = clairvoyant_bound(inst, scenario, time_limit=bound_time_limit)
    results = [
        simulate(inst, scenario, method, replan, float(h), preempt, clairvoyant=cb, **method_params)
        for h in headrooms
    ]
    base = (
        simulate(inst, scenario, baseline, None, 0.0, preempt, clairvoyant=cb)
        if baseline is not None else None
    )
    return results, base
