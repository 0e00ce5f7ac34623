"""The price of topology and the gain over FIFO on nodes: the seed family and the five scenarios.

For each family and seed, three instances: the flat one, the same on nodes of
8 GPUs (``node_gpus=8``), and on a mixed shape (``node_gpus=mixed_shape(G)``:
8, 4, 2, 2 for 16 GPUs). On each: ``fifo``, ``local-search`` under each
placement rule (labels ``ls-first-fit``, ``ls-best-fit``, ``ls-frag``; on the
flat instance the rule has no effect) and the MILP. The flat MILP's bound is
an upper bound on the node optimum as well (the flat model is a relaxation);
the node MILP (``milp.solve`` on an instance with nodes) is run when this
checkout has it, otherwise the node side is bracketed by the heuristics and
the flat bound, and the script says so. Every figure comes from the sweep's
rows through :func:`gpusched.tables.topology_frame` (mean and 95% CI over
the seeds); nothing is asserted.

Usage::

    python benchmarks/bench_topology.py [--seeds 10] [--time-limit 30] [--workers 2] [-o DIR]
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import instances  # noqa: E402
from gpusched import bench, tables  # noqa: E402
from gpusched.tables import ci95, fmt_ci  # noqa: E402
from instances.families import SEED_SCENARIOS  # noqa: E402

FAMILIES = ("seed-training-heavy", *SEED_SCENARIOS)
RULES = ("first-fit", "best-fit", "frag")


def mixed_shape(num_gpus: int) -> list[int]:
    """A mixed node list of the openb sizes: halve the pool down to 2-GPU nodes.

    Repeatedly take the largest power of two (at most 8) no more than half of
    the GPUs left, until 2 are left, which form the last node: 8 GPUs give
    4, 2, 2; 12 give 4, 4, 2, 2; 16 give 8, 4, 2, 2.
    """
    left, out = num_gpus, []
    while left > 2:
        k = 1
        while 2 * k <= min(8, left // 2):
            k *= 2
        out.append(k)
        left -= k
    if left:
        out.append(left)
    return out


def node_milp_available() -> bool:
    """Whether ``milp.solve`` solves the node model in this checkout (a one-job probe)."""
    import milp

    probe = instances.Instance("probe", 2, 2, (), (instances.Job("a", 1, 1),),
                               nodes=(instances.Node("n0", 1), instances.Node("n1", 1)))
    try:
        res = milp.solve(probe, time_limit=5)
    except ValueError:
        return False
    return bool(res.schedule.placement)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--time-limit", type=float, default=30.0, help="seconds per MILP")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("-o", "--output", default=None, help="results folder (default: a scratch one)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    fams = [f.strip() for f in args.families.split(",") if f.strip()]
    out = Path(args.output or tempfile.mkdtemp(prefix="bench-topology-"))
    M = bench.MethodSpec
    heur = [M("fifo", "fifo")] + [M(f"ls-{r}", "local-search", {"placement": r}) for r in RULES]
    exact = [M("milp", "milp", {"threads": 1}, args.time_limit)]
    with_node_milp = node_milp_available()
    shapes = {"8": dict.fromkeys(fams, 8),
              "mixed": {f: mixed_shape(instances.generate(f, seed=0).num_gpus) for f in fams}}
    configs = [bench.make_config(fams, args.seeds, heur + exact)]
    for per_family in shapes.values():
        configs.append(bench.make_config(
            fams, args.seeds, heur + (exact if with_node_milp else []),
            family_params={f: {"node_gpus": s} for f, s in per_family.items()}))
    t0 = time.perf_counter()
    cells = [c for cfg in configs for c in bench.make_cells(cfg)]
    summary = bench.run_bench(cells, out, workers=args.workers, progress=False)
    rows = bench.load_rows(out)
    rows = rows[rows["cell"].isin({c.key for c in cells})]
    print(f"{summary.total} cells ({summary.ran} run, {summary.errors} errors) in "
          f"{time.perf_counter() - t0:.0f} s; {args.seeds} seeds; MILP limit {args.time_limit:g} s; "
          f"rows in {out}")
    print("node shapes: 8 -> " + "; ".join(
        f"{f}: {instances.nodes.uniform_nodes(instances.generate(f, seed=0).num_gpus, 8)}"
        for f in fams))
    print("             mixed -> " + "; ".join(f"{f}: {s}" for f, s in shapes["mixed"].items()))
    if with_node_milp:
        print("node optimum: milp.solve on the node instance (bound: min of its own and the flat one)")
    else:
        print("node optimum: NOT solved here (milp.solve has no node model in this checkout); "
              "the node side is the best node heuristic below the flat MILP's bound")

    per = {r: tables.topology_frame(rows, allocator=f"ls-{r}") for r in RULES}
    for r in RULES:  # the shape's class: "8" or "mixed"
        per[r]["kind"] = ["8" if s == "8" else "mixed" for s in per[r]["shape"]]
    head = ("| family | nodes | n | price of topology (% of flat opt.) | proven | "
            "gain flat (%) | " + " | ".join(f"gain nodes {r} (%)" for r in RULES)
            + " | frag. fifo (%) | " + " | ".join(f"frag. {r} (%)" for r in RULES) + " |")
    print()
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    scen = [f for f in fams if f in SEED_SCENARIOS]
    groups = [(f, k, [f]) for f in fams for k in shapes]
    if len(scen) > 1:
        groups += [(f"all {len(scen)} hc-*", k, scen) for k in shapes]
    for label, kind, members in groups:
        sel = {r: per[r][per[r]["family"].isin(members) & (per[r]["kind"] == kind)] for r in RULES}
        g = sel["frag"]
        if g.empty:
            continue
        shape = str(g["shape"].iloc[0]) if len(members) == 1 else kind
        lo, lo_h, n = ci95(g["price_low_pct"])
        hi, hi_h, _ = ci95(g["price_high_pct"])
        same = bool(np.allclose(g["price_low_pct"], g["price_high_pct"], atol=1e-9))
        price = (fmt_ci(lo, lo_h, digits=2) if same
                 else f"{fmt_ci(lo, lo_h, digits=2)} to {fmt_ci(hi, hi_h, digits=2)}")
        row = [label, shape, str(n), price, f"{int(g['exact'].sum())}/{n}",
               fmt_ci(*ci95(g["gain_flat_pct"])[:2], signed=True)]
        row += [fmt_ci(*ci95(sel[r]["gain_nodes_pct"])[:2], signed=True) for r in RULES]
        row.append(fmt_ci(*ci95(g["frag_base_pct"])[:2], digits=2))
        row += [fmt_ci(*ci95(sel[r]["frag_alloc_pct"])[:2], digits=2) for r in RULES]
        print("| " + " | ".join(row) + " |")
    print()
    print("Mean ± 95% CI (Student's t) over the seeds. Price: flat optimum less node optimum in "
          "percent of the flat optimum, bracketed by the bounds where a side is not proven. Gains: "
          "value V of local-search under each placement rule over fifo on the same instance. "
          "Fragmentation: stranded GPU-slots in percent of the pool's.")
    print()
    print(tables.topology_view(rows, allocator="ls-frag").render("markdown"))


if __name__ == "__main__":
    main()
