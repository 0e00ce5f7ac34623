"""``gpusched reproduce arrivals``: its flags (added to the ``reproduce`` parser) and its run."""

from __future__ import annotations

import argparse
import copy
import sys
from typing import Any

from .core import seeds_wanted

__all__ = ["ARRIVAL_FLAGS", "add_flags", "arrival_options", "cmd_reproduce_arrivals"]

ARRIVAL_FLAGS: tuple[str, ...] = (
    "traces", "loads", "objectives", "contention", "window_days", "itp_cluster",
    "philly_cluster",
)
"""The ``reproduce`` flags of ``arrivals`` alone (``None`` when not given)."""


def add_flags(p: argparse.ArgumentParser) -> None:
    """Add the flags of ``reproduce arrivals`` to the ``reproduce`` parser ``p``."""
    p.add_argument("--traces", default=None,
                   help="arrivals: itp, philly or itp,philly (default both)")
    p.add_argument("--loads", default=None,
                   help="arrivals: loads, a comma list (default 0.5,1,1.5,2; the submit times "
                        "divided by each, on one pool per seed)")
    p.add_argument("--objectives", default=None,
                   help="arrivals: value, flow or value,flow (default both)")
    p.add_argument("--contention", type=float, default=None,
                   help="arrivals: the contention the pool is sized to at load 1 (default 1)")
    p.add_argument("--window-days", type=int, default=None,
                   help="arrivals: days of submits per window (default 3)")
    p.add_argument("--itp-cluster", type=int, default=None,
                   help="arrivals: the ITP cluster, 1 to 10 (default 4)")
    p.add_argument("--philly-cluster", default=None,
                   help="arrivals: one Philly virtual cluster id (default all of them)")


def _floats(text: str, where: str) -> list[float]:
    try:
        out = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"{where}: expected a comma list of numbers, got {text!r}") from None
    if not out:
        raise ValueError(f"{where}: expected a comma list of numbers, got {text!r}")
    return out


def _names(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def arrival_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of :func:`gpusched.reproduce.arrival_cells` (and the bound's
    ``bound_time_limit``) that the flags give; ``--quick`` starts from
    :data:`gpusched.reproduce.ARRIVAL_QUICK`.

    Raises
    ------
    ValueError
        For a flag of another target, or a malformed list (naming the flag).
    """
    from ..reproduce import ARRIVAL_QUICK

    if args.days is not None or args.pools is not None or args.inference_share is not None \
            or args.resources is not None:
        raise ValueError("--days, --pools, --inference-share, --resources: options of reproduce "
                         "real, not arrivals (the window's length is --window-days)")
    if args.no_ablation or args.param:
        raise ValueError("--no-ablation, -p: options of reproduce seed, not arrivals")
    kw: dict[str, Any] = dict(ARRIVAL_QUICK) if args.quick else {}
    if args.seeds is not None or args.seed is not None:
        kw["seeds"] = seeds_wanted(args)
    if args.traces is not None:
        kw["traces"] = _names(args.traces)
    if args.objectives is not None:
        kw["objectives"] = _names(args.objectives)
    if args.loads is not None:
        kw["loads"] = _floats(args.loads, "--loads")
    for flag, key in (("contention", "contention"), ("window_days", "days"),
                      ("itp_cluster", "itp_cluster"), ("philly_cluster", "philly_cluster"),
                      ("best_time_limit", "best_time_limit"), ("time_limit", "bound_time_limit")):
        v = getattr(args, flag)
        if v is not None:
            kw[key] = v
    return kw


_FLAG_OF = {"traces": "--traces", "loads": "--loads", "objectives": "--objectives",
            "contention": "--contention", "days": "--window-days", "cluster": "--itp-cluster or "
            "--philly-cluster", "best_time_limit": "--best-time-limit",
            "bound_time_limit": "--time-limit", "start_day": "--seeds"}


def _flag_error(e: ValueError) -> ValueError:
    """``e`` with its leading field named by the flag that sets it."""
    msg = str(e)
    field, sep, rest = msg.partition(": ")
    if sep and field in _FLAG_OF:
        return ValueError(f"{_FLAG_OF[field]}: {rest}")
    return ValueError(msg)


def cmd_reproduce_arrivals(args: argparse.Namespace) -> int:
    """Run (or resume) the experiment into ``args.output``; print its tables."""
    from pathlib import Path

    from ..reproduce import bound_cells
    from ..reproduce.arrivals import ARRIVAL_BOUND_TIME_LIMIT, arrival_cells, finish_arrivals
    from ..sweep import cell_rows
    from .sweep import RESUME_EXIT, run_cells

    kw = arrival_options(args)
    bound_tl = kw.pop("bound_time_limit", ARRIVAL_BOUND_TIME_LIMIT)
    args.retry_errors = True  # a method that failed is not a result to keep
    if not bound_tl > 0:
        raise ValueError(f"--time-limit: the bound's seconds must be > 0, got {bound_tl:g}")
    try:
        cells = arrival_cells(**kw)
    except ValueError as e:
        raise _flag_error(e) from None
    print(f"reproduce arrivals: {len(cells)} policy cells, then one bound per instance, "
          f"into {args.output}", file=sys.stderr)
    first = run_cells(args, cells)
    if first is None:
        return RESUME_EXIT
    bcells = bound_cells(cells, cell_rows(args.output, cells), bound_tl)
    bargs = copy.copy(args)
    bargs.output = str(Path(args.output) / "bounds")
    second = run_cells(bargs, bcells)
    if second is None:
        return RESUME_EXIT
    frame, files = finish_arrivals(args.output, cells, bcells)
    for f in files:
        if f.suffix == ".md":
            print(f.read_text())
    ran = first.ran + second.ran
    print(f"{ran} cells run ({first.errors + second.errors} errors), "
          f"{first.skipped + second.skipped} already done; {frame['seed'].size} rows; "
          f"tables, rows and plot under {args.output}")
    return 0

