"""The packing experiment's subcommands: pack (the openb sweep, or one file) and check-pack."""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
from pathlib import Path
from typing import Any

from .core import bars_wanted, say_seeds, seed_flags, seeds_wanted

logger = logging.getLogger(__name__)

RESUME_EXIT = 130


def register(sub: Any) -> None:
    """Add ``pack`` and ``check-pack`` to ``sub`` (an argparse subparsers object)."""
    p = sub.add_parser(
        "pack", help="the openb fragmentation benchmark (pack openb), or place one packing file",
        description="gpusched pack openb --policies LIST --seeds LIST -o DIR runs each policy "
                    "on the openb instance of each seed (pack.csv, the Fig. 9a table), or "
                    "with --variants on the paper's pod-list variants (variants.csv, Figs. "
                    "11-14); "
                    "gpusched pack FILE --policy P places one gpusched-packing/1 file.")
    p.add_argument("source", help="'openb' (the sweep) or a packing file")
    p.add_argument("--policies", default="random,dotprod,clustering,packing,bestfit,fgd",
                   help="openb: comma-separated policies (default FGD's six); a rule of your "
                        "own as MODULE:NAME (mine:worst, from mine.py in the current folder)")
    seed_flags(p, "0-9", one="FILE: the seed of random's draws (default 0); openb: this "
                              "seed alone", prefix="openb: ")
    p.add_argument("--pods", default=None,
                   help="openb: another pod list: a shipped variant's name (gpushare40, ...) "
                        "or an openb pod CSV (.csv, .csv.gz)")
    p.add_argument("--variants", default=None,
                   help="openb: run the paper's pod-list variants instead: groups "
                        "(gpushare, multigpu, gpuspec, cpu, all) or variant names, comma list "
                        "(variants.csv and one table per group)")
    p.add_argument("--nodes", default=None,
                   help="openb: an openb node CSV instead of the shipped 1,213 GPU nodes")
    p.add_argument("--orders", default="",
                   help="openb: offline orders to place the same pods in too (comma list)")
    p.add_argument("--bound", action="store_true",
                   help="openb: compute the bound and the best offline packing per seed")
    p.add_argument("--levels", default="90,100,110,120",
                   help="openb: arrived percentages of the bound and the orders")
    p.add_argument("--policy", help="FILE: the policy to place it with (a built-in name, or a "
                                    "rule of your own as MODULE:NAME)")
    p.add_argument("--order", default="arrival", help="FILE: the order the pods are placed in")
    p.add_argument("--no-bound", action="store_true", help="FILE: skip the bound (bound_milli null)")
    p.add_argument("--bound-time", type=float, default=60.0,
                   help="seconds of the bound per arrived level (default 60)")
    p.add_argument("-o", "--output", help="openb: results folder; FILE: placement file to write")
    p.add_argument("--json", action="store_true", help="FILE: one JSON line")
    p.add_argument("--workers", type=int, default=None, help="openb: worker processes")
    p.add_argument("--scheduler", default=None, help="openb: a Dask distributed scheduler")
    p.add_argument("--no-progress", action="store_true",
                   help="openb: no progress bar (there is one only when standard error is a "
                        "terminal)")
    p.set_defaults(func=cmd_pack)

    p = sub.add_parser("check-pack", help="check a placement against its packing file "
                       "(exit 0 valid, 1 invalid)")
    p.add_argument("packing", help="gpusched-packing/1 file")
    p.add_argument("placement", help="gpusched-placement/1 file")
    p.add_argument("--json", action="store_true", help="one JSON line")
    p.set_defaults(func=cmd_check_pack)


def _names(text: str, check: Any, flag: str) -> list[str]:
    """The comma list ``text``, each name passed to the library's ``check`` (which takes a
    built-in name or a user's ``MODULE:NAME`` and raises :class:`ValueError` naming it)."""
    out = [x.strip() for x in text.split(",") if x.strip()]
    for x in out:
        try:
            check(x)
        except ValueError as e:
            head, sep, tail = str(e).partition(": ")
            # the library's field (``policy: ``, ``placement: ``) is the flag here
            msg = tail if sep and head.isidentifier() else str(e)
            raise ValueError(f"--{flag}: {msg}") from None
    return list(dict.fromkeys(out))


def _levels(text: str) -> tuple[int, ...]:
    try:
        out = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise ValueError(f"--levels: expected a comma list of integers, got {text!r}") from None
    if not out or any(not 0 < x <= 130 for x in out):
        raise ValueError(f"--levels: expected percentages in 1..130, got {text!r}")
    return out


def _variants(text: str) -> list[str]:
    """Variant names of ``--variants``: groups (or ``all``) expanded, in the groups' order."""
    from instances.packing import OPENB_VARIANTS, VARIANT_GROUPS

    out: list[str] = []
    for x in (t.strip() for t in text.split(",")):
        if not x:
            continue
        if x == "all":
            out += OPENB_VARIANTS
        elif x in VARIANT_GROUPS:
            out += VARIANT_GROUPS[x]
        elif x in OPENB_VARIANTS:
            out.append(x)
        else:
            raise ValueError(f"--variants: unknown group or variant {x!r}; known: all, "
                             f"{', '.join(VARIANT_GROUPS)}, {', '.join(OPENB_VARIANTS)}")
    if not out:
        raise ValueError("--variants: expected groups or variant names, got nothing")
    chosen = set(out)
    return [v for v in OPENB_VARIANTS if v in chosen]


def cmd_pack(args: argparse.Namespace) -> int:
    if not args.bound_time > 0:
        raise ValueError(f"--bound-time: must be > 0, got {args.bound_time}")
    if args.source == "openb":
        return _sweep(args)
    return _one_file(args)


def _sweep(args: argparse.Namespace) -> int:
    from heuristics.packing import check_order, check_policy

    from ..sweep.packing import BOUND, PackCell, load_pack_rows, run_pack_cells

    if not args.output:
        raise ValueError("-o/--output: required with 'openb' (the results folder)")
    if args.policy:
        raise ValueError("--policy: places one file; with 'openb' give --policies")
    if args.workers is not None and args.workers < 1:
        raise ValueError(f"--workers: must be >= 1, got {args.workers}")
    policies = _names(args.policies, check_policy, "policies")
    orders = [o for o in _names(args.orders, check_order, "orders") if o != "arrival"]
    seeds = seeds_wanted(args)
    levels = _levels(args.levels)
    if args.nodes is not None and not Path(args.nodes).is_file():
        raise ValueError(f"--nodes: {args.nodes}: no such file")
    if args.pods is not None:
        from instances.packing import openb_pod_list

        try:
            openb_pod_list(args.pods)
        except ValueError as e:
            raise ValueError(f"--pods: {e}") from None
    variants = None
    if args.variants is not None:
        variants = _variants(args.variants)
        for flag, given in (("--pods", args.pods), ("--orders", orders), ("--bound", args.bound)):
            if given:
                raise ValueError(f"--variants: runs the policies online on each variant; "
                                 f"{flag} applies to one pod list")
    common = {"pods": args.pods, "nodes": args.nodes}
    if variants is not None:
        cells = [PackCell(pol, s, pods=v, nodes=args.nodes)
                 for v in variants for s in seeds for pol in policies]
    else:
        cells = [PackCell(pol, s, **common) for s in seeds for pol in policies]
    cells += [PackCell(pol, s, order=o, levels=levels, **common)
              for o in orders for s in seeds for pol in policies]
    if args.bound:
        cells += [PackCell(BOUND, s, levels=levels, time_limit=args.bound_time, **common)
                  for s in seeds]
    say_seeds("pack", seeds, args, len(cells))
    try:
        summary = run_pack_cells(cells, args.output, workers=args.workers,
                                 scheduler=args.scheduler,
                                 progress=bars_wanted(off=args.no_progress))
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        keys = {c.key for c in cells}
        done = len(keys & {r["cell"] for r in load_pack_rows(args.output)})
        print(f"gpusched: interrupted: {done} of {len(keys)} cells stored in {args.output}; "
              "run the same command again to resume", file=sys.stderr)
        return RESUME_EXIT
    keys = {c.key for c in cells}
    rows = [r for r in load_pack_rows(args.output) if r["cell"] in keys]
    for r in load_pack_rows(args.output, errors=True):
        if r["cell"] in keys and r.get("status") == "error":
            logger.error("cell %s %s seed %s failed: %s", r["policy"], r["order"], r["seed"],
                         r.get("message"))
    if variants is not None:
        _write_variant_tables(Path(args.output), rows, variants)
    else:
        _write_tables(Path(args.output), rows, levels)
    table = "variants.csv" if variants is not None else "pack.csv"
    print(f"{summary.ran} cells run ({summary.errors} errors), {summary.skipped} already done, "
          f"{summary.total} in the sweep; {Path(args.output) / table}", file=sys.stderr)
    return 1 if summary.errors else 0


def _write_tables(out: Path, rows: list[dict[str, Any]], levels: tuple[int, ...]) -> None:
    from instances.io import atomic_write_text

    from ..tables.packing import avoidable_view, fig9a_view, order_view, pack_frame

    df = pack_frame(rows)
    atomic_write_text(out / "pack.csv", df.to_csv(index=False, float_format="%.4f"))
    views = {"table": fig9a_view(df, rows)}
    if any(r["policy"] == "bound" for r in rows):
        views["avoidable"] = avoidable_view(rows, levels)
    if any(r["order"] != "arrival" for r in rows):
        views["orders"] = order_view(rows, tuple(lv for lv in levels if lv >= 100) or levels)
    for name, v in views.items():
        atomic_write_text(out / f"{name}.md", v.render("markdown"))
        atomic_write_text(out / f"{name}.tex", v.render("latex"))
    if len(df):
        import matplotlib.pyplot as plt

        from ..plots_packing import plot_packing

        fig = plot_packing(df)
        fig.savefig(out / "pack.png", dpi=150)
        plt.close(fig)
    print(views["table"].render("markdown"))


def _write_variant_tables(out: Path, rows: list[dict[str, Any]], variants: list[str]) -> None:
    """``variants.csv`` and, per variant group run, ``variants-<group>.md/.tex``."""
    from instances.io import atomic_write_text
    from instances.packing import VARIANT_GROUPS

    from ..tables.packing import variant_frame, variant_view

    df = variant_frame(rows)
    atomic_write_text(out / "variants.csv", df.to_csv(index=False, float_format="%.4f"))
    for group, members in VARIANT_GROUPS.items():
        run = [v for v in members if v in variants]
        if not run:
            continue
        view = variant_view(df, group, run)
        atomic_write_text(out / f"variants-{group}.md", view.render("markdown"))
        atomic_write_text(out / f"variants-{group}.tex", view.render("latex"))
        print(view.render("markdown"))


def _one_file(args: argparse.Namespace) -> int:
    from heuristics.packing import check_order, check_policy, place
    from instances.packing import load_packing, save_placement

    if not args.policy:
        raise ValueError("--policy: required to place a packing file")
    if args.seeds is not None:
        raise ValueError("--seeds: the seeds of 'openb' (the sweep); a packing file takes "
                         "one --seed (random's draws)")
    check_policy(args.policy)
    check_order(args.order)
    packing = load_packing(args.source)
    seed = 0 if args.seed is None else args.seed
    run = place(packing, args.policy, seed=seed, order=args.order)
    if args.output:
        save_placement(run.placement, args.output)
    bound = None
    if not args.no_bound:
        from ..sweep.packing import bound_with_starts

        bound = bound_with_starts(packing, args.bound_time)
    m = run.metrics
    out = {"packing": packing.name, "policy": args.policy, "order": args.order,
           "allocated_milli": m.allocated_milli, "failed": m.failed, "placed": m.placed,
           "capacity_milli": m.capacity_milli, "allocated_pct": m.allocated_pct,
           "bound_milli": None if bound is None else bound.bound_milli,
           "best_milli": None if bound is None else bound.best_milli,
           "runtime_s": run.runtime_s}
    if args.json:
        print(json.dumps(out))
    else:
        extra = ("" if bound is None else
                 f"; bound {bound.bound_milli} milli ({100 * bound.bound_milli / m.capacity_milli:.2f}%),"
                 f" best offline packing {bound.best_milli}")
        print(f"{args.policy}: allocated {m.allocated_milli} milli-GPUs "
              f"({m.allocated_pct:.2f}% of {m.capacity_milli}), {m.placed} pods placed, "
              f"{m.failed} failed{extra}")
    return 0


def cmd_check_pack(args: argparse.Namespace) -> int:
    from instances.packing import (
        InvalidPlacementError,
        evaluate_placement,
        load_packing,
        load_placement,
    )

    packing = load_packing(args.packing)
    placement = load_placement(args.placement)
    try:
        m = evaluate_placement(packing, placement)
    except InvalidPlacementError as e:
        if args.json:
            print(json.dumps({"valid": False, "violations": [
                {"pod": v.pod, "node": v.node, "gpu": v.gpu, "resource": v.resource,
                 "message": v.message} for v in e.violations]}))
        else:
            print(f"invalid: {len(e.violations)} violation(s)")
            for v in e.violations:
                print(f"  {v}")
        return 1
    except ValueError as e:  # an unknown pod or node: the placement file is bad input
        raise ValueError(f"{args.placement}: {e}") from None
    if args.json:
        print(json.dumps({"valid": True, **m.to_dict()}))
    else:
        print(f"valid: allocated {m.allocated_milli} milli-GPUs ({m.allocated_pct:.2f}%), "
              f"{m.placed} pods placed, {m.failed} failed")
    return 0
