"""Figures of the exact node model (``milp.build`` and ``milp.solve`` on nodes); prints them, asserts nothing.

Instances with nodes are built here from the flat families (:func:`with_nodes`:
the same services and jobs, the pool cut into nodes), since the families
do not take a node shape on this branch yet. ``eight`` cuts ``G`` GPUs into
8-GPU nodes and one node of the remainder (15 -> 8+7); ``mixed`` uses
:data:`MIXED` (8 -> 4+2+2, 12 -> 4+4+2+2, 16 -> 8+4+2+2, 24 -> 8+8+4+4).
On an 8-GPU pool one 8-GPU node *is* the flat pool: the node problem is the
flat one and the price of topology is 0 by construction.

Parts (``--parts``, comma separated; default ``small,symmetry,medium,price``;
``best`` on request):

``small``
    ``small`` instances of 8, 16 and 24 GPUs with 12-20 jobs, on ``eight``
    and ``mixed`` nodes: status and seconds (``mip_gap`` 0, ``--small-limit``
    s) under each symmetry handling side by side: ``fix`` (column fixing,
    the default), ``rows`` (fixing and order rows), ``none`` (HiGHS's own
    symmetry detection alone) and ``bare`` (``none`` with HiGHS's detection
    off); each with the flat solve first (``flat_share`` 0.1).
``symmetry``
    The symmetry handlings of ``small`` on instances with many identical
    nodes, where they can differ: the 8-GPU scenarios on 2+2+2+2 and 4+4,
    ``hc-mixed`` on 4+4+4, ``hc-multi-service`` on 4+4+4+4 (``--seeds``
    seeds, ``--sym-limit`` s, no flat solve: the node model alone, warm
    started by the flat warm-start heuristic's schedule placed on the nodes).
``medium``
    ``medium`` seeds on ``eight`` nodes after ``--time-limit`` s: value, the
    node model's own bound, the flat bound and the reported (smallest) bound.
``best``
    ``medium`` seeds on ``eight`` nodes: the ``best`` heuristic
    (``--best-limit`` s, every placement rule) beside ``list`` with first-fit
    and the node bound of ``gpusched.solve(inst, "milp", time_limit=--time-limit)``
    (the smallest of the node model's dual bound, the flat bound and the
    Lagrangian bound), the MILP's own value, and ``best``'s gap to that bound;
    the mean and worst gap.
``price``
    The price of topology (``milp.price_of_topology``, ``--price-limit`` s
    each) on ``seed-training-heavy`` and the five ``hc-*`` scenarios, on
    ``eight`` and ``mixed`` nodes, ``--price-seeds`` seeds: how many are
    exact, the mean and 95% interval of the bracket's ends, also as a
    share of the flat optimum.

Usage::

    python benchmarks/bench_milp_nodes.py --parts small
    python benchmarks/bench_milp_nodes.py --parts medium --seeds 3 --time-limit 60
    python benchmarks/bench_milp_nodes.py --parts best --seeds 12 --time-limit 60
    python benchmarks/bench_milp_nodes.py --parts price --price-seeds 10 --price-limit 20
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np

import instances
import milp
from instances import Instance, Node

MIXED: dict[int, tuple[int, ...]] = {
    8: (4, 2, 2), 12: (4, 4, 2, 2), 16: (8, 4, 2, 2), 24: (8, 8, 4, 4),
}
"""The mixed node shape of each pool size."""

SCENARIOS = ("seed-training-heavy", "hc-training-heavy", "hc-mixed", "hc-multi-service",
             "hc-bursty", "hc-deadlines")


def shape_of(G: int, kind: str) -> tuple[int, ...]:
    """Node sizes of a pool of ``G`` GPUs: ``eight`` (8s and the remainder) or ``mixed``."""
    if kind == "eight":
        return (8,) * (G // 8) + ((G % 8,) if G % 8 else ())
    if kind == "mixed":
        if G not in MIXED:
            raise ValueError(f"shape: no mixed shape for {G} GPUs")
        return MIXED[G]
    raise ValueError(f"shape: must be 'eight' or 'mixed', got {kind!r}")


def with_nodes(inst: Instance, shape: tuple[int, ...]) -> Instance:
    """The instance with its pool cut into nodes of ``shape`` GPUs (names ``node-0``, ...)."""
    nodes = tuple(Node(f"node-{k}", m) for k, m in enumerate(shape))
    return inst.replace(nodes=nodes, name=f"{inst.name}-n{'+'.join(map(str, shape))}")


def _gap(res: instances.Result) -> float:
    return 100 * (res.gap or 0.0)


VARIANTS: dict[str, dict[str, object]] = {
    "fix": {"symmetry": "fix"},
    "rows": {"symmetry": "rows"},
    "none": {"symmetry": "none"},
    "bare": {"symmetry": "none", "mip_detect_symmetry": False},
}


def part_small(args: argparse.Namespace) -> None:
    times: dict[str, list[float]] = {v: [] for v in VARIANTS}
    proven = dict.fromkeys(VARIANTS, 0)
    count = 0
    for G in (8, 16, 24):
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            n = 12 + (4 * seed + G) % 9  # 12-20 jobs
            flat = instances.generate("small", seed=seed, num_gpus=G, num_jobs=n)
            for kind in ("eight", "mixed"):
                try:
                    inst = with_nodes(flat, shape_of(G, kind))
                except ValueError as e:
                    print(f"[small] {flat.name} {kind}: skipped ({e})")
                    continue
                count += 1
                cells = []
                for name, opts in VARIANTS.items():
                    t = time.perf_counter()
                    res = milp.solve(inst, time_limit=args.small_limit, mip_gap=0, **opts)
                    dt = time.perf_counter() - t
                    instances.evaluate(inst, res.schedule)
                    ok = res.status == "optimal"
                    proven[name] += ok
                    times[name].append(dt if ok else math.inf)
                    cells.append(f"{name} {'opt' if ok else f'gap {_gap(res):.2f}%'} {dt:5.2f} s")
                print(f"[small] {inst.summary()}: value {res.value:.2f}; " + "; ".join(cells))
    for name in VARIANTS:
        arr = np.array(times[name])
        fin = arr[np.isfinite(arr)]
        print(f"[small] {name}: proven {proven[name]}/{count}, median "
              f"{np.median(arr):.2f} s, max of proven {fin.max() if fin.size else math.nan:.2f} s, "
              f"mean of proven {fin.mean() if fin.size else math.nan:.2f} s")


SYMMETRY_CASES: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("hc-training-heavy", (2, 2, 2, 2)), ("hc-training-heavy", (4, 4)),
    ("hc-bursty", (2, 2, 2, 2)), ("hc-deadlines", (2, 2, 2, 2)), ("hc-deadlines", (4, 4)),
    ("hc-mixed", (4, 4, 4)), ("hc-multi-service", (4, 4, 4, 4)),
)


def part_symmetry(args: argparse.Namespace) -> None:
    from matheuristics import warm_start_schedule

    rows: dict[str, list[tuple[bool, float, float]]] = {v: [] for v in VARIANTS}
    for family, shape in SYMMETRY_CASES:
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            flat = instances.generate(family, seed=seed)
            try:
                inst = with_nodes(flat, shape)
            except ValueError as e:
                print(f"[symmetry] {flat.name} on {shape}: skipped ({e})")
                continue
            ws = warm_start_schedule(flat, 10 * args.sym_limit)
            cells = []
            for name, opts in VARIANTS.items():
                t = time.perf_counter()
                res = milp.solve(inst, time_limit=args.sym_limit, mip_gap=0, warm_start=ws,
                                 flat_share=0, **opts)
                dt = time.perf_counter() - t
                instances.evaluate(inst, res.schedule)
                ok = res.status == "optimal"
                rows[name].append((ok, dt, _gap(res)))
                cells.append(f"{name} {'opt' if ok else f'{_gap(res):.2f}%'} {dt:5.1f} s")
            print(f"[symmetry] {inst.name}: value {res.value:.2f}; " + "; ".join(cells))
    for name, got in rows.items():
        if not got:
            continue
        proven = sum(ok for ok, _, _ in got)
        print(f"[symmetry] {name}: proven {proven}/{len(got)}, mean seconds "
              f"{statistics.mean(dt for _, dt, _ in got):.2f}, mean gap "
              f"{statistics.mean(g for _, _, g in got):.3f}%, max gap "
              f"{max(g for _, _, g in got):.3f}%")


def part_medium(args: argparse.Namespace) -> None:
    gaps = []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        flat = instances.generate("medium", seed=seed)
        try:
            inst = with_nodes(flat, shape_of(flat.num_gpus, "eight"))
        except ValueError as e:
            print(f"[medium] {flat.name}: skipped ({e})")
            continue
        form = milp.build(inst)
        t = time.perf_counter()
        res = milp.solve(inst, time_limit=args.time_limit, threads=args.threads)
        dt = time.perf_counter() - t
        instances.evaluate(inst, res.schedule)
        flat_bound = next((p.split("bound ")[1] for p in res.message.split("; ")
                           if p.startswith("flat model:")), "-")
        gaps.append(_gap(res))
        print(f"[medium] {inst.summary()}; {form.num_x} integer columns: {res.status}, value "
              f"{res.value:.2f}, bound {res.upper_bound:.2f} (node LP {res.lp_bound or math.nan:.2f}, "
              f"flat bound {flat_bound}), gap {_gap(res):.2f}%, {dt:.1f} s")
    if gaps:
        print(f"[medium] gap mean {statistics.mean(gaps):.2f}%, max {max(gaps):.2f}% "
              f"over {len(gaps)} seeds")


def part_best(args: argparse.Namespace) -> None:
    import gpusched
    import heuristics

    gaps, lists = [], []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        inst = instances.with_nodes(instances.generate("medium", seed=seed), 8)
        t = time.perf_counter()
        heur = heuristics.solve(inst, "best", time_limit=args.best_limit)
        dt = time.perf_counter() - t
        instances.evaluate(inst, heur.schedule)
        first = heuristics.solve(inst, "list", placement="first-fit")
        exact = gpusched.solve(inst, "milp", time_limit=args.time_limit, threads=args.threads)
        instances.evaluate(inst, exact.schedule)
        assert exact.upper_bound is not None
        bound = exact.upper_bound
        gap = 100 * (bound - heur.value) / bound if bound > 0 else 0.0
        gaps.append(gap)
        lists.append(100 * (bound - first.value) / bound if bound > 0 else 0.0)
        print(f"[best] {inst.name} ({'+'.join(map(str, inst.node_gpus.tolist()))}, "
              f"{inst.num_jobs} jobs): best {heur.value:.2f} ({dt:.1f} s), list first-fit "
              f"{first.value:.2f}, milp {exact.value:.2f} ({exact.status}), node bound "
              f"{bound:.2f}; best's gap {gap:.2f}% (list first-fit {lists[-1]:.2f}%); "
              f"{heur.message}")
    if gaps:
        print(f"[best] best's gap to the node bound: mean {statistics.mean(gaps):.2f}%, worst "
              f"{max(gaps):.2f}% over {len(gaps)} seeds (list first-fit: mean "
              f"{statistics.mean(lists):.2f}%, worst {max(lists):.2f}%)")


def _interval(xs: list[float]) -> str:
    from scipy import stats

    m = statistics.mean(xs)
    if len(xs) < 2:
        return f"{m:.2f}"
    half = stats.t.ppf(0.975, len(xs) - 1) * statistics.stdev(xs) / math.sqrt(len(xs))
    return f"{m:.2f} [{m - half:.2f}, {m + half:.2f}]"


def part_price(args: argparse.Namespace) -> None:
    for family in SCENARIOS:
        for kind in ("eight", "mixed"):
            lo, hi, lo_pct, hi_pct, exact, ran = [], [], [], [], 0, 0
            G = instances.generate(family, seed=0).num_gpus
            shape = shape_of(G, kind)
            if shape == (G,):
                print(f"[price] {family} ({G} GPUs) on {'+'.join(map(str, shape))}: one node is "
                      f"the flat pool, price 0 by construction")
                continue
            t = time.perf_counter()
            for seed in range(args.first_seed, args.first_seed + args.price_seeds):
                flat = instances.generate(family, seed=seed)
                try:
                    inst = with_nodes(flat, shape)
                except ValueError as e:
                    print(f"[price] {flat.name}: skipped ({e})")
                    continue
                p = milp.price_of_topology(inst, time_limit=args.price_limit)
                instances.evaluate(inst, p.node.schedule)
                ran += 1
                exact += p.exact
                ref = max(p.flat.value, 1e-9)
                lo.append(p.lower)
                hi.append(p.upper)
                lo_pct.append(100 * p.lower / ref)
                hi_pct.append(100 * p.upper / ref)
                if args.verbose:
                    print(f"[price]   {p.summary()}")
            if ran:
                print(f"[price] {family} on {'+'.join(map(str, shape))}: {ran} seeds, {exact} exact; "
                      f"price lower {_interval(lo)}, upper {_interval(hi)}; as % of the flat "
                      f"value: lower {_interval(lo_pct)}, upper {_interval(hi_pct)} "
                      f"({time.perf_counter() - t:.0f} s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default="small,symmetry,medium,price")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--small-limit", type=float, default=10.0)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--best-limit", type=float, default=10.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--sym-limit", type=float, default=20.0)
    ap.add_argument("--price-seeds", type=int, default=10)
    ap.add_argument("--price-limit", type=float, default=20.0)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    parts = {"small": part_small, "symmetry": part_symmetry, "medium": part_medium,
             "best": part_best, "price": part_price}
    for name in args.parts.split(","):
        if name not in parts:
            raise SystemExit(f"--parts: unknown part {name!r}; known: {', '.join(parts)}")
        parts[name](args)


if __name__ == "__main__":
    main()
