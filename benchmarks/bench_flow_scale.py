"""The flow targets at full scale (issue 39): ITP cluster 04 whole and Philly whole, side by side.

Per trace, each step in a fresh process (its peak RSS is the step's memory):

* ``list``: the one-pass parallel scheme with ``sjf`` (``parallel_starts``), its
  seconds and ``F`` (job-hours of weighted flow);
* ``best``: ``heuristics.solve(inst, "best", time_limit=--best-limit)`` (under flow
  the held search and the block search of docs/flow.md), its ``F`` and seconds;
* ``bound``: ``milp.bound(inst, "lagrangian", time_limit=--bound-limit,
  lower=best's worth)``, recomputed from its multipliers by
  ``instances.lagrangian_value``: the lower bound on ``F`` and its seconds;
* the gap of ``best`` to the bound on ``F`` and on the waiting alone
  (``F - sum_j w_j p_j h`` against ``bound - sum_j w_j p_j h``).

``--windows DAYS`` prints the evidence of which side is loose instead: windows of
ITP cluster 04 (``DAYS`` start days, 2 days of submits and a 24-hour drain on the same 512
GPUs), each with the one-pass ``sjf`` scheme, ``best`` (20 s), the converged Lagrangian
bound and the MILP (HiGHS, 200 s, one thread, warm-started from ``best``).

``--attempts S`` prints, on ITP cluster 04 whole, what each attempt of docs/flow.md gives:
orders in the parallel and serial schemes, the Lagrangian's relaxed starts as an order,
the LNS with one-day windows (60 s), and, at the multipliers of an ``S``-second bound, the
held scheme's variants and the block search (15 s) by chunk length.

``--held S`` runs, on each trace of ``--traces``, the held search alone for ``S`` seconds
from the one-pass ``sjf`` schedule (its schedule and its bound), then the block search
for 60 s: what ``best`` would reach with the time its one-pass members take.

``--oracle N`` times, on each trace of ``--traces``, the Lagrangian oracle grouped by
(duration, delay) against its table of starts (``milp.lagrange.LagrangianOracle(...,
grouped=False)``): build seconds, the bytes it holds, the median of ``N`` calls at
random prices, and whether every job's cheapest start agrees.

Prints figures, asserts nothing.

Usage::

    python benchmarks/bench_flow_scale.py                       # both traces
    python benchmarks/bench_flow_scale.py --traces itp04 --best-limit 120 --bound-limit 300
    python benchmarks/bench_flow_scale.py --traces philly --philly-gpus 384
    python benchmarks/bench_flow_scale.py --windows 5,14
    python benchmarks/bench_flow_scale.py --attempts 240
    python benchmarks/bench_flow_scale.py --traces philly --philly-gpus 384 --held 300
    python benchmarks/bench_flow_scale.py --philly-gpus 384 --oracle 20
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np


def trace_instance(name: str, philly_gpus: int) -> Any:
    """The full-scale flow instance of a trace name."""
    import instances

    if name == "itp04":
        inst = instances.from_trace("itp", "itp:cluster04", hours=1440, slot_minutes=15,
                                    drain=240, num_gpus=512)
    elif name == "philly":
        inst = instances.from_trace("philly-csv", "philly-csv:default", hours=2616,
                                    slot_minutes=15, drain=240, num_gpus=philly_gpus)
    else:
        raise SystemExit(f"--traces: unknown trace {name!r} (itp04, philly)")
    return inst.replace(objective="flow")


def step(kind: str, path: str, arg: float, best_limit: float) -> dict[str, Any]:
    """One step in this process; returns its figures. ``arg``: the bound's time limit, or
    (``best_limit`` of the ``bound`` step) best's ``F``, the search's target."""
    import heuristics
    import instances
    import milp
    from heuristics.listsched import parallel_starts
    from heuristics.rules import order_by
    from instances.objective import report, report_bound, start_worth

    inst = instances.load(path)
    out: dict[str, Any] = {}
    t0 = time.perf_counter()
    if kind == "list":
        start = parallel_starts(inst, order_by(inst, "sjf"))
        out["seconds"] = time.perf_counter() - t0
        out["F"] = report(inst, start_worth(inst, start))
    elif kind == "best":
        res = heuristics.solve(inst, "best", time_limit=best_limit)
        out["seconds"] = time.perf_counter() - t0
        out["F"] = res.value
        out["message"] = res.message
    elif kind == "bound":
        b = milp.bound(inst, "lagrangian", time_limit=arg, lower=report(inst, best_limit),
                       max_iter=10**6)
        out["seconds"] = time.perf_counter() - t0
        again = instances.lagrangian_value(inst, b.multipliers)
        out["bound"] = report_bound(inst, max(b.value, again))
        out["iterations"] = b.iterations
        out["stop"] = b.message
    out["rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


WIDTHS = ((1, 1), (2, 4), (5, 8), (9, 16), (17, 32), (33, 64), (65, 128))
"""GPU-count classes of the waiting tables."""


def by_width(inst: Any, starts: dict[str, Any]) -> None:
    """Print the waiting (job-hours) of each schedule by GPU-count class."""
    g = inst.gpus
    cells = []
    for lo, hi in WIDTHS:
        m = (g >= lo) & (g <= hi)
        if not m.any():
            continue
        wait = {k: (np.where(s >= 0, s, inst.horizon) - inst.releases) * inst.slot_hours
                for k, s in starts.items()}  # a job not run: censored at the horizon
        parts = ", ".join(f"{k} {float(w[m].sum()):,.0f}" for k, w in wait.items())
        cells.append(f"{lo}-{hi} GPUs ({int(m.sum())} jobs): {parts}")
    print("  waiting by width: " + "; ".join(cells))


def windows(days: list[int]) -> None:
    """The side evidence: ``best`` and the bound against the MILP on 2-day windows."""
    import heuristics
    import instances
    import milp
    from instances.objective import least_flow, report, report_bound
    from milp.params import MILPParams

    for day in days:
        inst = instances.generate("itp", seed=0, days=2, start_day=day, num_gpus=512,
                                  drain_hours=24, objective="flow")
        par = heuristics.solve(inst, "parallel", rule="sjf")
        bst = heuristics.solve(inst, "best", time_limit=20)
        bnd = milp.bound(inst, "lagrangian", lower=report(inst, bst.value), max_iter=20000,
                         time_limit=60)
        lb = report_bound(inst, bnd.value)
        m = milp.solve(inst, MILPParams(time_limit=200, threads=1), warm_start=bst)
        least = least_flow(inst)
        by_width(inst, {"sjf": par.schedule.to_array(inst), "MILP": m.schedule.to_array(inst)})
        print(f"days {day}-{day + 1}: {inst.num_jobs} jobs, {inst.horizon} slots; F: sjf "
              f"{par.value:,.2f}, best {bst.value:,.2f}, MILP {m.value:,.2f} ({m.status}, "
              f"its lower bound {m.bound:,.2f}), Lagrangian {lb:,.2f}, sum w p h {least:,.2f}; "
              f"waiting: sjf {par.value - least:,.2f}, MILP {m.value - least:,.2f}, "
              f"Lagrangian {lb - least:,.2f}")


def attempts(seconds: float) -> None:
    """What each attempt of docs/flow.md gives on ITP cluster 04 whole."""
    import milp
    from heuristics.flow_search import flow_local_search
    from heuristics.held import HELD_VARIANTS, held_starts
    from heuristics.listsched import list_starts, parallel_starts
    from heuristics.rules import order_by
    from heuristics.stop import MaxRuntime
    from instances.lagrangian import reduced_profits
    from instances.objective import report, report_bound, start_worth
    from matheuristics.params import LNSParams
    from matheuristics.search import lns_improve

    inst = trace_instance("itp04", 0)
    g = inst.gpus.astype(float)
    p = inst.durations.astype(float)
    r = inst.releases.astype(float)

    def flow(start: Any) -> str:
        return f"{report(inst, start_worth(inst, start)):,.1f} ({int((start < 0).sum())} censored)"

    sjf = parallel_starts(inst, order_by(inst, "sjf"))
    print(f"parallel sjf {flow(sjf)}; serial sjf {flow(list_starts(inst, order_by(inst, 'sjf')))}")
    for name, key in (("r", r), ("r + 4p", r + 4 * p), ("r + p sqrt(g)", r + p * np.sqrt(g)),
                      ("g p", g * p), ("sqrt(g) p", np.sqrt(g) * p)):
        o = np.lexsort((p, key))
        print(f"order by {name}: parallel {flow(parallel_starts(inst, o))}, "
              f"serial {flow(list_starts(inst, o))}")
    t0 = time.perf_counter()
    run = lns_improve(inst, sjf, None, stop=MaxRuntime(60), params=LNSParams(
        window=96, max_jobs=150, sub_time_limit=4, stall_rounds=None))
    print(f"LNS, one-day windows of 150 jobs, 60 s: {flow(run.start)}, {run.rounds} windows, "
          f"{run.improved} improved ({time.perf_counter() - t0:.0f} s)")
    b = milp.bound(inst, "lagrangian", time_limit=seconds, lower=start_worth(inst, sjf),
                   max_iter=10**6)
    print(f"bound after {b.runtime_s:.0f} s ({b.iterations} iterations): "
          f"{report_bound(inst, b.value):,.1f}")
    _, cheapest = reduced_profits(inst, b.multipliers)
    by_width(inst, {"sjf": sjf, "relaxed (each job at its cheapest start)": cheapest})
    for name, o in (("relaxed start", np.lexsort((g * p, cheapest))),
                    ("relaxed end", np.lexsort((g * p, cheapest + p)))):
        print(f"order by the {name}: parallel {flow(parallel_starts(inst, o))}, "
              f"serial {flow(list_starts(inst, o))}")
    held = None
    for variant in (*HELD_VARIANTS, ("area", 8)):
        start, name = held_starts(inst, b.multipliers, variants=(variant,))
        print(f"{name}: {flow(start)}")
        if held is None or start_worth(inst, start) > start_worth(inst, held):
            held = start
    for stride in (26, 128, 512):
        out, tries, better = flow_local_search(inst, held, time_limit=15, chunk=stride)
        print(f"block search 15 s, chunks of {stride}: {flow(out)}, {tries} moves, {better} better")


def held_alone(name: str, philly_gpus: int, seconds: float) -> None:
    """The held search for ``seconds``, then the block search for 60 s, on one trace."""
    from heuristics.flow_search import flow_local_search
    from heuristics.listsched import parallel_starts
    from heuristics.rules import order_by
    from instances.objective import least_flow, report, report_bound, start_worth
    from matheuristics.held import held_search

    inst = trace_instance(name, philly_gpus)
    sjf = parallel_starts(inst, order_by(inst, "sjf"))
    t0 = time.perf_counter()
    run = held_search(inst, sjf, time_limit=seconds)
    f = report(inst, start_worth(inst, run.start))
    if run.bound is None:
        raise SystemExit(f"--held: {seconds} s leaves no room for the search on {name}")
    lb = report_bound(inst, run.bound.value)
    its = run.bound.iterations
    print(f"{name}: held search {time.perf_counter() - t0:.0f} s: F {f:,.1f} ({run.name}, "
          f"{run.calls} decodings), its bound {lb:,.1f} ({its} iterations)")
    t0 = time.perf_counter()
    out, tries, better = flow_local_search(inst, run.start, time_limit=60)
    f2 = report(inst, start_worth(inst, out))
    least = least_flow(inst)
    print(f"{name}: block search 60 s: F {f2:,.1f} ({tries} moves, {better} better); gap to "
          f"the bound above {100 * (f2 - lb) / f2:.2f}% on F, "
          f"{100 * (f2 - lb) / (f2 - least):.2f}% on the waiting; peak RSS "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


def run_step(kind: str, path: str, arg: float, best_limit: float) -> dict[str, Any]:
    """:func:`step` in a fresh process."""
    cmd = [sys.executable, __file__, "--step", kind, "--path", path, "--arg", repr(arg),
           "--best-limit", repr(best_limit)]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def oracle_speed(name: str, philly_gpus: int, calls: int) -> None:
    """The grouped oracle against the table of starts on one trace (``--oracle``)."""
    from milp.lagrange import LagrangianOracle

    inst = trace_instance(name, philly_gpus)
    made: dict[str, Any] = {}
    for label, grouped in (("grouped", None), ("table", False)):
        t0 = time.perf_counter()
        oracle = LagrangianOracle(inst, grouped=grouped)
        build = time.perf_counter() - t0
        held = sum(a.nbytes for a in vars(oracle).values() if isinstance(a, np.ndarray))
        made[label] = (oracle, build, held)
    rng = np.random.default_rng(0)
    prices = [rng.exponential(0.05, inst.horizon) * (rng.random(inst.horizon) < 0.6)
              for _ in range(calls + 1)]
    out: dict[str, tuple[float, list[np.ndarray]]] = {}
    for label, (oracle, _, _) in made.items():
        starts, secs = [], []
        for lam in prices:
            t0 = time.perf_counter()
            _, _, st = oracle(lam)
            secs.append(time.perf_counter() - t0)
            full = np.full(inst.num_jobs, -2)
            full[oracle.jobs] = st
            starts.append(full)
        out[label] = (float(np.median(secs[1:])), starts)  # (the first call loads the kernel)
    same = all(np.array_equal(x, y) for x, y in zip(out["grouped"][1], out["table"][1]))
    g, t = out["grouped"][0], out["table"][0]
    print(f"{name}: {inst.num_jobs} jobs, {inst.horizon} slots; grouped "
          f"{len(made['grouped'][0].group_start) - 1} groups")
    for label in ("grouped", "table"):
        print(f"  {label:<8} build {made[label][1]:6.2f} s, holds {made[label][2] / 2**20:8.1f} MiB, "
              f"a call {1e3 * out[label][0]:8.2f} ms")
    print(f"  table / grouped per call: {t / g:.1f}x; the same start for every job at "
          f"{calls + 1} prices: {'yes' if same else 'NO'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", default="itp04,philly")
    ap.add_argument("--best-limit", type=float, default=120.0)
    ap.add_argument("--bound-limit", type=float, default=300.0)
    ap.add_argument("--philly-gpus", type=int, default=512)
    ap.add_argument("--windows", help="start days of 2-day windows: the side evidence")
    ap.add_argument("--attempts", type=float, help="seconds of the bound behind the attempts")
    ap.add_argument("--held", type=float, help="seconds of the held search alone")
    ap.add_argument("--oracle", type=int, help="calls of the oracle, grouped against its table")
    ap.add_argument("--step", help=argparse.SUPPRESS)
    ap.add_argument("--path", help=argparse.SUPPRESS)
    ap.add_argument("--arg", type=float, default=0.0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.step:
        print(json.dumps(step(a.step, a.path, a.arg, a.best_limit)))
        return
    if a.windows:
        windows([int(d) for d in a.windows.split(",")])
        return
    if a.held is not None:
        for name in a.traces.split(","):
            held_alone(name, a.philly_gpus, a.held)
        return
    if a.attempts is not None:
        attempts(a.attempts)
        return
    if a.oracle is not None:
        for name in a.traces.split(","):
            oracle_speed(name, a.philly_gpus, a.oracle)
        return
    import instances
    from instances.objective import least_flow

    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores")
    for name in a.traces.split(","):
        inst = trace_instance(name, a.philly_gpus)
        busy = float((inst.gpus * inst.durations).sum()) / (inst.num_gpus * inst.horizon)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, f"{name}.json")
            instances.save(inst, path)
            lst = run_step("list", path, 0.0, a.best_limit)
            bst = run_step("best", path, 0.0, a.best_limit)
            bnd = run_step("bound", path, a.bound_limit, bst["F"])
        least = least_flow(inst)
        gap = (bst["F"] - bnd["bound"]) / bst["F"]
        wait_gap = (bst["F"] - bnd["bound"]) / (bst["F"] - least)
        print(f"\n{name}: {inst.num_jobs} jobs, {inst.horizon} slots, {inst.num_gpus} GPUs, "
              f"GPU-slots asked / offered over the horizon {busy:.3f}; sum w p h {least:,.1f}")
        print(f"{'step':<6} {'F (job-h)':>12} {'seconds':>8} {'peak MiB':>9}")
        print(f"{'list':<6} {lst['F']:>12,.1f} {lst['seconds']:>8.1f} {lst['rss_mib']:>9.0f}")
        print(f"{'best':<6} {bst['F']:>12,.1f} {bst['seconds']:>8.1f} {bst['rss_mib']:>9.0f}")
        print(f"{'bound':<6} {bnd['bound']:>12,.1f} {bnd['seconds']:>8.1f} {bnd['rss_mib']:>9.0f}"
              f"  ({bnd['iterations']} iterations, {bnd['stop']})")
        print(f"gap on F {100 * gap:.2f}%; on the waiting {100 * wait_gap:.2f}% "
              f"(best waits {bst['F'] - least:,.1f}, the bound {bnd['bound'] - least:,.1f})")
        print(f"best: {bst['message']}")


if __name__ == "__main__":
    main()
