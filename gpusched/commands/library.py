"""Library subcommands: ``library list | get NAME | verify | compare DIR``.

Exit codes: 0 when everything holds; 1 when ``verify`` finds an entry that
does not hold, or ``compare`` a row that cannot be (a value above the best
known bound, a bound below the best known value); 2 when the library or the
results cannot be read (one line naming the file and the field).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from .core import json_line, save_output, write_text

FORMATS: tuple[str, ...] = ("markdown", "md", "csv")


def _library_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--library", default=None,
                   help="a library folder or its index.json (default: the shipped library)")


def register(sub: Any) -> None:
    """Add the ``library`` subcommands to ``sub`` (an argparse subparsers object)."""
    p = sub.add_parser("library", help="the benchmark library: best known values and bounds")
    lsub = p.add_subparsers(dest="library_command", required=True)

    q = lsub.add_parser("list", help="the table of best known values")
    _library_arg(q)
    q.add_argument("--format", choices=FORMATS, default="markdown",
                   help="markdown (md) or csv (default markdown)")
    q.add_argument("--json", action="store_true", help="print the entries as one JSON array")
    q.set_defaults(func=cmd_list)

    q = lsub.add_parser("get", help="write a library instance (and its best known schedule)")
    _library_arg(q)
    q.add_argument("name", help="instance name (see `gpusched library list`)")
    q.add_argument("-o", "--output", help="instance file to write (default: standard output)")
    q.add_argument("--schedule", help="also write the best known schedule to this file")
    q.add_argument("--bound", help="also write the bound certificate to this file (if it has one)")
    q.set_defaults(func=cmd_get)

    q = lsub.add_parser("verify", help="re-check every schedule, certificate and bound: exit 1 if one fails")
    _library_arg(q)
    q.add_argument("--json", action="store_true", help="print one JSON object")
    q.set_defaults(func=cmd_verify)

    q = lsub.add_parser("compare", help="a sweep's results beside the best known values")
    _library_arg(q)
    q.add_argument("results", help="results folder of a sweep (or its results.csv)")
    q.add_argument("--format", choices=FORMATS, default="markdown",
                   help="markdown (md) or csv (default markdown)")
    q.add_argument("--json", action="store_true", help="print the rows as one JSON array")
    q.add_argument("-o", "--output", help="file to write (default: standard output)")
    q.set_defaults(func=cmd_compare)


def cmd_list(args: argparse.Namespace) -> int:
    from gpusched import library

    view = library.table(args.library)
    if args.json:
        print(json_line(view.frame.to_dict(orient="records")))
    else:
        print(view.render(args.format), end="")
    return 0


def cmd_get(args: argparse.Namespace) -> int:
    import instances
    from instances.library import load_library

    lib = load_library(args.library)
    entry = lib.get(args.name)
    inst = entry.load_instance()
    write_text(args.output, instances.dumps(inst))
    if args.schedule:
        save_output(args.schedule, instances.save_schedule, instances.load_schedule(entry.best_schedule))
    if args.bound:
        if entry.bound.certificate is None:
            raise ValueError(f"{entry.where}: bound: proved by a solver run, no certificate to write")
        save_output(args.bound, instances.save_bound, instances.load_bound(entry.bound.certificate, inst))
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from gpusched import library

    t0 = time.perf_counter()
    report = library.verify(args.library)
    seconds = time.perf_counter() - t0
    n_cert = sum(1 for c in report.checks if c.recomputed is not None)
    if args.json:
        print(json_line({
            "version": report.version, "ok": report.ok, "entries": len(report.checks),
            "certificates": n_cert, "seconds": seconds,
            "checks": [{"name": c.name, "ok": c.ok, "value": c.value, "bound": c.bound,
                        "recomputed": c.recomputed, "problem": c.problem} for c in report.checks],
        }))
    else:
        for p in report.problems:
            print(f"FAILED {p}")
        held = sum(c.ok for c in report.checks)
        print(f"library {report.version}: {held} of {len(report.checks)} entries hold "
              f"(schedules re-checked, {n_cert} certificates recomputed and holding, every best "
              f"known value at most its bound) in {seconds:.2f} s")
    return 0 if report.ok else 1


def cmd_compare(args: argparse.Namespace) -> int:
    from gpusched import library

    frame = library.compare(args.results, args.library)
    if frame.empty:
        raise ValueError(f"{args.results}: no row is on a library instance (by name and content hash)")
    if args.json:
        text = json_line(frame.to_dict(orient="records")) + "\n"
    else:
        text = library.compare_view(frame).render(args.format)
    write_text(args.output, text)
    bugs = frame["flags"].map(lambda f: any(b in f for b in library.BUG_FLAGS))
    return 1 if bool(bugs.any()) else 0
