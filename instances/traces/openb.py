"""Alibaba cluster-trace-gpu-v2023 (openb) pod CSV; the columns read are in docs/traces.md.

With ``resources="gpus"`` a ``gpu_milli`` share below 1000 takes one whole GPU;
with ``resources="full"`` (model version 3) ``gpu_milli``, ``gpu_spec`` (as
``gpu_models``), ``cpu_milli`` and ``memory_mib`` are kept.
"""

from __future__ import annotations

import math
from typing import Any

from ._core import Importer, Options
from ._io import open_trace, text_stream
from ._rows import RowBuffer
from ._table import Bad, Table, as_int, as_number

__all__ = ["QOS_PRIORITIES", "from_openb", "parse_gpu_spec"]

QOS_PRIORITIES: dict[str, float] = {"LS": 4.0, "Guaranteed": 3.0, "Burstable": 2.0, "BE": 1.0}
"""Default priority by ``qos``; any other value is 1.0."""

REQUIRED = ("name", "num_gpu", "qos", "creation_time", "deletion_time", "scheduled_time")

FULL = ("gpu_milli", "gpu_spec", "cpu_milli", "memory_mib")
"""The further columns an import with ``resources="full"`` reads."""


def parse_gpu_spec(raw: str) -> tuple[str, ...] | None:
    """``gpu_spec`` as ``gpu_models``: ``"V100M16|V100M32"`` -> both; empty -> ``None`` (any)."""
    models: list[str] = []
    for part in raw.split("|"):
        m = part.strip()
        if m and m not in models:
            models.append(m)
    return tuple(models) or None


def _resources(g: int, milli: str, spec: str, cpu: str, mem: str) -> tuple[Any, ...]:
    """A pod's ``(gpu_milli, gpu_models, cpu_milli, memory_mib)``, or :class:`Bad`."""
    c = as_int("cpu_milli", cpu)
    if c < 0:
        raise Bad(f"cpu_milli: must be >= 0, got {cpu!r}")
    m = as_int("memory_mib", mem)
    if m < 0:
        raise Bad(f"memory_mib: must be >= 0, got {mem!r}")
    share = 1000
    if g >= 1 and milli.strip():  # a pod without GPUs is skipped: its share is not read
        share = as_int("gpu_milli", milli)
        if not 1 <= share <= 1000:
            raise Bad(f"gpu_milli: must be an integer in 1..1000 for a pod with GPUs, got {milli!r}")
        if share < 1000 and g != 1:
            raise Bad(f"gpu_milli: a share below 1000 needs num_gpu 1, got {milli!r} with {g}")
    return share, parse_gpu_spec(spec), c, m


def from_openb(path: str, options: Options) -> Any:
    """Import an openb pod CSV (see :func:`instances.traces.from_trace`)."""
    imp = Importer("openb", path, options, default_priorities=QOS_PRIORITIES)
    full = options.resources == "full"
    with open_trace(path, options.progress) as (f, bar):
        table = Table(path, text_stream(f, bar), REQUIRED + (FULL if full else ()))
        ix = [table.index[c] for c in REQUIRED]
        fx = [table.index[c] for c in FULL] if full else []
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
                res = _resources(g, *(row[i] for i in fx)) if full else None
            except Bad as e:
                imp.bad(line, str(e))
                continue
            buf.append(c, g, d - begin, line, name.strip(), qos.strip(), res)
        buf.flush()
    return imp.finish(imp.candidates())
