"""A plain reading of the specification (docs/model.md), one record at a time, for openb and SWF.

Written apart from ``instances.traces`` (whole file in memory, no numpy, no
window pruning) so the tests can hold the streaming importer to it.
"""

from __future__ import annotations

import csv
import functools
import math

REASONS = ("window", "no_gpus", "too_large", "no_run_time", "past_horizon", "max_jobs")
QOS = {"LS": 4.0, "Guaranteed": 3.0, "Burstable": 2.0, "BE": 1.0}


def _fits(g, num_gpus, nodes):
    if g > num_gpus:
        return False
    if nodes is None:
        return True
    sizes = [s for _, s in nodes]
    if g <= max(sizes):
        return True
    sums = {0}
    for s in sizes:
        sums |= {x + s for x in sums}
    return g in sums


def reference(records, start=None, hours=24.0, slot_minutes=60.0, num_gpus=None, nodes=None,
              max_jobs=None, prio=None):
    """records: list of (name, submit, gpus, run, cls) in file order.

    Returns (jobs as (name, gpus, duration, release, priority), skipped counts)."""
    L = 60.0 * slot_minutes
    T = math.ceil(3600.0 * hours / L)
    if start is None:
        start = min(r[1] for r in records)
    counts = dict.fromkeys(REASONS, 0)
    inwin = [r for r in records if start <= r[1] < start + 3600.0 * hours]
    counts["window"] = len(records) - len(inwin)
    inwin.sort(key=lambda r: r[1])  # stable: ties keep file order
    if nodes is not None:
        G = sum(s for _, s in nodes)
    elif num_gpus is not None:
        G = num_gpus
    else:
        G = max((r[2] for r in inwin if r[2] > 0), default=1)
    kept = []
    for name, sub, g, run, cls in inwin:
        if g <= 0:
            counts["no_gpus"] += 1
        elif not _fits(g, G, nodes):
            counts["too_large"] += 1
        elif not (run == run and run > 0):
            counts["no_run_time"] += 1
        else:
            p = max(1, math.ceil(run / L))
            r = math.floor((sub - start) / L)
            if r + p > T:
                counts["past_horizon"] += 1
            elif max_jobs is not None and len(kept) >= max_jobs:
                counts["max_jobs"] += 1
            else:
                w = 1.0 if prio is None else prio.get(cls, 1.0)
                kept.append((name, g, p, r, w))
    return kept, counts


@functools.cache
def openb_records(path):
    """The openb pod CSV as records (a tuple, cached)."""
    out = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            c = float(row["creation_time"])
            d = float(row["deletion_time"]) if row["deletion_time"] else math.nan
            s = float(row["scheduled_time"]) if row["scheduled_time"] else c
            out.append((row["name"], c, int(row["num_gpu"]), d - s, row["qos"]))
    return tuple(out)


def swf_records(path, procs_per_gpu=1):
    """An SWF file as records."""
    out = []
    with open(path) as f:
        for line in f:
            s = line.strip()
            if not s or s.startswith(";"):
                continue
            v = [float(x) for x in s.split()]
            procs = v[4] if v[4] != -1 else v[7]
            g = max(0, math.ceil(procs / procs_per_gpu))
            q = str(int(v[14])) if v[14].is_integer() else str(v[14])
            out.append((str(int(v[0])), v[1], g, v[3], q))
    return out
