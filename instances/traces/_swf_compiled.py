"""The SWF line scanner compiled with numba.

One pass over a chunk of bytes: comment (``;``) and blank lines are passed
over, every other line is split at whitespace and its numbers are read.
Rows that are not 18 numbers are flagged with the reason and the field, so
the caller can name the line; :func:`instances.traces.swf.scan_python` is
the plain version it is held to. ``cache=True`` keeps the machine code on disk.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["scan_compiled"]


@njit(cache=True, nogil=True)
def scan_compiled(
    buf: np.ndarray, cols: np.ndarray, nfields: int,
    out: np.ndarray, lines: np.ndarray, status: np.ndarray, field: np.ndarray,
) -> tuple[int, int]:  # pragma: no cover (compiled; tested through its results)
    """Scan ``buf`` (uint8); see :func:`instances.traces.swf.scan_python` for the outputs.

    Returns (rows written, lines passed).
    """
    n = buf.shape[0]
    ncols = cols.shape[0]
    i = 0
    line = 0
    row = 0
    while i < n:
        j = i
        while j < n and (buf[j] == 32 or buf[j] == 9 or buf[j] == 13 or buf[j] == 11 or buf[j] == 12):
            j += 1
        if j >= n:
            break
        c = buf[j]
        if c == 10:
            line += 1
            i = j + 1
            continue
        if c == 59:
            while j < n and buf[j] != 10:
                j += 1
            line += 1
            i = j + 1
            continue
        lines[row] = line
        st = 0
        bad = -1
        k = 0
        ci = 0
        while True:
            # one number token starting at j
            neg = False
            c = buf[j]
            if c == 45 or c == 43:
                neg = c == 45
                j += 1
            mant = 0
            nd = 0
            scale = 0
            while j < n:
                d = int(buf[j]) - 48
                if d < 0 or d > 9:
                    break
                mant = mant * 10 + d
                nd += 1
                j += 1
            if j < n and buf[j] == 46:
                j += 1
                while j < n:
                    d = int(buf[j]) - 48
                    if d < 0 or d > 9:
                        break
                    mant = mant * 10 + d
                    nd += 1
                    scale -= 1
                    j += 1

            ok = 0 < nd <= 18
            if ok and j < n and (buf[j] == 101 or buf[j] == 69):
                j += 1
                eneg = False
                if j < n and (buf[j] == 45 or buf[j] == 43):
                    eneg = buf[j] == 45
                    j += 1
                e = 0
                ed = 0
                while j < n and 48 <= buf[j] <= 57:
                    e = e * 10 + (buf[j] - 48)
                    ed += 1
                    j += 1
                if ed == 0:
                    ok = False
                scale += -e if eneg else e
            if ok and j < n and not ((buf[j] == 32 or buf[j] == 9 or buf[j] == 13 or buf[j] == 11 or buf[j] == 12) or buf[j] == 10):
                ok = False
            if not ok:
                st = 3
                bad = k
                break
            if scale < 0:
                v = float(mant) / 10.0 ** (-scale)
            elif scale > 0:
                v = float(mant) * 10.0 ** scale
            else:
                v = float(mant)
            if neg:
                v = -v
            if not np.isfinite(v):
                st = 3
                bad = k
                break
            if ci < ncols and cols[ci] == k:
                out[row, ci] = v
                ci += 1
            k += 1
            while j < n and (buf[j] == 32 or buf[j] == 9 or buf[j] == 13 or buf[j] == 11 or buf[j] == 12):
                j += 1
            if j >= n or buf[j] == 10:
                break
        if st == 0:
            if k < nfields:
                st = 1
                bad = k
            elif k > nfields:
                st = 2
                bad = k
        status[row] = st
        field[row] = bad
        row += 1
        while j < n and buf[j] != 10:
            j += 1
        line += 1
        i = j + 1
    return row, line
