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
``--repeat`` runs after a first, in one process) and the ratio shares/counts.

Second table: the packing loop (:func:`heuristics.packing.place`) is the shares
state specialised to one slot. On FGD's openb benchmark (its GPU pods: a job asks at
least one GPU) as a one-slot version 3 instance, the ``list`` decoder in pod order
under the same policy must place every pod on the same node; the loop is kept while
it is faster (its own ``runtime_s`` against the decoder's, medians)::

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
from benchmarks.args import seed_list
from benchmarks.timing import median_seconds
from heuristics.backfill import conservative_starts, easy_starts
from heuristics.fifo import fifo_starts
from heuristics.listsched import list_starts, parallel_starts
from heuristics.packing import place as pack
from heuristics.placement import new_place
from heuristics.rules import order_by
from instances import Instance, Job, Node
from instances.packing import Packing
from instances.packing.openb import openb_packing

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


def one_slot(packing: Packing) -> tuple[Packing, Instance]:
    """The packing's GPU pods and nodes, and the same as a version 3 instance of one slot."""
    pods = tuple(q for q in packing.pods if q.gpus > 0)
    nodes = tuple(n for n in packing.nodes if n.gpus > 0)
    jobs = tuple(Job(q.name, q.gpus, 1, gpu_milli=q.gpu_milli, gpu_models=q.gpu_models or None,
                     cpu_milli=q.cpu_milli, memory_mib=q.memory_mib) for q in pods)
    inst = Instance(packing.name + "-one-slot", sum(n.gpus for n in nodes), 1, (), jobs,
                    nodes=tuple(Node(n.name, n.gpus, n.model, n.cpu_milli, n.memory_mib)
                                for n in nodes))
    return dataclasses.replace(packing, pods=pods, nodes=nodes), inst


def packing_table(seeds: list[int], repeat: int) -> None:
    """The packing loop against the list decoder on one slot (module notes)."""
    print("\n| openb seed | policy | packing loop s | decoder s | decoder / loop | same node |")
    print("|---|---|--:|--:|--:|---|")
    for seed in seeds:
        packing, inst = one_slot(openb_packing(seed))
        order = np.arange(inst.num_jobs)
        names = [n.name for n in inst.nodes or ()]
        for policy in ("bestfit", "fgd"):
            run = pack(packing, policy)  # (the first runs compile or load the kernels)
            loop = float(np.median([pack(packing, policy).runtime_s for _ in range(repeat)]))
            place = new_place(inst)
            start = list_starts(inst, order, "curve", placement=policy, place=place)
            sec = median_seconds(lambda i=inst, o=order, rule=policy: list_starts(
                i, o, "curve", placement=rule, place=new_place(i)), repeat)
            same = sum(1 for j, q in enumerate(packing.pods)
                       if (start[j] >= 0) == (q.name in run.placement.assign)
                       and (start[j] < 0 or names[place[j, 0]] == run.placement.assign[q.name][0]))
            print(f"| {seed} | {policy} | {loop:.4f} | {sec:.4f} | {sec / loop:.1f} | "
                  f"{same} of {len(packing.pods)} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--seeds", default="0,1", help="openb seeds of the packing table: 0-9 or 0,1")
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
    packing_table(seed_list(args.seeds), args.repeat)


if __name__ == "__main__":
    main()
