"""The simulation view: replays against actual days, each against its clairvoyant bound.

A scenario sweep stores one row per replay (``kind == "simulation"``) and one
per day's bound (label ``clairvoyant``); :func:`simulation_rows` joins them and
:func:`simulation_view` tabulates them per family, scenario, method and policy.
Each row is read in its instance's objective (``objective``: ``value``, the
default, or ``flow``, where the realized figure is the weighted flow time and
the bound a lower one).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .aggregate import ci95, family_key
from .notes import error_note, few_note
from .render import Table, TableView, fmt_ci

__all__ = ["BOUND_TOLERANCE", "simulation_rows", "simulation_view"]

BOUND_TOLERANCE = 1e-6
"""Relative slack of the check ``realized_value <= clairvoyant_bound`` (``>=`` under ``flow``)."""

_MEASURES: tuple[tuple[str, str], ...] = (
    ("realized_value", "realized"),
    ("preemptions", "preemptions"),
    ("lost_gpu_slots", "lost"),
    ("unserved_gpu_slots", "unserved"),
    ("gap_to_bound_pct", "gap"),
    ("mean_jct_hours", "jct"),
)


def _flag(values: pd.Series) -> pd.Series:
    """Booleans from JSON rows (``True``) or a CSV file (``"True"``)."""
    return values.map(lambda v: v is True or (isinstance(v, (bool, np.bool_)) and bool(v))
                      or str(v).strip().lower() == "true")


def _sense(rows: pd.DataFrame) -> np.ndarray:
    """Per row ``+1`` under ``value`` (and where no objective is stored), ``-1`` under ``flow``."""
    if "objective" not in rows.columns:
        return np.ones(len(rows))
    return np.where(rows["objective"].astype(str) == "flow", -1.0, 1.0)


def simulation_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The replay rows of a results frame, each joined to its day's clairvoyant bound.

    Adds ``clairvoyant_bound`` (NaN without one; an upper bound on the value, a
    lower bound on the flow time), ``clairvoyant_value``, ``bound_status``,
    ``price_of_uncertainty`` (what not knowing the future cost: bound minus
    realized under ``value``, realized minus bound under ``flow``),
    ``gap_to_bound_pct`` (where the bound applies) and ``bound_conflict`` (realized
    beyond an applicable bound: a bug).

    Raises
    ------
    ValueError
        If ``df`` holds no replay rows.
    """
    if "kind" not in df.columns or not (df["kind"] == "simulation").any():
        raise ValueError("results: no simulation rows (not a sweep with a [scenarios] table)")
    sim = df[df["kind"] == "simulation"].copy()
    keys = set(sim["bound_cell"].dropna())
    bounds = df[df["cell"].isin(keys) & (df["status"] != "error")].drop_duplicates("cell")
    bounds = bounds.set_index("cell")
    bound = pd.to_numeric(bounds["upper_bound"], errors="coerce")
    if "bound" in bounds.columns:  # under flow the bound is a lower one: no upper_bound
        bound = bound.fillna(pd.to_numeric(bounds["bound"], errors="coerce"))
    sim["clairvoyant_bound"] = pd.to_numeric(sim["bound_cell"].map(bound), errors="coerce")
    sim["clairvoyant_value"] = pd.to_numeric(sim["bound_cell"].map(bounds["value"]), errors="coerce")
    sim["bound_status"] = sim["bound_cell"].map(bounds["status"])
    realized = pd.to_numeric(sim["realized_value"], errors="coerce")
    ub = sim["clairvoyant_bound"]
    sign = _sense(sim)
    applies = _flag(sim["bound_applies"]) & (sim["status"] != "error")
    sim["bound_applies"] = applies
    over = sign * (ub - realized)  # what the bound is better by, in the objective's units
    scale = np.where(sign > 0, ub, realized)
    sim["price_of_uncertainty"] = over
    with np.errstate(divide="ignore", invalid="ignore"):
        gap = np.where(scale > 0, over / np.where(scale > 0, scale, 1.0),
                       np.where(over <= 0, 0.0, np.inf))
    sim["gap_to_bound_pct"] = np.where(applies & ub.notna(), 100.0 * gap, np.nan)
    slack = BOUND_TOLERANCE * np.maximum(1.0, ub.abs())
    sim["bound_conflict"] = applies & ub.notna() & (over < -slack)
    # results stored before the checker reported it have no mean JCT
    sim["mean_jct_hours"] = pd.to_numeric(sim.get("mean_jct_hours", np.nan), errors="coerce")
    return sim.reset_index(drop=True)


def _order(values: pd.Series) -> list[Any]:
    return list(dict.fromkeys(values))


def _policy_key(rows: pd.DataFrame, policy: str) -> tuple[Any, ...]:
    """One plan first, then by replan interval, headroom, preemption before none."""
    r = rows[rows["policy"] == policy].iloc[0]
    replan = pd.to_numeric(pd.Series([r["replan"]]), errors="coerce").iloc[0]
    return (not pd.isna(replan), 0 if pd.isna(replan) else replan, float(r["headroom"]),
            not _flag(pd.Series([r["preempt"]])).iloc[0])


def simulation_view(df: pd.DataFrame) -> TableView:
    """Per family, scenario, method and policy: realized value (or flow time), preemptions,
    work lost, inference unserved, gap to the clairvoyant bound and mean job completion
    time (mean ± 95% CI).
    """
    d = simulation_rows(df)
    fams = sorted(_order(d["family"]), key=family_key)
    records = []
    for fam in fams:
        f = d[d["family"] == fam]
        for scen in sorted(_order(f["scenario"]), key=str):
            s = f[f["scenario"] == scen]
            for m in _order(s["method"]):
                sm = s[s["method"] == m]
                for pol in sorted(_order(sm["policy"]), key=lambda p: _policy_key(sm, p)):
                    g = sm[sm["policy"] == pol]
                    ok = g[g["status"] != "error"]
                    rec: dict[str, Any] = {
                        "family": fam, "scenario": scen, "method": m, "policy": pol,
                        "replan": g["replan"].iloc[0], "headroom": g["headroom"].iloc[0],
                        "preempt": g["preempt"].iloc[0], "n": len(g),
                        "errors": int((g["status"] == "error").sum()),
                        "bound_applies": int(ok["bound_applies"].sum()),
                        "bound_known": int(ok["clairvoyant_bound"].notna().sum()),
                        "bound_conflicts": int(ok["bound_conflict"].sum()),
                    }
                    for col, name in _MEASURES:
                        mean, half, n = ci95(ok[col])
                        rec[f"{name}_mean"], rec[f"{name}_ci95"], rec[f"{name}_n"] = mean, half, n
                    records.append(rec)
    frame = pd.DataFrame(records)
    rows = []
    prev: tuple[Any, Any] | None = None
    for r in records:
        head = (r["family"], r["scenario"])
        rows.append([
            r["family"] if prev is None or prev[0] != r["family"] else "",
            r["scenario"] if head != prev else "",
            r["method"],
            r["policy"],
            str(r["n"]),
            fmt_ci(r["realized_mean"], r["realized_ci95"]),
            fmt_ci(r["preemptions_mean"], r["preemptions_ci95"], digits=2),
            fmt_ci(r["lost_mean"], r["lost_ci95"]),
            fmt_ci(r["unserved_mean"], r["unserved_ci95"]),
            fmt_ci(r["gap_mean"], r["gap_ci95"]),
            f"{r['bound_applies']}/{r['n']}",
            fmt_ci(r["jct_mean"], r["jct_ci95"], digits=2),
        ])
        prev = head
    notes = [
        "Mean ± half-width of the 95% confidence interval (Student's t) over the seeds "
        "(instances and scenario draws; trace days and seeds for trace-day).",
        "Realized value: the jobs that completed on the actual day (the checker's V; under the "
        "flow objective the weighted flow time F in hours, every job not completed censored at "
        "the horizon). Work lost: GPU-slots of preempted runs. Inference unserved: GPU-slots "
        "(runs without preemption). Mean JCT: the checker's mean job completion time in hours "
        "over every job, censored alike.",
        "Gap: (bound - realized) / bound, the bound being the MILP's proven upper bound on the "
        "actual day (the clairvoyant bound); under flow (realized - bound) / realized with its "
        "lower bound; over the rows where it applies, i.e. the realized "
        "schedule is feasible against the whole actual demand (not so when inference went unserved).",
    ]
    notes += error_note(frame, "replay(s)")
    missing = int((frame["bound_known"] < frame["n"] - frame["errors"]).sum()) if len(frame) else 0
    if missing:
        notes.append(f"On {missing} line(s) some days have no clairvoyant bound (no bound in the "
                     "sweep, or its MILP failed): no gap there.")
    conflicts = int(frame["bound_conflicts"].sum()) if len(frame) else 0
    if conflicts:
        notes.append(f"WARNING: {conflicts} replay(s) realized better than the clairvoyant bound "
                     "of their day although it applies: a bug in the simulator or the bound.")
    counts = [int(n) for n in frame[[f"{name}_n" for _, name in _MEASURES]].to_numpy().ravel()] \
        if len(frame) else []
    table = Table(
        columns=["Family", "Scenario", "Method", "Policy", "n", "Realized\nvalue", "Preemptions",
                 "Work lost\n(GPU-slots)", "Inference\nunserved", "Gap to\nbound (%)",
                 "Bound\napplies", "Mean JCT\n(h)"],
        rows=rows,
        caption="Replays against actual days: realized value, preemptions, work lost, inference "
                "unserved, gap to the clairvoyant bound and mean JCT, per scenario, method and "
                "policy.",
        notes=notes + few_note(counts, "values"),
        align="llll" + "r" * 8,
        label="tab:gpusched-simulation",
    )
    return TableView(frame, table)
