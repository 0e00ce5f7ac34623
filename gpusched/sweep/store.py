"""The results folder of a sweep: one row file per cell, written whole, and what reads them.

::

    DIR/cells/<instance>--<method>--<key>.json      one row per cell (atomic write)
    DIR/results.csv                                 all rows, rebuilt atomically
    DIR/schedules/<instance>--<method>--<key>.json  gpusched-schedule/1
    DIR/instances/<instance>.json                   gpusched-instance/1

The cell files are the store of record: a process killed at any instant leaves
a whole row or none. :func:`load_rows` reads them, so it is exact even after a
crash; an unreadable one is skipped and its cell runs again. Rows are written
and read :func:`instances.rounded`.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd

import instances
from instances.io import atomic_write_text

from .cells import Cell, safe_name

__all__ = [
    "SORT_COLUMNS",
    "cell_rows",
    "cells_dir",
    "consolidate",
    "done_keys",
    "load_rows",
    "read_cell_file",
    "save_instances",
    "store_row",
]

logger = logging.getLogger(__name__)

SORT_COLUMNS = ["family", "seed", "instance", "method"]
"""The order of the rows in :func:`load_rows` and ``results.csv``."""


def cells_dir(out: Path) -> Path:
    """Where a results folder keeps one file per finished cell."""
    return out / "cells"


def read_cell_file(path: Path) -> dict[str, Any] | None:
    """A stored cell's row, or ``None`` (logged) for an unreadable or foreign file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        logger.warning("%s: unreadable row skipped (%s)", path, e)
        return None
    return data if isinstance(data, dict) and "cell" in data else None


def iter_rows(out: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """The rows stored in ``out/cells``, in file-name order (unreadable ones skipped)."""
    d = cells_dir(Path(out))
    if not d.is_dir():
        return
    for p in sorted(d.glob("*.json")):
        row = read_cell_file(p)
        if row is not None:
            yield instances.rounded_all(row)


def done_keys(out: str | os.PathLike[str], *, retry_errors: bool = False) -> set[str]:
    """Keys of the cells that have a row in ``out`` (without errors if ``retry_errors``)."""
    return {
        r["cell"] for r in iter_rows(out)
        if not (retry_errors and r.get("status") == "error")
    }


def load_rows(path: str | os.PathLike[str]) -> pd.DataFrame:
    """All rows of a results folder (from the per-cell files), or of a CSV file.

    Raises
    ------
    ValueError
        If the folder holds no results.
    """
    p = Path(path)
    if p.is_file():
        try:
            return pd.read_csv(p)
        except (ValueError, pd.errors.ParserError) as e:  # binary, empty or malformed
            raise ValueError(f"{path}: not a results CSV file ({' '.join(str(e).split())})") from None
    rows = list(iter_rows(p))
    if not rows:
        csv = p / "results.csv"
        if csv.is_file():
            return pd.read_csv(csv)
        raise ValueError(f"{path}: no results (no cells/*.json and no results.csv)")
    df = pd.DataFrame(rows)
    return df.sort_values(SORT_COLUMNS, kind="stable").reset_index(drop=True)


def cell_rows(out: str | os.PathLike[str], cells: Iterable[Cell]) -> pd.DataFrame:
    """The rows of ``cells`` only, from the results folder ``out`` (which may hold others).

    Raises
    ------
    ValueError
        If the folder holds no results.
    """
    keys = {c.key for c in cells}
    df = load_rows(out)
    return df[df["cell"].isin(keys)].reset_index(drop=True)


def consolidate(out: str | os.PathLike[str]) -> Path | None:
    """Rebuild ``results.csv`` from the per-cell rows, atomically; returns its path."""
    out = Path(out)
    rows = list(iter_rows(out))
    if not rows:
        return None
    df = pd.DataFrame(rows).sort_values(SORT_COLUMNS, kind="stable")
    path = out / "results.csv"
    atomic_write_text(path, df.to_csv(index=False))
    return path


def store_row(out: Path, cell: Cell, row: dict[str, Any], schedule: dict[str, Any] | None) -> None:
    """Write a cell's schedule (if any), then its row: the row file commits the cell."""
    if schedule is not None:
        sched_rel = f"schedules/{cell.stem}.json"
        atomic_write_text(out / sched_rel, json.dumps(schedule, indent=1) + "\n")
        row = {**row, "schedule_file": sched_rel}
    else:
        row = {**row, "schedule_file": None}
    row["instance_file"] = f"instances/{safe_name(cell.instance_id)}.json"
    atomic_write_text(cells_dir(out) / f"{cell.stem}.json",
                      json.dumps(instances.rounded_all(row)) + "\n")


def save_instances(out: Path, cells: Iterable[Cell]) -> None:
    """Write each distinct instance of ``cells`` once under ``out/instances``."""
    seen = set()
    for c in cells:
        if c.content_hash in seen:
            continue
        seen.add(c.content_hash)
        path = out / "instances" / f"{safe_name(c.instance_id)}.json"
        if not path.exists():
            instances.save(c.instance, path)
