"""Every day of the openb trace imported, solved and bounded: one table row per (day, pool).

The real-cluster reproduction (:func:`gpusched.reproduce.reproduce_real`) over
all of :data:`instances.families.OPENB_DAYS` at the pools given (default 8
and 16 GPUs: contention from 0.15 to 2.8): FIFO, the backfilling baselines, ``list``, ``best`` and the MILP
on the instance and on its flat relaxation; the bound of a row is the smallest
upper bound proven. Prints the per-day table (Markdown), the table by
contention band, the import time of the days, and the cells that failed; it
asserts nothing. Resumable: rerun the same command to finish an interrupted run.

Usage::

    python benchmarks/bench_real.py [-o results/bench-real] [--pools 8,16]
        [--time-limit 10] [--best-time-limit 2] [--workers N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import instances  # noqa: E402
from gpusched import sweep  # noqa: E402
from gpusched.reproduce import (  # noqa: E402
    REAL_BEST_TIME_LIMIT,
    REAL_TIME_LIMIT,
    reproduce_real,
)
from instances.families import OPENB_DAYS  # noqa: E402

COLUMNS = {
    "day": "day", "num_gpus": "GPUs", "jobs": "jobs", "contention": "contention",
    "value_fifo": "fifo", "value_easy-curve": "easy-curve", "value_list": "list",
    "value_best": "best", "value_milp": "milp", "bound": "bound", "bound_source": "bound from",
    "gap_fifo_pct": "fifo gap %", "gap_best_pct": "best gap %", "gain_best_pct": "best gain %",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", default="results/bench-real")
    ap.add_argument("--pools", default="8,16")
    ap.add_argument("--time-limit", type=float, default=REAL_TIME_LIMIT)
    ap.add_argument("--best-time-limit", type=float, default=REAL_BEST_TIME_LIMIT)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--resources", default="gpus,full",
                    help="gpus, full or gpus,full (version 2, version 3 or both)")
    args = ap.parse_args()
    pools = [int(g) for g in args.pools.split(",")]
    resources = [r for r in args.resources.split(",") if r]

    t0 = time.perf_counter()
    for d in OPENB_DAYS:
        instances.generate("openb-day", day=d, num_gpus=pools[0])
    t_import = time.perf_counter() - t0
    print(f"{len(OPENB_DAYS)} openb days imported as instances in {t_import:.2f} s "
          f"({1000 * t_import / len(OPENB_DAYS):.0f} ms a day)")

    t0 = time.perf_counter()
    rep = reproduce_real(args.output, days=OPENB_DAYS, pools=pools, time_limit=args.time_limit,
                         best_time_limit=args.best_time_limit, workers=args.workers,
                         resources=resources)
    wall = time.perf_counter() - t0
    frame = rep.frame.sort_values(["resources", "num_gpus", "day"]).reset_index(drop=True)
    for res, part in frame.groupby("resources", sort=False):
        print(f"resources={res}:")
        print(part[list(COLUMNS)].rename(columns=COLUMNS).to_markdown(index=False, floatfmt=".2f"))
        print()
    print(rep.table.to_markdown(index=False, floatfmt=".1f"))
    print()
    if len(set(frame["resources"])) > 1:
        from gpusched.tables import rounding_view

        print(rounding_view(rep.rounding).render("md"))
    s = rep.summary
    print(f"{len(frame)} instances, {s.total} cells ({s.ran} run, {s.errors} errors, "
          f"{s.skipped} already done) in {wall:.0f} s; time limits: MILP {args.time_limit:g} s, "
          f"best {args.best_time_limit:g} s")
    df = sweep.load_rows(args.output)
    df = df[(df["family"] == "openb-day") & df["num_gpus"].isin(pools)]
    bad = df[df["status"] == "error"].assign(
        reason=lambda d: d["message"].str.replace(r"'openb-day[^']*'", "'...'", regex=True))
    for (method, msg), n in bad.groupby(["method", "reason"]).size().items():
        print(f"  errors: {method}: {n} cells: {msg}")
    over = 0
    for _, r in frame.iterrows():
        for c in frame.columns:
            if c.startswith("value_") and r[c] > r["bound"] + 1e-6:
                over += 1
    print(f"values above the bound: {over}")


if __name__ == "__main__":
    main()
