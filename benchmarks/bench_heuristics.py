"""Speed and quality figures of the heuristics; prints them, asserts nothing.

Speed (default): on ``generate("large", seed=0, num_jobs=2000, num_gpus=256)``,
one pass of ``list`` (the serial decoder alone: compiled with numba when it is
installed, and the numpy decoder; then the whole method with the checker)
against the plain per-slot reference decoder of ``tests/oracles/reference.py`` in the
same run, and FIFO and the backfilling methods; peak memory by
``tracemalloc``. The one-time cost of the compiled decoder's first call (a
compilation into an empty cache, and a load from the cache) is timed apart,
each in a fresh interpreter, and left out of the medians.

Nodes (in the speed run, or alone with ``--nodes``): one compiled list pass
on 32 nodes of 8 GPUs and on the openb node mix of the same instance beside
the flat pass, every placement rule, timed in turn (``--pairs`` pairs), with
the median ratio (the target: at most 5x on 32 nodes of 8);
``benchmarks/bench_nodes.py`` has the same table with the numpy decoder and
the whole method.

Quality (``--quality``): the gap ``(UB - V) / UB`` of every method on the
``small`` and ``medium`` families against the MILP's upper bound
(``matheuristics.solve_milp``, what ``gpusched.solve(inst, "milp")`` runs).

Usage::

    python benchmarks/bench_heuristics.py [--repeat 7] [--pairs 201]
    python benchmarks/bench_heuristics.py --nodes [--pairs 201]
    python benchmarks/bench_heuristics.py --quality [--seeds 5] [--milp-time 60]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "oracles"))
sys.path.insert(0, str(ROOT))

from reference import list_starts_ref  # noqa: E402

import heuristics  # noqa: E402
import instances  # noqa: E402
from benchmarks.timing import median_seconds as _time  # noqa: E402
from heuristics._core import _compiled_decoder, job_arrays, serial_starts, serial_starts_numpy  # noqa: E402
from heuristics.rules import order_by  # noqa: E402
from matheuristics import solve_milp  # noqa: E402


def decoder_vs_reference(inst: instances.Instance, repeat: int) -> None:
    """One pass of the serial decoder (priority rule, curve) against the per-slot reference."""
    order = order_by(inst, "priority")
    jobs = job_arrays(inst)
    cap = inst.batch_capacity("curve")
    ref = list_starts_ref(inst, order, "curve")
    t_ref = _time(lambda: list_starts_ref(inst, order, "curve"), repeat)
    t_np = _time(lambda: serial_starts_numpy(cap.copy(), order, jobs), repeat)
    same_np = np.array_equal(serial_starts_numpy(cap.copy(), order, jobs), ref)
    print(f"  list decoder, per-slot ref  {1e3 * t_ref:9.3f} ms")
    print(f"  list decoder, numpy         {1e3 * t_np:9.3f} ms   speed-up {t_ref / t_np:6.1f}x, "
          f"identical schedules: {same_np}")
    if _compiled_decoder() is None:
        print("  list decoder, numba         not installed (serial_starts runs the numpy decoder)")
        return
    t_nb = _time(lambda: serial_starts(cap.copy(), order, jobs), repeat)
    same_nb = np.array_equal(serial_starts(cap.copy(), order, jobs), ref)
    print(f"  list decoder, numba         {1e3 * t_nb:9.3f} ms   speed-up {t_ref / t_nb:6.1f}x, "
          f"identical schedules: {same_nb}")


_FIRST_CALL = """
import time
import numpy as np
from heuristics._core import _compiled_decoder
t0 = time.perf_counter()
kernel = _compiled_decoder()
z = np.zeros(1, dtype=np.int64)
if kernel is not None:
    kernel(np.ones(4, dtype=np.int64), z, z + 1, z + 1, z, z + 4, z - 1)
print(kernel is not None, time.perf_counter() - t0)
"""


def first_call() -> None:
    """Seconds of importing numba and the compiled decoder's first call, in fresh interpreters."""
    def run(env: dict[str, str]) -> tuple[bool, float]:
        out = subprocess.run([sys.executable, "-c", _FIRST_CALL], env=env, cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.split()
        return out[0] == "True", float(out[1])

    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        ok, cold = run(env)
        if not ok:
            print("first call of the compiled decoder: numba not installed")
            return
        _, warm = run(env)
    print(f"first call of the compiled decoder (import + JIT, not in the medians): "
          f"empty cache {cold:.2f} s, from the cache {warm:.2f} s")


def speed(repeat: int, pairs: int = 201) -> None:
    inst = instances.generate("large", seed=0, num_jobs=2000, num_gpus=256)
    print(inst.summary())
    first_call()
    decoder_vs_reference(inst, repeat)
    print(f"{'method':26s} {'median ms':>10s} {'value':>12s} {'util':>6s} {'run':>5s}")
    for m in ("list", "list-peak", "fifo", "fifo-curve", "easy-peak", "easy-curve",
              "conservative-peak", "conservative-curve", "parallel"):
        t = _time(lambda m=m: heuristics.solve(inst, m), repeat)
        r = heuristics.solve(inst, m)
        assert r.metrics is not None
        print(f"{m:26s} {1e3 * t:10.2f} {r.value:12.1f} {r.metrics.utilization:6.3f} "
              f"{r.metrics.jobs_run:5d}")
    tracemalloc.start()
    heuristics.solve(inst, "list")
    _, peak_list = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    heuristics.solve(inst, "easy-curve")
    _, peak_easy = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    heuristics.solve(inst, "local-search", iterations=50)
    _, peak_ls = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"peak traced memory: list {peak_list / 2**20:.2f} MiB, easy-curve "
          f"{peak_easy / 2**20:.2f} MiB, local-search {peak_ls / 2**20:.2f} MiB")
    print(f"peak resident memory of this process: {_max_rss_mib():.0f} MiB")
    for horizon in (672, 2016):
        longer = instances.generate("large", seed=0, num_jobs=2000, num_gpus=256, horizon=horizon)
        print(longer.summary())
        decoder_vs_reference(longer, repeat)
    nodes_vs_flat(pairs)


def nodes_vs_flat(pairs: int) -> None:
    """The list pass on nodes beside the flat one (``bench_nodes.node_vs_flat``), side by side."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_nodes import node_vs_flat

    node_vs_flat(pairs)


def _max_rss_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def upper_bound(inst: instances.Instance, time_limit: float) -> tuple[float, str]:
    """The MILP's upper bound, as ``gpusched.solve(inst, "milp")`` computes it."""
    res = solve_milp(inst, time_limit=time_limit)
    assert res.upper_bound is not None
    return float(res.upper_bound), f"milp:{res.status}"


def quality(seeds: int, milp_time: float, methods: list[str]) -> None:
    rows = []
    for fam in ("small", "medium"):
        for seed in range(seeds):
            inst = instances.generate(fam, seed=seed)
            ub, how = upper_bound(inst, milp_time)
            for m in methods:
                r = heuristics.solve(inst, m)
                g = instances.gap(r.value, ub)
                rows.append((fam, seed, m, g, r.runtime_s))
            best_gap = [g for f, s, m, g, _ in rows if f == fam and s == seed and m == "best"]
            print(f"{fam} seed {seed}: {inst.summary()}; UB {ub:.1f} ({how}); "
                  f"best gap {100 * best_gap[0]:.2f}%" if best_gap else "", flush=True)
    print()
    print(f"{'method':20s} {'family':8s} {'mean gap %':>10s} {'max gap %':>10s} {'mean s':>8s}")
    for m in methods:
        for fam in ("small", "medium"):
            gs = [g for f, _, mm, g, _ in rows if f == fam and mm == m]
            ts = [t for f, _, mm, _, t in rows if f == fam and mm == m]
            print(f"{m:20s} {fam:8s} {100 * statistics.mean(gs):10.2f} {100 * max(gs):10.2f} "
                  f"{statistics.mean(ts):8.3f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quality", action="store_true", help="gap table against the MILP bound")
    ap.add_argument("--repeat", type=int, default=7, help="timed runs per figure (median)")
    ap.add_argument("--nodes", action="store_true", help="only the node pass beside the flat one")
    ap.add_argument("--pairs", type=int, default=201,
                    help="flat and node passes timed in turn (median ratio; nodes)")
    ap.add_argument("--seeds", type=int, default=5, help="seeds per family (quality)")
    ap.add_argument("--milp-time", type=float, default=60.0, help="seconds per bound (quality)")
    ap.add_argument("--methods", default=",".join(heuristics.METHODS),
                    help="comma-separated methods (quality)")
    args = ap.parse_args(argv)
    if args.quality:
        quality(args.seeds, args.milp_time, args.methods.split(","))
    elif args.nodes:
        nodes_vs_flat(args.pairs)
    else:
        speed(args.repeat, args.pairs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
