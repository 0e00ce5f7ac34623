"""Standard Workload Format (Parallel Workloads Archive, version 2.2): one job per
line of 18 numbers (``-1`` missing, ``;`` a header comment); the fields read are in
docs/traces.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ._core import Importer, Options, Records
from ._io import byte_chunks, open_trace

__all__ = ["FIELDS", "read_swf", "scan_python"]

FIELDS: tuple[str, ...] = (
    "job number", "submit time", "wait time", "run time", "allocated processors",
    "average CPU time", "used memory", "requested processors", "requested time",
    "requested memory", "status", "user id", "group id", "executable number",
    "queue number", "partition number", "preceding job", "think time",
)
"""The 18 fields of a line, in order."""

NFIELDS = len(FIELDS)
_COLS = np.array([0, 1, 3, 4, 7, 14], dtype=np.int64)  # job, submit, run, procs, req procs, queue

OK, TOO_FEW, TOO_MANY, NOT_NUMBER = 0, 1, 2, 3


_NUMBER = re.compile(rb"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _number(tok: bytes) -> float | None:
    """The value of a number token; None for anything else, a value that is not
    finite, or more than 18 digits in the mantissa (as the compiled scanner)."""
    m = _NUMBER.fullmatch(tok)
    if m is None or sum(ch in b"0123456789" for ch in m.group(1)) > 18:
        return None
    v = float(tok)
    return v if math.isfinite(v) else None


def scan_python(
    buf: np.ndarray, cols: np.ndarray, nfields: int,
    out: np.ndarray, lines: np.ndarray, status: np.ndarray, field: np.ndarray,
) -> tuple[int, int]:
    """Scan a chunk line by line (the reference of the compiled scanner).

    For each data line (not blank, not starting with ``;``), ``lines[row]``
    is its 0-based line in the chunk, ``out[row]`` its fields ``cols``,
    ``status[row]`` 0 (fine), 1 (too few fields), 2 (too many) or 3 (field
    ``field[row]``, 0-based, not a number); ``field[row]`` is the field count
    for statuses 1 and 2. Returns (rows written, lines passed).
    """
    data = bytes(buf)
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    row = 0
    want = {int(c): k for k, c in enumerate(cols)}
    for li, raw in enumerate(parts):
        s = raw.strip()
        if not s or s.startswith(b";"):
            continue
        toks = s.split()
        lines[row] = li
        st, bad = OK, -1
        for k, tok in enumerate(toks):
            v = _number(tok)
            if v is None:
                st, bad = NOT_NUMBER, k
                break
            if k in want:
                out[row, want[k]] = v
        if st == OK and len(toks) != nfields:
            st, bad = (TOO_FEW if len(toks) < nfields else TOO_MANY), len(toks)
        status[row] = st
        field[row] = bad
        row += 1
    return row, len(parts)


def _scanner() -> Callable[..., tuple[int, int]]:
    try:
        from ._swf_compiled import scan_compiled
    except ImportError:  # pragma: no cover (numba is a dependency)
        return scan_python
    return scan_compiled  # type: ignore[no-any-return]


def _bad_message(line_bytes: bytes, st: int, fld: int) -> str:
    if st == TOO_FEW:
        return f"too few fields: {fld} of {NFIELDS}"
    if st == TOO_MANY:
        return f"too many fields: {fld}, expected {NFIELDS}"
    toks = line_bytes.split()
    tok = toks[fld].decode("utf-8", "replace") if fld < len(toks) else ""
    return f"field {fld + 1} ({FIELDS[fld]}): not a number: {tok!r}"


def read_swf(
    path: str, options: Options, procs_per_gpu: int = 1, scan: Callable[..., Any] | None = None,
) -> Importer:
    """Parse an SWF file into an :class:`Importer` (window applied, nothing else).

    GPUs are ``ceil(procs / procs_per_gpu)``; a job number that is not a
    non-negative integer, a submit time that is missing or negative, or a run
    time below zero other than SWF's ``-1`` (missing), makes the line malformed.
    """
    if isinstance(procs_per_gpu, bool) or not isinstance(procs_per_gpu, int) or procs_per_gpu < 1:
        raise ValueError(f"procs_per_gpu: must be an integer >= 1, got {procs_per_gpu!r}")
    imp = Importer("swf", path, options)
    scanner = scan or _scanner()
    with open_trace(path, options.progress) as (f, bar):
        first = 1  # physical line of the chunk's first line
        for chunk in byte_chunks(f, bar):
            buf = np.frombuffer(chunk, dtype=np.uint8)
            cap = len(chunk) // (2 * NFIELDS) + 1  # a data line has at least 36 bytes
            out = np.empty((cap, _COLS.size), dtype=np.float64)
            lines = np.empty(cap, dtype=np.int64)
            status = np.empty(cap, dtype=np.int8)
            fld = np.empty(cap, dtype=np.int16)
            nrow, nlines = scanner(buf, _COLS, NFIELDS, out, lines, status, fld)
            base = first
            first += nlines
            out, lines, status, fld = out[:nrow], lines[:nrow] + base, status[:nrow], fld[:nrow]
            job, sub, run, procs, req, queue = out.T
            ok = status == OK
            bad_job = ok & ~((job >= 0) & (np.floor(job) == job))
            bad_sub = ok & ~bad_job & ~(sub >= 0)
            bad_run = ok & ~bad_job & ~bad_sub & (run < 0) & (run != -1)
            good = ok & ~bad_job & ~bad_sub & ~bad_run
            if not good.all():
                text = chunk.split(b"\n")
                for r in np.flatnonzero(~good):
                    ln = int(lines[r])
                    if not ok[r]:
                        what = _bad_message(text[ln - base], int(status[r]), int(fld[r]))
                    elif bad_job[r]:
                        what = f"field 1 (job number): must be an integer >= 0, got {job[r]:g}"
                    elif bad_run[r]:
                        what = f"field 4 (run time): negative, got {run[r]:g}"
                    else:
                        what = f"field 2 (submit time): missing or negative, got {sub[r]:g}"
                    imp.bad(ln, what)
            procs_used = np.where(procs[good] == -1, req[good], procs[good])
            gpus = np.maximum(np.ceil(procs_used / procs_per_gpu), 0).astype(np.int64)
            imp.add(Records(
                sub[good], gpus, run[good], lines[good], job[good].astype(np.int64),
                queue[good],
            ))
    return imp


def from_swf(path: str, options: Options, procs_per_gpu: int = 1) -> Any:
    """Import an SWF file (see :func:`instances.traces.from_trace`)."""
    imp = read_swf(path, options, procs_per_gpu)
    return imp.finish(imp.candidates(), {"procs_per_gpu": procs_per_gpu})
