"""Comparison tables from a sweep's rows: summary, seed, ablation and topology views.

- :mod:`.aggregate`: the numbers (:func:`prepare`: gains and gaps per row;
  :func:`ci95`: Student's t intervals);
- :mod:`.render`: :class:`Table` as Markdown or booktabs LaTeX (pandas);
- :mod:`.views`: the summary, seed and ablation views, and every offline view by name
  (:func:`view`); :mod:`.topology`: the topology view; :mod:`.notes`: the tables' warnings;
- :mod:`.simulation`: the view of a scenario sweep's replays against the clairvoyant bound;
- :mod:`.real`: what the whole-GPU rounding did on the openb days (``reproduce real``).
"""

from . import aggregate, real, render, simulation, topology, views
from .aggregate import *  # noqa: F403
from .real import *  # noqa: F403
from .render import *  # noqa: F403
from .simulation import *  # noqa: F403
from .topology import *  # noqa: F403
from .views import *  # noqa: F403

__all__ = aggregate.__all__ + real.__all__ + render.__all__ + simulation.__all__ + topology.__all__ + views.__all__
