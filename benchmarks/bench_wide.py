"""The portfolio against each solver alone on the ``wide`` family (issue 41); prints, asserts nothing.

Per ``wide`` seed, one after the other in the same process (so the runs see
the same load): CP-SAT alone (``backend="cpsat"``, ``--threads`` workers) and
HiGHS alone (``lns_helper=False``, ``--threads`` threads) after
``--alone-limit`` seconds, both warm-started by ``best`` as the portfolio is
(``matheuristics.solve_milp``, as ``benchmarks/bench_portfolio.py`` measures
them), then ``--runs`` runs of the ``milp`` method with its portfolio after
``--limit`` seconds (``gpusched.solve(inst, "milp", time_limit=..., threads=...)``).
Per run: value, bound, gap, who found the incumbent (``incumbent_from``) and
who proved the bound (``bound_from``), and the issue's targets on the seed:
an incumbent at least CP-SAT's alone, a bound at most HiGHS's alone.

``--rounding 2,4,8`` and ``--windows`` (the window rows of ``milp.wide``) pass
formulation options to every solve (the portfolio's and the solvers' alone),
``--sources`` names what runs beside HiGHS in the portfolio (``lns``, ``cpsat``,
``lp``), to measure a strengthening (docs/milp.md, "Wide jobs under an inference
curve").

Usage::

    python benchmarks/bench_wide.py                        # the full table: about an hour
    python benchmarks/bench_wide.py --seeds 0,3 --runs 2
    python benchmarks/bench_wide.py --seeds 0-11 --alone-only -o alone.jsonl   # once
    python benchmarks/bench_wide.py --seeds 0-11 --alone-from alone.jsonl --runs 2
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import gpusched
import instances
from matheuristics import solve_milp
from matheuristics.portfolio import Plan

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the benchmarks package

from benchmarks.args import seed_list
from benchmarks.timing import fmt_gap, fmt_number, timed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0-11", help="wide seeds: 0-11, 3 or 0,5,7")
    ap.add_argument("--limit", type=float, default=60.0, help="the portfolio's seconds")
    ap.add_argument("--alone-limit", type=float, default=120.0, help="each solver alone, seconds")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=1, help="portfolio runs per seed")
    ap.add_argument("--skip-alone", action="store_true", help="the portfolio column only")
    ap.add_argument("--alone-only", action="store_true",
                    help="the solvers alone only (--runs 0); with -o, rows for --alone-from")
    ap.add_argument("--alone-from", type=Path, default=None,
                    help="read the alone columns from an -o file of an earlier run instead")
    ap.add_argument("--rounding", default=None, help="divisors of the rounded rows, e.g. 2,4,8")
    ap.add_argument("--windows", action="store_true", help="the window rows of milp.wide")
    ap.add_argument("--sources", default=None, help="the portfolio's sources: lns,cpsat,lp")
    ap.add_argument("--lead", type=float, default=None,
                    help="CP-SAT first on every thread for this share of the time, then HiGHS's "
                         "parallel search (a Plan's lead; no sources beside)")
    ap.add_argument("-o", "--out", type=Path, default=None, help="append each row as JSON here")
    args = ap.parse_args()
    if args.alone_only:
        args.runs = 0
    earlier = _alone_rows(args.alone_from) if args.alone_from else {}

    extra: dict[str, Any] = {}
    if args.rounding:
        extra["rounding"] = tuple(int(d) for d in args.rounding.split(","))
    if args.windows:
        extra["windows"] = True
    sources: dict[str, Any] = {}
    if args.sources:
        sources["sources"] = tuple(x for x in args.sources.split(",") if x)
    if args.lead is not None:
        sources["sources"] = Plan(sources.get("sources", ()), lead=args.lead)
    print(f"# load average at start: {os.getloadavg()[0]:.2f} (2 cores); portfolio "
          f"{args.limit:g} s, alone {args.alone_limit:g} s, {args.threads} threads, "
          f"options {extra or 'default'}, sources {sources.get('sources', 'the rule')}")
    print("| seed | portfolio value | bound | gap | incumbent from | bound from "
          "| CP-SAT alone value (bound) | HiGHS alone bound (value) | value >= CP-SAT "
          "| bound <= HiGHS | wall / CPU s | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    met = {"value": 0, "bound": 0, "gap": 0}
    gaps: list[float] = []
    for seed in seed_list(args.seeds):
        inst = instances.generate("wide", seed=seed)
        cp = hi = None
        if seed in earlier:
            cp, hi = earlier[seed]
        elif not args.skip_alone:
            cp, _, _ = timed(solve_milp, inst, time_limit=args.alone_limit, threads=args.threads,
                             backend="cpsat", **extra)
            hi, _, _ = timed(solve_milp, inst, time_limit=args.alone_limit, threads=args.threads,
                             lns_helper=False, **extra)
        if args.alone_only and cp is not None and hi is not None:
            print(f"| {seed} | - | - | - | - | - | {fmt_number(cp.value)} ({fmt_number(cp.upper_bound)}) "
                  f"| {fmt_number(hi.upper_bound)} ({fmt_number(hi.value)}) | - | - | - | "
                  f"{os.getloadavg()[0]:.1f} |", flush=True)
            if args.out is not None:
                with args.out.open("a") as fh:
                    fh.write(json.dumps({"seed": seed, "run": None, "cpsat_value": cp.value,
                                         "cpsat_bound": cp.upper_bound, "highs_value": hi.value,
                                         "highs_bound": hi.upper_bound}) + "\n")
        for run in range(args.runs):
            load = os.getloadavg()[0]
            res, wall, cpu = timed(gpusched.solve, inst, "milp", time_limit=args.limit,
                                   threads=args.threads, **extra, **sources)
            ok_v = "-" if cp is None else (
                "yes" if res.value >= cp.value - 1e-6 * abs(cp.value) else "no")
            ok_b = "-" if hi is None or hi.upper_bound is None or res.upper_bound is None else (
                "yes" if res.upper_bound <= hi.upper_bound * (1 + 1e-9) else "no")
            met["value"] += ok_v == "yes"
            met["bound"] += ok_b == "yes"
            met["gap"] += res.gap is not None and res.gap <= 0.01
            if res.gap is not None:
                gaps.append(res.gap)
            print(f"| {seed} | {fmt_number(res.value)} | {fmt_number(res.upper_bound)} | {fmt_gap(res)} | "
                  f"{res.params.get('incumbent_from')} | {res.params.get('bound_from')} | "
                  f"{'-' if cp is None else f'{fmt_number(cp.value)} ({fmt_number(cp.upper_bound)})'} | "
                  f"{'-' if hi is None else f'{fmt_number(hi.upper_bound)} ({fmt_number(hi.value)})'} | "
                  f"{ok_v} | {ok_b} | {wall:.0f} / {cpu:.0f} | {load:.1f} |", flush=True)
            if args.out is not None:
                row = {"seed": seed, "run": run, "value": res.value, "bound": res.upper_bound,
                       "gap": res.gap, "incumbent_from": res.params.get("incumbent_from"),
                       "bound_from": res.params.get("bound_from"), "wall_s": wall, "cpu_s": cpu,
                       "load": load, "options": {k: str(v) for k, v in {**extra, **sources}.items()},
                       "cpsat_value": None if cp is None else cp.value,
                       "cpsat_bound": None if cp is None else cp.upper_bound,
                       "highs_value": None if hi is None else hi.value,
                       "highs_bound": None if hi is None else hi.upper_bound}
                with args.out.open("a") as fh:
                    fh.write(json.dumps(row) + "\n")
    mean = f"{100 * sum(gaps) / len(gaps):.2f}%" if gaps else "-"
    print(f"\n{len(gaps)} runs: incumbent >= CP-SAT alone on {met['value']}, bound <= HiGHS "
          f"alone on {met['bound']}, gap <= 1% on {met['gap']}, mean gap {mean}; load average "
          f"at end {os.getloadavg()[0]:.2f}")


class _Alone:
    """A solver's figures read back from an ``-o`` file: its value and bound."""

    def __init__(self, value: float, upper_bound: float | None) -> None:
        self.value, self.upper_bound = value, upper_bound


def _alone_rows(path: Path) -> dict[int, tuple[Any, Any]]:
    """Each seed's last CP-SAT and HiGHS alone figures in an ``-o`` file of this script."""
    rows: dict[int, tuple[Any, Any]] = {}
    for line in path.read_text().splitlines():
        row = json.loads(line)
        if row.get("cpsat_value") is not None and row.get("highs_bound") is not None:
            rows[int(row["seed"])] = (_Alone(row["cpsat_value"], row["cpsat_bound"]),
                                      _Alone(row["highs_value"], row["highs_bound"]))
    return rows


if __name__ == "__main__":
    main()
