"""Speed of the list decoder on nodes against the flat one; prints them side by side, asserts nothing.

On ``generate("large", seed=0, num_jobs=2000, num_gpus=256)`` flat and on 32
nodes of 8 GPUs (and on the openb node mix of 256 GPUs), one pass of the
serial decoder in the priority order under ``curve``: compiled (numba) and
numpy, for each placement rule, with the ratio to the flat compiled pass (the
target: at most 5x on 32 nodes of 8). Then the whole ``list`` method
(decoder, checker and result) flat and on nodes, and the value and
fragmentation each placement rule reaches.

Usage::

    python benchmarks/bench_nodes.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import heuristics  # noqa: E402
import instances  # noqa: E402
from heuristics._core import job_arrays, serial_starts, serial_starts_numpy  # noqa: E402
from heuristics.placement import PLACEMENTS, new_place, node_profile  # noqa: E402
from heuristics.rules import order_by  # noqa: E402


def _time(fn, repeat: int) -> float:
    """Fastest wall seconds of ``fn()`` over ``repeat`` runs (after one warm-up).

    The minimum, not the median: on a shared machine the load of other
    processes only ever adds time, so the fastest run is the closest to the
    code's own cost.
    """
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=21)
    args = ap.parse_args()
    flat = instances.generate("large", seed=0, num_jobs=2000, num_gpus=256)
    shapes = {"32 x 8": instances.with_nodes(flat, 8),
              "openb mix": instances.with_nodes(flat, instances.openb_node_mix(256, seed=0))}
    order = order_by(flat, "priority")
    jobs = job_arrays(flat)
    cap = flat.batch_capacity("curve")
    t_flat = _time(lambda: serial_starts(cap.copy(), order, jobs), args.repeat)
    print(f"{flat.summary()}; one list pass, priority order, curve; fastest of {args.repeat}")
    print(f"  flat, compiled                      {1e3 * t_flat:8.3f} ms   1.00x")
    for shape, inst in shapes.items():
        for rule in PLACEMENTS:
            prof = node_profile(inst, "curve", rule)

            def run(decode=serial_starts, prof=prof, inst=inst):
                return decode(cap.copy(), order, jobs, nodes=prof.copy(), place=new_place(inst))

            # the flat pass is timed again beside each row: the machine's load drifts
            t_flat = _time(lambda: serial_starts(cap.copy(), order, jobs), args.repeat)
            t_nb = _time(run, args.repeat)
            t_np = _time(lambda run=run: run(serial_starts_numpy), 3)
            print(f"  {shape:9s} {rule:9s} compiled        {1e3 * t_nb:8.3f} ms  {t_nb / t_flat:5.2f}x"
                  f" (flat {1e3 * t_flat:.3f} ms)    numpy {1e3 * t_np:7.1f} ms")
    print("whole list method (decoder + checker + result), and what each rule reaches:")
    t = _time(lambda: heuristics.solve(flat, "list"), 3)
    r = heuristics.solve(flat, "list")
    print(f"  flat                 {1e3 * t:8.1f} ms   value {r.value:10.1f}  jobs {r.metrics.jobs_run}")
    for shape, inst in shapes.items():
        for rule in PLACEMENTS:
            t = _time(lambda inst=inst, rule=rule: heuristics.solve(inst, "list", placement=rule), 3)
            r = heuristics.solve(inst, "list", placement=rule)
            print(f"  {shape:9s} {rule:9s}  {1e3 * t:8.1f} ms   value {r.value:10.1f}  jobs "
                  f"{r.metrics.jobs_run}  fragmentation {r.metrics.fragmentation} GPU-slots")
        r = heuristics.solve(inst, "fifo")
        print(f"  {shape:9s} fifo       value {r.value:10.1f}  fragmentation {r.metrics.fragmentation}")


if __name__ == "__main__":
    main()
