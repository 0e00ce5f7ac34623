"""Figures of the exact model on model version 3 (shares, models, CPU, memory); prints them, asserts nothing.

Parts (``--parts``, comma separated; default ``small,price``):

``small``
    Small version 3 instances, at most 12 jobs on at most 4 nodes, shares on:
    the ``openb-shares`` family (real openb pod shapes and nodes) on 4 GPUs
    (nodes 1+2+1 or 2+1+1), 6 GPUs (4+2) and 12 GPUs (4 nodes, one of 8;
    four slots, inference at 60% of the pool, for contention), and the
    drawn instances of ``tests/oracles/brute_v3.py`` (models A/B, CPU and
    memory on some nodes) on 2+2+1+1 and 2+2+2+2. Per instance: the MILP
    (``milp.solve``, ``mip_gap`` 0, limit ``--small-limit`` s: its status
    and seconds), CP-SAT (the same call with ``backend="cpsat"``), brute
    force (``brute_force_v3``) and whether the three values are equal; the
    target is the MILP optimal in at most 10 s and equal to brute force.
``price``
    The ``openb-shares`` family: the chain of optima flat >= nodes >= fluid >=
    exact (``milp.relaxation`` for the first three, ``milp.solve`` for the
    last, ``--price-limit`` s each), so the price of topology on the fluid
    amounts (flat - nodes), what models, CPU and memory cost (nodes - fluid)
    and the price of sharing (fluid - exact; ``milp.price_of_sharing``), for
    ``--price-seeds`` seeds at the sizes of ``--price-sizes`` (GPUs:jobs:slots).
    Where a solve is not proven, the bracket uses the chain: a point of a
    finer model is one of each coarser model, a bound of a coarser model
    bounds each finer one.

Usage::

    python benchmarks/bench_milp_v3.py --parts small
    python benchmarks/bench_milp_v3.py --parts price --price-seeds 4 --price-limit 30
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "oracles"))

from brute_v3 import brute_force_v3, tiny_v3_instance  # noqa: E402

import instances  # noqa: E402
import milp  # noqa: E402
from instances import Instance  # noqa: E402


def small_instances(seeds: int) -> list[tuple[str, Instance]]:
    """The instances of ``small``: (label, instance)."""
    out = []
    for seed in range(seeds):
        for G, T, infer in ((4, 6, 0.3), (6, 6, 0.3), (12, 4, 0.6)):
            inst = instances.generate("openb-shares", seed=seed, num_gpus=G, num_jobs=12,
                                      horizon=T, inference_share=infer)
            out.append((f"openb-shares G={G} T={T} s{seed}", inst))
        for shape in ((2, 2, 1, 1), (2, 2, 2, 2)):
            inst = tiny_v3_instance(seed, n=12, shape=shape, T=6, shared=0.5)
            out.append((f"drawn {'+'.join(map(str, shape))} T=6 s{seed}", inst))
    return out


def part_small(args: argparse.Namespace) -> None:
    rows, times, proven, equal = [], [], 0, 0
    cases = small_instances(args.seeds)
    for label, inst in cases:
        shared = sum(j.gpu_milli < 1000 for j in inst.jobs)
        t = time.perf_counter()
        res = milp.solve(inst, time_limit=args.small_limit, mip_gap=0)
        dt = time.perf_counter() - t
        instances.evaluate(inst, res.schedule)
        t = time.perf_counter()
        cp = milp.solve(inst, time_limit=args.small_limit, mip_gap=0, backend="cpsat")
        dc = time.perf_counter() - t
        t = time.perf_counter()
        best, _ = brute_force_v3(inst)
        db = time.perf_counter() - t
        ok = res.status == "optimal"
        same = math.isclose(res.value, best, rel_tol=1e-9, abs_tol=1e-9) and math.isclose(
            cp.value, best, rel_tol=1e-9, abs_tol=1e-9)
        proven += ok
        equal += same
        times.append(dt)
        nodes = "+".join(str(n.gpus) for n in inst.nodes or ())
        rows.append(f"| {label} | {nodes} | {inst.num_jobs} ({shared} shared) | "
                    f"{res.status} {dt:.2f} s | {cp.status} {dc:.2f} s | {best:,.2f} ({db:.1f} s) | "
                    f"{res.value:,.2f} | {'yes' if same else 'NO'} |")
        print(rows[-1], flush=True)
    print("\n| instance | nodes | jobs | MILP | CP-SAT | brute force | MILP value | equal |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    times.sort()
    print(f"\n[small] MILP optimal {proven}/{len(cases)}, equal to brute force and CP-SAT "
          f"{equal}/{len(cases)}; seconds median {times[len(times) // 2]:.2f}, max {times[-1]:.2f}")


def _bracket(hi: tuple[float, float, bool], lo: tuple[float, float, bool]) -> str:
    """``hi - lo`` of two optima given as ``(value, upper bound, proven)``, or its bracket."""
    if hi[2] and lo[2]:
        return f"{max(hi[0], lo[0]) - lo[0]:,.2f}"
    low = max(0.0, max(hi[0], lo[0]) - lo[1])
    return f"[{low:,.2f}, {max(low, hi[1] - lo[0]):,.2f}]"


def _ends(r: milp.Relaxed | instances.Result) -> tuple[float, float, bool]:
    upper = r.upper_bound if r.upper_bound is not None else math.inf
    return float(r.value), float(upper), r.status == "optimal"


def _chain(ends: list[tuple[float, float, bool]]) -> list[tuple[float, float, bool]]:
    """Optima of models each a relaxation of the next: a point of a finer model is one of every
    coarser model, and a bound of a coarser model bounds every finer one."""
    values = [max(e[0] for e in ends[i:]) for i in range(len(ends))]
    uppers = [min(e[1] for e in ends[: i + 1]) for i in range(len(ends))]
    return [(v, u, e[2] or u - v <= 1e-9 * max(1.0, abs(u))) for v, u, e in zip(values, uppers, ends)]


def _cell(e: tuple[float, float, bool]) -> str:
    return f"{e[0]:,.2f}" if e[2] else f"{e[0]:,.2f} (bound {e[1]:,.2f})"


def part_price(args: argparse.Namespace) -> None:
    print("| instance | flat | nodes | fluid | exact | topology | models, CPU, memory | sharing |")
    print("|---|---|---|---|---|---|---|---|")
    for size in args.price_sizes.split(","):
        G, n, T = (int(x) for x in size.split(":"))
        for seed in range(args.price_seeds):
            extra = {"num_jobs": n} if n > 0 else {}
            inst = instances.generate("openb-shares", seed=seed, num_gpus=G, horizon=T, **extra)
            flat, nodes = (_ends(milp.relaxation(inst, k, time_limit=args.price_limit))
                           for k in ("flat", "nodes"))
            price = milp.price_of_sharing(inst, time_limit=2 * args.price_limit)
            instances.evaluate(inst, price.optimum.schedule)
            fluid, exact = _ends(price.fluid), _ends(price.optimum)
            flat, nodes, fluid, exact = _chain([flat, nodes, fluid, exact])
            shape = "+".join(str(k.gpus) for k in inst.nodes or ())
            print(f"| G={G} ({shape}) {inst.num_jobs} jobs T={T} s{seed} | {_cell(flat)} | "
                  f"{_cell(nodes)} | {_cell(fluid)} | {_cell(exact)} | {_bracket(flat, nodes)} | "
                  f"{_bracket(nodes, fluid)} | {_bracket(fluid, exact)} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default="small,price")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--small-limit", type=float, default=10.0)
    ap.add_argument("--price-seeds", type=int, default=3)
    ap.add_argument("--price-limit", type=float, default=30.0)
    ap.add_argument("--price-sizes", default="8:24:12,16:0:24",
                    help="GPUs:jobs:slots, comma separated (jobs 0: the family's default)")
    args = ap.parse_args()
    for part in args.parts.split(","):
        {"small": part_small, "price": part_price}[part](args)


if __name__ == "__main__":
    main()
