"""The portfolio against each solver alone: issue 27's side-by-side table; prints, asserts nothing.

Per instance, one after the other in the same process (so the three see the
same load): the ``milp`` method with its portfolio after ``--limit`` seconds
(``matheuristics.solve_milp``: the ``best`` warm start, the sources the rule
of ``matheuristics.portfolio.plan`` picks, or ``--sources``), CP-SAT alone
(``backend="cpsat"``, ``--threads`` workers) and HiGHS alone
(``lns_helper=False``, ``--threads`` threads) after ``--alone-limit``
seconds, both warm-started by ``best`` as the portfolio is. The columns say
which source found the portfolio's incumbent and which proved its bound, and
whether it meets the issue's targets on the instance: an incumbent at least
CP-SAT's alone and a bound at most HiGHS's alone.

Instances: the ``medium`` seeds (``--seeds``: ``0-11``, ``3``, ``0,5,7`` or
``none``) and the trace-driven instances of the library with 50 to 500 jobs
(``--library``: ``trace``, names separated by commas, or ``none``).

Usage::

    python benchmarks/bench_portfolio.py                       # the full table (hours)
    python benchmarks/bench_portfolio.py --seeds 5,7 --library none --limit 20 --alone-limit 40
    python benchmarks/bench_portfolio.py --seeds none --library openb-day-s3 --skip-alone
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import instances
from gpusched import library
from matheuristics import solve_milp
from matheuristics.portfolio import named

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the benchmarks package

from benchmarks.args import seed_list
from benchmarks.timing import fmt_gap, fmt_number, timed

TRACE_FAMILIES = ("trace-servegen", "openb", "openb-day", "openb-shares")
"""Library families made from traces."""


def library_instances(spec: str) -> list[tuple[str, instances.Instance]]:
    """The library's trace-driven instances of 50-500 jobs (``trace``), the names given, or none."""
    if spec == "none":
        return []
    if spec == "trace":
        names = [e.name for e in library.entries() if e.family in TRACE_FAMILIES]
        out = [(n, library.get(n)) for n in names]
        return [(n, i) for n, i in out if 50 <= i.num_jobs <= 500]
    return [(n, library.get(n)) for n in spec.split(",")]


def run(label: str, inst: instances.Instance, **kw: Any) -> tuple[instances.Result, float, float]:
    """One solve with its wall and CPU seconds."""
    return timed(solve_milp, inst, **kw)  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0-11", help="medium seeds: 0-11, 3, 0,5,7 or none")
    ap.add_argument("--library", default="trace", help="trace, names (comma separated) or none")
    ap.add_argument("--limit", type=float, default=60.0, help="the portfolio's seconds")
    ap.add_argument("--alone-limit", type=float, default=120.0, help="each solver alone, seconds")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--sources", default=None,
                    help="the portfolio's sources (lns,cpsat,lp), default: the rule")
    ap.add_argument("--cpsat-workers", type=int, default=1)
    ap.add_argument("--skip-alone", action="store_true", help="the portfolio column only")
    ap.add_argument("--runs", type=int, default=1, help="portfolio runs per instance")
    args = ap.parse_args()

    cases = [(f"medium-s{s}", instances.generate("medium", seed=s)) for s in seed_list(args.seeds)]
    cases += library_instances(args.library)
    kw: dict[str, Any] = {"threads": args.threads}
    if args.sources is not None:
        chosen = named([s for s in args.sources.split(",") if s])
        kw["sources"] = type(chosen)(chosen.sources, args.cpsat_workers, chosen.lp)
    print(f"# load average at start: {os.getloadavg()[0]:.2f} (2 cores); portfolio "
          f"{args.limit:g} s, alone {args.alone_limit:g} s, {args.threads} threads")
    print("| instance | jobs | portfolio value | bound | gap | incumbent from | bound from "
          "| CP-SAT alone value | HiGHS alone bound | value >= CP-SAT | bound <= HiGHS "
          "| wall / CPU s | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    met = {"value": 0, "bound": 0, "gap": 0}
    for name, inst in cases:
        cp = hi = None
        if not args.skip_alone:
            cp, _, _ = run("cpsat", inst, time_limit=args.alone_limit, threads=args.threads,
                           backend="cpsat")
            hi, _, _ = run("highs", inst, time_limit=args.alone_limit, threads=args.threads,
                           lns_helper=False)
        for _ in range(args.runs):
            load = os.getloadavg()[0]
            res, wall, cpu = run("portfolio", inst, time_limit=args.limit, **kw)
            ok_v = "-" if cp is None else ("yes" if res.value >= cp.value - 1e-6 * abs(cp.value)
                                            else "no")
            ok_b = "-" if hi is None or hi.upper_bound is None or res.upper_bound is None else (
                "yes" if res.upper_bound <= hi.upper_bound * (1 + 1e-9) else "no")
            met["value"] += ok_v == "yes"
            met["bound"] += ok_b == "yes"
            met["gap"] += res.gap is not None and res.gap <= 0.01
            print(f"| {name} | {inst.num_jobs} | {fmt_number(res.value)} | {fmt_number(res.upper_bound)} | "
                  f"{fmt_gap(res)} | {res.params.get('incumbent_from')} | "
                  f"{res.params.get('bound_from')} | {fmt_number(None if cp is None else cp.value)} | "
                  f"{fmt_number(None if hi is None else hi.upper_bound)} | {ok_v} | {ok_b} | "
                  f"{wall:.0f} / {cpu:.0f} | {load:.1f} |", flush=True)
    rows = len(cases) * args.runs
    print(f"\n{rows} runs: incumbent >= CP-SAT alone on {met['value']}, bound <= HiGHS alone on "
          f"{met['bound']}, gap <= 1% on {met['gap']}; load average at end "
          f"{os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
