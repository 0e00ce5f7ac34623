"""The topology view: how much of the allocator's gain survives nodes, the price of
topology and fragmentation, from the rows of a flat run and a run on nodes.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd

import instances

from .aggregate import ci95, family_key, prepare
from .notes import few_note
from .render import Table, TableView, fmt_ci

__all__ = ["TOPOLOGY_ALLOCATORS", "has_node_rows", "topology_frame", "topology_view"]

TOPOLOGY_ALLOCATORS: tuple[str, ...] = ("best", "lns", "local-search", "sampling", "list")
"""Stand-ins for the allocator, in order, when the one asked for has no rows on nodes."""


def _shapes(d: pd.DataFrame) -> pd.Series:
    """Each row's node shape (``""``: flat pool), from the rows' ``node_gpus`` column."""
    if "node_gpus" not in d.columns:
        return pd.Series([""] * len(d), index=d.index)
    return d["node_gpus"].map(lambda v: "" if v is None or (isinstance(v, float) and math.isnan(v))
                              else str(v))


def has_node_rows(df: pd.DataFrame) -> bool:
    """Whether some row of ``df`` is of an instance on nodes (the topology view's input)."""
    return bool((_shapes(df) != "").any())


def topology_frame(df: pd.DataFrame, baseline: str = "fifo", allocator: str = "best") -> pd.DataFrame:
    """One record per instance on nodes that has a ``baseline`` row: the topology figures.

    A node row's flat twin is the row of the same family and seed whose instance
    name lacks the ``-node_gpus<shape>`` suffix. Per instance: the allocator's gain
    over the baseline on nodes and flat (``gain_nodes_pct``, ``gain_flat_pct``, and
    in value units); the brackets of the flat and node optima (``flat_low`` ..
    ``nodes_high``: best values seen, smallest bounds, the flat bound also bounding
    the node optimum); the price of topology they give (``price_low``,
    ``price_high``, and in percent of the flat optimum) and ``exact`` (both optima
    proven); fragmentation of the baseline and the allocator in percent of the
    pool's GPU-slots; the allocator's gap to ``nodes_high``.
    """
    d = prepare(df, baseline)
    d["shape"] = _shapes(d)
    ok = d["status"] != "error"
    nodes = d[(d["shape"] != "") & ok]
    flat = d[(d["shape"] == "") & ok]
    present = set(nodes["method"])
    alloc = allocator if allocator in present else next(
        (m for m in TOPOLOGY_ALLOCATORS if m in present), allocator)
    flat_by: dict[Any, pd.DataFrame] = dict(list(flat.groupby("instance")))
    records = []
    for (fam, shape, inst), g in nodes.groupby(["family", "shape", "instance"], sort=False):
        base_row = g[g["method"] == baseline]
        if base_row.empty:
            continue
        twin_name = str(inst).removesuffix(f"-node_gpus{shape}")
        twin = flat_by.get(twin_name) if twin_name != inst else None
        a = g[g["method"] == alloc]
        rec: dict[str, Any] = {"family": fam, "shape": shape, "seed": g["seed"].iloc[0],
                               "instance": inst, "allocator": alloc}
        rec["gain_nodes_pct"] = float(a["gain_pct"].iloc[0]) if len(a) else math.nan
        rec["gain_nodes"] = (float(a["value"].iloc[0]) - float(base_row["value"].iloc[0])
                             if len(a) else math.nan)
        empty = g.iloc[:0]
        ta = empty if twin is None else twin[twin["method"] == alloc]
        tb = empty if twin is None else twin[twin["method"] == baseline]
        have_flat = bool(len(ta) and len(tb))
        rec["gain_flat_pct"] = float(ta["gain_pct"].iloc[0]) if have_flat else math.nan
        rec["gain_flat"] = (float(ta["value"].iloc[0]) - float(tb["value"].iloc[0])
                            if have_flat else math.nan)
        n_low = float(g["value"].max())
        f_low, f_high = n_low, math.nan
        if twin is not None:
            f_low = max(n_low, float(twin["value"].max()))
            f_high = float(twin["upper_bound"].min())
        n_high = float(np.nanmin([g["upper_bound"].min(), f_high]))
        rec.update(flat_low=f_low, flat_high=f_high, nodes_low=n_low, nodes_high=n_high)
        pot = instances.price_of_topology(
            SimpleNamespace(value=f_low, upper_bound=None if math.isnan(f_high) else f_high),
            SimpleNamespace(value=n_low, upper_bound=None if math.isnan(n_high) else n_high))
        lo = math.nan if pot["low"] is None or twin is None else float(pot["low"])
        hi = math.nan if pot["high"] is None else float(pot["high"])
        rec.update(price_low=lo, price_high=hi, exact=pot["price"] is not None)
        rec["price_low_pct"] = 100.0 * lo / f_high if f_high > 0 else math.nan
        rec["price_high_pct"] = 100.0 * hi / f_low if f_low > 0 else math.nan
        for key, rows in (("frag_base_pct", base_row), ("frag_alloc_pct", a)):
            rec[key] = (100.0 * float(rows["fragmentation"].iloc[0])
                        / float(rows["capacity_gpu_slots"].iloc[0])
                        if len(rows) and "fragmentation" in rows.columns else math.nan)
        gap_n = instances.gap(float(a["value"].iloc[0]), None if math.isnan(n_high) else n_high) \
            if len(a) else None
        rec["gap_nodes_pct"] = math.nan if gap_n is None else 100.0 * gap_n
        records.append(rec)
    return pd.DataFrame(records)


def topology_view(df: pd.DataFrame, baseline: str = "fifo", allocator: str = "best") -> TableView:
    """Per family and node shape, mean and 95% CI over the seeds of :func:`topology_frame`:
    the allocator's gain on nodes and flat, the price of topology, fragmentation.

    The rows come from runs of the same families and seeds flat and on nodes
    (``-f <family>.node_gpus=8``) in one results folder; ``allocator`` falls back to
    the first of :data:`TOPOLOGY_ALLOCATORS` with rows on nodes.
    """
    per = topology_frame(df, baseline, allocator)
    if per.empty:
        raise ValueError(f"results: no rows of {baseline!r} on an instance with nodes; the "
                         "topology view needs runs on nodes (family parameter node_gpus)")
    keys = sorted(dict.fromkeys(zip(per["family"], per["shape"])), key=lambda k: family_key(k[0]))
    records, rows, counts = [], [], []
    prev = None
    for fam, shape in keys:
        s = per[(per["family"] == fam) & (per["shape"] == shape)]
        rec: dict[str, Any] = {"family": fam, "shape": shape, "n": len(s),
                               "exact": int(s["exact"].sum())}
        for col in ("gain_flat_pct", "gain_nodes_pct", "price_low_pct", "price_high_pct",
                    "frag_base_pct", "frag_alloc_pct", "gap_nodes_pct"):
            rec[f"{col}_mean"], rec[f"{col}_ci95"], n = ci95(s[col])
            counts.append(n)
        gf, gn = s["gain_flat"].mean(), s["gain_nodes"].mean()
        rec["kept_pct"] = 100.0 * gn / gf if gf and math.isfinite(gf) and gf > 0 else math.nan
        records.append(rec)

        def ci(col: str, signed: bool = False, digits: int = 1, r: dict[str, Any] = rec) -> str:
            return fmt_ci(r[f"{col}_mean"], r[f"{col}_ci95"], digits=digits, signed=signed)

        same = bool(np.allclose(s["price_low_pct"], s["price_high_pct"], equal_nan=True))
        price = ci("price_low_pct", digits=2) if same else (
            f"{ci('price_low_pct', digits=2)} to {ci('price_high_pct', digits=2)}")
        rows.append([fam if fam != prev else "", shape, str(len(s)),
                     ci("gain_flat_pct", signed=True), ci("gain_nodes_pct", signed=True),
                     "n/a" if math.isnan(rec["kept_pct"]) else f"{rec['kept_pct']:.0f}",
                     price, f"{rec['exact']}/{len(s)}", ci("frag_base_pct", digits=2),
                     ci("frag_alloc_pct", digits=2), ci("gap_nodes_pct", digits=2)])
        prev = fam
    alloc = str(per["allocator"].iloc[0])
    notes = [
        f"Mean ± half-width of the 95% confidence interval (Student's t) over the seeds; "
        f"{alloc} against {baseline}, on nodes of the shape given and on the flat twin.",
        f"Value gain: {alloc}'s V over {baseline}'s on the same instance, in percent. Kept: "
        "the mean gain on nodes over the mean flat gain (value units), in percent.",
        "Price of topology: flat optimum less node optimum, in percent of the flat optimum; "
        "where an optimum is not proven, the bracket its bounds give (lower to upper; the "
        "flat model's bound bounds the node optimum too). Proven: instances with both optima proven.",
        "Fragmentation: Metrics.fragmentation (stranded GPU-slots) in percent of the pool's "
        "GPU-slots. Gap: to the smallest bound on the node optimum.",
    ]
    if alloc != allocator:
        notes.append(f"{allocator!r} has no rows on nodes; {alloc!r} stands in as the allocator.")
    table = Table(
        columns=["Family", "Nodes", "n", "Value gain\nflat (%)", "Value gain\nnodes (%)",
                 "Kept\n(%)", "Price of\ntopology (%)", "Proven", f"Frag.\n{baseline} (%)",
                 f"Frag.\n{alloc} (%)", "Gap to node\nUB (%)"],
        rows=rows,
        caption=f"Topology: how much of {alloc}'s gain over {baseline} survives nodes, the "
                "price of topology, fragmentation.",
        notes=notes + few_note(counts, "seeds"),
        align="ll" + "r" * 9,
        label="tab:gpusched-topology",
    )
    return TableView(pd.DataFrame(records), table)
