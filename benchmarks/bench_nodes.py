"""Speed of the list decoder on nodes against the flat one; prints them side by side, asserts nothing.

On ``generate("large", seed=0, num_jobs=2000, num_gpus=256)`` flat and on 32
nodes of 8 GPUs (and on the openb node mix of 256 GPUs), one pass of the
serial decoder in the priority order under ``curve``, compiled (numba), for
each placement rule: the flat pass and the node pass are timed in turn,
``--repeat`` pairs in one run, and the ratio (the target: at most 1.5x on 32
nodes of 8) is the median over the pairs of node time over flat time, so the
load of a shared machine, which drifts, hits both sides of each pair alike.
Then the numpy decoder on nodes (whether it gives the same schedule), the
whole ``list`` method (decoder, checker and result) flat and on nodes, and
the value and fragmentation each placement rule reaches.

Usage::

    python benchmarks/bench_nodes.py [--repeat 201]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import heuristics  # noqa: E402
import instances  # noqa: E402
from benchmarks.timing import median_seconds as _time  # noqa: E402
from benchmarks.timing import paired  # noqa: E402
from heuristics.decoder import job_arrays, serial_starts, serial_starts_numpy  # noqa: E402
from heuristics.engine import new_profile  # noqa: E402
from heuristics.placement import PLACEMENTS, new_place  # noqa: E402
from heuristics.rules import order_by  # noqa: E402


def shapes(flat: instances.Instance) -> dict[str, instances.Instance]:
    """The benchmark's node shapes of ``flat`` (256 GPUs): 32 nodes of 8 and the openb mix."""
    return {"32 x 8": instances.with_nodes(flat, 8),
            "openb mix": instances.with_nodes(flat, instances.openb_node_mix(flat.num_gpus, seed=0))}


def node_vs_flat(repeat: int, numpy_check: bool = False) -> None:
    """Print one compiled list pass on nodes beside the flat pass, for every shape and rule.

    With ``numpy_check`` the numpy decoder on nodes is timed too (three runs)
    and its schedule compared with the compiled one's.
    """
    flat = instances.generate("large", seed=0, num_jobs=2000, num_gpus=256)
    order = order_by(flat, "priority")
    jobs = job_arrays(flat)
    empty = new_profile(flat, "curve")
    print(f"{flat.summary()}; one list pass, priority order, curve, compiled; "
          f"flat and node passes in turn, median of {repeat} pairs")
    print(f"  {'shape':9s} {'rule':9s} {'flat ms':>8s} {'nodes ms':>9s} {'ratio':>6s}  target <= 1.5x")
    for shape, inst in shapes(flat).items():
        for rule in PLACEMENTS:
            prof = new_profile(inst, "curve", rule)

            def run(decode=serial_starts, prof=prof, inst=inst):
                place = new_place(inst)
                start = decode(prof.copy(), order, jobs, None, place)
                return start, place

            t_flat, t_nodes, ratio = paired(lambda: serial_starts(empty.copy(), order, jobs), run, repeat)
            line = (f"  {shape:9s} {rule:9s} {1e3 * t_flat:8.3f} {1e3 * t_nodes:9.3f} {ratio:5.2f}x"
                    f"  {'met' if ratio <= 1.5 else 'MISSED'}")
            if numpy_check:
                t_np = _time(lambda run=run: run(serial_starts_numpy), 3)
                same = all(np.array_equal(x, y) for x, y in zip(run(), run(serial_starts_numpy)))
                line += f"    numpy {1e3 * t_np:7.1f} ms, same schedule: {same}"
            print(line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=201, help="timed pairs per figure (median)")
    args = ap.parse_args()
    node_vs_flat(args.repeat, numpy_check=True)
    flat = instances.generate("large", seed=0, num_jobs=2000, num_gpus=256)
    print("whole list method (decoder + checker + result), median of 5, and what each rule reaches:")
    t = _time(lambda: heuristics.solve(flat, "list"), 5)
    r = heuristics.solve(flat, "list")
    print(f"  flat                 {1e3 * t:8.1f} ms   value {r.value:10.1f}  jobs {r.metrics.jobs_run}")
    for shape, inst in shapes(flat).items():
        for rule in PLACEMENTS:
            t = _time(lambda inst=inst, rule=rule: heuristics.solve(inst, "list", placement=rule), 5)
            r = heuristics.solve(inst, "list", placement=rule)
            print(f"  {shape:9s} {rule:9s}  {1e3 * t:8.1f} ms   value {r.value:10.1f}  jobs "
                  f"{r.metrics.jobs_run}  fragmentation {r.metrics.fragmentation} GPU-slots")
        r = heuristics.solve(inst, "fifo")
        print(f"  {shape:9s} fifo       value {r.value:10.1f}  fragmentation {r.metrics.fragmentation}")


if __name__ == "__main__":
    main()
