"""A user's placement rule against its built-in twin on the full openb benchmark (section 14).

FGD's BestFit written through the view, once in numpy (called once per pod) and once
compiled with numba (inside the compiled loop), beside the built-in ``bestfit``: the
placements must be identical, and the figures are medians of ``--repeat`` runs of
``place`` in one process after a first run (compiling left out), printed as ratios to
the built-in::

    python benchmarks/bench_user_rules.py --seed 0 --repeat 7
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "oracles"))

from user_bestfit import bestfit, bestfit_compiled

from heuristics.packing import place
from instances.packing.openb import openb_packing


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    p = openb_packing(args.seed)
    rules = {"built-in bestfit": "bestfit", "numpy rule": bestfit, "compiled rule": bestfit_compiled}
    runs = {name: place(p, rule) for name, rule in rules.items()}  # the first runs compile
    same = all(r.placement.assign == runs["built-in bestfit"].placement.assign
               for r in runs.values())
    med = {name: float(np.median([place(p, rule).runtime_s for _ in range(args.repeat)]))
           for name, rule in rules.items()}
    base = med["built-in bestfit"]
    print(f"openb seed {args.seed}: {len(p.pods)} pods, {len(p.nodes)} nodes; "
          f"placements identical: {same}")
    print("| rule | runtime_s (median) | x built-in |\n|---|--:|--:|")
    for name, t in med.items():
        print(f"| {name} | {t:.4f} | {t / base:.2f} |")


if __name__ == "__main__":
    main()
