"""The benchmark library as users call it: list, get, verify, and compare a sweep with it.

The format and its checks are :mod:`instances.library`; this module adds the
table of best known values (:func:`table`) and :func:`compare`, which sets a
sweep's rows beside the best known values and flags what cannot be and what is new.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import pandas as pd

import instances
from instances.library import Library, LibraryEntry, load_library, verify

from .tables import Table, TableView

__all__ = [
    "BUG_FLAGS",
    "TOLERANCE",
    "compare",
    "compare_view",
    "entries",
    "get",
    "percent",
    "table",
    "verify",
]

TOLERANCE = 1e-9
"""Relative tolerance of the comparisons (as :func:`instances.check_bound`)."""

EXCEEDS_BOUND = "exceeds best known bound"
BOUND_BELOW_BEST = "bound below best known value"
NEW_BEST = "new best known"
BUG_FLAGS: tuple[str, ...] = (EXCEEDS_BOUND, BOUND_BELOW_BEST)
"""Flags that mean a bug somewhere (the row, or the library): no valid value or bound can."""

PathLike = str | os.PathLike[str] | None


def _lib(path: PathLike | Library) -> Library:
    return path if isinstance(path, Library) else load_library(path)


def entries(path: PathLike = None) -> list[LibraryEntry]:
    """The library's entries, in index order (default: the shipped library)."""
    return list(_lib(path).entries)


def get(name: str, path: PathLike = None) -> instances.Instance:
    """The instance named ``name`` (its content checked against the index's hash).

    Raises
    ------
    ValueError
        For a name the library does not hold, or an instance file that changed.
    """
    return _lib(path).get(name).load_instance()


def percent(x: float, digits: int = 2) -> str:
    """``x`` (a fraction) as a percentage with ``digits`` decimals: ``0.0123`` -> ``1.23%``.

    Never ``-0.00%``: a gap of ``-1e-12`` (a bound a hair below its value, within the
    tolerance) rounds to ``0.00%``. Every gap of the library's tables is written here.
    """
    return f"{round(100 * x, digits) + 0.0:.{digits}f}%"  # -0.0 + 0.0 is 0.0


def _floor2(x: float) -> str:
    return f"{math.floor(x * 100 + 1e-6) / 100:,.2f}"


def _ceil2(x: float) -> str:
    return f"{math.ceil(x * 100 - 1e-6) / 100:,.2f}"


def provenance(e: LibraryEntry) -> str:
    """How the bound is proved, in a few words."""
    b = e.bound
    if b.certificate is not None:
        return f"Lagrangian certificate ({b.certificate.parent.name}/{b.certificate.name})"
    s = b.solver or {}
    how = "optimal" if s.get("status") == "optimal" else f"time limit {s.get('time_limit'):g} s"
    src = f", {s['bound_method']} bound" if s.get("bound_method") else ""
    return f"{s.get('name')} {s.get('version')}, {how}{src}"


def table(path: PathLike = None) -> TableView:
    """The table of best known values: name, family, size, value, bound, gap, provenance
    (values rounded down and bounds up to two decimals, never past the stated ones).
    """
    lib = _lib(path)
    rows, frame = [], []
    for e in lib.entries:
        inst = e.load_instance(check_hash=False)
        nodes = len(inst.nodes) if inst.nodes is not None else 0
        frame.append({
            "name": e.name, "family": e.family, "jobs": inst.num_jobs, "gpus": inst.num_gpus,
            "slots": inst.horizon, "nodes": nodes, "best_known": e.best_value,
            "best_method": e.best_method, "bound": e.bound.value, "gap": e.gap,
            "provenance": "certificate" if e.bound.certificate is not None else "solver",
            "bound_status": None if e.bound.solver is None else e.bound.solver["status"],
        })
        rows.append([
            e.name, e.family, str(inst.num_jobs), str(inst.num_gpus), str(inst.horizon),
            str(nodes) if nodes else "-", _floor2(e.best_value), _ceil2(e.bound.value),
            percent(e.gap), provenance(e),
        ])
    n_cert = sum(1 for e in lib.entries if e.bound.certificate is not None)
    n_opt = sum(1 for e in lib.entries if e.gap <= TOLERANCE)
    t = Table(
        ["name", "family", "jobs", "GPUs", "slots", "nodes", "best known", "best bound", "gap",
         "bound provenance"],
        rows,
        caption=f"Best known values, library gpusched-lib/1 version {lib.version}",
        notes=[
            f"{len(lib.entries)} instances; {n_opt} with gap 0 (proven optimal); {n_cert} bounds "
            "proved by a Lagrangian certificate, the others by the solver run named. Values are "
            "rounded down and bounds up to two decimals; gap = (bound - best known) / bound.",
        ],
        align="llrrrrrrrl",
    )
    return TableView(pd.DataFrame(frame), t)


def _close_above(a: float, b: float) -> bool:
    """``a > b`` beyond the relative tolerance."""
    return a > b + TOLERANCE * max(1.0, abs(a), abs(b))


def _num(x: Any) -> float | None:
    if x is None:
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _check_new_best(inst: instances.Instance, root: Path, row: pd.Series) -> str:
    """``checked`` when the row's schedule file passes the checker, else why not."""
    rel = row.get("schedule_file")
    if not isinstance(rel, str) or not rel:
        return "schedule not in the results"
    path = root / rel
    try:
        m = instances.evaluate(inst, instances.load_schedule(path))
    except (ValueError, OSError) as e:
        return f"schedule refused: {' '.join(str(e).split())}"
    if abs(m.value - float(row["value"])) > TOLERANCE * max(1.0, abs(m.value)):
        return f"the checker gives {m.value!r} for its schedule"
    return "checked"


def compare(results: str | os.PathLike[str], path: PathLike | Library = None) -> pd.DataFrame:
    """A sweep's rows on library instances, beside the best known values.

    A row is matched by its ``instance_hash`` (by name for a results file without
    hashes); a row of an entry's name but another hash is left out
    (``frame.attrs["other_content"]`` counts them). Columns: ``instance``,
    ``method``, ``status``, ``value``, ``upper_bound``, ``best_known``,
    ``best_bound``, ``gap_to_bound``, ``gap_to_best`` and ``flags``:
    :data:`BUG_FLAGS`, or ``new best known`` with the row's schedule checked.

    Raises
    ------
    ValueError
        If the results or the library cannot be read.
    """
    from .sweep import load_rows

    lib = _lib(path)
    df = load_rows(results)
    root = Path(results) if Path(results).is_dir() else Path(results).parent
    by_name = {e.name: e for e in lib.entries}
    by_hash = {e.instance_sha256: e for e in lib.entries}
    has_hash = "instance_hash" in df.columns
    out: list[dict[str, Any]] = []
    other = 0
    loaded: dict[str, instances.Instance] = {}
    for _, row in df.iterrows():
        h = row.get("instance_hash") if has_hash else None
        if isinstance(h, str) and h:
            e = by_hash.get(h)
            if e is None:
                other += int(row.get("instance") in by_name)
                continue
        else:
            e = by_name.get(row.get("instance"))
            if e is None:
                continue
        value, ub = _num(row.get("value")), _num(row.get("upper_bound"))
        best, bound = e.best_value, e.bound.value
        flags = []
        if value is not None and _close_above(value, bound):
            flags.append(EXCEEDS_BOUND)
        if ub is not None and _close_above(best, ub):
            flags.append(BOUND_BELOW_BEST)
        if value is not None and _close_above(value, best) and EXCEEDS_BOUND not in flags:
            if e.name not in loaded:
                loaded[e.name] = e.load_instance(check_hash=False)
            flags.append(f"{NEW_BEST} ({_check_new_best(loaded[e.name], root, row)})")
        out.append({
            "instance": e.name, "method": row.get("method"), "status": row.get("status"),
            "value": value, "upper_bound": ub, "best_known": best, "best_bound": bound,
            "gap_to_bound": None if value is None or bound == 0 else (bound - value) / abs(bound),
            "gap_to_best": None if value is None or best == 0 else (best - value) / abs(best),
            "flags": "; ".join(flags),
        })
    cols = ["instance", "method", "status", "value", "upper_bound", "best_known", "best_bound",
            "gap_to_bound", "gap_to_best", "flags"]
    frame = pd.DataFrame(out, columns=cols)
    frame.attrs["other_content"] = other
    frame.attrs["library_version"] = lib.version
    return frame


def _fmt(x: Any, pct: bool = False) -> str:
    v = _num(x)
    if v is None:
        return "-"
    return percent(v) if pct else f"{round(v, 2) + 0.0:,.2f}"


def compare_view(frame: pd.DataFrame) -> TableView:
    """:func:`compare`'s frame as a table (Markdown through :class:`gpusched.tables.Table`)."""
    rows = [
        [str(r.instance), str(r.method), str(r.status), _fmt(r.value), _fmt(r.upper_bound),
         _fmt(r.best_known), _fmt(r.best_bound), _fmt(r.gap_to_bound, True),
         _fmt(r.gap_to_best, True), str(r.flags) or "-"]
        for r in frame.itertuples(index=False)
    ]
    bugs = sum(any(f in str(x) for f in BUG_FLAGS) for x in frame["flags"])
    new = sum(NEW_BEST in str(x) for x in frame["flags"])
    notes = [
        f"{len(frame)} rows on library instances (version {frame.attrs.get('library_version')}); "
        f"{bugs} flagged as impossible (a value above the best known bound, or a bound below "
        f"the best known value), {new} above the best known value.",
    ]
    if frame.attrs.get("other_content"):
        notes.append(f"{frame.attrs['other_content']} rows have a library instance's name but "
                     "other content (left out).")
    t = Table(
        ["instance", "method", "status", "value", "bound", "best known", "best bound",
         "gap to bound", "gap to best", "flags"],
        rows, caption="A sweep beside the best known values", notes=notes,
        align="lllrrrrrrl",
    )
    return TableView(frame, t)
