"""lns, best and the milp method on model version 3: values, bounds, gaps and seconds.

    python benchmarks/bench_lns_v3.py [--parts small,medium] [--seeds 3] [--limit 30]

``small``: random tiny version 3 instances of tests/oracles/brute_v3.py (7 jobs on 2+2+1 GPUs,
6 slots, 60% shared): ``lns`` and ``best`` (5 s each) and the milp method on one and two
threads (``mip_gap`` 0), each against brute force. ``medium``: ``openb-shares`` at its default
size (16 GPUs, 24 slots, its own number of jobs): ``best``, ``lns`` and the milp method on one
and two threads within ``--limit`` s, with the bound, its name and the gap. ``larger``:
``openb-shares`` on 64 GPUs and 48 slots, ``list``, ``best``, ``lns`` and the milp method (two
threads, twice the limit) against the Lagrangian bound.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "oracles"))


def small(seeds: int) -> None:
    from brute_v3 import brute_force_v3, tiny_v3_instance

    import gpusched

    print("| seed | brute force | lns | best | milp 1 thread | milp 2 threads |")
    print("|---|---|---|---|---|---|")
    for seed in range(seeds):
        inst = tiny_v3_instance(seed, n=7, shape=(2, 2, 1), T=6, shared=0.6)
        t = time.perf_counter()
        opt, _ = brute_force_v3(inst)
        cells = [f"{opt:.2f} ({time.perf_counter() - t:.1f} s)"]
        for method, kw in (("lns", {"time_limit": 5}), ("best", {"time_limit": 5}),
                           ("milp", {"threads": 1}), ("milp", {"threads": 2})):
            if method == "milp":
                kw = {**kw, "time_limit": 30, "mip_gap": 0}
            t = time.perf_counter()
            r = gpusched.solve(inst, method, **kw)
            cells.append(f"{r.value:.2f} ({time.perf_counter() - t:.1f} s)")
        print(f"| {seed} | " + " | ".join(cells) + " |", flush=True)


def medium(seeds: int, limit: float) -> None:
    import gpusched
    import instances

    print("| seed | jobs (shared) | method | value | bound (name) | gap | seconds |")
    print("|---|---|---|---|---|---|---|")
    for seed in range(seeds):
        inst = instances.generate("openb-shares", seed=seed)
        shared = sum(j.gpu_milli < 1000 for j in inst.jobs)
        for method, kw in (("best", {}), ("lns", {}), ("milp", {"threads": 1}),
                           ("milp", {"threads": 2})):
            t = time.perf_counter()
            r = gpusched.solve(inst, method, time_limit=limit, **kw)
            s = time.perf_counter() - t
            name = method + (f" {kw['threads']}t" if "threads" in kw else "")
            ub = ("" if r.upper_bound is None else f"{r.upper_bound:,.2f} ({r.bound_method})")
            gap = "" if r.upper_bound is None else f"{100 * (r.upper_bound - r.value) / r.value:.2f}%"
            print(f"| {seed} | {inst.num_jobs} ({shared}) | {name} | {r.value:,.2f} | {ub} | {gap} "
                  f"| {s:.1f} |", flush=True)


def larger(limit: float) -> None:
    """openb-shares on 64 GPUs and 48 slots: best, lns, the milp method on two threads and the
    Lagrangian bound (10 s), with the LNS's windows counted."""
    import gpusched
    import instances
    import milp

    inst = instances.generate("openb-shares", seed=0, num_gpus=64, horizon=48)
    b = milp.bound(inst, "lagrangian", time_limit=10)
    print(f"openb-shares 64 GPUs ({inst.num_nodes} nodes), 48 slots, {inst.num_jobs} jobs; "
          f"Lagrangian bound {b.value:,.2f}")
    for method, kw in (("list", {}), ("best", {"time_limit": limit}), ("lns", {"time_limit": limit}),
                       ("milp", {"time_limit": 2 * limit, "threads": 2})):
        t = time.perf_counter()
        r = gpusched.solve(inst, method, **kw)
        print(f"| {method} | {r.value:,.2f} | {100 * (b.value - r.value) / r.value:.2f}% | "
              f"{time.perf_counter() - t:.1f} | {r.message[:120]} |", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--parts", default="small,medium")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--limit", type=float, default=30.0)
    a = p.parse_args()
    for part in a.parts.split(","):
        if part == "small":
            small(a.seeds)
        elif part == "medium":
            medium(a.seeds, a.limit)
        elif part == "larger":
            larger(a.limit)
        else:
            raise SystemExit(f"unknown part {part!r}")


if __name__ == "__main__":
    main()
