"""The certified bound on model version 3 at scale: the Lagrangian on fluid amounts, its
independent recomputation, time and peak memory, one process per instance.

    python benchmarks/bench_bound_v3.py [--cases cluster35,shares6212,...] [--limit 60]
        [--lower best --lower-limit 60]

Cases: ``cluster35`` (the 35 days of the openb trace, days 115-149, on the full openb cluster,
1,213 GPU nodes and 6,212 GPUs, 15-minute slots, ``resources="full"``, no inference: the import
of ``instances.from_trace``; ``cluster35s`` with a ServeGen series at 30% of the pool), ``day<G>[s<seed>]`` (``openb-day``, ``resources="full"``, ``G`` GPUs, seed 0 by default),
``shares<G>x<T>`` (``openb-shares`` with ``G`` GPUs and ``T`` slots, its own number of jobs).
Each row: the instance, the seconds to make it, the bound and its search (iterations,
seconds), the recomputation by ``instances.lagrangian_value`` (seconds, stated >= recomputed),
the sum of values, with ``--lower`` a feasible value (``best``, its checked value) and the gap,
and the process's peak resident memory (``ru_maxrss``).
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import time


def make(case: str):  # type: ignore[no-untyped-def]
    import instances

    if case in ("cluster35", "cluster35s"):  # s: with a ServeGen series at 30% of the pool
        return instances.from_trace("openb", "openb:default", start=86400 * 115, hours=35 * 24,
                                    slot_minutes=15, nodes="openb:nodes", resources="full",
                                    service="servegen:0.3" if case.endswith("s") else None)
    m = re.fullmatch(r"day(\d+)(?:s(\d+))?", case)
    if m:
        return instances.generate("openb-day", seed=int(m[2] or 0), num_gpus=int(m[1]),
                                  resources="full")
    m = re.fullmatch(r"shares(\d+)x(\d+)", case)
    if m:
        return instances.generate("openb-shares", seed=0, num_gpus=int(m[1]), horizon=int(m[2]))
    raise SystemExit(f"unknown case {case!r}")


def one(case: str, limit: float, lower: str | None, lower_limit: float) -> dict:
    import instances
    import milp

    t = time.perf_counter()
    inst = make(case)
    made = time.perf_counter() - t
    row: dict = {"case": case, "gpus": inst.num_gpus, "nodes": inst.num_nodes,
                 "slots": inst.horizon, "jobs": inst.num_jobs,
                 "shared": sum(j.gpu_milli < 1000 for j in inst.jobs), "make_s": round(made, 2),
                 "sum_of_values": float(inst.job_values.sum())}
    value = None
    if lower is not None:
        import gpusched

        t = time.perf_counter()
        res = gpusched.solve(inst, lower, time_limit=lower_limit)
        value = res.value
        row.update(lower=lower, lower_value=value, lower_s=round(time.perf_counter() - t, 1))
    t = time.perf_counter()
    b = milp.bound(inst, "lagrangian", time_limit=limit, lower=value)
    row.update(bound=b.value, iterations=b.iterations, bound_s=round(time.perf_counter() - t, 2))
    t = time.perf_counter()
    again = instances.lagrangian_value(inst, b.multipliers)
    row.update(recomputed=again, recompute_s=round(time.perf_counter() - t, 3),
               certified=bool(b.value >= again))
    if value:
        row["gap_pct"] = round(100 * (b.value - value) / value, 2)
    row["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", default="day16,shares256x96,shares1024x96,cluster35")
    p.add_argument("--limit", type=float, default=60.0, help="seconds for the multiplier search")
    p.add_argument("--lower", default=None, help="a method whose value states the gap (best)")
    p.add_argument("--lower-limit", type=float, default=60.0)
    p.add_argument("--one", default=None, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.one:
        print(json.dumps(one(a.one, a.limit, a.lower, a.lower_limit)))
        return
    for case in a.cases.split(","):
        cmd = [sys.executable, __file__, "--one", case, "--limit", str(a.limit),
               "--lower-limit", str(a.lower_limit)] + (["--lower", a.lower] if a.lower else [])
        out = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if out.returncode:
            print(f"{case}: failed: {out.stderr.strip().splitlines()[-1:]}", flush=True)
            continue
        print(out.stdout.strip().splitlines()[-1], flush=True)


if __name__ == "__main__":
    main()
