"""``guided`` beside FGD on FGD's openb benchmark: 10 seeds side by side in one run (docs/beyond-fgd.md).

Per seed both policies run on the same instance in the same process (after
one compiling run each); the table gives the median unallocated GPU % at
90, 100, 110 and 120% arrived, the mean at 100%, and the runtimes with
their ratio. ``--variants`` runs the 23 pod-list variants instead (means at
100% arrived, as FGD's Figs. 11-14); ``--nodes resampled`` runs node lists
the rule was not tuned on: a random half of openb's nodes, and nodes drawn
uniformly over the node types (another model mix), the pods cut at 1.3
times the new capacity. ``--ablate`` adds ``guided`` without each term.

Run: ``python benchmarks/bench_guided.py --seeds 0-9 [--variants all] [--nodes resampled] [--ablate]``.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from heuristics.guided import Guided
from heuristics.packing import place
from instances.packing import (
    INFLATION,
    OPENB_VARIANTS,
    VARIANT_GROUPS,
    Packing,
    openb_packing,
    packing_curve,
)

logger = logging.getLogger("bench_guided")
LEVELS = (90, 100, 110, 120)


def _seeds(text: str) -> list[int]:
    if "-" in text:
        lo, hi = text.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


def _resampled(p: Packing, seed: int, mix: str) -> Packing:
    """``p``'s pods on another node list: a random half of its nodes, or nodes drawn uniformly
    over the node types; the pods in arrival order up to 1.3 times the new capacity."""
    rng = np.random.default_rng(1000 + seed)
    nodes = list(p.nodes)
    if mix == "half":
        pick = sorted(rng.choice(len(nodes), size=len(nodes) // 2, replace=False).tolist())
    else:
        types: dict[tuple, list[int]] = {}
        for i, n in enumerate(nodes):
            types.setdefault((n.gpus, n.model, n.cpu_milli, n.memory_mib), []).append(i)
        groups = list(types.values())
        pick = [int(rng.choice(groups[int(rng.integers(len(groups)))])) for _ in range(600)]
    chosen = tuple(nodes[i] for i in pick)
    chosen = tuple(type(n)(f"{n.name}-r{k}", n.gpus, n.model, n.cpu_milli, n.memory_mib)
                   for k, n in enumerate(chosen))
    cap = INFLATION * 1000 * sum(n.gpus for n in chosen)
    total, pods = 0, []
    for q in p.pods:
        if total + q.request_milli > cap:
            break
        pods.append(q)
        total += q.request_milli
    return Packing(f"{p.name}-{mix}", chosen, tuple(pods))


def _run(p: Packing, policy: object, name: str) -> dict:
    run = place(p, policy)
    b = packing_curve(p, run.placement).binned().set_index("arrived_pct").unallocated_pct
    return {"policy": name, "runtime_s": run.runtime_s,
            **{f"u{lv}": float(b.get(lv, np.nan)) for lv in LEVELS}}


def main(argv: list[str] | None = None) -> pd.DataFrame:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0-9")
    ap.add_argument("--variants", default="", help="a group, 'all', or names (comma list)")
    ap.add_argument("--nodes", default="", choices=["", "resampled"])
    ap.add_argument("--ablate", action="store_true")
    ap.add_argument("-o", "--out", default="", help="write the rows as CSV")
    args = ap.parse_args(argv)
    policies: list[tuple[str, object]] = [("fgd", "fgd"), ("guided", "guided")]
    if args.ablate:
        policies += [("guided w_res=0", Guided(w_res=0.0)), ("guided w_cpu=0", Guided(w_cpu=0.0)),
                     ("guided w_cpu=w_res=0", Guided(w_cpu=0.0, w_res=0.0))]
    if args.variants:
        names = list(OPENB_VARIANTS) if args.variants == "all" else [
            v for g in args.variants.split(",") for v in VARIANT_GROUPS.get(g, (g,))]
    else:
        names = ["default"]
    seeds = _seeds(args.seeds)
    place(openb_packing(0).head(200), "fgd"), place(openb_packing(0).head(200), "guided")  # compile
    rows = []
    for v in names:
        for s in seeds:
            base = openb_packing(s, pods=None if v == "default" else v)
            cases = [(v, base)] if not args.nodes else [
                (f"{v}-half", _resampled(base, s, "half")), (f"{v}-types", _resampled(base, s, "types"))]
            for label, p in cases:
                for name, pol in policies:
                    rows.append({"list": label, "seed": s, **_run(p, pol, name)})
        logger.info("%s done", v)
    df = pd.DataFrame(rows)
    if args.out:
        df.to_csv(args.out, index=False)
    med = df.groupby(["list", "policy"], sort=False)[[f"u{lv}" for lv in LEVELS]].median()
    mean = df.groupby(["list", "policy"], sort=False)[["u100", "runtime_s"]].mean()
    table = med.join(mean.add_suffix("_mean")).round(3)
    table.columns = [f"median {lv}%" for lv in LEVELS] + ["mean 100%", "runtime_s"]
    print(table.to_markdown())
    t = df.pivot_table(index=["list", "seed"], columns="policy", values="runtime_s")
    u = df.pivot_table(index=["list", "seed"], columns="policy", values="u100")
    print(f"\nguided / fgd runtime: median {float((t['guided'] / t['fgd']).median()):.2f}x, "
          f"max {float((t['guided'] / t['fgd']).max()):.2f}x; guided's slowest run "
          f"{float(t['guided'].max()):.3f} s")
    per = u.groupby(level=0).mean()
    print(f"lists where guided's mean at 100% is below fgd's: {int((per['guided'] < per['fgd']).sum())} "
          f"of {len(per)}; largest excess {float((per['guided'] - per['fgd']).max()):+.3f} points")
    return df


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    main()
