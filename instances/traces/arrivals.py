"""Arrival logs: Microsoft ITP (the ElasticFlow traces) and Philly as Pollux and Sia ship it.

Both are CSV files with a header and one job a row (the columns read are in
docs/arrivals.md):

- ``itp``: ``job_id,submission_time,duration,num_gpu``, times in seconds from the
  start of collection; a job is named by its ``job_id``.
- ``philly-csv``: ``timestamp,duration,num_gpus,gpu_time,cluster``, the submit time a
  ``YYYY-MM-DD HH:MM:SS`` read as UTC (the trace's seconds are Unix seconds); a job
  is named by its row number from 1 (the rows have no id); with a cluster option,
  the rows of the other virtual clusters are skipped and counted as
  ``other_cluster`` before section 9's reasons, so the window's default start is the
  earliest submit of the cluster's rows.

Priorities are 1.0 unless a mapping is given (``philly-csv``: by ``cluster``).
"""

from __future__ import annotations

from typing import Any

from ._core import Importer, Options
from ._io import open_trace, text_stream
from ._rows import RowBuffer
from ._table import Bad, Table, as_int, as_number, as_time

__all__ = ["ITP_COLUMNS", "OTHER_CLUSTER", "PHILLY_CSV_COLUMNS", "from_itp", "from_philly_csv"]

ITP_COLUMNS = ("job_id", "submission_time", "duration", "num_gpu")
"""The columns an ``itp`` file must have."""

PHILLY_CSV_COLUMNS = ("timestamp", "duration", "num_gpus", "cluster")
"""The columns a ``philly-csv`` file must have (``gpu_time`` is not read)."""

OTHER_CLUSTER = "other_cluster"
"""The skip reason of a ``philly-csv`` row of another virtual cluster than the one asked."""


def _run(col: str, raw: str) -> float:
    """A run time in seconds: a number >= 0 (an empty field is missing: ``nan``)."""
    d = as_number(col, raw)
    if d < 0:
        raise Bad(f"{col}: negative, got {d:g}")
    return d


def from_itp(path: str, options: Options) -> Any:
    """Import an ITP cluster CSV (see :func:`instances.traces.from_trace`)."""
    imp = Importer("itp", path, options)
    with open_trace(path, options.progress) as (f, bar):
        table = Table(path, text_stream(f, bar), ITP_COLUMNS)
        i_id, i_sub, i_dur, i_gpu = (table.index[c] for c in ITP_COLUMNS)
        buf = RowBuffer(imp)
        for line, row in table:
            if not table.fields(imp, line, row):
                continue
            try:
                name = row[i_id].strip()
                if not name:
                    raise Bad("job_id: empty")
                s = as_number("submission_time", row[i_sub])
                if s != s:
                    raise Bad("submission_time: empty")
                d = _run("duration", row[i_dur])
                g = as_int("num_gpu", row[i_gpu])
            except Bad as e:
                imp.bad(line, str(e))
                continue
            buf.append(s, g, d, line, name, "")
        buf.flush()
    return imp.finish(imp.candidates())


MAX_CLUSTERS_NAMED = 50
"""How many other clusters the message about a missing cluster lists."""


def from_philly_csv(path: str, options: Options) -> Any:
    """Import Philly as the Pollux and Sia artifacts ship it (see
    :func:`instances.traces.from_trace`); ``options.cluster`` keeps one virtual cluster.
    """
    imp = Importer("philly-csv", path, options)
    imp.first_skips[OTHER_CLUSTER] = 0
    keep = None if options.cluster is None else options.cluster.strip()
    with open_trace(path, options.progress) as (f, bar):
        table = Table(path, text_stream(f, bar), PHILLY_CSV_COLUMNS)
        i_sub, i_dur, i_gpu, i_vc = (table.index[c] for c in PHILLY_CSV_COLUMNS)
        buf = RowBuffer(imp)
        row_number = 0
        seen: set[str] = set()
        for line, row in table:
            row_number += 1
            if not table.fields(imp, line, row):
                continue
            try:
                s = as_time("timestamp", row[i_sub])
                if s != s:
                    raise Bad("timestamp: empty")
                d = _run("duration", row[i_dur])
                g = as_int("num_gpus", row[i_gpu])
                vc = row[i_vc].strip()
                if not vc:
                    raise Bad("cluster: empty")
            except Bad as e:
                imp.bad(line, str(e))
                continue
            if keep is not None and vc != keep:
                if len(seen) < MAX_CLUSTERS_NAMED:
                    seen.add(vc)
                imp.skip(OTHER_CLUSTER)
                continue
            buf.append(s, g, d, line, str(row_number), vc)
        buf.flush()
    if keep is not None and imp.read == imp.first_skips[OTHER_CLUSTER] + imp.bad_count:
        raise ValueError(
            f"{path}: cluster: no row of virtual cluster {keep!r}; the file's clusters: "
            f"{', '.join(sorted(seen)) or 'none'}"
        )
    return imp.finish(imp.candidates())
