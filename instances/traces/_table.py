"""Shared reading of CSV traces: header, columns, typed fields with their line."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from ._core import Importer
from ._io import csv_rows, parse_time

__all__ = ["Bad", "Table", "as_int", "as_number", "as_time"]


class Bad(Exception):
    """A malformed field: the reader turns it into :meth:`Importer.bad`."""


class Table:
    """The rows of a CSV file as (line, fields) with column positions by name.

    Parameters
    ----------
    header
        ``None`` to read the header from line 1; else the column names of a
        file without a header (its line 1 is then a record), or, with
        ``sniff``, of a file whose line 1 may be that header.
    """

    def __init__(
        self, path: str, text: object, required: Sequence[str],
        header: Sequence[str] | None = None, sniff: bool = False,
    ) -> None:
        self.path = path
        self._rows: Iterator[tuple[int, list[str]]] = csv_rows(path, text)  # type: ignore[arg-type]
        self._first: tuple[int, list[str]] | None = None
        if header is None or sniff:
            first = next(self._rows, None)
            if first is None:
                raise ValueError(f"{path}: no rows")
            cols = [c.strip() for c in first[1]]
            if header is None or set(required) <= set(cols):
                header = cols
            else:
                self._first = first
        self.columns = list(header)
        for c in required:
            if c not in self.columns:
                raise ValueError(
                    f"{path}: line 1: missing column {c!r} (columns: {','.join(self.columns)})"
                )
        self.index = {c: i for i, c in enumerate(self.columns)}

    def __iter__(self) -> Iterator[tuple[int, list[str]]]:
        if self._first is not None:
            yield self._first
        yield from self._rows

    def fields(self, imp: Importer, line: int, row: list[str]) -> bool:
        """True when ``row`` has one field per column; else reports it malformed."""
        if len(row) == len(self.columns):
            return True
        n = len(self.columns)
        imp.bad(line, f"too {'few' if len(row) < n else 'many'} fields: {len(row)} of {n}")
        return False


def as_number(col: str, raw: str, missing: tuple[str, ...] = ("",)) -> float:
    """A finite number, or ``nan`` for a value in ``missing``; :class:`Bad` otherwise."""
    s = raw.strip()
    if s in missing:
        return math.nan
    try:
        v = float(s)
    except ValueError:
        raise Bad(f"{col}: not a number: {raw!r}") from None
    if not math.isfinite(v):
        raise Bad(f"{col}: not a finite number: {raw!r}")
    return v


def as_int(col: str, raw: str) -> int:
    """A whole number (``2`` or ``2.0``); :class:`Bad` otherwise (also when empty)."""
    v = as_number(col, raw)
    if v != v or not float(v).is_integer():
        raise Bad(f"{col}: must be a whole number, got {raw!r}")
    return int(v)


def as_time(col: str, raw: str, missing: tuple[str, ...] = ("",)) -> float:
    """Seconds of a time (number or date-time), ``nan`` for ``missing``; :class:`Bad` otherwise."""
    s = raw.strip()
    if s in missing:
        return math.nan
    try:
        return parse_time(s)
    except ValueError as e:
        raise Bad(f"{col}: {e}") from None
