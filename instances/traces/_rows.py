"""A buffer of parsed records, handed to the importer in batches."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._core import Importer, Records

__all__ = ["RowBuffer"]


class RowBuffer:
    """Collects one record at a time; :meth:`flush` passes them on as :class:`Records`."""

    BATCH = 65536

    def __init__(self, imp: Importer) -> None:
        self.imp = imp
        self.cols: tuple[list[Any], ...] = ([], [], [], [], [], [])

    def append(self, submit: float, gpus: int, run: float, line: int, name: str, cls: Any) -> None:
        """Add one record (``run`` nan when missing)."""
        for lst, v in zip(self.cols, (submit, gpus, run, line, name, cls)):
            lst.append(v)
        if len(self.cols[0]) >= self.BATCH:
            self.flush()

    def flush(self) -> None:
        """Hand the collected records to the importer."""
        sub, gpus, run, lines, names, cls = self.cols
        if sub:
            self.imp.add(Records(
                np.array(sub, dtype=np.float64), np.array(gpus, dtype=np.int64),
                np.array(run, dtype=np.float64), np.array(lines, dtype=np.int64),
                np.array(names, dtype=object), np.array(cls, dtype=object),
            ))
        for lst in self.cols:
            lst.clear()
