"""Online operation: replay a plan against the demand a day actually brings.

:func:`simulate` (:mod:`.replay`) lets a method plan on the forecast (the plan
instance, :mod:`.plan`) and operates slot by slot on the scenario's actual
demand; it reports a :class:`SimResult` (:mod:`.result`) held to the
clairvoyant bound; :mod:`.tradeoff` replays one method over several headrooms.
Flat pools, nodes and version 3 (GPU indices, shares, models, CPU, memory:
:mod:`.occupancy`) share one code path over :func:`instances.capacity`; every
figure is in the instance's objective (``value`` or ``flow``). The rules, and
why a re-planned peak method reserves what it does, are in docs/simulation.md.
"""

from . import plan, replay, result, tradeoff
from .plan import *  # noqa: F403
from .replay import *  # noqa: F403
from .result import *  # noqa: F403
from .tradeoff import *  # noqa: F403

__all__ = plan.__all__ + replay.__all__ + result.__all__ + tradeoff.__all__
