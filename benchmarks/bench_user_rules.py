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

import numpy as np
from numba import njit

from heuristics.packing import place
from instances.packing.openb import openb_packing


def bestfit(view, job):  # type: ignore[no-untyped-def]
    """FGD's BestFit: the least CPU and GPU left over, half weight each."""
    gpu_free = np.where(view.gpu_free_milli > 0, view.gpu_free_milli, 0).sum(axis=1)
    left = ((view.cpu_free_milli - job.cpu_milli) / 128000.0 * 0.5
            + (gpu_free - job.gpus * job.gpu_milli) / 8000.0 * 0.5)
    return np.clip(np.trunc((1.0 - left) * 100.0), 0, 100)


@njit(cache=True)
def bestfit_compiled(view, job):  # type: ignore[no-untyped-def]  # pragma: no cover
    """The same rule, compiled."""
    out = np.empty(view.gpus.shape[0])
    for k in range(out.shape[0]):
        g = 0
        for i in range(view.gpu_free_milli.shape[1]):
            if view.gpu_free_milli[k, i] > 0:
                g += view.gpu_free_milli[k, i]
        s = 0.0
        s += (view.cpu_free_milli[k] - job.cpu_milli) / 128000.0 * 0.5
        s += (g - job.gpus * job.gpu_milli) / 8000.0 * 0.5
        v = int((1.0 - s) * 100.0)
        out[k] = 0 if v < 0 else (100 if v > 100 else v)
    return out


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
