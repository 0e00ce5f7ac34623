"""The full openb cluster in one instance: its build, its size and the methods' memory on it.

For ``resources="gpus"`` and ``"full"`` (:func:`instances.traces.openb_cluster`), each
step in a fresh Python process: the build (wall time, the allocations' peak by
``tracemalloc``, the process's peak resident set size by ``getrusage``, the file's
size, the jobs and nodes), then each method asked for (default ``fifo``, ``list``,
``best``; ``best`` with ``--best-time-limit``) and its check by
``instances.evaluate``; ``--no-tracemalloc`` measures the process peaks without
tracemalloc's own bookkeeping. The issue's target for the methods is at most 1 GiB. A method
that refuses the instance is printed with its one-line reason. Prints, asserts nothing.

Usage::

    python benchmarks/bench_cluster.py [--resources gpus,full] [--methods fifo,list,best]
        [--best-time-limit 120] [--no-check]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent(
    """
    import json, resource, sys, time, tracemalloc
    import instances
    from instances.traces import openb_cluster
    from gpusched.dispatch import solve

    res, method, limit, check = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4] == "1"
    traced = sys.argv[5] == "1"
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if traced:
        tracemalloc.start()
    t = time.perf_counter()
    inst = openb_cluster(res)
    build = time.perf_counter() - t
    out = {"resources": res, "method": method, "base_mib": base, "build_s": build,
           "jobs": inst.num_jobs, "nodes": len(inst.nodes), "gpus": inst.num_gpus,
           "slots": inst.horizon}
    if method == "build":
        out["build_peak_mib"] = tracemalloc.get_traced_memory()[1] / 2**20 if traced else float("nan")
        t = time.perf_counter()
        out["file_mib"] = len(instances.dumps(inst).encode()) / 2**20
        out["dump_s"] = time.perf_counter() - t
        out["shared"] = sum(1 for j in inst.jobs if j.gpu_milli < 1000)
    else:
        if traced:
            tracemalloc.reset_peak()
        t = time.perf_counter()
        try:
            r = solve(inst, method, time_limit=limit)
            out.update(status=str(r.status.value), value=r.value, upper_bound=r.upper_bound)
        except ValueError as e:
            out["refused"] = str(e).splitlines()[0]
            r = None
        out["run_s"] = time.perf_counter() - t
        out["run_peak_mib"] = tracemalloc.get_traced_memory()[1] / 2**20 if traced else float("nan")
        if r is not None and check:
            t = time.perf_counter()
            m = instances.evaluate(inst, r.schedule)
            out["check_s"] = time.perf_counter() - t
            out["checked_value"] = m.value
    if traced:
        tracemalloc.stop()
    out["rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))
    """
)


def run(res: str, method: str, limit: float, check: bool, traced: bool = True) -> dict[str, object]:
    argv = [res, method, str(limit), "1" if check else "0", "1" if traced else "0"]
    p = subprocess.run([sys.executable, "-c", CHILD, *argv],
                       capture_output=True, text=True, cwd=ROOT, env=None, check=False)
    if p.returncode != 0:
        return {"resources": res, "method": method, "error": (p.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(p.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--resources", default="gpus,full")
    ap.add_argument("--methods", default="fifo,list,best")
    ap.add_argument("--best-time-limit", type=float, default=120.0)
    ap.add_argument("--no-check", action="store_true", help="skip instances.evaluate of each schedule")
    ap.add_argument("--no-tracemalloc", action="store_true",
                    help="process peaks without tracemalloc's own bookkeeping (allocation peaks not measured)")
    args = ap.parse_args()
    for res in [r for r in args.resources.split(",") if r]:
        b = run(res, "build", 0.0, False, not args.no_tracemalloc)
        if "error" in b:
            print(f"{res}: build failed: {b['error']}")
            continue
        print(f"{res}: {b['jobs']} jobs ({b['shared']} shared), {b['nodes']} nodes, {b['gpus']} GPUs, "
              f"{b['slots']} slots; build {b['build_s']:.2f} s, allocations' peak "
              f"{b['build_peak_mib']:.1f} MiB, process peak {b['rss_mib']:.0f} MiB (imports "
              f"{b['base_mib']:.0f} MiB); file {b['file_mib']:.2f} MiB written in {b['dump_s']:.2f} s")
        for m in [m for m in args.methods.split(",") if m]:
            limit = args.best_time_limit if m == "best" else 60.0
            r = run(res, m, limit, not args.no_check, not args.no_tracemalloc)
            if "error" in r:
                print(f"  {m}: failed: {r['error']}")
            elif "refused" in r:
                print(f"  {m}: refused: {r['refused']}")
            else:
                check = (f", checked in {r['check_s']:.1f} s (value {r['checked_value']})"
                         if "check_s" in r else "")
                print(f"  {m}: {r['status']}, value {r['value']}, bound {r['upper_bound']}; "
                      f"{r['run_s']:.2f} s, allocations' peak {r['run_peak_mib']:.0f} MiB, "
                      f"process peak {r['rss_mib']:.0f} MiB{check}")


if __name__ == "__main__":
    main()
