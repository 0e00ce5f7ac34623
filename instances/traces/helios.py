"""HeliosData ``cluster_log.csv`` (SenseTime Helios clusters, SC '21); the columns read
are in docs/traces.md.
"""

from __future__ import annotations

from typing import Any

from ._core import Importer, Options
from ._io import open_trace, text_stream
from ._rows import RowBuffer
from ._table import Bad, Table, as_int, as_number, as_time

__all__ = ["from_helios"]

REQUIRED = ("job_id", "gpu_num", "submit_time", "duration")


def from_helios(path: str, options: Options) -> Any:
    """Import a Helios ``cluster_log.csv`` (see :func:`instances.traces.from_trace`)."""
    imp = Importer("helios", path, options)
    need = REQUIRED + (("vc",) if options.priorities is not None else ())
    with open_trace(path, options.progress) as (f, bar):
        table = Table(path, text_stream(f, bar), need)
        i_id, i_gpu, i_sub, i_dur = (table.index[c] for c in REQUIRED)
        i_vc = table.index.get("vc")
        buf = RowBuffer(imp)
        for line, row in table:
            if not table.fields(imp, line, row):
                continue
            try:
                name = row[i_id].strip()
                if not name:
                    raise Bad("job_id: empty")
                g = as_int("gpu_num", row[i_gpu])
                s = as_time("submit_time", row[i_sub])
                if s != s:
                    raise Bad("submit_time: empty")
                d = as_number("duration", row[i_dur])
                if d < 0:
                    raise Bad(f"duration: negative, got {d:g}")
            except Bad as e:
                imp.bad(line, str(e))
                continue
            buf.append(s, g, d, line, name, row[i_vc].strip() if i_vc is not None else "")
        buf.flush()
    return imp.finish(imp.candidates())
