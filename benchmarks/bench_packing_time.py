"""FGD's six placement policies inside the list heuristic, on the openb days with lifetimes.

The time-indexed counterpart of FGD's table (docs/packing-time.md): on the
version 3 ``openb-day`` instances (``resources="full"``: shares, models, CPU,
memory) of the days and pools ``gpusched reproduce real`` uses, the ``list``
method under each placement rule (FGD's six, the toolkit's first-fit, best-fit
and frag) and ``fifo`` as the baseline. Per rule, the median over the
instances of: the value, its gain over FIFO, the utilization (GPU amounts
``a_j``, inference included), the idle GPU share (100 - utilization, the
counterpart of FGD's unallocated GPUs) and the checker's FGD fragmentation
(``Metrics.fgd_fragmentation``, GPU-slots); how many instances each rule wins
(the highest value, ties shared) and whether the medians follow FGD's ranking
(FGD < BestFit < DotProd < Random in idle GPUs). ``random`` is the mean over
``--random-seeds`` seeds on each instance. Every schedule passes the checker
(``gpusched.solve``). Prints the table; asserts nothing.

Usage::

    python benchmarks/bench_packing_time.py [--days 115,118,...] [--pools 8,16,32]
        [--rule priority] [--random-seeds 5] [--csv rows.csv]
    python benchmarks/bench_packing_time.py --speed 1024:336:8000 [--repeat 5]
"""

from __future__ import annotations

import argparse
import csv
import itertools
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import gpusched  # noqa: E402
import instances  # noqa: E402
from gpusched.reproduce.real import REAL_DAYS, REAL_POOLS  # noqa: E402
from heuristics.decoder import job_arrays, serial_starts  # noqa: E402
from heuristics.engine import new_profile  # noqa: E402
from heuristics.packing import FGD_POLICIES  # noqa: E402
from heuristics.placement import new_place  # noqa: E402
from heuristics.rules import order_by  # noqa: E402
from instances.families import OPENB_DAYS, contention  # noqa: E402

RULES = ("first-fit", "best-fit", "frag", *FGD_POLICIES)
FIELDS = ("value", "gain_pct", "utilization_pct", "idle_pct", "fgd_frag", "jobs_run")


def _ints(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b) + 1) if b else [int(a)])
    return out


def _row(res: instances.Result, fifo: float | None) -> dict[str, float]:
    m = res.metrics
    assert m is not None and m.fgd_fragmentation is not None
    return {"value": m.value,
            "gain_pct": 100.0 * (m.value - fifo) / fifo if fifo else 0.0,
            "utilization_pct": 100.0 * m.utilization,
            "idle_pct": 100.0 * (1.0 - m.utilization),
            "fgd_frag": m.fgd_fragmentation, "jobs_run": m.jobs_run}


def run(days: list[int], pools: list[int], rule: str, seeds: int,
        csv_path: str | None) -> None:
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for day in days:
        for g in pools:
            inst = instances.generate("openb-day", day - OPENB_DAYS[0], num_gpus=g,
                                      resources="full")
            cell = {"day": day, "gpus": g, "contention": contention(inst)}
            fifo = _row(gpusched.solve(inst, "fifo"), None)
            rows.append({**cell, "method": "fifo", **fifo})
            for placement in RULES:
                names = [f"random:{s}" for s in range(seeds)] if placement == "random" \
                    else [placement]
                got = [_row(gpusched.solve(inst, "list", rule=rule, placement=p),
                            float(fifo["value"])) for p in names]
                mean = {f: statistics.fmean(r[f] for r in got) for f in FIELDS}
                rows.append({**cell, "method": placement, **mean})
    seconds = time.perf_counter() - t0
    if csv_path:
        with open(csv_path, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=["day", "gpus", "contention", "method", *FIELDS])
            w.writeheader()
            w.writerows(rows)
    print(f"openb-day, resources=full: days {','.join(map(str, days))}; pools "
          f"{','.join(map(str, pools))} GPUs; list order {rule!r}; random: mean of {seeds} "
          f"seeds; {len(rows) // (1 + len(RULES))} instances, {seconds:.1f} s")
    _table("all instances", rows)
    _table("the contended instances (contention >= 1)",
           [r for r in rows if float(r["contention"]) >= 1.0])


def _table(title: str, rows: list[dict[str, Any]]) -> None:
    """Print the medians per method over ``rows`` and the verdicts."""
    cells = {(r["day"], r["gpus"]) for r in rows}
    if not cells:
        return
    best = {c: max(float(r["value"]) for r in rows
                   if (r["day"], r["gpus"]) == c and r["method"] != "fifo") for c in cells}
    print()
    print(f"{title}: {len(cells)} instances (medians; value also as the mean)")
    print()
    print("| method | value | value (mean) | gain over fifo % | utilization % | idle GPU % | "
          "FGD fragmentation (GPU-slots) | jobs run | wins (highest value) |")
    print("|:--|--:|--:|--:|--:|--:|--:|--:|--:|")
    med: dict[str, dict[str, float]] = {}
    for method in ("fifo", *RULES):
        mine = [r for r in rows if r["method"] == method]
        med[method] = {f: statistics.median(float(r[f]) for r in mine)
                       for f in FIELDS}
        mean = statistics.fmean(float(r["value"]) for r in mine)
        wins = _wins(rows, method, best)
        m = med[method]
        print(f"| {method} | {m['value']:.2f} | {mean:.2f} | {m['gain_pct']:.2f} | "
              f"{m['utilization_pct']:.2f} | {m['idle_pct']:.2f} | {m['fgd_frag']:.1f} | "
              f"{m['jobs_run']:.0f} | {wins if method != 'fifo' else ''} |")
    ranked = sorted(FGD_POLICIES, key=lambda p: med[p]["idle_pct"])
    fgd_order = ("fgd", "bestfit", "dotprod", "random")
    held = all(med[a]["idle_pct"] < med[b]["idle_pct"] for a, b in itertools.pairwise(fgd_order))
    print()
    print("median idle GPU %, lowest first: "
          + " <= ".join(f"{p} {med[p]['idle_pct']:.2f}" for p in ranked))
    print(f"FGD's ranking (fgd < bestfit < dotprod < random in idle GPUs, strictly): "
          f"{'holds' if held else 'does not hold'}")
    top = max(RULES, key=lambda p: (med[p]["value"], -RULES.index(p)))
    print(f"highest median value: {top} ({med[top]['value']:.2f}); the most wins: "
          + max(RULES, key=lambda p: _wins(rows, p, best)))


def _wins(rows: list[dict[str, Any]], method: str, best: dict[Any, float]) -> int:
    """Instances where ``method``'s value is the highest of the rules' (ties shared)."""
    return sum(1 for r in rows if r["method"] == method != "fifo"
               and float(r["value"]) >= best[(r["day"], r["gpus"])] - 1e-9)


def speed(size: str, repeat: int) -> None:
    """Print one serial-decoder pass per rule (the median of ``repeat``) on an ``openb-shares``
    instance of ``GPUs:slots:jobs``."""
    G, T, n = (int(x) for x in size.split(":"))
    inst = instances.generate("openb-shares", seed=0, num_gpus=G, horizon=T, num_jobs=n)
    order, jobs = order_by(inst, "priority"), job_arrays(inst)
    print(f"openb-shares G={G} T={T}, {n} jobs, {len(inst.nodes or ())} nodes: one list pass "
          f"(priority order, a fresh state), median of {repeat}")
    print()
    print("| rule | pass | jobs run |")
    print("|:--|--:|--:|")
    for placement in RULES:
        times = []
        for _ in range(repeat + 1):  # (the first run may compile)
            prof, place = new_profile(inst, "curve", placement), new_place(inst)
            t0 = time.perf_counter()
            start = serial_starts(prof, order, jobs, None, place)
            times.append(time.perf_counter() - t0)
        print(f"| {placement} | {1000 * statistics.median(times[1:]):.1f} ms | "
              f"{int((start >= 0).sum())} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--days", default=",".join(map(str, REAL_DAYS)))
    ap.add_argument("--pools", default=",".join(map(str, REAL_POOLS)))
    ap.add_argument("--rule", default="priority", help="the list order (heuristics.rules)")
    ap.add_argument("--random-seeds", type=int, default=5)
    ap.add_argument("--csv", default=None, help="also write one row per instance and method")
    ap.add_argument("--speed", default=None, metavar="G:T:N",
                    help="instead, time one pass per rule on openb-shares of G GPUs, T slots, N jobs")
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    if a.speed:
        speed(a.speed, a.repeat)
        return
    run(_ints(a.days), _ints(a.pools), a.rule, a.random_seeds, a.csv)


if __name__ == "__main__":
    main()
