"""The trade-off of headroom: one method replayed at several headrooms, beside a baseline."""

from __future__ import annotations

from typing import Any

import numpy as np

from instances import Instance, Scenario

from .replay import simulate
from .result import ClairvoyantBound, SimResult, clairvoyant_bound

__all__ = ["headroom_sweep", "peak_headroom"]


def peak_headroom(inst: Instance) -> float:
    """The headroom at which the scaled forecast reserves the peak everywhere.

    ``max_t P / F[t] - 1`` over the slots with forecast ``F[t] > 0`` (``F`` the
    services' total, ``P`` its peak): from this headroom on, every such slot
    reserves ``P`` or more, as peak reservation does (a slot forecast at 0
    stays at 0 whatever ``H``; rounding up may reach ``P`` a little earlier).
    0 without inference.
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
    """The trade-off of headroom: ``method`` at each ``H`` of ``headrooms``, and the baseline.

    Parameters
    ----------
    headrooms
        The values of ``H``; default 9 values from 0 to :func:`peak_headroom`.
    baseline
        A method replayed once with ``replan=None`` and ``H = 0`` (default
        ``fifo``, FIFO-peak: the static end of the trade-off); ``None``: none.
    clairvoyant
        As in :func:`simulate`; the bound is computed once for the whole sweep.

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
