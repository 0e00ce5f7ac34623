"""Speed of the version 3 list pass against the version 2 pass; prints a table, asserts nothing.

Side by side in one run, on ``openb-shares`` instances: one pass of the serial
decoder in the priority order under ``curve`` (a fresh state each time, the
placement array filled) on the version 3 instance, and on the same instance
without shares (every job's ``gpu_milli``, ``gpu_models``, ``cpu_milli`` and
``memory_mib`` at their defaults: a version 2 instance, on the version 2 path).
The passes are timed in turn, ``--repeat`` pairs, and the ratio is the median
over the pairs of the version 3 time over the version 2 time (the target: at most
2x), so the load of a shared machine hits both sides of each pair alike.

Then the list pass (and the whole ``list`` and ``fifo`` methods: decoder, checker
and result) on large openb-like version 3 instances, and with ``--long`` on the
largest of them with long runs (each job's duration drawn log-normal, median
about 150 slots, to the horizon's end at most; seed 0), as the real pods' lifetimes are.

Usage::

    python benchmarks/bench_heuristics_v3.py [--repeat 21] [--large 1024:336:8000] [--long]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import heuristics  # noqa: E402
import instances  # noqa: E402
from benchmarks.timing import median_seconds as seconds  # noqa: E402
from benchmarks.timing import paired  # noqa: E402
from heuristics.decoder import job_arrays, serial_starts  # noqa: E402
from heuristics.engine import new_profile  # noqa: E402
from heuristics.placement import new_place  # noqa: E402
from heuristics.rules import order_by  # noqa: E402
from instances import Instance  # noqa: E402


def without_shares(inst: Instance) -> Instance:
    """The same instance with every job's version 3 fields at their defaults (version 2)."""
    jobs = tuple(replace(j, gpu_milli=1000, gpu_models=None, cpu_milli=0, memory_mib=0)
                 for j in inst.jobs)
    return inst.replace(jobs=jobs)


def v3_without_shares(inst: Instance) -> Instance:
    """:func:`without_shares`, but every job lists every node model (binding nothing): the
    version 3 path on the version 2 workload."""
    models = sorted({n.model for n in inst.nodes or () if n.model is not None})
    return without_shares(inst).replace(jobs=tuple(
        replace(j, gpu_models=models) for j in without_shares(inst).jobs))


def one_pass(inst: Instance, placement: str) -> Callable[[], object]:
    """A list pass: a fresh state, the priority order decoded, the placement recorded."""
    order, jobs = order_by(inst, "priority"), job_arrays(inst)

    def run() -> object:
        return serial_starts(new_profile(inst, "curve", placement), order, jobs, None,
                             new_place(inst))

    return run


def fmt(s: float) -> str:
    return f"{s * 1e3:.2f} ms" if s < 1 else f"{s:.2f} s"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=21)
    ap.add_argument("--sizes", default="64:96:0,256:96:0",
                    help="GPUs:slots:jobs of the side-by-side instances (0: the family's count)")
    ap.add_argument("--large", default="1024:336:8000,6212:3360:8000",
                    help="GPUs:slots:jobs of the large instances")
    ap.add_argument("--long", action="store_true", help="also the largest instance with long runs")
    args = ap.parse_args()
    print("| instance | nodes | jobs (shared) | placement | v2 pass | v3 pass | v3 / v2 | "
          "v3 path, no shares | its / v2 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for size in args.sizes.split(","):
        G, T, n = (int(x) for x in size.split(":"))
        kw = {"num_gpus": G, "horizon": T} | ({"num_jobs": n} if n else {})
        v3 = instances.generate("openb-shares", seed=0, **kw)
        v2 = without_shares(v3)
        plain = v3_without_shares(v3)
        assert v3.jobs_use_resources and not v2.jobs_use_resources and plain.jobs_use_resources
        shared = sum(j.gpu_milli < 1000 for j in v3.jobs)
        for placement in ("first-fit", "best-fit", "frag"):
            a, b, r = paired(one_pass(v2, placement), one_pass(v3, placement), args.repeat)
            _, c, q = paired(one_pass(v2, placement), one_pass(plain, placement), args.repeat)
            print(f"| openb-shares G={G} T={T} | {v3.num_nodes} | {v3.num_jobs} ({shared}) | "
                  f"{placement} | {fmt(a)} | {fmt(b)} | {r:.2f}x | {fmt(c)} | {q:.2f}x |")
    print()
    print("| instance | nodes | GPUs | slots | jobs (shared) | placement | list pass | "
          "`list` | `fifo` | run by list |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for size in args.large.split(","):
        G, T, n = (int(x) for x in size.split(":"))
        t0 = time.perf_counter()
        inst = instances.generate("openb-shares", seed=0, num_gpus=G, horizon=T, num_jobs=n)
        built = time.perf_counter() - t0
        shared = sum(j.gpu_milli < 1000 for j in inst.jobs)
        rep = 3 if G * T < 10**6 else 1
        for placement in ("first-fit", "best-fit", "frag"):
            t_pass = seconds(one_pass(inst, placement), rep)
            t0 = time.perf_counter()
            res = heuristics.solve(inst, "list", placement=placement)
            t_list = time.perf_counter() - t0
            if placement == "first-fit":
                t0 = time.perf_counter()
                heuristics.solve(inst, "fifo")
                t_fifo = fmt(time.perf_counter() - t0)
            else:
                t_fifo = ""
            assert res.metrics is not None
            print(f"| openb-shares G={G} T={T} | {inst.num_nodes} | {inst.num_gpus} | {T} | "
                  f"{inst.num_jobs} ({shared}) | {placement} | {fmt(t_pass)} | {fmt(t_list)} | "
                  f"{t_fifo} | {res.metrics.jobs_run} |")
        print(f"(instance built in {built:.1f} s)", file=sys.stderr)
        if args.long:
            rng = np.random.default_rng(0)
            inst = inst.replace(jobs=tuple(
                replace(j, deadline=None, duration=int(min(inst.horizon - j.release,
                                                           max(1, rng.lognormal(5, 1.2)))))
                for j in inst.jobs))
            for placement in ("first-fit", "best-fit", "frag"):
                t_pass = seconds(one_pass(inst, placement), 1)
                t0 = time.perf_counter()
                res = heuristics.solve(inst, "list", placement=placement)
                t_list = time.perf_counter() - t0
                t_fifo = ""
                if placement == "first-fit":
                    t0 = time.perf_counter()
                    heuristics.solve(inst, "fifo")
                    t_fifo = fmt(time.perf_counter() - t0)
                assert res.metrics is not None
                print(f"| long runs (mean {inst.durations.mean():.0f} slots) | {inst.num_nodes} | "
                      f"{inst.num_gpus} | {T} | {inst.num_jobs} ({shared}) | {placement} | "
                      f"{fmt(t_pass)} | {fmt(t_list)} | {t_fifo} | {res.metrics.jobs_run} |")


if __name__ == "__main__":
    main()
