"""The packing sweep's tables: ``pack.csv``, FGD's Fig. 9(a) with the bound, the bound's
share of each policy's loss, the offline orders, and the pod-list variants (FGD's Figs.
11-14: ``variants.csv`` and one table per variant group).

Every figure is read from the rows :mod:`gpusched.sweep.packing` stored (the
checker's numbers); nothing is recomputed here but medians and ratios.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from instances.packing import pod_list_name

from .render import Table, TableView

__all__ = ["PACK_COLUMNS", "PAPER_SEEDS", "PAPER_UNALLOCATED", "PAPER_VARIANTS", "avoidable_view",
           "fig9a_view", "order_view", "pack_frame", "seeds_text", "variant_frame", "variant_view"]

PACK_COLUMNS: tuple[str, ...] = ("policy", "seed", "arrived_pct", "allocated_pct",
                                 "unallocated_pct", "fragmentation_pct", "bound_pct")
"""The columns of ``pack.csv`` (``bound_pct``: no placement of the pods arrived by then
allocates more; empty where no bound was computed)."""

PAPER_SEEDS = 10
"""Seeds behind each of the paper's medians (:data:`PAPER_UNALLOCATED`)."""

PAPER_UNALLOCATED: dict[str, float] = {
    "random": 13.75, "dotprod": 9.44, "clustering": 8.42, "packing": 8.19, "bestfit": 7.09,
    "fgd": 4.77,
}
"""Median unallocated GPU % at 100% arrived over 10 seeds, as published with FGD (Weng et
al., USENIX ATC 2023; the simulator's ``analysis_allo_discrete.csv``)."""


PAPER_VARIANTS: dict[tuple[str, str], float] = {
    **{(f"gpushare{x}", "fgd"): v for x, v in zip((40, 60, 80, 100), (6.0, 8.7, 10.9, 13.4))},
    **{(f"gpushare{x}", "bestfit"): v
       for x, v in zip((40, 60, 80, 100), (8.6, 10.9, 13.3, 15.4))},
    **{(f"multigpu{x}", "fgd"): v for x, v in zip((20, 30, 40, 50), (4.5, 3.6, 3.1, 2.9))},
    ("gpuspec33", "fgd"): 12.2, ("gpuspec33", "random"): 16.1,
    ("cpu250", "fgd"): 6.8, ("cpu250", "bestfit"): 8.8,
}
"""Mean unallocated GPU % at 100% arrived over 10 seeds on the pod-list variants, the
figures FGD's paper states for its Figs. 11-14 (Weng et al., USENIX ATC 2023), by
(variant, policy)."""


def _pct(milli: float, capacity: float) -> float:
    return 100.0 * milli / capacity


def seeds_text(seeds: Sequence[int]) -> str:
    """``seed 3``, ``seeds 0, 1`` or ``seeds 0-9`` (a run of consecutive seeds)."""
    got = sorted({int(s) for s in seeds})
    if not got:
        return "no seed"
    if len(got) == 1:
        return f"seed {got[0]}"
    if len(got) > 2 and got == list(range(got[0], got[-1] + 1)):
        return f"seeds {got[0]}-{got[-1]}"
    return "seeds " + ", ".join(map(str, got))


def _n_seeds(n: int) -> str:
    return f"{n} seed" + ("" if n == 1 else "s")


def _bounds(rows: Sequence[dict[str, Any]]) -> dict[tuple[int, int], dict[str, float]]:
    """(seed, level) -> bound and best offline packing, in percent of the capacity."""
    out = {}
    for r in rows:
        if r["policy"] != "bound":
            continue
        for lv, b in r["at_levels"].items():
            out[(r["seed"], int(lv))] = {"bound": _pct(b["bound_milli"], r["capacity_milli"]),
                                         "best": _pct(b["best_milli"], r["capacity_milli"])}
    return out


def pack_frame(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """``pack.csv``: one row per policy, seed and integer arrived percentage."""
    bounds = _bounds(rows)
    parts = []
    for r in rows:
        if r["policy"] == "bound" or r["order"] != "arrival":
            continue
        c = pd.DataFrame(r["curve"])
        c.insert(0, "seed", r["seed"])
        c.insert(0, "policy", r["policy"])
        c["bound_pct"] = [bounds.get((r["seed"], int(a)), {}).get("bound", np.nan)
                          for a in c["arrived_pct"]]
        parts.append(c)
    if not parts:
        return pd.DataFrame(columns=list(PACK_COLUMNS))
    df = pd.concat(parts, ignore_index=True)
    df["arrived_pct"] = df["arrived_pct"].astype(int)
    return df[list(PACK_COLUMNS)].sort_values(["policy", "seed", "arrived_pct"], kind="stable")


def _policy_order(policies: Sequence[str]) -> list[str]:
    known = [p for p in PAPER_UNALLOCATED if p in policies]
    return known + sorted(set(policies) - set(known))


def fig9a_view(df: pd.DataFrame, rows: Sequence[dict[str, Any]],
               levels: Sequence[int] = (90, 100, 120)) -> TableView:
    """Median unallocated GPU % by policy at ``levels`` arrived (FGD's Fig. 9a), the
    bound beside: the least any placement of those pods could leave unallocated.

    The headers give the seeds behind each median (ours and the paper's); the bound rows,
    medians over the seeds that have a bound, name theirs; the note on the bound is written
    only when a bound row is there."""
    seeds = sorted(int(s) for s in df["seed"].unique()) if len(df) else []
    med = (df[df["arrived_pct"].isin(levels)]
           .groupby(["policy", "arrived_pct"])["unallocated_pct"].median().unstack())
    records, cells = [], []
    for pol in _policy_order(list(med.index)):
        vals = [float(med.loc[pol, lv]) if lv in med.columns else np.nan for lv in levels]
        paper = PAPER_UNALLOCATED.get(pol, np.nan)
        records.append({"policy": pol, **{f"u{lv}": v for lv, v in zip(levels, vals)},
                        "paper_u100": paper})
        cells.append([pol, *(_f(v) for v in vals), _f(paper)])
    bounds = _bounds(rows)
    bound_rows = []
    for name, key, what in (("bound", "bound", "least unallocated any placement leaves"),
                            ("best offline packing", "best", "found")):
        vals, behind = [], set()
        for lv in levels:
            got = [100.0 - bounds[(s, lv)][key] for s in seeds if (s, lv) in bounds]
            behind |= {s for s in seeds if (s, lv) in bounds}
            vals.append(float(np.median(got)) if got else np.nan)
        if any(np.isfinite(vals)):
            records.append({"policy": name, **{f"u{lv}": v for lv, v in zip(levels, vals)},
                            "paper_u100": np.nan})
            cells.append([f"{name} ({what}; {seeds_text(sorted(behind))})",
                          *(_f(v) for v in vals), ""])
            bound_rows.append(name)
    notes = ["Unallocated: 100 - allocated GPU milli over the capacity, after the pods "
             "arrived by then (failed pods included)."]
    if "bound" in bound_rows:
        notes.append("The bound row: 100 - the bound on the GPU milli any offline placement "
                     "of those pods could hold (median over the seeds it names).")
    if "best offline packing" in bound_rows:
        notes.append("Best offline packing: 100 - the most GPU milli a placement found for "
                     "the bound holds.")
    notes.append(f"Paper: FGD (Weng et al., USENIX ATC 2023), median of its own "
                 f"{PAPER_SEEDS} seeds; ours: median of {_n_seeds(len(seeds))} "
                 f"({seeds_text(seeds)}), on the openb instance drawn by each.")
    table = Table(
        columns=["policy", *(f"{lv}% arrived,\nours ({_n_seeds(len(seeds))})" for lv in levels),
                 f"100% arrived,\npaper ({_n_seeds(PAPER_SEEDS)})"],
        rows=cells,
        caption=f"Median unallocated GPU % over {_n_seeds(len(seeds))} ({seeds_text(seeds)}) "
                f"of the openb instance, beside the paper's median over {_n_seeds(PAPER_SEEDS)}",
        notes=[" ".join(notes)],
        label="tab:fgd-fig9a",
    )
    return TableView(pd.DataFrame(records), table)


def avoidable_view(rows: Sequence[dict[str, Any]],
                   levels: Sequence[int] = (90, 100, 110, 120)) -> TableView:
    """Per policy and level: unallocated %, and the share of it no placement could avoid
    (``(capacity - bound) / (capacity - allocated)``), medians over the seeds with a bound
    (named in the caption: where they are not all the seeds run, a policy's figure differs
    from :func:`fig9a_view`'s median over all of them)."""
    bounds = _bounds(rows)
    all_seeds = sorted({int(r["seed"]) for r in rows
                        if r["policy"] != "bound" and r["order"] == "arrival"})
    used: set[int] = set()
    per: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for r in rows:
        if r["policy"] == "bound" or r["order"] != "arrival":
            continue
        for lv in levels:
            b = bounds.get((r["seed"], lv))
            at = r["at_levels"].get(str(lv))
            if b is None or at is None:
                continue
            u = 100.0 - _pct(at["allocated_milli"], r["capacity_milli"])
            floor = 100.0 - b["bound"]
            per.setdefault((r["policy"], lv), []).append((u, floor / u if u > 0 else np.nan))
            used.add(int(r["seed"]))
    records, cells = [], []
    for pol in _policy_order(sorted({p for p, _ in per})):
        row = [pol]
        for lv in levels:
            got = per.get((pol, lv), [])
            u = float(np.median([x for x, _ in got])) if got else np.nan
            share = float(np.nanmedian([s for _, s in got])) if got else np.nan
            records.append({"policy": pol, "arrived_pct": lv, "unallocated_pct": u,
                            "unavoidable_share": share})
            row.append(f"{_f(u)} ({_f(100 * share, 0)}%)" if got else "")
        cells.append(row)
    only = sorted(used)
    notes = [f"Share: (100 - bound) / unallocated. Both are medians over the "
             f"{_n_seeds(len(only))} with a bound ({seeds_text(only)})"]
    if only and only != all_seeds:
        notes[0] += (f", not over all {_n_seeds(len(all_seeds))} run ({seeds_text(all_seeds)}): "
                     "a policy's unallocated % here can differ from its median over all seeds")
    notes[0] += "."
    table = Table(
        columns=["policy", *(f"{lv}% arrived" for lv in levels)],
        rows=cells,
        caption="Unallocated GPU % after the pods arrived by each level, and (in brackets) "
                "the share of it no placement could have avoided, over "
                f"{_n_seeds(len(only))} ({seeds_text(only)})",
        notes=notes,
        label="tab:packing-avoidable",
    )
    return TableView(pd.DataFrame(records), table)


def order_view(rows: Sequence[dict[str, Any]],
               levels: Sequence[int] = (100, 120)) -> TableView:
    """Median unallocated GPU % per policy and order (arrival and the offline orders), over
    the seeds that have offline orders (all seeds when none has), named in the caption.

    One row per policy and load arrived (``100%``); one column per order the same pods are
    placed in: ``arrival`` (online, as they arrive), then each offline order."""
    offline = {r["seed"] for r in rows if r["policy"] != "bound" and r["order"] != "arrival"}
    per: dict[tuple[str, str, int], list[float]] = {}
    used: set[int] = set()
    for r in rows:
        if r["policy"] == "bound" or (offline and r["seed"] not in offline):
            continue
        for lv in levels:
            at = r.get("at_levels", {}).get(str(lv))
            if at is not None:
                u = 100.0 - _pct(at["allocated_milli"], r["capacity_milli"])
                per.setdefault((r["policy"], r["order"], lv), []).append(u)
                used.add(int(r["seed"]))
    orders = sorted({o for _, o, _ in per}, key=lambda o: (o != "arrival", o))
    records, cells = [], []
    for pol in _policy_order(sorted({p for p, _, _ in per})):
        for lv in levels:
            vals = [float(np.median(per[(pol, o, lv)])) if (pol, o, lv) in per else np.nan
                    for o in orders]
            records.append({"policy": pol, "arrived_pct": lv, **dict(zip(orders, vals))})
            cells.append([pol, f"{lv}%", *(_f(v) for v in vals)])
    names = [f"{o} order\n(online)" if o == "arrival" else f"{o} order\n(offline)" for o in orders]
    seeds = sorted(used)
    table = Table(columns=["policy", "load arrived", *names], rows=cells,
                  caption="Median unallocated GPU %: the same pods in arrival order and in "
                          f"offline orders, over {_n_seeds(len(seeds))} ({seeds_text(seeds)})",
                  notes=["Load arrived: the pods arrived by that share of the cluster's GPUs; "
                         "each order places those same pods."],
                  label="tab:packing-orders")
    return TableView(pd.DataFrame(records), table)


def _f(x: float, digits: int = 2) -> str:
    return "" if x is None or not np.isfinite(x) else f"{x:.{digits}f}"


def variant_frame(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """``variants.csv``: :func:`pack_frame`'s columns after a ``variant`` column (the pod
    list's short name), for the online runs."""
    parts = []
    for r in rows:
        if r["policy"] == "bound" or r["order"] != "arrival":
            continue
        f = pack_frame([r])
        f.insert(0, "variant", pod_list_name(r.get("pods")))
        parts.append(f)
    if not parts:
        return pd.DataFrame(columns=["variant", *PACK_COLUMNS])
    return (pd.concat(parts, ignore_index=True)
            .sort_values(["variant", "policy", "seed", "arrived_pct"], kind="stable"))


def variant_view(df: pd.DataFrame, group: str, variants: Sequence[str],
                 level: int = 100) -> TableView:
    """Mean unallocated GPU % at ``level`` arrived over the seeds, policy by variant of one
    group (FGD's Figs. 11-14), with the paper's figures beside where it states them."""
    at = df[(df["arrived_pct"] == level) & df["variant"].isin(variants)]
    cols = [v for v in variants if v in set(at["variant"])]
    mean = at.groupby(["policy", "variant"])["unallocated_pct"].mean()
    sd = at.groupby(["policy", "variant"])["unallocated_pct"].std()
    n = at.groupby(["policy", "variant"])["seed"].nunique()
    records, cells = [], []
    for pol in _policy_order(sorted(set(at["policy"]))):
        vals = [float(mean.get((pol, v), np.nan)) for v in cols]
        for v, x in zip(cols, vals):
            records.append({"policy": pol, "variant": v, "unallocated_pct": x,
                            "std": float(sd.get((pol, v), np.nan)),
                            "seeds": int(n.get((pol, v), 0)),
                            "paper": PAPER_VARIANTS.get((v, pol), np.nan)})
        cells.append([pol, *(_f(x) for x in vals)])
    for pol in _policy_order(sorted({p for v, p in PAPER_VARIANTS if v in cols})):
        cells.append([f"{pol} (paper)", *(_f(PAPER_VARIANTS.get((v, pol), np.nan), 1)
                                          for v in cols)])
    seeds = sorted(set(at["seed"]))
    table = Table(
        columns=["policy", *cols], rows=cells,
        caption=f"Mean unallocated GPU % at {level}% arrived over {len(seeds)} seed(s): "
                f"the {group} variants of the openb pod list",
        notes=["Unallocated: 100 - allocated GPU milli over the capacity after the pods "
               f"arrived by {level}% of it. Paper: the figures FGD (Weng et al., USENIX ATC "
               "2023) states for its Figs. 11-14, means of 10 seeds."],
        label=f"tab:packing-{group}",
    )
    return TableView(pd.DataFrame(records), table)
