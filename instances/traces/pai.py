"""Alibaba cluster-trace-gpu-v2020 (PAI): ``pai_job_table`` with ``pai_task_table``.

Both tables are CSV without a header (a file whose line 1 is the header is read
too). A job's GPUs are ``sum(inst_num * ceil(plan_gpu / 100))`` over its tasks,
its run time its ``end_time`` less its tasks' earliest ``start_time``; task rows
are read only for the jobs in the window (docs/traces.md).
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from ._core import Importer, Options
from ._io import open_trace, text_stream
from ._rows import RowBuffer
from ._table import Bad, Table, as_number

__all__ = ["JOB_COLUMNS", "TASK_COLUMNS", "from_pai", "task_table_for"]

JOB_COLUMNS = ("job_name", "inst_id", "user", "status", "start_time", "end_time")
TASK_COLUMNS = (
    "job_name", "task_name", "inst_num", "status", "start_time", "end_time",
    "plan_cpu", "plan_mem", "plan_gpu", "gpu_type",
)
_JOB_NEED = ("job_name", "user", "start_time", "end_time")
_TASK_NEED = ("job_name", "inst_num", "start_time", "plan_gpu")


def task_table_for(path: str) -> str:
    """The task table beside a job table: ``pai_task_table.csv`` in the same folder."""
    return os.path.join(os.path.dirname(path), "pai_task_table.csv")


def from_pai(path: str, options: Options, tasks: str | None = None) -> Any:
    """Import a PAI job table (or a folder holding both tables) and its task table
    (default: beside the job table); see :func:`instances.traces.from_trace`.
    """
    if os.path.isdir(path):
        path = os.path.join(path, "pai_job_table.csv")
    task_path = tasks if tasks is not None else task_table_for(path)
    imp = Importer("pai", path, options)
    with open_trace(path, options.progress) as (f, bar):
        table = Table(path, text_stream(f, bar), _JOB_NEED, header=JOB_COLUMNS, sniff=True)
        i_name, i_user, i_sub, i_end = (table.index[c] for c in _JOB_NEED)
        buf = RowBuffer(imp)
        for line, row in table:
            if not table.fields(imp, line, row):
                continue
            try:
                name = row[i_name].strip()
                if not name:
                    raise Bad("job_name: empty")
                sub = as_number("start_time", row[i_sub])
                if sub != sub:
                    raise Bad("start_time: empty")
                end = as_number("end_time", row[i_end])
            except Bad as e:
                imp.bad(line, str(e))
                continue
            # run holds the job's end for now; the tasks turn it into a run time
            buf.append(sub, 0, end, line, name, row[i_user].strip())
        buf.flush()
    cand = imp.candidates()
    pos: dict[str, list[int]] = {}
    for k, n in enumerate(cand.names):
        pos.setdefault(str(n), []).append(k)
    gpus = np.zeros(len(cand), dtype=np.int64)
    first = np.full(len(cand), math.inf)
    task_bad = 0
    task_rows = 0
    with open_trace(task_path, options.progress) as (f, bar):
        table = Table(task_path, text_stream(f, bar), _TASK_NEED, header=TASK_COLUMNS, sniff=True)
        i_name, i_num, i_start, i_gpu = (table.index[c] for c in _TASK_NEED)
        for line, row in table:
            task_rows += 1
            try:
                if len(row) != len(table.columns):
                    raise Bad(f"too {'few' if len(row) < len(table.columns) else 'many'} "
                              f"fields: {len(row)} of {len(table.columns)}")
                ks = pos.get(row[i_name].strip())
                if ks is None:
                    continue
                num = as_number("inst_num", row[i_num])
                share = as_number("plan_gpu", row[i_gpu])
                start = as_number("start_time", row[i_start])
                if (num == num and num < 0) or (share == share and share < 0):
                    raise Bad("inst_num and plan_gpu: must be >= 0")
            except Bad as e:
                msg = f"{task_path}: line {line}: {e}"
                if not options.skip_bad:
                    raise ValueError(msg) from None
                task_bad += 1
                continue
            for k in ks:
                if num == num and share == share:
                    gpus[k] += round(num) * math.ceil(share / 100.0)
                if start == start:
                    first[k] = min(first[k], start)
    cand.gpus = gpus
    with np.errstate(invalid="ignore"):
        cand.run = np.where(np.isfinite(first), cand.run - first, np.nan)
        negative = cand.run < 0
    if negative.any():
        for r in np.flatnonzero(negative):  # candidates are in file order
            imp.bad(int(cand.line[r]), f"end_time: before the first task's start_time "
                    f"(run time {cand.run[r]:g} s)", count=False)
        cand = cand.take(~negative)
    extra = {"tasks_file": os.path.basename(task_path), "task_rows": task_rows,
             "task_rows_bad": task_bad}
    return imp.finish(cand, extra)
