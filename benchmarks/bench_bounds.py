"""Upper bounds side by side: the LP, the Lagrangian searches, the LP-dual certificates, ``best``.

Per instance, in one run (so that the ratios compare like with like on a
shared machine):

* ``lp``: the plain LP relaxation (HiGHS simplex, no rounded rows), whose
  value is the minimum of ``L(lam)``, and its time; ``lp+round``: the LP of
  :func:`milp.build`'s default model (with the rounded capacity rows), the
  ``lp_bound`` that :func:`milp.solve` reports;
* ``lagrangian`` (Volume) and ``subgradient`` (Polyak): the certified bound,
  its distance to the plain LP, seconds and iterations;
* ``lp-ipm`` and ``pdlp``: the LP's capacity duals certified through ``L``;
* ``best``: the heuristic's value, and the certified gap of it to the
  smallest certified bound; the Lagrangian heuristic's value at the final
  multipliers; columns removed by reduced-cost fixing relative to ``best``;
* peak memory of ``milp.bound`` (``tracemalloc``) and of the process.

``--targets`` prints the issue's targets side by side instead, one run each:
``gpusched.solve(inst, "milp", time_limit=120, threads=2)`` on ``large``
10,000 x 1,024 (seeds of ``--target-seeds``) with its wall time and the load
average, the same at 60 s on ``large`` 2,000 x 256, the Volume bound against
the plain LP on every ``medium`` seed, and the peak memory of ``milp.bound``
on 10,000 jobs x 168 slots (a fresh process, peak RSS). ``--target-lp S``
also runs the plain LP of each 10,000-job instance for up to ``S`` seconds.

Prints figures, asserts nothing.

Usage::

    python benchmarks/bench_bounds.py                          # medium 0-11, large 2000
    python benchmarks/bench_bounds.py --medium 0-3 --large 2000:256:0
    python benchmarks/bench_bounds.py --medium none --large 10000:1024:0 --lp-limit 1200 \
        --dual-limit 120 --no-rounded-lp
    python benchmarks/bench_bounds.py --targets --target-seeds 0-2
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import subprocess
import sys
import time
import tracemalloc
from typing import Any

import gpusched.dispatch
import heuristics
import instances
import milp
from heuristics.lagrangian import lagrangian_schedule
from milp.fixing import reduced_cost_fixing
from milp.highs import lp_relaxation


def _seeds(text: str) -> list[int]:
    if text == "none":
        return []
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def _large(text: str) -> list[tuple[int, int, int]]:
    out = []
    for item in text.split(","):
        if item and item != "none":
            n, g, s = (int(x) for x in item.split(":"))
            out.append((n, g, s))
    return out


def _timed(fn: Any, *args: Any, **kw: Any) -> tuple[Any, float]:
    t = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - t


def _pct(a: float | None, b: float | None) -> str:
    if a is None or b is None or b == 0:
        return "-"
    return f"{100 * (a - b) / b:+.3f}%"


def measure(inst: instances.Instance, args: argparse.Namespace) -> dict[str, Any]:
    row: dict[str, Any] = {"instance": inst.name, "jobs": inst.num_jobs}
    plain = milp.build(inst, rounding=())
    row["cols"] = plain.num_cols
    row["lp"], row["lp_s"] = _timed(lp_relaxation, plain, args.lp_limit)
    if args.rounded_lp:
        row["lp_round"], row["lp_round_s"] = _timed(lp_relaxation, milp.build(inst), args.lp_limit)
    best, row["best_s"] = _timed(heuristics.solve, inst, "best", time_limit=args.best_limit)
    row["best"] = best.value
    for method in ("lagrangian", "subgradient"):
        b = milp.bound(inst, method, time_limit=args.bound_limit, lower=best.value)
        row[method], row[f"{method}_s"], row[f"{method}_it"] = b.value, b.runtime_s, b.iterations
        row[f"{method}_stop"] = b.message
        if method == "lagrangian":
            lam = b.multipliers
    tracemalloc.start()
    milp.bound(inst, "lagrangian", time_limit=args.bound_limit, lower=best.value)
    row["bound_peak_mib"] = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    for method in ("lp-ipm", "pdlp"):
        b = milp.bound(inst, method, time_limit=args.dual_limit,
                       primal=gpusched.dispatch.lagrangian_primal(inst))
        row[method], row[f"{method}_s"], row[f"{method}_msg"] = b.value, b.runtime_s, b.message
    heur = lagrangian_schedule(inst, lam)
    row["lagr_heur"] = heur.value
    fx = reduced_cost_fixing(milp.build(inst), lam, best.value)
    row["fixed"], row["fixed_share"] = fx.removed, fx.share_removed
    certified = min(row[m] for m in ("lagrangian", "subgradient", "lp-ipm", "pdlp"))
    row["certified"] = certified
    row["gap_best"] = (certified - best.value) / certified if certified > 0 else 0.0
    row["rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return row


def show(row: dict[str, Any]) -> None:
    lp = row["lp"]
    lines = [
        f"== {row['instance']}: {row['jobs']} jobs, {row['cols']} columns",
        f"  lp (plain)     {lp if lp is None else round(lp, 2)!s:>12}  {row['lp_s']:8.2f} s"
        + ("" if lp is not None else "  (not finished)"),
    ]
    if "lp_round" in row:
        r = row["lp_round"]
        lines.append(f"  lp+round       {r if r is None else round(r, 2)!s:>12}  "
                     f"{row['lp_round_s']:8.2f} s   (milp.solve's lp_bound)")
    for m in ("lagrangian", "subgradient"):
        ratio = row[f"{m}_s"] / row["lp_s"] if lp is not None and row["lp_s"] > 0 else math.nan
        lines.append(
            f"  {m:14s} {row[m]:12.2f}  {row[f'{m}_s']:8.2f} s  {row[f'{m}_it']:5d} it  "
            f"vs lp {_pct(row[m], lp):>9}  time/lp {ratio:6.3f}  ({row[f'{m}_stop']})"
        )
    for m in ("lp-ipm", "pdlp"):
        lines.append(f"  {m:14s} {row[m]:12.2f}  {row[f'{m}_s']:8.2f} s           "
                     f"vs lp {_pct(row[m], lp):>9}  ({row[f'{m}_msg']})")
    lines += [
        f"  best           {row['best']:12.2f}  {row['best_s']:8.2f} s   certified gap "
        f"{100 * row['gap_best']:.3f}%  (bound {row['certified']:.2f})",
        f"  lagr-heuristic {row['lagr_heur']:12.2f}              vs best {_pct(row['lagr_heur'], row['best'])}",
        f"  fixing (V = best) removes {row['fixed']} of {row['cols']} columns "
        f"({100 * row['fixed_share']:.1f}%)",
        f"  memory: milp.bound peak {row['bound_peak_mib']:.1f} MiB (tracemalloc), "
        f"process peak RSS {row['rss_mib']:.0f} MiB",
    ]
    print("\n".join(lines), flush=True)


def summary(rows: list[dict[str, Any]]) -> None:
    print("\n== summary")
    print(f"{'instance':40s} {'L/lp-1':>9} {'S/lp-1':>9} {'tL/tlp':>7} {'tS/tlp':>7} "
          f"{'gap best':>9} {'heur/best-1':>11} {'fixed':>6}")
    for r in rows:
        lp = r["lp"]
        tl = f"{r['lagrangian_s'] / r['lp_s']:.3f}" if lp is not None else "lp n/a"
        ts = f"{r['subgradient_s'] / r['lp_s']:.3f}" if lp is not None else "lp n/a"
        print(f"{r['instance']:40s} {_pct(r['lagrangian'], lp):>9} {_pct(r['subgradient'], lp):>9} "
              f"{tl:>7} {ts:>7} {100 * r['gap_best']:8.3f}% {_pct(r['lagr_heur'], r['best']):>11} "
              f"{100 * r['fixed_share']:5.1f}%")


_MEMORY_SNIPPET = """
import sys, time
import instances, milp

def hwm():  # peak RSS of this process in MiB (ru_maxrss would include the parent's, pre-exec)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")

inst = instances.generate("large", seed=int(sys.argv[1]), num_jobs=10000, num_gpus=1024)
before = hwm()
t = time.perf_counter()
b = milp.bound(inst)
print(f"{b.value} {time.perf_counter() - t} {b.iterations} {before} {hwm()}")
"""


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def _solve_row(inst: instances.Instance, limit: float) -> dict[str, Any]:
    import gpusched

    load0 = _load()
    res, wall = _timed(gpusched.solve, inst, "milp", time_limit=limit, threads=2)
    ub = res.upper_bound
    return {"instance": inst.name, "value": res.value, "ub": ub, "method": res.bound_method,
            "gap": (ub - res.value) / ub if ub else math.nan, "wall": wall, "limit": limit,
            "load": f"{load0} -> {_load()}", "message": res.message}


def targets(args: argparse.Namespace) -> None:
    """The issue's targets, one measurement each, side by side."""
    rows = []
    print("== gpusched.solve(inst, 'milp', threads=2): certified gap of the incumbent", flush=True)
    cases = [(instances.generate("large", seed=s, num_jobs=10000, num_gpus=1024), 120.0)
             for s in _seeds(args.target_seeds)]
    cases.append((instances.generate("large", seed=0, num_jobs=2000, num_gpus=256), 60.0))
    for inst, limit in cases:
        row = _solve_row(inst, limit)
        if args.target_lp and inst.num_jobs == 10000:
            row["lp"], row["lp_s"] = _timed(lp_relaxation, milp.build(inst, rounding=()),
                                            args.target_lp)
        rows.append(row)
        lp = row.get("lp")
        print(f"  {row['instance']:40s} value {row['value']:12.2f}  bound {row['ub']:12.2f} "
              f"({row['method']})  gap {100 * row['gap']:.3f}%  wall {row['wall']:6.1f} s of "
              f"{row['limit']:.0f}  load {row['load']}"
              + ("" if "lp_s" not in row else
                 f"  lp {lp if lp is None else round(lp, 2)} in {row['lp_s']:.0f} s"
                 f" (bound vs lp {_pct(row['ub'], lp)})"), flush=True)
    print("== the Volume bound alone against the plain LP (medium)", flush=True)
    worst = 0.0
    for seed in _seeds(args.medium):
        inst = instances.generate("medium", seed=seed)
        lp, lp_s = _timed(lp_relaxation, milp.build(inst, rounding=()), args.lp_limit)
        b = milp.bound(inst, "lagrangian", primal=gpusched.dispatch.lagrangian_primal(inst))
        worst = max(worst, (b.value - lp) / lp if lp else math.inf)
        print(f"  medium seed {seed:2d}: lp {lp:10.2f} in {lp_s:5.2f} s, Volume {b.value:10.2f} in "
              f"{b.runtime_s:5.2f} s ({_pct(b.value, lp)})", flush=True)
    print(f"  worst Volume vs lp: {100 * worst:+.3f}%  (target 1%)")
    print("== memory of milp.bound on 10,000 jobs x 168 slots (fresh process)", flush=True)
    out = subprocess.run([sys.executable, "-c", _MEMORY_SNIPPET, "0"], capture_output=True,
                         text=True, check=True).stdout.split()
    value, secs, iters, before, peak = (float(x) for x in out)
    print(f"  bound {value:.2f} in {secs:.1f} s ({iters:.0f} iterations); peak RSS "
          f"{peak:.0f} MiB (instance alone {before:.0f} MiB; target 500 MiB)  load {_load()}")
    print("\n== summary")
    for r in rows:
        print(f"  {r['instance']:40s} gap {100 * r['gap']:6.3f}%  wall {r['wall']:6.1f}/"
              f"{r['limit']:.0f} s  {r['message'][:150]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--medium", default="0-11", help="medium seeds, e.g. 0-11 or none")
    ap.add_argument("--large", default="2000:256:0",
                    help="large instances num_jobs:num_gpus:seed, comma separated, or none")
    ap.add_argument("--lp-limit", type=float, default=300.0, help="seconds for each LP")
    ap.add_argument("--dual-limit", type=float, default=300.0,
                    help="seconds for each of lp-ipm and pdlp")
    ap.add_argument("--bound-limit", type=float, default=None, help="seconds for each search")
    ap.add_argument("--best-limit", type=float, default=10.0, help="seconds for best")
    ap.add_argument("--no-rounded-lp", dest="rounded_lp", action="store_false",
                    help="skip the LP with the rounded rows")
    ap.add_argument("--targets", action="store_true", help="print the issue's targets")
    ap.add_argument("--target-seeds", default="0-2", help="seeds of the 10,000-job targets")
    ap.add_argument("--target-lp", type=float, default=0.0,
                    help="also run the plain LP of each 10,000-job instance for this long")
    args = ap.parse_args()
    if args.targets:
        targets(args)
        return
    cases = [instances.generate("medium", seed=s) for s in _seeds(args.medium)]
    cases += [instances.generate("large", seed=s, num_jobs=n, num_gpus=g)
              for n, g, s in _large(args.large)]
    rows = []
    for inst in cases:
        row = measure(inst, args)
        show(row)
        rows.append(row)
    summary(rows)


if __name__ == "__main__":
    main()
