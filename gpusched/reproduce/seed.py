"""``gpusched reproduce seed``: the seed's comparison, rerun on our generated instances.

The seed family and the five high-contention scenarios over several seeds, with
FIFO, FIFO under curve reservation, ``best`` and the time-limited MILP (the
yardstick of the gaps), and the ablation table's heuristics; a resumable sweep,
then every table and plot.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from instances.families import SEED_SCENARIOS

from ..dispatch import EXACT_METHODS, method_names
from ..report import write_report
from ..sweep import (
    BenchConfig,
    BenchSummary,
    MethodSpec,
    cell_rows,
    make_cells,
    make_config,
    run_bench,
)
from ..tables import ABLATION_GRID, TableView, seed_view

__all__ = [
    "DEFAULT_SEEDS",
    "DEFAULT_TIME_LIMIT",
    "SEED_FAMILIES",
    "SEED_METHODS",
    "ReproduceReport",
    "reproduce_seed",
    "seed_config",
]

logger = logging.getLogger(__name__)

SEED_FAMILIES: tuple[str, ...] = ("seed-training-heavy", *SEED_SCENARIOS)
"""The families of the seed reproduction."""

SEED_METHODS: tuple[str, ...] = ("fifo", "fifo-curve", "best", "milp")
"""Methods of the seed reproduction (the MILP time-limited)."""

DEFAULT_SEEDS = 5
DEFAULT_TIME_LIMIT = 20.0
"""Seconds per MILP solve: 30 solves on 2 cores stay well within 10 minutes."""


def seed_config(
    seeds: Any = DEFAULT_SEEDS, time_limit: float = DEFAULT_TIME_LIMIT, *,
    ablation: bool = True, params: Mapping[str, Mapping[str, Any]] | None = None,
) -> BenchConfig:
    """The sweep of the seed reproduction: ``seeds`` per family (a count, ``"A-B"`` or a
    list), the registered methods of :data:`SEED_METHODS` and, with ``ablation``, the
    heuristics of :data:`gpusched.tables.ABLATION_GRID`; ``params`` per method
    (``{"best": {"time_limit": 2}}``).
    """
    known = method_names()
    wanted = list(SEED_METHODS)
    if ablation:
        for labels in ABLATION_GRID.values():
            wanted += [m for m in labels if m in known and m not in EXACT_METHODS]
    specs = []
    for m in dict.fromkeys(wanted):
        if m not in known:
            logger.warning("method %r is not registered; the reproduction runs without it", m)
            continue
        specs.append(MethodSpec(m, m, dict((params or {}).get(m, {})),
                                time_limit if m in EXACT_METHODS else None))
    return make_config(SEED_FAMILIES, seeds, specs)


@dataclass
class ReproduceReport:
    """What :func:`reproduce_seed` did and wrote."""

    summary: BenchSummary
    seed_table: TableView
    files: list[Path]


def reproduce_seed(
    out: str | os.PathLike[str], *, seeds: Any = DEFAULT_SEEDS,
    time_limit: float = DEFAULT_TIME_LIMIT, workers: int | None = None,
    scheduler: str | None = None, progress: bool = True, ablation: bool = True,
    params: Mapping[str, Mapping[str, Any]] | None = None,
) -> ReproduceReport:
    """Run (or resume) the seed reproduction in ``out`` and write its tables and plots.

    Parameters
    ----------
    workers, scheduler, progress
        As in :func:`gpusched.sweep.run_bench`.
    seeds, time_limit, ablation, params
        As in :func:`seed_config` (``time_limit``: seconds per MILP solve).
    """
    config = seed_config(seeds, time_limit, ablation=ablation, params=params)
    cells = make_cells(config)
    summary = run_bench(cells, out, workers=workers, scheduler=scheduler, progress=progress)
    df = cell_rows(out, cells)
    files = write_report(out, df=df, summary_methods=SEED_METHODS)
    return ReproduceReport(summary, seed_view(df), files)
