"""Reading trace files: byte chunks cut at line ends, CSV rows with line numbers, progress.

Every reader streams: a file is read in chunks of a few MiB, never whole.
A progress bar (tqdm, by bytes read) shows on files of at least
:data:`PROGRESS_MIN_BYTES` when standard error is a terminal.
"""

from __future__ import annotations

import csv
import gzip
import io
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, BinaryIO, cast

__all__ = [
    "CHUNK_BYTES",
    "PROGRESS_MIN_BYTES",
    "byte_chunks",
    "csv_rows",
    "open_trace",
    "parse_time",
    "text_stream",
]

CHUNK_BYTES = 8 << 20
"""Bytes read per chunk."""

PROGRESS_MIN_BYTES = 64 << 20
"""Files at least this large show a progress bar (on a terminal)."""

_EPOCH = datetime(1970, 1, 1)


class _Bar:
    """A tqdm bar by bytes, or nothing."""

    def __init__(self, path: str, size: int, progress: bool | None) -> None:
        show = progress if progress is not None else (
            size >= PROGRESS_MIN_BYTES and sys.stderr.isatty()
        )
        self._bar: Any = None
        self._done = 0
        if show:
            from tqdm import tqdm

            self._bar = tqdm(
                total=size, unit="B", unit_scale=True, unit_divisor=1024,
                desc=os.path.basename(path), leave=False, file=sys.stderr,
            )

    def to(self, pos: int) -> None:
        """Move the bar to ``pos`` bytes read."""
        if self._bar is not None and pos > self._done:
            self._bar.update(pos - self._done)
            self._done = pos

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


@contextmanager
def open_trace(path: str, progress: bool | None = None) -> Iterator[tuple[BinaryIO, _Bar]]:
    """Open ``path`` for binary reading with its progress bar (a ``.gz`` file through gzip;
    the bar then counts its bytes as read, decompressed).

    Raises
    ------
    ValueError
        ``<file>: empty file`` for a file of 0 bytes (an :class:`OSError` for
        one that cannot be opened).
    """
    size = os.path.getsize(path)
    if size == 0:
        raise ValueError(f"{path}: empty file")
    bar = _Bar(path, size, progress)
    try:
        opener: Any = gzip.open if path.endswith(".gz") else open
        with opener(path, "rb") as f:
            yield cast(BinaryIO, f), bar
    finally:
        bar.close()


def byte_chunks(f: BinaryIO, bar: _Bar, size: int | None = None) -> Iterator[bytes]:
    """Chunks of whole lines: each but the last ends with a newline; a line
    longer than ``size`` (default :data:`CHUNK_BYTES`) is read whole."""
    size = size or CHUNK_BYTES
    tail = b""
    pos = 0
    while True:
        block = f.read(size)
        pos += len(block)
        if not block:
            if tail:
                yield tail
            return
        buf = tail + block if tail else block
        cut = buf.rfind(b"\n")
        if cut < 0:
            tail = buf
            continue
        if cut == len(buf) - 1:
            chunk, tail = buf, b""
        else:
            chunk, tail = buf[: cut + 1], buf[cut + 1 :]
        yield chunk
        bar.to(pos)


class _TextLines(io.RawIOBase):
    """Binary reader that updates the progress bar (for :class:`io.TextIOWrapper`)."""

    def __init__(self, f: BinaryIO, bar: _Bar) -> None:
        self._f = f
        self._bar = bar
        self._pos = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        n = self._f.readinto(b)  # type: ignore[attr-defined]
        self._pos += n or 0
        self._bar.to(self._pos)
        return n or 0


def text_stream(f: BinaryIO, bar: _Bar) -> io.TextIOWrapper:
    """A UTF-8 text view of ``f`` (universal newlines left to the csv module)."""
    raw = io.BufferedReader(_TextLines(f, bar), buffer_size=1 << 20)
    return io.TextIOWrapper(raw, encoding="utf-8", newline="")


def csv_rows(
    path: str, text: io.TextIOWrapper, header: bool = True
) -> Iterator[tuple[int, list[str]]]:
    """CSV rows with the physical line (from 1) each starts on; blank lines are skipped.

    With ``header`` the first row is included (line 1) so the caller can read it.
    """
    reader = csv.reader(text)
    last = 0
    try:
        for row in reader:
            line = last + 1
            last = reader.line_num
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            yield line, row
    except csv.Error as e:
        raise ValueError(f"{path}: line {reader.line_num}: {e}") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: line {last + 1}: not UTF-8 text ({e.reason})") from None


def parse_time(raw: str) -> float:
    """Seconds of a time field: a number, or a date-time ``YYYY-MM-DD HH:MM:SS``.

    A date-time without a time zone is read as UTC (seconds since
    1970-01-01 00:00:00 of the trace's own clock); one with a zone is converted.

    Raises
    ------
    ValueError
        For anything else (the caller adds the file, line and field).
    """
    s = raw.strip()
    try:
        v = float(s)
    except ValueError:
        pass
    else:
        if v != v or v in (float("inf"), float("-inf")):
            raise ValueError(f"not a finite time: {raw!r}")
        return v
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        raise ValueError(f"not a time (seconds or YYYY-MM-DD HH:MM:SS): {raw!r}") from None
    if dt.tzinfo is not None:
        dt = dt.astimezone(UTC).replace(tzinfo=None)
    return (dt - _EPOCH).total_seconds()
