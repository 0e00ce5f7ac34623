"""Speed of the online replay (:func:`gpusched.simulate`); prints figures, asserts nothing.

On ``generate("large", seed=0, num_gpus=64, num_jobs=500)`` (a 168-slot week of
hourly slots, 500 jobs) and a ``lognormal`` scenario (``sigma=0.2``,
``rho=0.5``, seed 0), side by side in one run:

- ``list`` offline (one call of the method on the forecast);
- ``list`` replayed with ``replan=None`` (one plan) and with ``replan=1``
  (a plan at every slot: 168 plans); target at most 1 s;
- ``best`` replayed with ``replan=1`` (hourly) and ``time_limit`` seconds per
  plan (default 0.3); target at most 60 s;

each the median of ``--repeat`` runs (``best``: one run), without the
clairvoyant bound; then, once, the clairvoyant bound's MILP (``--bound-time``
seconds) and the realized values against it.

With ``--trace``: instead, the real forecast error of the ServeGen series,
``instances.trace_scenario(day=d, seed=0, contention=2.5)`` for days 3, 7 and
11; FIFO-peak, ``list`` and ``best`` (``--best-time`` per plan) with one plan,
re-planned every slot and with headroom 0.2 (and ``list`` at the peak
headroom and without preemption), against the clairvoyant bound.

With ``--nodes``: the same week on 8-GPU nodes (``instances.with_nodes(inst,
8)``), ``list`` (each placement rule) offline and re-planned every slot, timed in
turn with the flat replay (``--pairs`` pairs; the ratio is the median over the
pairs, so the machine's load hits both sides alike); then, once, the node
MILP's clairvoyant bound on the actual instance with nodes.

Usage::

    python benchmarks/bench_simulate.py [--repeat 5] [--best-time 0.3] [--bound-time 60]
    python benchmarks/bench_simulate.py --trace [--days 3 7 11]
    python benchmarks/bench_simulate.py --nodes [--pairs 5] [--bound-time 60]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import gpusched
import instances
from gpusched.simulate import clairvoyant_bound, peak_headroom


def _median(fn: Any, repeat: int) -> tuple[float, Any]:
    out = fn()  # warm-up (numba decoder, caches)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def trace_days(days: list[int], best_time: float, bound_time: float) -> None:
    """Realized values on real forecast error, each run against the clairvoyant bound."""
    for day in days:
        inst, sc = instances.trace_scenario(day=day, seed=0, contention=2.5)
        cb = clairvoyant_bound(inst, sc, time_limit=bound_time)
        fc, ac = inst.total_demand, sc.total(inst)
        print(f"day {day}: {inst.num_jobs} jobs, forecast {fc.sum()} actual {ac.sum()} GPU-slots, "
              f"actual above forecast in {(ac > fc).sum()} slots; bound {cb.upper_bound:.1f} ({cb.status})")
        best = {"time_limit": best_time}
        runs = [("fifo", None, 0.0, {}), ("list", None, 0.0, {}), ("list", 1, 0.0, {}),
                ("list", None, 0.2, {}), ("list", None, peak_headroom(inst), {}),
                ("best", None, 0.0, best), ("best", 1, 0.0, best), ("best", None, 0.2, best)]
        for method, replan, headroom, params in runs:
            for preempt in (True, False) if (method, replan, headroom) == ("list", None, 0.0) else (True,):
                r = gpusched.simulate(inst, sc, method, replan, headroom, preempt, clairvoyant=cb, **params)
                print(f"  {method:5s} replan={replan!s:4s} H={headroom:.2f} preempt={preempt!s:5s} "
                      f"realized {r.realized_value:7.1f} gap {100 * (r.gap_to_bound or 0.0):5.1f}% "
                      f"preemptions {r.preemptions:2d} lost {r.lost_gpu_slots:3d} "
                      f"unserved {r.unserved_gpu_slots:2d} utilization {100 * r.utilization:5.1f}%")


def nodes_week(pairs: int, bound_time: float) -> None:
    """The week on 8-GPU nodes beside the flat week: time and realized value of ``list``."""
    flat = instances.generate("large", seed=0, num_gpus=64, num_jobs=500)
    inst = instances.with_nodes(flat, 8)
    sc = instances.scenario(flat, "lognormal", seed=0, sigma=0.2, rho=0.5)
    print(inst.summary())
    print(f"scenario: {sc.meta}; multi-node jobs: {int(inst.multi_node.sum())}")
    print(f"\n{'run':32s} {'flat s':>8s} {'nodes s':>8s} {'ratio':>6s} {'plans':>6s} "
          f"{'flat value':>11s} {'node value':>11s} {'pre':>4s} {'miss':>5s} {'frag':>6s}")
    runs: list[tuple[str, int | None, str, bool]] = [("list offline", None, "first-fit", False)]
    runs += [(f"list replan=1 {rule}", 1, rule, True) for rule in ("first-fit", "best-fit", "frag")]
    runs.append(("list replan=None first-fit", None, "first-fit", True))
    node_runs = []
    for name, replan, rule, replay in runs:
        def go(i, replan=replan, rule=rule, replay=replay):
            params = {"placement": rule} if i.has_nodes else {}
            if not replay:
                return gpusched.solve(i, "list", **params)
            return gpusched.simulate(i, sc, "list", replan=replan, clairvoyant=False, **params)
        go(flat), go(inst)  # warm-up (numba, caches)
        tf, tn, ratios = [], [], []
        for _ in range(pairs):
            t0 = time.perf_counter()
            rf = go(flat)
            t1 = time.perf_counter()
            rn = go(inst)
            t2 = time.perf_counter()
            tf.append(t1 - t0)
            tn.append(t2 - t1)
            ratios.append((t2 - t1) / (t1 - t0))
        if replay:
            plans, vf, vn = rn.plans, rf.realized_value, rn.realized_value
            extra = f"{rn.preemptions:4d} {rn.missed_starts:5d} {rn.metrics.fragmentation:6d}"
            node_runs.append((name, rn))
        else:
            plans, vf, vn = 1, rf.value, rn.value
            extra = f"{'':4s} {'':5s} {rn.metrics.fragmentation:6d}"
        print(f"{name:32s} {statistics.median(tf):8.3f} {statistics.median(tn):8.3f} "
              f"{statistics.median(ratios):6.2f} {plans:6d} {vf:11.1f} {vn:11.1f} {extra}")
    if bound_time > 0:
        cb = clairvoyant_bound(inst, sc, time_limit=bound_time)
        print(f"\nclairvoyant bound on nodes: {cb.upper_bound:.1f} ({cb.status}, best value "
              f"{cb.value:.1f}, {cb.runtime_s:.1f} s)")
        for name, r in node_runs:
            print(f"  {name:30s} realized {r.realized_value:10.1f}  price of uncertainty "
                  f"{cb.upper_bound - r.realized_value:8.1f} "
                  f"({100 * (cb.upper_bound - r.realized_value) / cb.upper_bound:.2f}%)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--best-time", type=float, default=0.3, help="seconds per plan of best")
    ap.add_argument("--bound-time", type=float, default=60.0, help="seconds of the bound's MILP (0: skip)")
    ap.add_argument("--no-best", action="store_true", help="skip the best replay")
    ap.add_argument("--trace", action="store_true", help="real forecast error of ServeGen days")
    ap.add_argument("--days", type=int, nargs="+", default=[3, 7, 11])
    ap.add_argument("--nodes", action="store_true", help="the week on 8-GPU nodes beside the flat one")
    ap.add_argument("--pairs", type=int, default=5, help="--nodes: flat/node pairs timed in turn")
    args = ap.parse_args()
    if args.nodes:
        nodes_week(args.pairs, args.bound_time)
        return
    if args.trace:
        trace_days(args.days, args.best_time, args.bound_time)
        return

    inst = instances.generate("large", seed=0, num_gpus=64, num_jobs=500)
    sc = instances.scenario(inst, "lognormal", seed=0, sigma=0.2, rho=0.5)
    print(inst.summary())
    print(f"scenario: {sc.meta}")
    rows: list[tuple[str, float, int, float, Any]] = []
    t, res = _median(lambda: gpusched.solve(inst, "list"), args.repeat)
    rows.append(("list offline", t, 1, res.value, None))
    for replan in (None, 1):
        t, r = _median(
            lambda replan=replan: gpusched.simulate(inst, sc, "list", replan=replan, clairvoyant=False),
            args.repeat,
        )
        rows.append((f"list replan={replan}", t, r.plans, r.realized_value, r))
    if not args.no_best:
        t0 = time.perf_counter()
        r = gpusched.simulate(inst, sc, "best", replan=1, clairvoyant=False, time_limit=args.best_time)
        rows.append((f"best replan=1 time_limit={args.best_time:g}", time.perf_counter() - t0,
                     r.plans, r.realized_value, r))

    base = rows[0][1]
    print(f"\n{'run':34s} {'seconds':>9s} {'x offline':>10s} {'plans':>6s} {'value':>10s} "
          f"{'preempt':>8s} {'lost':>6s}")
    for name, t, plans, value, r in rows:
        pre = "" if r is None else f"{r.preemptions:8d} {r.lost_gpu_slots:6d}"
        print(f"{name:34s} {t:9.3f} {t / base:10.1f} {plans:6d} {value:10.1f} {pre}")

    if args.bound_time > 0:
        cb = clairvoyant_bound(inst, sc, time_limit=args.bound_time)
        print(f"\nclairvoyant bound: {cb.upper_bound:.1f} ({cb.status}, best value {cb.value:.1f}, "
              f"{cb.runtime_s:.1f} s)")
        for name, _, _, value, _r in rows[1:]:
            print(f"  {name:32s} realized {value:10.1f}  price of uncertainty "
                  f"{cb.upper_bound - value:8.1f} ({100 * (cb.upper_bound - value) / cb.upper_bound:.2f}%)")


if __name__ == "__main__":
    main()
