"""Alibaba cluster-trace-gpu-v2023 (openb) pod CSV.

Columns used: ``name`` (the job's name), ``num_gpu`` (its GPUs; a
``gpu_milli`` share below 1000 still takes one whole GPU, so ``gpu_milli``
itself is not read), ``qos`` (the class field), ``creation_time`` (submit),
``scheduled_time`` and ``deletion_time`` (run time ``deletion - scheduled``,
or ``deletion - creation`` where ``scheduled_time`` is empty). ``pod_phase``
and the CPU and memory columns are not used.
"""

from __future__ import annotations

import math
from typing import Any

from ._core import Importer, Options
from ._io import open_trace, text_stream
from ._rows import RowBuffer
from ._table import Bad, Table, as_int, as_number

__all__ = ["QOS_PRIORITIES", "from_openb"]

QOS_PRIORITIES: dict[str, float] = {"LS": 4.0, "Guaranteed": 3.0, "Burstable": 2.0, "BE": 1.0}
"""Default priority by ``qos``; any other value is 1.0."""

REQUIRED = ("name", "num_gpu", "qos", "creation_time", "deletion_time", "scheduled_time")


def from_openb(path: str, options: Options) -> Any:
    """Import an openb pod CSV (see :func:`instances.traces.from_trace`)."""
    imp = Importer("openb", path, options, default_priorities=QOS_PRIORITIES)
    with open_trace(path, options.progress) as (f, bar):
        table = Table(path, text_stream(f, bar), REQUIRED)
        ix = [table.index[c] for c in REQUIRED]
        buf = RowBuffer(imp)
        for line, row in table:
            if not table.fields(imp, line, row):
                continue
            name, ng, qos, created, deleted, sched = (row[i] for i in ix)
            try:
                if not name.strip():
                    raise Bad("name: empty")
                g = as_int("num_gpu", ng)
                c = as_number("creation_time", created)
                if c != c:
                    raise Bad("creation_time: empty")
                d = as_number("deletion_time", deleted)
                s = as_number("scheduled_time", sched)
                since, begin = ("creation_time", c) if math.isnan(s) else ("scheduled_time", s)
                if d < begin:
                    raise Bad(f"deletion_time: before {since} (run time {d - begin:g} s)")
            except Bad as e:
                imp.bad(line, str(e))
                continue
            buf.append(c, g, d - begin, line, name.strip(), qos.strip())
        buf.flush()
    return imp.finish(imp.candidates())
