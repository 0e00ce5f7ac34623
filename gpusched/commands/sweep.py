"""Benchmark subcommands: bench (a sweep), table, plot, reproduce."""

from __future__ import annotations

import argparse
import inspect
import logging
import signal
import sys
from pathlib import Path
from typing import Any

from . import arrivals
from .core import (
    bars_wanted,
    parse_params,
    positive,
    say_seeds,
    seconds,
    seed_flags,
    seeds_wanted,
    write_text,
)

logger = logging.getLogger(__name__)

RESUME_EXIT = 130

TABLE_FORMATS: tuple[str, ...] = ("markdown", "md", "latex", "tex", "csv")
"""``table --format`` values (``md`` and ``tex``, the file suffixes, name markdown and latex)."""


EXACT_NAMES: tuple[str, ...] = ("milp", "milp-pulp", "cpsat")
"""The exact methods, as ``--time-limit``'s help names them (the help is built without
importing the solvers; a test holds this to :data:`gpusched.dispatch.EXACT_METHODS`)."""

BUDGETED_NAMES: tuple[str, ...] = ("sampling", "local-search", "best", "lagrangian", "lns")
"""The heuristics with a budget, as ``--time-limit``'s help names them (a test holds
this to :func:`budgeted_heuristics`)."""


def budgeted_heuristics() -> list[str]:
    """The heuristics that take a ``time_limit`` (a budget): what ``--time-limit`` also sets."""
    import heuristics

    out = []
    for name, fn in heuristics.METHODS.items():
        try:
            if "time_limit" in inspect.signature(fn).parameters:
                out.append(name)
        except (TypeError, ValueError):  # pragma: no cover - no signature
            continue
    return out


def _time_limit_help() -> str:
    return (f"seconds per cell, given to every method that takes a time limit: the exact "
            f"methods ({', '.join(EXACT_NAMES)}; default 60) and the heuristics with a "
            f"budget ({', '.join(BUDGETED_NAMES)}); the other heuristics ignore it")


def register(sub: Any) -> None:
    """Add the benchmark subcommands to ``sub`` (an argparse subparsers object)."""
    p = sub.add_parser("bench", help="run families x seeds x methods into a results folder")
    p.add_argument("--config", help="sweep as a TOML file (flags below override nothing in it)")
    p.add_argument("--families", help="comma-separated family names")
    seed_flags(p, "1")
    p.add_argument("--methods", help="comma-separated method names")
    p.add_argument("--instances", default="", help="comma-separated instance files to add")
    p.add_argument("--time-limit", type=seconds, default=None, help=_time_limit_help())
    p.add_argument("-p", "--param", action="append", default=[], metavar="METHOD.KEY=VALUE",
                   help="method parameter, e.g. -p milp.threads=2 (repeatable)")
    p.add_argument("-f", "--family-param", action="append", default=[],
                   metavar="FAMILY.KEY=VALUE", help="family parameter, e.g. -f large.num_jobs=500")
    _run_args(p)
    p.add_argument("--retry-errors", action="store_true", help="run again the cells that failed")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("table", help="comparison tables of a results folder")
    p.add_argument("results", help="results folder (or results.csv)")
    p.add_argument("--format", choices=TABLE_FORMATS, default="markdown",
                   help="markdown (md), latex (tex) or csv (default markdown)")
    p.add_argument("--view", choices=("summary", "seed", "ablation", "simulation", "topology"),
                   default="summary",
                   help="summary (default), seed, ablation, simulation (a sweep with "
                        "[scenarios]), or topology (runs flat and on nodes)")
    p.add_argument("--baseline", default="fifo", help="method the gains are measured from")
    p.add_argument("--allocator", default="best", help="the allocator of the seed and topology views")
    p.add_argument("--methods", default="",
                   help="summary view: only these methods, in this order (comma-separated)")
    p.add_argument("-o", "--output", help="file to write (default: standard output)")
    p.set_defaults(func=cmd_table)

    p = sub.add_parser("plot", help="plots of a results folder, or of one schedule")
    p.add_argument("source", help="results folder, or an instance file")
    p.add_argument("schedule", nargs="?", help="schedule file (with an instance file)")
    p.add_argument("-o", "--output", required=True,
                   help="output folder (results folder) or file stem (one schedule)")
    p.add_argument("--reservation", choices=("peak", "curve"), default="curve",
                   help="reservation drawn for one schedule (default curve)")
    p.add_argument("--methods", default="fifo,best",
                   help="methods whose example schedules are drawn (results folder)")
    p.set_defaults(func=cmd_plot)

    p = sub.add_parser("reproduce", help="reproduce the seed's comparison (seed), test it "
                       "on days of the openb trace (real), or on the ITP and Philly arrival "
                       "logs under both objectives (arrivals)")
    p.add_argument("target", choices=("seed", "real", "arrivals"), help="what to reproduce")
    p.add_argument("-o", "--output", default=None,
                   help="results folder (default results/TARGET)")
    seed_flags(p, "5", prefix="seed: ", one="seed: one seed, this one alone")
    p.add_argument("--time-limit", type=seconds, default=None,
                   help="seconds per MILP (default 20 for seed, 10 for real); arrivals: "
                        "seconds of the Lagrangian bound per instance (default 5)")
    p.add_argument("--days", default=None,
                   help="real: openb days, A-B or a comma list (default every third of 115-149)")
    p.add_argument("--pools", default=None, help="real: pool sizes, comma list (default 8,16,32)")
    p.add_argument("--best-time-limit", type=seconds, default=None,
                   help="real, arrivals: seconds of best per instance (default 2, 3)")
    p.add_argument("--inference-share", type=float, default=None,
                   help="real: share of the pool the ServeGen series asks at its peak (default 0.3)")
    p.add_argument("--quick", action="store_true",
                   help="real: two days (130 and 149) on 8 and 16 GPUs, short limits; "
                        "arrivals: one ITP day of seed 1 at loads 1 and 2, short limits")
    p.add_argument("--resources", default=None,
                   help="real: gpus, full or gpus,full (default both: version 2 and version 3)")
    p.add_argument("--no-ablation", action="store_true",
                   help="skip the extra heuristics of the ablation table")
    p.add_argument("-p", "--param", action="append", default=[], metavar="METHOD.KEY=VALUE",
                   help="method parameter, e.g. -p best.time_limit=2 (repeatable)")
    arrivals.add_flags(p)
    _run_args(p, output=False)
    p.set_defaults(func=cmd_reproduce)


def _run_args(p: argparse.ArgumentParser, output: bool = True) -> None:
    if output:
        p.add_argument("-o", "--output", required=True, help="results folder")
    p.add_argument("--workers", type=positive, default=None,
                   help="worker processes (default: all cores)")
    p.add_argument("--scheduler", default=None, help="address of a Dask distributed scheduler")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar (there is one only when standard error is a terminal)")


def _dotted(items: list[str], where: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for key, value in parse_params(items, where).items():
        head, dot, tail = key.partition(".")
        if not dot or not head or not tail:
            raise ValueError(f"{where}: expected NAME.KEY=VALUE, got {key!r}")
        out.setdefault(head, {})[tail] = value
    return out


def run_cells(args: argparse.Namespace, cells: Any) -> Any:
    """:func:`gpusched.sweep.run_bench` of ``cells``; ``None`` when interrupted (the finished
    rows stored, and how to resume said)."""
    import shlex

    from ..sweep import done_keys, run_bench

    try:
        return run_bench(cells, args.output, workers=args.workers, scheduler=args.scheduler,
                         progress=bars_wanted(off=args.no_progress),
                         retry_errors=getattr(args, "retry_errors", False))
    except KeyboardInterrupt:
        # The finished rows are safe; a second Ctrl-C during the clean stop (or the
        # interpreter's shutdown, which joins the pool's threads) must not print a traceback.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        keys = {c.key for c in cells}
        done = len(keys & done_keys(args.output))
        again = "gpusched " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        print(f"gpusched: interrupted: {done} of {len(keys)} cells stored in {args.output}; "
              f"run the same command again to resume:\n  {again}", file=sys.stderr)
        return None


def cmd_bench(args: argparse.Namespace) -> int:
    from ..sweep import load_config, make_cells, make_config

    if args.config:
        if args.families or args.methods or args.seeds is not None or args.seed is not None:
            raise ValueError("--config: give the sweep either as a file or as flags, not both")
        config = load_config(args.config)
    else:
        if not args.methods:
            raise ValueError("--methods: required (or --config)")
        files = [f for f in args.instances.split(",") if f.strip()]
        config = make_config(args.families or "", list(seeds_wanted(args)), args.methods,
                             time_limit=args.time_limit, params=_dotted(args.param, "--param"),
                             family_params=_dotted(args.family_param, "--family-param"),
                             instance_files=files)
    try:
        cells = make_cells(config)
    except ValueError as e:  # a family parameter or an instance file of the sweep file
        if args.config:
            raise ValueError(f"{args.config}: {e}") from None
        raise
    if config.seeds:
        say_seeds("bench", config.seeds, args, len(cells))
    s = run_cells(args, cells)
    if s is None:
        return RESUME_EXIT
    print(f"{s.ran} cells run ({s.errors} errors), {s.skipped} already done, "
          f"{s.total} in the sweep; results in {Path(args.output) / 'results.csv'}")
    return 0


def cmd_table(args: argparse.Namespace) -> int:
    from ..sweep import load_rows
    from ..tables import simulation_view, view

    df = load_rows(args.results)
    present = sorted(set(df["method"])) if "method" in df.columns else None
    if present is not None and args.baseline not in present and args.view != "simulation":
        raise ValueError(f"--baseline: no rows of method {args.baseline!r} in {args.results} "
                         f"(methods there: {', '.join(present) or 'none'})")
    kw: dict[str, Any] = {} if args.view == "simulation" else {"baseline": args.baseline}
    if args.view in ("seed", "topology"):
        kw["allocator"] = args.allocator
    only = tuple(m.strip() for m in args.methods.split(",") if m.strip())
    if only:
        if args.view != "summary":
            raise ValueError("--methods: only the summary view takes a method list")
        kw["methods"] = kw["only"] = only
    try:
        tv = simulation_view(df) if args.view == "simulation" else view(df, args.view, **kw)
        text = tv.render(args.format)
    except ValueError as e:  # e.g. a CSV file without the result columns
        raise ValueError(f"{args.results}: {e}") from None
    write_text(args.output, text)
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    src = Path(args.source)
    if src.is_dir():
        from ..report import write_plots
        from ..sweep import load_rows

        methods = tuple(m.strip() for m in args.methods.split(",") if m.strip())
        paths = write_plots(load_rows(src), src, args.output, methods=methods)
    else:
        import instances

        from .. import plots, plots_nodes

        if not args.schedule:
            raise ValueError(f"{args.source}: not a results folder; give an instance file "
                             "and a schedule file")
        inst = instances.load(src)
        sched = instances.load_schedule(args.schedule)
        try:
            instances.evaluate(inst, sched)  # an infeasible schedule is bad input
        except ValueError as e:
            raise ValueError(f"{args.schedule}: {e}") from None
        stem = Path(args.output)
        paths = plots.save_figure(
            plots_nodes.plot_schedule_gantt(inst, sched, reservation=args.reservation),
            stem.with_name(stem.name + "-gantt"))
        paths += plots.save_figure(
            plots.plot_utilization(inst, sched, reservation=args.reservation),
            stem.with_name(stem.name + "-utilization"))
    for p in paths:
        print(p)
    return 0


def _int_list(text: str, where: str) -> list[int]:
    import re

    t = text.strip()
    m = re.fullmatch(r"(\d+)\s*-\s*(\d+)", t)
    if m:
        return list(range(int(m.group(1)), int(m.group(2)) + 1))
    try:
        out = [int(x) for x in t.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"{where}: expected A-B or a comma list of integers, got {text!r}") from None
    if not out:
        raise ValueError(f"{where}: expected A-B or a comma list of integers, got {text!r}")
    return out


def cmd_reproduce_real(args: argparse.Namespace) -> int:
    from ..reproduce import (
        REAL_BEST_TIME_LIMIT,
        REAL_DAYS,
        REAL_POOLS,
        REAL_QUICK,
        REAL_TIME_LIMIT,
        finish_real,
        real_cells,
    )

    if args.seeds is not None or args.seed is not None or args.no_ablation or args.param:
        raise ValueError("--seeds, --seed, --no-ablation, -p: options of reproduce seed, not real")
    base: dict[str, Any] = dict(REAL_QUICK) if args.quick else {
        "days": REAL_DAYS, "pools": REAL_POOLS, "time_limit": REAL_TIME_LIMIT,
        "best_time_limit": REAL_BEST_TIME_LIMIT}
    for key in ("days", "pools", "time_limit", "best_time_limit", "inference_share"):
        v = getattr(args, key)
        if v is not None:
            base[key] = _int_list(v, f"--{key}") if key in ("days", "pools") else v
    if args.resources is not None:
        base["resources"] = [r.strip() for r in args.resources.split(",") if r.strip()]
    args.retry_errors = True  # a method that failed is not a result to keep
    try:
        cells = real_cells(**base)
    except ValueError as e:
        msg = str(e)
        for key in ("days", "pools", "inference_share", "resources"):
            if msg.startswith(f"{key}: "):
                msg = f"--{key.replace('_', '-')}: " + msg[len(key) + 2:]
        raise ValueError(msg) from None
    s = run_cells(args, cells)
    if s is None:
        return RESUME_EXIT
    frame, table, files = finish_real(args.output, cells, base["time_limit"])
    print(table.to_markdown(index=False, floatfmt=".1f"))
    rounding = [f for f in files if f.name == "real-resources.md"]
    if rounding:
        print("\n" + rounding[0].read_text(), end="")
    print(f"{s.ran} cells run ({s.errors} errors), {s.skipped} already done; "
          f"{len(frame)} instances; table, rows and plot: {', '.join(str(f) for f in files)}")
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    if args.output is None:
        args.output = f"results/{args.target}"
    if args.target == "arrivals":
        return arrivals.cmd_reproduce_arrivals(args)
    given = [f for f in arrivals.ARRIVAL_FLAGS if getattr(args, f) is not None]
    if given:
        raise ValueError(f"--{given[0].replace('_', '-')}: an option of reproduce arrivals, "
                         f"not {args.target}")
    if args.target == "real":
        return cmd_reproduce_real(args)
    for flag in ("days", "pools", "best_time_limit", "inference_share", "resources"):
        if getattr(args, flag) is not None:
            raise ValueError(f"--{flag.replace('_', '-')}: an option of reproduce real, not seed")
    if args.quick:
        raise ValueError("--quick: an option of reproduce real, not seed")
    from ..report import write_report
    from ..reproduce import DEFAULT_SEEDS, DEFAULT_TIME_LIMIT, SEED_METHODS, seed_config
    from ..sweep import cell_rows, make_cells
    from ..tables import seed_view

    args.seeds_default = DEFAULT_SEEDS
    seeds = seeds_wanted(args)
    tl = DEFAULT_TIME_LIMIT if args.time_limit is None else args.time_limit
    config = seed_config(list(seeds), tl, ablation=not args.no_ablation,
                         params=_dotted(args.param, "--param"))
    cells = make_cells(config)
    say_seeds("reproduce seed", seeds, args, len(cells))
    s = run_cells(args, cells)
    if s is None:
        return RESUME_EXIT
    df = cell_rows(args.output, cells)
    files = write_report(args.output, df=df, summary_methods=SEED_METHODS)
    print(seed_view(df).render("markdown"))
    print(f"{s.ran} cells run ({s.errors} errors), {s.skipped} already done; "
          f"{len(files)} table and plot files under {args.output}/tables and {args.output}/plots")
    return 0
