"""The work of a sweep: its cells, made from a config, and running one (a failure
becomes a row with status ``error``).
"""

from __future__ import annotations

import time
from typing import Any

import instances
from instances import Instance

from ..dispatch import solve
from .cells import Cell, failed_row, finish_row, instance_hash, result_row
from .config import BenchConfig
from .simulation import make_sim_cells, run_sim_cell

__all__ = ["make_cells", "run_cell"]


def make_cells(config: BenchConfig) -> list[Cell]:
    """Generate every instance of the sweep and pair it with every method.

    Raises
    ------
    ValueError
        For a family parameter the generator refuses (``family_params.<family>.<key>``)
        or a bad instance file.
    """
    insts: list[tuple[Instance, str, int]] = []
    for fam in config.families:
        fp = dict(config.family_params.get(fam, {}))
        for seed in config.seeds:
            try:
                inst = instances.generate(fam, seed=seed, **fp)
            except ValueError as e:
                if not fp:
                    raise
                raise ValueError(f"family_params.{fam}.{e}") from None
            insts.append((inst, fam, seed))
    for path in config.instance_files:
        inst = instances.load(path)
        fam = str(inst.meta.get("family", "file"))
        seed = int(inst.meta.get("seed", -1))
        insts.append((inst, fam, seed))
    if config.scenarios is not None:
        return make_sim_cells(config, insts)
    cells: list[Cell] = []
    for inst, fam, seed in insts:
        h = instance_hash(inst)
        cells.extend(Cell(inst, fam, seed, spec, h) for spec in config.methods)
    return cells


def run_cell(cell: Cell) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Run one cell; never raises for a failing method.

    Returns
    -------
    row, schedule
        The tidy row (JSON-safe) and the ``gpusched-schedule/1`` object (``None``
        when the method failed: the row then has status ``error``).
    """
    if cell.sim is not None:
        return run_sim_cell(cell)
    spec = cell.spec
    started = time.perf_counter()
    try:
        res = solve(cell.instance, spec.method, time_limit=spec.time_limit, **dict(spec.params))
    except Exception as e:  # a failed cell is recorded, the sweep goes on
        return failed_row(cell, e, started), None
    r = res.to_row()
    row = result_row(cell, r, **r)
    schedule = res.schedule.to_dict() if res.metrics is not None else None
    return finish_row(row, started), schedule
