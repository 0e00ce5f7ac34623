"""The count state against the shares state on the same version 2 instances (the one capacity engine).

Both states implement :class:`heuristics.engine.CapacityState`; a version 2 instance
runs on the count state (:class:`heuristics.profile.Profile`). The same instance with
one CPU milli asked per job (nodes without a CPU limit) is a version 3 instance and
runs on the shares state (:class:`heuristics.shares.SharesProfile`). The two are not
one rule at two speeds: version 2 places by counts per slot (GPU indices are given
afterwards), version 3 fixes a job's GPU indices when it is placed (the lowest
wholly free over its run), so a node with enough free GPUs in every slot but not
the same ones is a fit for the first and not for the second, and the schedules may
part (the ``identical`` column). Per instance and method: both times (medians of
``--repeat`` runs after a first, in one process) and the ratio shares/counts::

    python benchmarks/bench_engine.py --repeat 7
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the benchmarks package

import instances
from benchmarks.timing import median_seconds
from heuristics.backfill import conservative_starts, easy_starts
from heuristics.fifo import fifo_starts
from heuristics.listsched import list_starts, parallel_starts
from heuristics.placement import new_place
from heuristics.rules import order_by
from instances import Instance

CASES = (("medium", 1, 8), ("medium", 1, "openb"), ("large", 0, 8), ("large", 0, "openb"))


def as_shares(inst: Instance) -> Instance:
    """``inst`` with one CPU milli asked per job: model version 3, the same schedules."""
    return inst.replace(jobs=tuple(dataclasses.replace(j, cpu_milli=1) for j in inst.jobs))


def methods(inst: Instance) -> dict[str, Callable[[Instance, np.ndarray], np.ndarray]]:
    """The engine's drivers, each ``(instance, place) -> start``."""
    order = order_by(inst, "priority")
    return {
        "fifo": lambda i, pl: fifo_starts(i, "peak", place=pl),
        "easy": lambda i, pl: easy_starts(i, "peak", place=pl),
        "conservative": lambda i, pl: conservative_starts(i, "peak", place=pl),
        "list": lambda i, pl: list_starts(i, order, "curve", place=pl),
        "parallel": lambda i, pl: parallel_starts(i, order, "curve", place=pl),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    print("| instance | method | counts ms | shares ms | shares / counts | identical |")
    print("|---|---|--:|--:|--:|---|")
    ratios = []
    for family, seed, shape in CASES:
        inst = instances.generate(family, seed=seed, node_gpus=shape)
        v3 = as_shares(inst)
        assert not inst.jobs_use_resources and v3.jobs_use_resources
        for name, run in methods(inst).items():
            out = {}
            for label, i in (("counts", inst), ("shares", v3)):
                place = new_place(i)
                start = run(i, place)  # (the first run compiles or loads the kernels)
                sec = median_seconds(lambda i=i, run=run: run(i, new_place(i)), args.repeat)
                out[label] = (sec, start, place[:, : i.max_span])
            same = all(np.array_equal(a, b) for a, b in zip(out["counts"][1:], out["shares"][1:]))
            ratio = out["shares"][0] / out["counts"][0]
            ratios.append(ratio)
            print(f"| {inst.name} | {name} | {1e3 * out['counts'][0]:.3f} | "
                  f"{1e3 * out['shares'][0]:.3f} | {ratio:.2f} | {'yes' if same else 'NO'} |",
                  flush=True)
    print(f"\nshares / counts: median {np.median(ratios):.2f}, min {min(ratios):.2f}, "
          f"max {max(ratios):.2f} over {len(ratios)} runs")


if __name__ == "__main__":
    main()
