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
        self.res: list[tuple[Any, ...]] = []

    def append(
        self, submit: float, gpus: int, run: float, line: int, name: str, cls: Any,
        res: tuple[Any, ...] | None = None,
    ) -> None:
        """Add one record (``run`` nan when missing; ``res`` its version 3 fields, if kept)."""
        for lst, v in zip(self.cols, (submit, gpus, run, line, name, cls)):
            lst.append(v)
        if res is not None:
            self.res.append(res)
        if len(self.cols[0]) >= self.BATCH:
            self.flush()

    def flush(self) -> None:
        """Hand the collected records to the importer."""
        sub, gpus, run, lines, names, cls = self.cols
        if sub:
            res = None
            if self.res:
                res = np.empty(len(self.res), dtype=object)  # one tuple per entry, not a 2-D array
                for i, v in enumerate(self.res):
                    res[i] = v
            self.imp.add(Records(
                np.array(sub, dtype=np.float64), np.array(gpus, dtype=np.int64),
                np.array(run, dtype=np.float64), np.array(lines, dtype=np.int64),
                np.array(names, dtype=object), np.array(cls, dtype=object), res,
            ))
        for lst in self.cols:
            lst.clear()
        self.res.clear()
