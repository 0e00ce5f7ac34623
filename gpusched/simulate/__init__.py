"""Online operation: replay a plan against the demand a day actually brings.

:func:`simulate` (:mod:`.replay`) lets a method plan on the forecast (the plan
instance, :mod:`.plan`) and operates slot by slot on the scenario's actual
demand; it reports a :class:`SimResult` (:mod:`.result`) held to the
clairvoyant bound; :mod:`.tradeoff` replays one method over several headrooms.
Flat pools and nodes share one code path over :func:`instances.capacity`. The
rules, and why a re-planned peak method reserves what it does, are in
docs/simulation.md.
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
