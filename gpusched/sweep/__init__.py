"""The benchmark harness: families x seeds x methods, in parallel, crash-safe and resumable.

:mod:`.config` (flags or a TOML file), :mod:`.seeds`, :mod:`.cells` (a cell,
its key and its row), :mod:`.work` (make and run cells), :mod:`.store` (the
results folder), :mod:`.runner` (this process, a pool or Dask), and
:mod:`.scenarios` with :mod:`.simulation` (replays against actual days).
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
