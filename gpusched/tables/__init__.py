"""Comparison tables from a sweep's rows: summary, seed, ablation and topology views.

- :mod:`.aggregate`: the numbers (:func:`prepare`: gains and gaps per row;
  :func:`ci95`: Student's t intervals);
- :mod:`.render`: :class:`Table` as Markdown or booktabs LaTeX (pandas);
- :mod:`.views`: the summary, seed and ablation views, and every offline view by name
  (:func:`view`); :mod:`.topology`: the topology view; :mod:`.notes`: the tables' warnings;
- :mod:`.simulation`: the view of a scenario sweep's replays against the clairvoyant bound.
"""

from .aggregate import CONFIDENCE, FEW_VALUES, ci95, prepare, t_quantile
from .render import FORMAT_ALIASES, Table, TableView, fmt_ci, latex_escape
from .simulation import simulation_rows, simulation_view
from .topology import has_node_rows, topology_frame, topology_view
from .views import (
    ABLATION_GRID,
    ABLATION_ORDERINGS,
    PUBLISHED,
    SEED_FAMILY,
    SUMMARY_METRICS,
    VIEWS,
    ablation_view,
    seed_view,
    summary_view,
    view,
)

__all__ = [
    "ABLATION_GRID",
    "ABLATION_ORDERINGS",
    "CONFIDENCE",
    "FEW_VALUES",
    "FORMAT_ALIASES",
    "PUBLISHED",
    "SEED_FAMILY",
    "SUMMARY_METRICS",
    "VIEWS",
    "Table",
    "TableView",
    "ablation_view",
    "ci95",
    "fmt_ci",
    "has_node_rows",
    "latex_escape",
    "prepare",
    "seed_view",
    "simulation_rows",
    "simulation_view",
    "summary_view",
    "t_quantile",
    "topology_frame",
    "topology_view",
    "view",
]
