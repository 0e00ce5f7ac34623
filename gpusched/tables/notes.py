"""The notes a table carries about its own numbers: intervals on few values, and
upper bounds below a feasible value."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from .aggregate import FEW_VALUES, t_quantile

__all__ = ["conflict_note", "error_note", "few_note"]


def few_note(counts: Iterable[int], unit: str) -> list[str]:
    """A warning when an interval of the table rests on fewer than :data:`FEW_VALUES` values."""
    small = sorted({int(n) for n in counts if 2 <= n < FEW_VALUES})
    if not small:
        return []
    ns = " or ".join(str(n) for n in small)
    ts = ", ".join(f"{t_quantile(n):.1f}" for n in small)
    return [f"Caution: some intervals rest on only {ns} {unit} (fewer than {FEW_VALUES}): "
            f"Student's t is then {ts} (it is {t_quantile(30):.1f} for 30), so these intervals are "
            "wide and unreliable; run more seeds before reading them."]


def conflict_note(df: pd.DataFrame) -> list[str]:
    """A warning naming the instances where a reported upper bound is below a feasible value."""
    if df["ub_conflict"].any():
        bad = sorted(df.loc[df["ub_conflict"], "instance"].unique())
        return [f"WARNING: on {len(bad)} instance(s) ({', '.join(bad[:5])}) a reported upper "
                "bound is below a feasible value: a solver bug; gaps there are not meaningful."]
    return []


def error_note(frame: pd.DataFrame, what: str) -> list[str]:
    """How many ``what`` (``cell(s)``, ``replay(s)``) of the table ended in error."""
    errs = int(frame["errors"].sum()) if len(frame) else 0
    return [f"{errs} {what} ended in error and are left out of the means."] if errs else []
