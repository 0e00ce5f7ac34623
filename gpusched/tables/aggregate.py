"""The numbers behind the tables: gains, gaps and 95% confidence intervals of the rows.

Every figure comes from the stored rows (so from :func:`instances.evaluate`):
gains are :func:`instances.gain` over the baseline's row of the instance, gaps
:func:`instances.gap` to the instance's best known bound (the smallest upper bound of
its rows under ``value``, the largest lower bound under ``flow``). A best bound on the
wrong side of a feasible value is a bug: it is logged and flagged (``ub_conflict``).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

import instances
from instances import Metrics

from ..sweep.cells import METRIC_FIELDS

__all__ = ["CONFIDENCE", "FEW_VALUES", "ci95", "family_key", "prepare", "t_quantile"]

logger = logging.getLogger(__name__)

CONFIDENCE = 0.95
"""Level of the intervals the tables print."""

FEW_VALUES = 5
"""Below this many values, a table says its intervals are wide and unreliable."""


def _metrics(row: pd.Series) -> Metrics | None:
    if row.get("status") == "error" or pd.isna(row.get("value")) or pd.isna(row.get("utilization")):
        return None
    kw: dict[str, Any] = {}
    for k in METRIC_FIELDS:
        v = row.get(k)
        kw[k] = math.nan if v is None or pd.isna(v) else v
    kw["reservation"] = str(row.get("reservation") or "curve")
    kw["objective"] = _objective(row.get("objective"))
    return Metrics(**kw)


def _objective(x: Any) -> str:
    """A row's objective (``value`` for the rows of before the field)."""
    return "value" if x is None or (isinstance(x, float) and math.isnan(x)) else str(x)


def prepare(df: pd.DataFrame, baseline: str = "fifo") -> pd.DataFrame:
    """The rows with the tables' derived columns: ``best_ub``, ``best_value``,
    ``ub_conflict``, ``gap_best``, ``gain_pp``, ``gain_pct`` and ``gain_total_pct``
    (over the ``baseline`` row of the instance; NaN where its figure is 0) and ``optimal``.
    """
    df = df.reset_index(drop=True)
    key = "instance_hash" if "instance_hash" in df.columns else "instance"
    ok = df["status"] != "error"
    for col in ("value", "upper_bound", "bound", "utilization", "runtime_s"):
        if col not in df.columns:
            df[col] = np.nan
        df[col] = pd.to_numeric(df[col], errors="coerce")
    df.loc[~ok, ["value", "utilization"]] = np.nan
    objective = (df["objective"] if "objective" in df.columns
                 else pd.Series([None] * len(df), index=df.index)).map(_objective)
    sign = np.where(objective == "flow", -1.0, 1.0)  # larger signed values are better
    bound = df["bound"].where(df["bound"].notna(), df["upper_bound"])  # rows of before: upper_bound
    df["best_ub"] = sign * (sign * bound).groupby(df[key]).transform("min")
    df["best_value"] = sign * (sign * df["value"]).groupby(df[key]).transform("max")
    tol = 1e-6 * np.maximum(1.0, df["best_value"].abs())
    df["ub_conflict"] = sign * (df["best_ub"] - df["best_value"]) < -tol
    if df["ub_conflict"].any():
        bad = sorted(df.loc[df["ub_conflict"], "instance"].unique())
        logger.error("best known upper bound below a feasible value on %d instance(s): %s "
                     "(an exact method reported a wrong bound)", len(bad), ", ".join(bad))

    def g(row: pd.Series) -> float:
        if not ok[row.name] or pd.isna(row["value"]):
            return math.nan
        ub = None if pd.isna(row["best_ub"]) else float(row["best_ub"])
        out = instances.gap(float(row["value"]), ub, objective[row.name])
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


def family_key(family: Any) -> tuple[int, str]:
    """Sort key of a family in the tables: the registry's order (the seed family
    first), then the others by name."""
    known = list(instances.FAMILIES)
    return (known.index(family) if family in known else len(known), str(family))


def t_quantile(n: int) -> float:
    """Student's t quantile of a two-sided :data:`CONFIDENCE` interval over ``n`` values."""
    return float(stats.t.ppf(0.5 + CONFIDENCE / 2, n - 1))


def ci95(values: Sequence[float] | pd.Series | np.ndarray) -> tuple[float, float, int]:
    """Mean, half-width of the 95% confidence interval (Student's t) and count, NaN
    values left out; the half-width is NaN for fewer than two values, 0 for equal ones.
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
    half = t_quantile(n) * sd / math.sqrt(n) if sd > 0 else 0.0
    return mean, half, n
