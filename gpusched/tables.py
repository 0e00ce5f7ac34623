"""Comparison tables from benchmark rows: summary, seed and ablation views.

Every figure comes from the rows that :mod:`gpusched.bench` stored, which come
from :func:`instances.evaluate`; this module only aggregates them. Gains over
FIFO are :func:`instances.gain` of the two rows' metrics and gaps are
:func:`instances.gap` against the best known upper bound of the instance: the
smallest ``upper_bound`` of any row of that instance. A best bound below the
best feasible value seen for the same instance is a bug somewhere; it is
logged as an error and flagged in the table's notes.

A view is a :class:`TableView`: a numeric :class:`pandas.DataFrame` (what
``--format csv`` writes) and the formatted :class:`Table` (Markdown or
booktabs LaTeX).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

import instances
from instances import Metrics
from instances.families import SEED_SCENARIOS

__all__ = [
    "ABLATION_GRID",
    "PUBLISHED",
    "VIEWS",
    "Table",
    "TableView",
    "ablation_view",
    "ci95",
    "prepare",
    "seed_view",
    "summary_view",
    "view",
]

logger = logging.getLogger(__name__)

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


# ---------------------------------------------------------------- derived columns
_METRIC_FIELDS = ("value", "utilization", "reserved_idle", "jobs_run", "jobs_rejected",
                  "weighted_mean_wait", "total_value", "inference_gpu_slots",
                  "batch_gpu_slots", "capacity_gpu_slots")


def _metrics(row: pd.Series) -> Metrics | None:
    if row.get("status") == "error" or pd.isna(row.get("value")) or pd.isna(row.get("utilization")):
        return None
    kw: dict[str, Any] = {}
    for k in _METRIC_FIELDS:
        v = row.get(k)
        kw[k] = math.nan if v is None or pd.isna(v) else v
    kw["reservation"] = str(row.get("reservation") or "curve")
    return Metrics(**kw)


def prepare(df: pd.DataFrame, baseline: str = "fifo") -> pd.DataFrame:
    """The rows with derived columns for the tables.

    Adds ``best_ub`` (smallest upper bound of any row of the instance),
    ``best_value`` (largest value of the instance), ``ub_conflict`` (best
    bound below best value: a bug), ``gap_best`` (:func:`instances.gap` of the
    value to ``best_ub``), ``gain_pp``, ``gain_pct`` and ``gain_total_pct``
    (:func:`instances.gain` over the ``baseline`` row of the same instance: in
    utilization points, in ``V`` and in ``total_value``; NaN where the
    baseline's figure is 0) and ``optimal``.
    """
    df = df.reset_index(drop=True)
    key = "instance_hash" if "instance_hash" in df.columns else "instance"
    ok = df["status"] != "error"
    for col in ("value", "upper_bound", "utilization", "runtime_s"):
        if col not in df.columns:
            df[col] = np.nan
        df[col] = pd.to_numeric(df[col], errors="coerce")
    df.loc[~ok, ["value", "utilization"]] = np.nan
    df["best_ub"] = df.groupby(key)["upper_bound"].transform("min")
    df["best_value"] = df.groupby(key)["value"].transform("max")
    tol = 1e-6 * np.maximum(1.0, df["best_value"].abs())
    df["ub_conflict"] = df["best_ub"] < df["best_value"] - tol
    if df["ub_conflict"].any():
        bad = sorted(df.loc[df["ub_conflict"], "instance"].unique())
        logger.error("best known upper bound below a feasible value on %d instance(s): %s "
                     "(an exact method reported a wrong bound)", len(bad), ", ".join(bad))

    def g(row: pd.Series) -> float:
        if not ok[row.name] or pd.isna(row["value"]):
            return math.nan
        ub = None if pd.isna(row["best_ub"]) else float(row["best_ub"])
        out = instances.gap(float(row["value"]), ub)
        return math.nan if out is None else out

    df["gap_best"] = df.apply(g, axis=1) if len(df) else np.nan

    base = {}
    for _, row in df[(df["method"] == baseline) & ok].iterrows():
        m = _metrics(row)
        if m is not None:
            base[row[key]] = m
    gains: dict[str, list[float]] = {"utilization_pp": [], "value_pct": [], "total_value_pct": []}
    for _, row in df.iterrows():
        m, b = _metrics(row), base.get(row[key])
        gn = instances.gain(m, b) if m is not None and b is not None else {}
        for k, out in gains.items():
            v = gn.get(k)
            out.append(math.nan if v is None else v)
    df["gain_pp"] = gains["utilization_pp"]
    df["gain_pct"] = gains["value_pct"]
    df["gain_total_pct"] = gains["total_value_pct"]
    df["baseline_value_zero"] = [bool(b is not None and b.value == 0)
                                 for b in (base.get(k) for k in df[key])]
    df["optimal"] = df["status"] == "optimal"
    df["utilization_pct"] = 100.0 * df["utilization"]
    df["gap_pct"] = 100.0 * df["gap_best"]
    return df


def ci95(values: Sequence[float] | pd.Series | np.ndarray) -> tuple[float, float, int]:
    """Mean, half-width of the 95% confidence interval (Student's t) and count.

    NaN values are left out. The half-width is NaN for fewer than two values
    and 0 when they are all equal.
    """
    x = np.asarray(pd.to_numeric(pd.Series(values), errors="coerce"), dtype=float)
    x = x[~np.isnan(x)]
    n = len(x)
    if n == 0:
        return math.nan, math.nan, 0
    mean = float(x.mean())
    if n == 1:
        return mean, math.nan, 1
    sd = float(x.std(ddof=1))
    half = float(stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n)) if sd > 0 else 0.0
    return mean, half, n


# ---------------------------------------------------------------- rendering
@dataclass
class Table:
    """A formatted table: header, string cells, caption and notes."""

    columns: list[str]
    rows: list[list[str]]
    caption: str = ""
    notes: list[str] = field(default_factory=list)
    align: str = ""
    label: str = ""

    def _flat(self) -> list[str]:
        """Column names on one line (a ``\\n`` in a name breaks it in LaTeX only)."""
        return [" ".join(c.split("\n")) for c in self.columns]

    def _align(self) -> str:
        return self.align or ("l" + "r" * (len(self.columns) - 1))

    def to_markdown(self) -> str:
        """A GitHub-flavoured Markdown table, caption above and notes below."""
        al = self._align()
        widths = [max(len(c), *(len(r[i]) for r in self.rows)) if self.rows else len(c)
                  for i, c in enumerate(self._flat())]

        def line(cells: Sequence[str]) -> str:
            out = []
            for i, c in enumerate(cells):
                out.append(c.ljust(widths[i]) if al[i] == "l" else c.rjust(widths[i]))
            return "| " + " | ".join(out) + " |"

        sep = "|" + "|".join(
            (":" + "-" * (w + 1)) if al[i] == "l" else ("-" * (w + 1) + ":")
            for i, w in enumerate(widths)
        ) + "|"
        lines = []
        if self.caption:
            lines += [f"**{self.caption}**", ""]
        lines += [line(self._flat()), sep, *(line(r) for r in self.rows)]
        if self.notes:
            lines.append("")
            lines += [f"{n}" for n in self.notes]
        return "\n".join(lines) + "\n"

    def to_latex(self) -> str:
        """A booktabs ``table`` float; needs ``\\usepackage{booktabs}`` only."""
        al = self._align()
        out = [
            "% Requires \\usepackage{booktabs} in the preamble.",
            "\\begin{table}[htbp]",
            "\\centering",
            "\\footnotesize",
            "\\setlength{\\tabcolsep}{2.5pt}",
        ]
        if self.caption:
            out.append(f"\\caption{{{latex_escape(self.caption)}}}")
        if self.label:
            out.append(f"\\label{{{self.label}}}")
        out += [
            f"\\begin{{tabular}}{{{al}}}",
            "\\toprule",
            " & ".join(_latex_header(c, a) for c, a in zip(self.columns, al)) + " \\\\",
            "\\midrule",
        ]
        out += [" & ".join(latex_escape(c) for c in r) + " \\\\" for r in self.rows]
        out += ["\\bottomrule", "\\end{tabular}"]
        if self.notes:
            out.append("\\par\\smallskip")
            out.append("\\parbox{\\linewidth}{\\footnotesize "
                       + " ".join(latex_escape(n) for n in self.notes) + "}")
        out.append("\\end{table}")
        return "\n".join(out) + "\n"


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
    "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "±": r"$\pm$", "→": r"$\rightarrow$", "–": "--", "—": "---", "≤": r"$\leq$",
    "≥": r"$\geq$", "×": r"$\times$", "−": "$-$",
}


def _latex_header(name: str, align: str) -> str:
    """A header cell; a name with ``\\n`` becomes a two-line nested tabular."""
    parts = name.split("\n")
    if len(parts) == 1:
        return latex_escape(name)
    inner = " \\\\ ".join(latex_escape(p) for p in parts)
    return f"\\begin{{tabular}}[b]{{@{{}}{align}@{{}}}}{inner}\\end{{tabular}}"


def latex_escape(text: str) -> str:
    """Escape LaTeX's special characters (and the few symbols the tables use)."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def fmt_ci(mean: float, half: float, digits: int = 1, signed: bool = False) -> str:
    """``mean ± half`` (``n/a`` for a missing mean, no ``±`` for a single value)."""
    if mean is None or not math.isfinite(mean):
        return "n/a"
    spec = f"{'+' if signed else ''}.{digits}f"
    s = format(mean, spec)
    if half is not None and math.isfinite(half):
        s += f" ± {half:.{digits}f}"
    return s


@dataclass
class TableView:
    """One view: the numbers (``frame``) and their formatted table."""

    frame: pd.DataFrame
    table: Table

    def render(self, fmt: str) -> str:
        """``markdown``, ``latex`` or ``csv`` text."""
        if fmt == "markdown":
            return self.table.to_markdown()
        if fmt == "latex":
            return self.table.to_latex()
        if fmt == "csv":
            return self.frame.to_csv(index=False)
        raise ValueError(f"format: expected markdown, latex or csv, got {fmt!r}")


def _conflict_note(df: pd.DataFrame) -> list[str]:
    if df["ub_conflict"].any():
        bad = sorted(df.loc[df["ub_conflict"], "instance"].unique())
        return [f"WARNING: on {len(bad)} instance(s) ({', '.join(bad[:5])}) a reported upper "
                "bound is below a feasible value: a solver bug; gaps there are not meaningful."]
    return []


# ---------------------------------------------------------------- views
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

    Parameters
    ----------
    df
        Rows from :func:`gpusched.bench.load_rows`.
    baseline
        Method label of the FIFO baseline for the gains.
    methods
        Preferred method order (others follow in order of appearance).
    only
        Show these methods only (gains and gaps still use every row).
    """
    d = prepare(df, baseline)
    records = []
    known = list(instances.FAMILIES)  # the registry's order: seed family first
    fams = sorted(dict.fromkeys(d["family"]),
                  key=lambda f: (known.index(f) if f in known else len(known), str(f)))
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
    errs = int(frame["errors"].sum()) if len(frame) else 0
    if errs:
        notes.append(f"{errs} cell(s) ended in error and are left out of the means.")
    table = Table(
        columns=["Family", "Method", "n", "Util.\n(%)", "Value", "Util. gain\n(pp)",
                 "Value gain\n(%)", "Gap to\nUB (%)", "Time\n(s)", "Optimal"],
        rows=rows,
        caption="Per family and method: utilization, value, gain over FIFO, gap to the best "
                "known bound, runtime.",
        notes=notes + _conflict_note(d),
        align="ll" + "r" * 8,
        label="tab:gpusched-summary",
    )
    return TableView(frame, table)


def _band(values: Sequence[float]) -> str:
    v = [x for x in values if math.isfinite(x)]
    if not v:
        return "n/a"
    return f"{min(v):.0f}-{max(v):.0f}"


def seed_view(df: pd.DataFrame, baseline: str = "fifo", allocator: str = "best") -> TableView:
    """The seed table: FIFO against the allocator, our figures beside the published ones.

    Rows: ``seed-training-heavy``, each of :data:`instances.families.SEED_SCENARIOS`
    present in ``df``, and the five scenarios pooled (utilization as the band
    of the scenarios' means, value gain as the mean over every instance).

    Parameters
    ----------
    allocator
        Method label of the constraint-aware allocator; when absent from
        ``df``, the first of ``best``, ``list``, ``fifo-curve`` present is used
        (and named in the notes).
    """
    d = prepare(df, baseline)
    present = set(d["method"])
    alloc = allocator
    if alloc not in present:
        alloc = next((m for m in ("best", "list", "fifo-curve") if m in present), allocator)
    records = []

    def record(label: str, sub: pd.DataFrame, published: dict[str, Any] | None) -> dict[str, Any]:
        b = sub[sub["method"] == baseline]
        a = sub[sub["method"] == alloc]
        rec: dict[str, Any] = {"scenario": label, "n": int(a["instance"].nunique())}
        for k, s in (("util_fifo", b["utilization_pct"]), ("util_alloc", a["utilization_pct"]),
                     ("value_gain", a["gain_pct"]), ("util_gain", a["gain_pp"]),
                     ("total_gain", a["gain_total_pct"]),
                     ("gap_alloc", a["gap_pct"]), ("gap_fifo", b["gap_pct"])):
            rec[f"{k}_mean"], rec[f"{k}_ci95"], _ = ci95(s)
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
        notes=notes + _conflict_note(d),
        align="lrrrrrrrr",
        label="tab:gpusched-seed",
    )
    return TableView(frame, table)


def ablation_view(df: pd.DataFrame, baseline: str = "fifo") -> TableView:
    """Reservation (peak / curve) x ordering (FIFO / backfill / priority list / best).

    Each cell pools every instance in ``df``: mean utilization (percent) and
    mean value gain over ``baseline`` (percent). The method filling a cell is
    the first label of :data:`ABLATION_GRID` present whose rows report that
    reservation; cells with none are ``—``.
    """
    d = prepare(df, baseline)
    present = set(d["method"])
    records: list[dict[str, Any]] = []
    rows = []
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
            gm, gh, _ = ci95(s["gain_pct"])
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
               *_conflict_note(d)],
        align="lrrrr",
        label="tab:gpusched-ablation",
    )
    return TableView(frame, table)


VIEWS: dict[str, Callable[..., TableView]] = {
    "summary": summary_view,
    "seed": seed_view,
    "ablation": ablation_view,
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
