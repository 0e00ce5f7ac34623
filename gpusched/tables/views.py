"""The views of a sweep's rows: summary, seed and ablation tables, and every view by name.

A view is a :class:`~.render.TableView`: the numbers (what ``--format csv``
writes) and the formatted :class:`~.render.Table`; its notes say when a bound
conflicts with a value or an interval rests on few values.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from instances.families import SEED_SCENARIOS

from .aggregate import ci95, family_key, prepare
from .notes import conflict_note, error_note, few_note
from .render import Table, TableView, fmt_ci
from .topology import topology_view

__all__ = [
    "ABLATION_GRID",
    "ABLATION_ORDERINGS",
    "PUBLISHED",
    "SEED_FAMILY",
    "SUMMARY_METRICS",
    "VIEWS",
    "ablation_view",
    "seed_view",
    "summary_view",
    "view",
]

SEED_FAMILY = "seed-training-heavy"

PUBLISHED: dict[str, dict[str, Any]] = {
    SEED_FAMILY: {"util_fifo": "53.6", "util_alloc": "87.0", "value_gain": "+105.1"},
    "scenarios": {"util_fifo": "52-85", "util_alloc": "72-88", "value_gain": "+52 (mean)"},
}
"""The seed's published figures (percent): 8-GPU test and the five-scenario band."""

ABLATION_ORDERINGS: tuple[str, ...] = ("FIFO", "backfill", "priority list", "best")

ABLATION_GRID: dict[tuple[str, str], tuple[str, ...]] = {
    ("FIFO", "peak"): ("fifo",),
    ("FIFO", "curve"): ("fifo-curve",),
    ("backfill", "peak"): ("easy-peak", "conservative-peak", "backfill-peak"),
    ("backfill", "curve"): ("easy", "easy-curve", "conservative", "conservative-curve",
                            "backfill", "backfill-curve"),
    ("priority list", "peak"): ("list-peak",),
    ("priority list", "curve"): ("list", "list-curve"),
    ("best", "peak"): ("best-peak",),
    ("best", "curve"): ("best", "best-curve"),
}
"""(ordering, reservation) -> method labels that fill the cell, first present wins.

A candidate only fills a cell when its rows report that reservation."""


SUMMARY_METRICS: tuple[tuple[str, str], ...] = (
    ("utilization_pct", "utilization"),
    ("value", "value"),
    ("gain_pp", "gain_pp"),
    ("gain_pct", "gain_pct"),
    ("gap_pct", "gap_pct"),
    ("runtime_s", "runtime_s"),
)


def _order(methods: Sequence[str], df: pd.DataFrame) -> list[str]:
    seen = list(dict.fromkeys(df["method"]))
    return [m for m in methods if m in seen] + [m for m in seen if m not in methods]


def summary_view(df: pd.DataFrame, baseline: str = "fifo",
                 methods: Sequence[str] = (), only: Sequence[str] = ()) -> TableView:
    """Per family and method: mean and 95% CI of utilization, value, gains, gap, runtime.

    ``methods`` is the preferred order (the others follow); ``only`` shows those
    methods only (gains and gaps still use every row).
    """
    d = prepare(df, baseline)
    records = []
    fams = sorted(dict.fromkeys(d["family"]), key=family_key)
    order = _order(methods or [baseline], d)
    if only:
        order = [m for m in order if m in set(only)]
    for fam in fams:
        sub = d[d["family"] == fam]
        for m in order:
            s = sub[sub["method"] == m]
            if s.empty:
                continue
            rec: dict[str, Any] = {"family": fam, "method": m, "n": len(s),
                                   "errors": int((s["status"] == "error").sum()),
                                   "optimal": int(s["optimal"].sum())}
            for col, name in SUMMARY_METRICS:
                mean, half, n = ci95(s[col])
                rec[f"{name}_mean"], rec[f"{name}_ci95"], rec[f"{name}_n"] = mean, half, n
            rec["gain_pct_undefined"] = int(s["baseline_value_zero"].sum())
            records.append(rec)
    frame = pd.DataFrame(records)
    rows = []
    prev = None
    for r in records:
        rows.append([
            r["family"] if r["family"] != prev else "",
            r["method"],
            str(r["n"]),
            fmt_ci(r["utilization_mean"], r["utilization_ci95"]),
            fmt_ci(r["value_mean"], r["value_ci95"], digits=0),
            fmt_ci(r["gain_pp_mean"], r["gain_pp_ci95"], signed=True),
            fmt_ci(r["gain_pct_mean"], r["gain_pct_ci95"], signed=True)
            + (f" ({r['gain_pct_undefined']} n/a)" if r["gain_pct_undefined"] else ""),
            fmt_ci(r["gap_pct_mean"], r["gap_pct_ci95"]),
            fmt_ci(r["runtime_s_mean"], r["runtime_s_ci95"], digits=2),
            f"{r['optimal']}/{r['n']}",
        ])
        prev = r["family"]
    notes = [
        "Mean ± half-width of the 95% confidence interval (Student's t) over the seeds.",
        f"Gains are over {baseline} on the same instance: utilization in percentage points, "
        f"value in percent (n/a where {baseline}'s value is 0).",
        "Gap: (UB - V) / UB to the best known upper bound of the instance "
        "(smallest bound any exact method proved).",
    ]
    notes += error_note(frame, "cell(s)")
    table = Table(
        columns=["Family", "Method", "n", "Util.\n(%)", "Value", "Util. gain\n(pp)",
                 "Value gain\n(%)", "Gap to\nUB (%)", "Time\n(s)", "Optimal"],
        rows=rows,
        caption="Per family and method: utilization, value, gain over FIFO, gap to the best "
                "known bound, runtime.",
        notes=notes + few_note(_interval_counts(frame), "seeds") + conflict_note(d),
        align="ll" + "r" * 8,
        label="tab:gpusched-summary",
    )
    return TableView(frame, table)


def _interval_counts(frame: pd.DataFrame) -> list[int]:
    """The counts behind the summary's printed intervals."""
    cols = [f"{name}_n" for _, name in SUMMARY_METRICS if f"{name}_n" in frame.columns]
    return [int(n) for n in frame[cols].to_numpy().ravel()] if cols else []


def _band(values: Sequence[float]) -> str:
    v = [x for x in values if math.isfinite(x)]
    if not v:
        return "n/a"
    return f"{min(v):.0f}-{max(v):.0f}"


def seed_view(df: pd.DataFrame, baseline: str = "fifo", allocator: str = "best") -> TableView:
    """The seed table: FIFO against the allocator, our figures beside the published ones.

    Rows: ``seed-training-heavy``, each of :data:`instances.families.SEED_SCENARIOS`
    present, and the scenarios pooled. Without rows of ``allocator``, the first of
    ``best``, ``list``, ``fifo-curve`` present stands in (named in the notes).
    """
    d = prepare(df, baseline)
    present = set(d["method"])
    alloc = allocator
    if alloc not in present:
        alloc = next((m for m in ("best", "list", "fifo-curve") if m in present), allocator)
    records = []
    counts: list[int] = []  # of the values behind each printed interval

    def record(label: str, sub: pd.DataFrame, published: dict[str, Any] | None) -> dict[str, Any]:
        b = sub[sub["method"] == baseline]
        a = sub[sub["method"] == alloc]
        rec: dict[str, Any] = {"scenario": label, "n": int(a["instance"].nunique())}
        for k, s in (("util_fifo", b["utilization_pct"]), ("util_alloc", a["utilization_pct"]),
                     ("value_gain", a["gain_pct"]), ("util_gain", a["gain_pp"]),
                     ("total_gain", a["gain_total_pct"]),
                     ("gap_alloc", a["gap_pct"]), ("gap_fifo", b["gap_pct"])):
            rec[f"{k}_mean"], rec[f"{k}_ci95"], n = ci95(s)
            if k not in ("util_gain", "gap_fifo"):  # the columns printed
                counts.append(n)
        rec["value_gain_undefined"] = int(a["baseline_value_zero"].sum())
        for k in ("util_fifo", "util_alloc", "value_gain"):
            rec[f"published_{k}"] = (published or {}).get(k, "")
        return rec

    if SEED_FAMILY in set(d["family"]):
        records.append(record(SEED_FAMILY, d[d["family"] == SEED_FAMILY], PUBLISHED[SEED_FAMILY]))
    scen = [s for s in SEED_SCENARIOS if s in set(d["family"])]
    for s in scen:
        records.append(record(s, d[d["family"] == s], None))
    pooled = None
    if scen:
        pooled = record(f"all {len(scen)} hc-* scenarios", d[d["family"].isin(scen)],
                        PUBLISHED["scenarios"])
        per = [r for r in records if r["scenario"] in scen]
        pooled["util_fifo_band"] = _band([r["util_fifo_mean"] for r in per])
        pooled["util_alloc_band"] = _band([r["util_alloc_mean"] for r in per])
        records.append(pooled)
    if not records:
        raise ValueError(f"results: no rows of {SEED_FAMILY} or of the high-contention "
                         "scenarios; the seed view has nothing to show")
    frame = pd.DataFrame(records)
    rows = []
    for r in records:
        if r is pooled:
            uf, ua = f"{r['util_fifo_band']} (band)", f"{r['util_alloc_band']} (band)"
        else:
            uf = fmt_ci(r["util_fifo_mean"], r["util_fifo_ci95"])
            ua = fmt_ci(r["util_alloc_mean"], r["util_alloc_ci95"])
        vg = fmt_ci(r["value_gain_mean"], r["value_gain_ci95"], signed=True)
        if r["value_gain_undefined"]:
            vg += f" ({r['value_gain_undefined']} n/a)"
        pub_u = (f"{r['published_util_fifo']} → {r['published_util_alloc']}"
                 if r["published_util_fifo"] else "—")
        rows.append([
            r["scenario"], str(r["n"]), pub_u, uf, ua,
            r["published_value_gain"] or "—", vg,
            fmt_ci(r["total_gain_mean"], r["total_gain_ci95"], signed=True),
            fmt_ci(r["gap_alloc_mean"], r["gap_alloc_ci95"], digits=2),
        ])
    notes = [
        f"Ours: {baseline} → {alloc}, mean ± 95% CI over n seeds; utilization in percent, "
        f"value gain in percent of {baseline}'s priority-weighted batch GPU-hours (V); "
        "total-value gain counts inference too (total_value): the seed does not say which "
        "of the two its value is.",
        "Published: the seed's figures (its own instances, not ours).",
        f"Gap: {alloc}'s distance to the best known upper bound of the instance (MILP).",
    ]
    if alloc != allocator:
        notes.append(f"{allocator!r} has no rows here; {alloc!r} stands in as the allocator.")
    table = Table(
        columns=["Scenario", "n", "Util. (%)\npublished", f"Util. (%)\n{baseline}",
                 f"Util. (%)\n{alloc}", "Value gain (%)\npublished", "Value gain (%)\nours",
                 "Total-value\ngain (%)", "Gap to\nUB (%)"],
        rows=rows,
        caption=f"Seed reproduction: FIFO against the constraint-aware allocator ({alloc}).",
        notes=notes + few_note(counts, "seeds") + conflict_note(d),
        align="lrrrrrrrr",
        label="tab:gpusched-seed",
    )
    return TableView(frame, table)


def ablation_view(df: pd.DataFrame, baseline: str = "fifo") -> TableView:
    """Reservation (peak / curve) x ordering (FIFO / backfill / priority list / best):
    mean utilization and value gain over every instance, each cell filled by the first
    label of :data:`ABLATION_GRID` whose rows report that reservation (``—``: none).
    """
    d = prepare(df, baseline)
    present = set(d["method"])
    records: list[dict[str, Any]] = []
    rows = []
    counts: list[int] = []
    for order in ABLATION_ORDERINGS:
        cells = [order]
        for res in ("peak", "curve"):
            label = next(
                (m for m in ABLATION_GRID[(order, res)]
                 if m in present and (d.loc[d["method"] == m, "reservation"].dropna() == res).all()
                 and d.loc[d["method"] == m, "reservation"].notna().any()),
                None,
            )
            if label is None:
                cells += ["—", "—"]
                records.append({"ordering": order, "reservation": res, "method": None})
                continue
            s = d[d["method"] == label]
            um, uh, n = ci95(s["utilization_pct"])
            gm, gh, gn = ci95(s["gain_pct"])
            counts += [n, gn]
            records.append({"ordering": order, "reservation": res, "method": label, "n": n,
                            "utilization_mean": um, "utilization_ci95": uh,
                            "value_gain_mean": gm, "value_gain_ci95": gh})
            cells += [f"{fmt_ci(um, uh)} ({label})", fmt_ci(gm, gh, signed=True)]
        rows.append(cells)
    frame = pd.DataFrame(records)
    n_inst = d["instance_hash" if "instance_hash" in d.columns else "instance"].nunique()
    table = Table(
        columns=["Ordering", "Peak:\nutil. (%)", "Peak:\nvalue gain (%)",
                 "Curve:\nutil. (%)", "Curve:\nvalue gain (%)"],
        rows=rows,
        caption="Ablation: reservation policy x ordering rule.",
        notes=[f"Mean ± 95% CI over {n_inst} instance(s); value gain over {baseline}; "
               "the method measured is named in each cell; — where none was run.",
               *few_note(counts, "instances"), *conflict_note(d)],
        align="lrrrr",
        label="tab:gpusched-ablation",
    )
    return TableView(frame, table)


VIEWS: dict[str, Callable[..., TableView]] = {
    "summary": summary_view,
    "seed": seed_view,
    "ablation": ablation_view,
    "topology": topology_view,
}
"""View name -> builder ``(rows, baseline=...) -> TableView``."""


def view(df: pd.DataFrame, name: str = "summary", **kw: Any) -> TableView:
    """Build a view by name (:data:`VIEWS`).

    Raises
    ------
    ValueError
        For an unknown view, or rows without the columns a table needs.
    """
    if name not in VIEWS:
        raise ValueError(f"view: expected one of {', '.join(VIEWS)}, got {name!r}")
    missing = {"family", "method", "status", "value", "utilization", "instance"} - set(df.columns)
    if missing:
        raise ValueError(f"results: missing column(s) {sorted(missing)}")
    return VIEWS[name](df, **kw)
