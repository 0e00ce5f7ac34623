"""A user's placement rule against its built-in twin on the full openb benchmark (section 14).

FGD's BestFit written through the view, once in numpy (called once per pod) and once
compiled with numba (inside the compiled loop), each as written (scored on every node)
and declared ``per_node`` (scored on the nodes the pod fits, one untouched node per type:
docs/extending.md, "Scored per node"), beside the built-in ``bestfit``. The placements
must be identical, and the figures are medians of ``--repeat`` runs of ``place`` in one
process after a first run (compiling left out), printed as ratios to the built-in::

    python benchmarks/bench_user_rules.py --seed 0 --repeat 7
    python benchmarks/bench_user_rules.py --seeds 0,1 --repeat 7     # both in one run
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "oracles"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from args import seed_list
from user_bestfit import bestfit, bestfit_compiled

from heuristics.packing import place
from instances.packing.openb import openb_packing


class PerNode:
    """``score`` declared per node: its score of a node reads only that node's row and the job."""

    per_node = True

    def __init__(self, score: Any) -> None:
        self.score = score


RULES: dict[str, Any] = {
    "built-in bestfit": "bestfit",
    "numpy rule": bestfit,
    "numpy rule, per_node": PerNode(bestfit),
    "compiled rule": bestfit_compiled,
    "compiled rule, per_node": PerNode(bestfit_compiled),
}


def run(seed: int, repeat: int) -> None:
    """Print one seed's table: each rule's median ``runtime_s`` and its ratio to the built-in."""
    p = openb_packing(seed)
    runs = {name: place(p, rule) for name, rule in RULES.items()}  # the first runs compile
    same = all(r.placement.assign == runs["built-in bestfit"].placement.assign
               for r in runs.values())
    times: dict[str, list[float]] = {name: [] for name in RULES}
    for _ in range(repeat):  # interleaved: a slower spell of the machine hits every rule
        for name, rule in RULES.items():
            times[name].append(place(p, rule).runtime_s)
    med = {name: float(np.median(t)) for name, t in times.items()}
    base = med["built-in bestfit"]
    print(f"openb seed {seed}: {len(p.pods)} pods, {len(p.nodes)} nodes; "
          f"placements identical: {same}")
    print("| rule | runtime_s (median) | x built-in |\n|---|--:|--:|")
    for name, t in med.items():
        print(f"| {name} | {t:.4f} | {t / base:.2f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0, help="the openb seed (default 0)")
    ap.add_argument("--seeds", default=None,
                    help="several seeds in one run instead: 0-3, 0,5,7 or a count (3: 0-2)")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    for seed in seed_list(args.seeds) if args.seeds else [args.seed]:
        run(seed, args.repeat)


if __name__ == "__main__":
    main()
