"""Microsoft Philly ``cluster_job_log`` (msr-fiddle/philly-traces, ATC '19).

One JSON array of jobs (or one object per line). A job's GPUs are the most any
attempt held; its run time spans the first attempt's start to the last one's
end (docs/traces.md).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, BinaryIO

from ._core import Importer, Options
from ._io import open_trace
from ._rows import RowBuffer
from ._table import Bad, as_time

__all__ = ["from_philly", "iter_json_objects"]

_MISSING = ("", "None", "null")
MAX_OBJECT_BYTES = 64 << 20
"""A JSON value still incomplete after this many characters is an error."""


def iter_json_objects(
    path: str, f: BinaryIO, bar: Any, chunk: int = 1 << 20
) -> Iterator[tuple[int, Any]]:
    """Stream the values of a top-level JSON array (or of concatenated values, one
    per line) with the physical line (from 1) each starts on.

    Raises
    ------
    ValueError
        ``<file>: line <n>: not valid JSON: ...`` for a syntax error.
    """
    dec = json.JSONDecoder()
    import codecs

    text = codecs.getincrementaldecoder("utf-8")()
    buf = ""
    pos = 0
    line = 1  # line of buf[pos]
    eof = False
    read = 0
    array: bool | None = None

    def more() -> bool:
        nonlocal buf, pos, eof, read
        if eof:
            return False
        block = f.read(chunk)
        read += len(block)
        bar.to(read)
        try:
            s = text.decode(block, final=not block)
        except UnicodeDecodeError as e:
            raise ValueError(f"{path}: line {line}: not UTF-8 text ({e.reason})") from None
        if not block:
            eof = True
        buf = buf[pos:] + s
        pos = 0
        return True

    def skip_ws() -> bool:
        nonlocal pos, line
        while True:
            n = len(buf)
            while pos < n and buf[pos] in " \t\r\n":
                if buf[pos] == "\n":
                    line += 1
                pos += 1
            if pos < n:
                return True
            if not more():
                return False

    def fail(at: int, msg: str) -> ValueError:
        return ValueError(f"{path}: line {line + buf.count(chr(10), pos, at)}: not valid JSON: {msg}")

    if not skip_ws():
        raise ValueError(f"{path}: no JSON value")
    if buf[pos] == "[":
        array = True
        pos += 1
    else:
        array = False
    first = True
    while True:
        if not skip_ws():
            if array:
                raise fail(pos, "the array is not closed with ']'")
            return
        c = buf[pos]
        if array and c == "]":
            pos += 1
            if skip_ws():
                raise fail(pos, "data after the closing ']'")
            return
        if array and not first:
            if c != ",":
                raise fail(pos, f"expected ',' or ']', got {c!r}")
            pos += 1
            if not skip_ws():
                raise fail(pos, "the array is not closed with ']'")
        first = False
        while True:
            try:
                obj, end = dec.raw_decode(buf, pos)
            except json.JSONDecodeError as e:
                if not eof and len(buf) - pos < MAX_OBJECT_BYTES and more():
                    continue
                raise fail(e.pos, e.msg) from None
            # a number at the end of the buffer may go on in the next block
            if end == len(buf) and not eof and not array and more():
                continue
            break
        yield line, obj
        line += buf.count("\n", pos, end)
        pos = end


def _gpus(attempts: list[Any]) -> int:
    best = 0
    for a in attempts:
        if not isinstance(a, dict):
            raise Bad("attempts: each attempt must be an object")
        detail = a.get("detail") or []
        if not isinstance(detail, list):
            raise Bad("attempts.detail: must be a list")
        n = 0
        for d in detail:
            g = d.get("gpus") if isinstance(d, dict) else None
            if not isinstance(g, list):
                raise Bad("attempts.detail.gpus: must be a list")
            n += len(g)
        best = max(best, n)
    return best


def _time(key: str, v: Any) -> float:
    if v is None:
        return float("nan")
    if not isinstance(v, (str, int, float)) or isinstance(v, bool):
        raise Bad(f"{key}: must be a date-time, got {v!r}")
    return as_time(key, str(v), _MISSING)


def from_philly(path: str, options: Options) -> Any:
    """Import a Philly ``cluster_job_log`` (see :func:`instances.traces.from_trace`)."""
    imp = Importer("philly", path, options)
    with open_trace(path, options.progress) as (f, bar):
        buf = RowBuffer(imp)
        for line, job in iter_json_objects(path, f, bar):
            try:
                if not isinstance(job, dict):
                    raise Bad("a job must be a JSON object")
                name = job.get("jobid")
                if not isinstance(name, str) or not name:
                    raise Bad(f"jobid: must be a non-empty string, got {name!r}")
                sub = _time("submitted_time", job.get("submitted_time"))
                if sub != sub:
                    raise Bad("submitted_time: missing")
                attempts = job.get("attempts")
                if attempts is None:
                    attempts = []
                if not isinstance(attempts, list):
                    raise Bad("attempts: must be a list")
                g = _gpus(attempts)
                run = float("nan")
                if attempts:
                    t0 = _time("attempts.start_time", attempts[0].get("start_time"))
                    t1 = _time("attempts.end_time", attempts[-1].get("end_time"))
                    run = t1 - t0
                    if run < 0:
                        raise Bad(f"attempts.end_time: before attempts.start_time "
                                  f"(run time {run:g} s)")
                vc = job.get("vc", "")
            except Bad as e:
                imp.bad(line, str(e))
                continue
            buf.append(sub, g, run, line, name, "" if vc is None else str(vc))
        buf.flush()
    return imp.finish(imp.candidates())
