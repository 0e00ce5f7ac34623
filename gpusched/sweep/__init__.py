"""The benchmark harness: families x seeds x methods, in parallel, crash-safe and resumable.

A sweep is a list of :class:`Cell` (one instance, one method with its
parameters and time limit); :func:`run_bench` runs the cells that are not done
yet and stores one tidy row per cell in a results folder. The parts:

- :mod:`.config`: :class:`BenchConfig` from flags (:func:`make_config`) or a
  TOML file (:func:`load_config`, checked by pydantic);
- :mod:`.seeds`: :func:`parse_seeds`, the seeds of the families and of the scenarios;
- :mod:`.cells`: :class:`Cell`, its key, and the columns of its row;
- :mod:`.work`: :func:`make_cells` (the cells of a config) and :func:`run_cell` (one row);
- :mod:`.store`: the results folder (atomic row files, ``results.csv``,
  :func:`load_rows`);
- :mod:`.runner`: :func:`run_bench` over this process, a process pool or Dask;
- :mod:`.scenarios` and :mod:`.simulation`: the scenario dimension (a
  ``[scenarios]`` table): every cell replays its method against an actual day
  with a policy, plus one clairvoyant-bound cell per day.
"""

from .cells import (
    METRIC_COLUMNS,
    METRIC_FIELDS,
    VERSIONED_PACKAGES,
    Cell,
    error_row,
    instance_hash,
    versions,
)
from .config import BenchConfig, MethodSpec, load_config, make_config
from .runner import CONSOLIDATE_EVERY_S, BenchSummary, run_bench
from .scenarios import ScenarioConfig, SimSpec, scenario_config
from .seeds import MAX_SEEDS, parse_seeds
from .store import SORT_COLUMNS, cell_rows, consolidate, done_keys, load_rows
from .work import make_cells, run_cell

__all__ = [
    "CONSOLIDATE_EVERY_S",
    "MAX_SEEDS",
    "METRIC_COLUMNS",
    "METRIC_FIELDS",
    "SORT_COLUMNS",
    "VERSIONED_PACKAGES",
    "BenchConfig",
    "BenchSummary",
    "Cell",
    "MethodSpec",
    "ScenarioConfig",
    "SimSpec",
    "cell_rows",
    "consolidate",
    "done_keys",
    "error_row",
    "instance_hash",
    "load_config",
    "load_rows",
    "make_cells",
    "make_config",
    "parse_seeds",
    "run_bench",
    "run_cell",
    "scenario_config",
    "versions",
]
