"""Online operation: replay a plan against the demand a day actually brings.

:func:`simulate` follows the specification (docs/model.md, docs/simulation.md).
A method plans on the forecast (the instance's demand, scaled by
``1 + headroom``) a *plan instance* (:mod:`.plan`); the day then brings the
scenario's actual demand, and the replay (:mod:`.replay`) operates slot by
slot: completions and plans, inference first (preempting batch jobs, or
counting inference unserved), then the plan's starts that fit. What it
reports is a :class:`SimResult` (:mod:`.result`), held to the clairvoyant
bound; :mod:`.tradeoff` replays one method over a range of headrooms.

Both are written once over the capacity model (:func:`instances.capacity`):
a flat pool is one internal node of ``G`` GPUs.

Peak-reservation methods (``fifo``, ``easy-peak``, ``list-peak``, ...)
reserve the sum of the plan instance's per-service peaks. With
``replan=None`` the only plan is made at slot 0, where nothing runs and no
slot is past: it is exactly the offline plan on the scaled forecast, so
FIFO-peak plans as it would offline (the FIFO-peak end of the trade-off).
A re-planned peak method also reserves the pseudo-service's peak (the GPUs
running at the plan's slot, for the whole rest of the horizon) and any past
actual demand above the forecast's peak: no constant reservation can follow
the running jobs' end, so this is the safe one. The choice is deliberate and
not special-cased.
"""

from __future__ import annotations

from .plan import RUNNING_SERVICE, plan_instance, scaled_forecast
from .replay import simulate
from .result import ClairvoyantBound, SimResult, clairvoyant_bound
from .tradeoff import headroom_sweep, peak_headroom

__all__ = [
    "RUNNING_SERVICE",
    "ClairvoyantBound",
    "SimResult",
    "clairvoyant_bound",
    "headroom_sweep",
    "peak_headroom",
    "plan_instance",
    "scaled_forecast",
    "simulate",
]
