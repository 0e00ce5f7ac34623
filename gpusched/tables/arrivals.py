"""The tables of ``gpusched reproduce arrivals``: mean JCT and weighted flow against the
lower bound, value and utilization gains over FIFO, and where the two rankings agree.

They read the frame of :func:`gpusched.reproduce.arrivals_frame` (one row per
instance, objective and policy, every figure the checker's) and average over the
seeds per trace, load and objective; nothing is recomputed from schedules here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from .render import Table, TableView

__all__ = [
    "SUMMARY_FIGURES",
    "agreement_view",
    "arrival_summary",
    "arrival_views",
    "jct_view",
    "value_view",
]

SUMMARY_FIGURES: tuple[str, ...] = (
    "jobs", "num_gpus", "contention", "value", "bound", "gap_pct", "gain_pct", "utilization",
    "utilization_gain_pp", "batch_value", "flow_hours", "mean_jct_hours", "jobs_censored",
    "jct_bound_hours",
)
"""The figures :func:`arrival_summary` averages over the seeds."""

KEYS = ["trace", "load", "objective", "method"]


def arrival_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Means over the seeds of :data:`SUMMARY_FIGURES` per trace, load, objective and
    policy (``seeds``: how many rows have a figure), policies in the frame's order.

    Raises
    ------
    ValueError
        When the frame holds no row with a figure.
    """
    ok = frame[frame["value"].notna()]
    if ok.empty:
        raise ValueError("frame: no policy row with a figure")
    order = list(dict.fromkeys(frame["method"]))
    g = ok.groupby(KEYS, sort=False)
    out = g[list(SUMMARY_FIGURES)].mean(numeric_only=True)
    out["seeds"] = g.size()
    out = out.reset_index()
    out["_m"] = out["method"].map({m: i for i, m in enumerate(order)})
    return (out.sort_values(["trace", "objective", "load", "_m"], kind="stable")
            .drop(columns="_m").reset_index(drop=True))


def _f(v: float, digits: int = 1, signed: bool = False) -> str:
    if v is None or not np.isfinite(v):
        return "n/a"
    if abs(v) < 0.5 * 10.0**-digits:
        v = 0.0
    return format(v, f"{'+' if signed else ''}.{digits}f")


def _policies(s: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(s["method"]))


def _wide(s: pd.DataFrame, figure: str) -> pd.DataFrame:
    return s.pivot_table(index=["trace", "load"], columns="method", values=figure, sort=False)


def jct_view(summary: pd.DataFrame) -> TableView:
    """Under ``flow``: each policy's mean JCT (hours) and its gap to the lower bound on the
    weighted flow (%), with the bound as a mean JCT, per trace and load."""
    s = summary[summary["objective"] == "flow"]
    pols = _policies(s)
    jct, gap = _wide(s, "mean_jct_hours"), _wide(s, "gap_pct")
    head = s.groupby(["trace", "load"], sort=False).agg(
        jobs=("jobs", "mean"), contention=("contention", "mean"), seeds=("seeds", "max"),
        jct_bound_hours=("jct_bound_hours", "mean"))
    cols = ["trace", "load", "jobs", "contention"] + [f"{p}\nJCT h (gap %)" for p in pols] + ["bound\nJCT h"]
    rows, nums = [], []
    for key, h in head.iterrows():
        cells = [str(key[0]), f"{key[1]:g}", _f(h["jobs"], 0), _f(h["contention"], 2)]
        num = {"trace": key[0], "load": key[1], "jobs": h["jobs"], "contention": h["contention"],
               "seeds": h["seeds"]}
        for p in pols:
            j, g = jct.at[key, p] if p in jct else math.nan, gap.at[key, p] if p in gap else math.nan
            cells.append(f"{_f(j, 2)} ({_f(g)})")
            num[f"jct_{p}_hours"], num[f"gap_{p}_pct"] = j, g
        cells.append(_f(h["jct_bound_hours"], 2))
        num["jct_bound_hours"] = h["jct_bound_hours"]
        rows.append(cells)
        nums.append(num)
    notes = [
        "Instances judged by flow. JCT: mean over the jobs of C - r in hours, a job not run "
        "censored at the horizon (C = T + p); gap: 100 (F - bound) / F on the weighted flow F; "
        "bound JCT: the Lagrangian lower bound on F over the jobs' total weight (all weights "
        "are 1 in both logs, so a lower bound on the mean JCT). Means over the seeds.",
    ]
    table = Table(cols, rows, caption="Mean JCT against load, with the gap to the flow bound",
                  notes=notes, align="lrrr" + "r" * (len(pols) + 1), label="tab:arrivals-jct")
    return TableView(pd.DataFrame(nums), table)


def value_view(summary: pd.DataFrame) -> TableView:
    """Under ``value``: utilization of FIFO and ``best``, each other policy's gain in ``V``
    over FIFO (%) and its gap to the upper bound (%), per trace and load (the seed's claim)."""
    s = summary[summary["objective"] == "value"]
    pols = _policies(s)
    others = [p for p in pols if p != "fifo"]
    gain, gap, util = _wide(s, "gain_pct"), _wide(s, "gap_pct"), _wide(s, "utilization")
    head = s.groupby(["trace", "load"], sort=False).agg(
        jobs=("jobs", "mean"), contention=("contention", "mean"), seeds=("seeds", "max"))
    cols = (["trace", "load", "util. %\nfifo → best", "fifo\ngap %"]
            + [f"{p}\ngain % (gap %)" for p in others])
    rows, nums = [], []
    for key, h in head.iterrows():
        uf = util.at[key, "fifo"] if "fifo" in util else math.nan
        ub = util.at[key, "best"] if "best" in util else math.nan
        gf = gap.at[key, "fifo"] if "fifo" in gap else math.nan
        cells = [str(key[0]), f"{key[1]:g}", f"{_f(100 * uf)} → {_f(100 * ub)}", _f(gf)]
        num = {"trace": key[0], "load": key[1], "jobs": h["jobs"], "contention": h["contention"],
               "seeds": h["seeds"], "util_fifo": uf, "util_best": ub, "gap_fifo_pct": gf}
        for p in others:
            gn = gain.at[key, p] if p in gain else math.nan
            gp = gap.at[key, p] if p in gap else math.nan
            cells.append(f"{_f(gn, signed=True)} ({_f(gp)})")
            num[f"gain_{p}_pct"], num[f"gap_{p}_pct"] = gn, gp
        rows.append(cells)
        nums.append(num)
    notes = [
        "Instances judged by value (V: priority-weighted GPU-hours of the jobs run). Gain: "
        "100 (V - V_fifo) / V_fifo; gap: 100 (bound - V) / bound to the Lagrangian upper "
        "bound; utilization over the whole horizon (submit window and drain). Means over the seeds.",
    ]
    table = Table(cols, rows, caption="The seed's claim on arrival logs: value and utilization over FIFO",
                  notes=notes, label="tab:arrivals-value")
    return TableView(pd.DataFrame(nums), table)


def _tau(a: Sequence[float], b: Sequence[float]) -> float:
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    if keep.sum() < 2 or np.ptp(x[keep]) == 0 or np.ptp(y[keep]) == 0:
        return math.nan
    return float(stats.kendalltau(x[keep], y[keep]).statistic)


def _top(series: pd.Series, largest: bool) -> str:
    """The policies at the top of ``series`` (ties within 1e-9 relative joined by ``=``)."""
    s = series.dropna()
    if s.empty:
        return "n/a"
    best = s.max() if largest else s.min()
    tied = [str(m) for m, v in s.items() if abs(v - best) <= 1e-9 * max(1.0, abs(best))]
    return "all" if len(tied) == len(s) and len(s) > 1 else " = ".join(tied)


def agreement_view(summary: pd.DataFrame) -> TableView:
    """Where the seed's claim and the JCT ranking agree, per trace and load: the policy
    with the most ``V`` (instances judged by value) and the one with the least mean JCT
    (judged by flow), Kendall's tau between the two rankings, what ``best`` for value does
    to the mean JCT against FIFO's, and what ``best`` for flow does to ``V`` (changes in %)."""
    v = summary[summary["objective"] == "value"]
    f = summary[summary["objective"] == "flow"]
    keys = list(dict.fromkeys(zip(summary["trace"], summary["load"], strict=True)))
    cols = ["trace", "load", "most V\n(value)", "least JCT\n(flow)", "Kendall tau\nV vs -JCT",
            "best for value:\nJCT change vs fifo %", "best for flow:\nV change vs fifo %"]
    rows, nums = [], []
    for t, load in keys:
        vv = v[(v["trace"] == t) & (v["load"] == load)].set_index("method")
        ff = f[(f["trace"] == t) & (f["load"] == load)].set_index("method")
        pols = [p for p in vv.index if p in ff.index]
        tau = _tau([vv.at[p, "value"] for p in pols], [-ff.at[p, "mean_jct_hours"] for p in pols])
        jv = _change(vv, "mean_jct_hours")
        bf = _change(ff, "batch_value")
        top_v = _top(vv["value"], largest=True) if len(vv) else "n/a"
        top_j = _top(ff["mean_jct_hours"], largest=False) if len(ff) else "n/a"
        rows.append([str(t), f"{load:g}", top_v, top_j, _f(tau, 2), _f(jv, signed=True),
                     _f(bf, signed=True)])
        nums.append({"trace": t, "load": load, "most_value": top_v, "least_jct": top_j,
                     "kendall_tau": tau, "value_best_jct_change_pct": jv,
                     "flow_best_value_change_pct": bf})
    notes = [
        "Most V: the policy with the largest mean V on instances judged by value; least JCT: "
        "the smallest mean JCT on the same instances judged by flow (\"all\": every policy "
        "ties). Tau: Kendall's tau-b between the policies' V (value) and minus their mean JCT "
        "(flow): 1 when the rankings agree; n/a when one ranking is all ties. best for value "
        "and best for flow are two schedules, one per objective. JCT change: 100 (JCT_best - "
        "JCT_fifo) / JCT_fifo on the instances judged by value (positive: the value allocator "
        "makes jobs wait longer than FIFO); V change: 100 (V_best - V_fifo) / V_fifo on the "
        "instances judged by flow.",
    ]
    table = Table(cols, rows, caption="Where the seed's claim and the JCT ranking agree",
                  notes=notes, align="lrllrrr", label="tab:arrivals-agreement")
    return TableView(pd.DataFrame(nums), table)


def _change(g: pd.DataFrame, figure: str) -> float:
    """``best``'s change from ``fifo`` in ``figure``, in % of ``fifo``'s."""
    if "best" not in g.index or "fifo" not in g.index:
        return math.nan
    b, a = float(g.at["best", figure]), float(g.at["fifo", figure])
    if not a:
        return math.nan
    return 100.0 * (b - a) / a


def arrival_views(frame: pd.DataFrame) -> dict[str, TableView]:
    """The views of the experiment by name (``jct``, ``value``, ``agreement``), those the
    frame's objectives allow."""
    s = arrival_summary(frame)
    objs = set(s["objective"])
    out: dict[str, TableView] = {}
    if "flow" in objs:
        out["jct"] = jct_view(s)
    if "value" in objs:
        out["value"] = value_view(s)
    if objs >= {"value", "flow"}:
        out["agreement"] = agreement_view(s)
    return out
