"""Figures of the exact MILP; prints them, asserts nothing.

Parts (``--parts``, comma separated; default ``build,small,medium``):

``build``
    Build time of a model of about 100,000 binaries (``large`` family, 1,200
    jobs on 128 GPUs over a week): ``milp.build`` (median of ``--repeat``) and
    the same model written term by term in PuLP (variables in a dict, one
    ``lpSum`` per slot), with the ratio; both without the rounded capacity
    rows, whose cost is printed apart; then ``Formulation.to_pulp``.
``small``
    Time to proven optimum (``mip_gap`` 0) on ``small`` seeds.
``medium``
    Gap ``(UB - V) / UB`` after ``--time-limit`` wall seconds on ``medium`` seeds
    (with the process CPU seconds the solve got, telling a loaded machine apart),
    side by side, all warm started by the ``best`` heuristic (whose own value
    is printed): HiGHS alone on ``--threads`` threads (``highs``), HiGHS on one
    thread with the LNS helper on a second (``highs+lns``, what ``gpusched.solve(inst, "milp")``
    does by default on two threads), and CP-SAT on ``--threads`` workers;
    ``--portfolio`` adds HiGHS and CP-SAT in parallel on two threads.
    ``--configs`` picks among these four, ``--runs`` repeats each seed.
``reference``
    The three configurations measured before the MILP issue: 60 jobs x 168
    slots x 8 GPUs and 200 x 168 x 64 after ``--time-limit`` s, 80 x 168 x 16
    after 20 s; HiGHS and CP-SAT.
``strength``
    Formulation variants on ``medium`` and ``hc-*`` seeds after a short limit:
    plain (no warm start), + warm start, + clique rows, - rounded capacity
    rows, - aggregation. LP bound, bound, value, gap.

Every solve goes through ``matheuristics.solve_milp`` (what ``gpusched.solve(inst,
"milp")`` runs: ``milp.solve`` with the automatic warm start and the LNS helper).

Usage::

    python benchmarks/bench_milp.py --parts build
    python benchmarks/bench_milp.py --parts small,medium --seeds 5 --time-limit 60
    python benchmarks/bench_milp.py --parts medium --first-seed 5 --seeds 1 --runs 4 \
        --configs highs+lns --threads 2
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

import heuristics
import instances
import milp
from matheuristics import solve_milp


def pulp_term_by_term(inst: instances.Instance) -> Any:
    """The time-indexed model written the usual PuLP way (dicts and ``lpSum``)."""
    import pulp

    cap = inst.batch_capacity("curve")
    prob = pulp.LpProblem("term_by_term", pulp.LpMaximize)
    x: dict[tuple[int, int], Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for j, job in enumerate(inst.jobs):
            end_by = int(inst.deadlines[j])
            for s in range(job.release, end_by - job.duration + 1):
                if all(cap[t] >= job.gpus for t in range(s, s + job.duration)):
                    x[j, s] = pulp.LpVariable(f"x_{j}_{s}", cat=pulp.LpBinary)
    prob += pulp.lpSum(float(inst.job_values[j]) * v for (j, _), v in x.items())
    by_job: dict[int, list[Any]] = {}
    for (j, _), v in x.items():
        by_job.setdefault(j, []).append(v)
    for j, vs in by_job.items():
        if len(vs) > 1:
            prob += pulp.lpSum(vs) <= 1, f"assign_{j}"
    covering: dict[int, list[tuple[Any, int]]] = {}
    for (j, s), v in x.items():
        for t in range(s, s + inst.jobs[j].duration):
            covering.setdefault(t, []).append((v, inst.jobs[j].gpus))
    for t, terms in covering.items():
        if sum(g for _, g in terms) > cap[t]:
            prob += pulp.lpSum(g * v for v, g in terms) <= int(cap[t]), f"cap_{t}"
    return prob


def _median_build(inst: instances.Instance, repeat: int, **kw: Any) -> tuple[Any, list[float]]:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        form = milp.build(inst, **kw)
        times.append(time.perf_counter() - t)
    return form, times


def part_build(args: argparse.Namespace) -> None:
    inst = instances.generate("large", seed=0, num_jobs=1200, num_gpus=128)
    print(f"[build] {inst.summary()}")
    # like for like: the model PuLP builds below has no rounded capacity rows
    form, times = _median_build(inst, args.repeat, rounding=())
    arrays = statistics.median(times)
    print(f"[build] model: {form.num_cols} columns, {form.num_rows} rows, {form.nnz} nonzeros")
    print(f"[build] milp.build(rounding=()) median of {args.repeat}: {arrays:.3f} s "
          f"(min {min(times):.3f})")
    full, times = _median_build(inst, args.repeat)
    print(f"[build] milp.build default (+ {full.stats['rounded_rows']} rounded capacity rows, "
          f"{full.nnz} nonzeros) median of {args.repeat}: {statistics.median(times):.3f} s")
    t = time.perf_counter()
    prob = pulp_term_by_term(inst)
    pulp_s = time.perf_counter() - t
    print(f"[build] PuLP term by term: {pulp_s:.2f} s, {len(prob.variables())} variables, "
          f"{prob.numConstraints()} constraints")
    print(f"[build] ratio PuLP / arrays (same model): {pulp_s / arrays:.1f}x")
    t = time.perf_counter()
    full.to_pulp()
    to_pulp_s = time.perf_counter() - t
    print(f"[build] Formulation.to_pulp (export of the arrays): {to_pulp_s:.2f} s")
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        full.write_mps(str(Path(tmp) / "large.mps"))
        mps_s = time.perf_counter() - t
    print(f"[build] Formulation.write_mps (HiGHS's writer): {mps_s:.2f} s, "
          f"{to_pulp_s / mps_s:.1f}x faster than to_pulp alone")


def _row(label: str, res: instances.Result, extra: str = "") -> str:
    gap = res.gap
    return (
        f"{label:<34} {res.method:<6} {res.status!s:<10} value {res.value:>10.2f}  "
        f"bound {res.upper_bound if res.upper_bound is not None else float('nan'):>10.2f}  "
        f"gap {100 * gap if gap is not None else float('nan'):6.2f}%  "
        f"lp {res.lp_bound if res.lp_bound is not None else float('nan'):>10.2f}  "
        f"nodes {res.nodes if res.nodes is not None else -1:>7}  {res.runtime_s:6.1f} s {extra}"
    )


def part_small(args: argparse.Namespace) -> None:
    times = []
    for seed in range(args.seeds):
        inst = instances.generate("small", seed=seed)
        cpu = time.process_time()
        res = solve_milp(inst, time_limit=60, mip_gap=0, threads=args.threads)
        times.append(res.runtime_s)
        print(_row(f"[small] {inst.summary()}", res, f"cpu {time.process_time() - cpu:.2f} s"))
    print(f"[small] time to optimum: median {statistics.median(times):.2f} s, "
          f"max {max(times):.2f} s over {len(times)} seeds")


CONFIGS: dict[str, Any] = {
    "highs": lambda t: ("highs", t, {"lns_helper": False}),
    "highs+lns": lambda t: ("highs", 2, {"lns_helper": True}),
    "cpsat": lambda t: ("cpsat", t, {}),
    "portfolio": lambda t: ("portfolio", max(2, t), {}),
}
"""Configuration name -> ``--threads`` -> (backend, threads, extra ``solve_milp`` options)."""


def _side_by_side(tag: str, inst: instances.Instance, limit: float, args: argparse.Namespace,
                  gaps: dict[str, list[float]]) -> None:
    best = heuristics.solve(inst, "best", time_limit=min(10.0, 0.1 * limit))
    print(f"[{tag}] {inst.summary()}; best heuristic {best.value:.2f} in {best.runtime_s:.1f} s")
    for name in args.configs:
        backend, threads, kw = CONFIGS[name](args.threads)
        cpu = time.process_time()
        res = solve_milp(inst, backend=backend, time_limit=limit, warm_start=best,
                         threads=threads, **kw)
        cpu = time.process_time() - cpu
        gaps.setdefault(name, []).append(res.gap if res.gap is not None else float("nan"))
        label = f"[{tag}] seed {inst.meta.get('seed', '?')} {name} ({threads} thr.)"
        print(_row(label, res,
                   f"cpu {cpu:5.1f} s (+{100 * (res.value - best.value) / max(best.value, 1e-9):.2f}% "
                   "over best)"))


def _summary(tag: str, gaps: dict[str, list[float]]) -> None:
    for backend, g in gaps.items():
        arr = 100 * np.array(g)
        print(f"[{tag}] {backend}: gap median {np.median(arr):.2f}%, max {arr.max():.2f}%, "
              f"<= 1% on {int((arr <= 1.0).sum())}/{arr.size}")


def part_medium(args: argparse.Namespace) -> None:
    gaps: dict[str, list[float]] = {}
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        for _ in range(args.runs):
            _side_by_side("medium", instances.generate("medium", seed=seed), args.time_limit, args,
                          gaps)
    _summary("medium", gaps)


def part_reference(args: argparse.Namespace) -> None:
    configs = [(60, 8, args.time_limit), (200, 64, args.time_limit), (80, 16, 20.0)]
    for n, G, limit in configs:
        gaps: dict[str, list[float]] = {}
        for seed in range(args.ref_seeds):
            inst = instances.generate("medium", seed=seed, num_jobs=n, num_gpus=G, horizon=168,
                                      slot_hours=1.0)
            _side_by_side(f"ref {n}x168x{G} {limit:g}s", inst, limit, args, gaps)
        _summary(f"ref {n}x168x{G} {limit:g}s", gaps)


def part_strength(args: argparse.Namespace) -> None:
    variants = {
        "plain, no warm start": {"warm_start": None},
        "default (aggregate, warm start)": {},
        "+ clique rows": {"cliques": True},
        "- rounded capacity rows": {"rounding": ()},
        "- aggregation": {"aggregate": False},
    }
    cases = [("medium", s) for s in range(min(3, args.seeds))] + [
        ("hc-training-heavy", 0), ("hc-mixed", 0), ("hc-deadlines", 0)]
    for family, seed in cases:
        inst = instances.generate(family, seed=seed)
        form = milp.build(inst, cliques=True)
        print(f"[strength] {inst.summary()}; clique rows {form.stats['clique_rows']}, "
              f"rounded rows {form.stats['rounded_rows']}, "
              f"aggregated jobs {form.stats['aggregated_jobs']}")
        for label, kw in variants.items():
            res = solve_milp(inst, time_limit=args.strength_limit, threads=args.threads, **kw)
            print(_row(f"[strength] {label}", res))


PARTS = {"build": part_build, "small": part_small, "medium": part_medium,
         "reference": part_reference, "strength": part_strength}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default="build,small,medium")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--first-seed", type=int, default=0, help="first seed of the medium part")
    ap.add_argument("--ref-seeds", type=int, default=2)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--strength-limit", type=float, default=20.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--portfolio", action="store_true",
                    help="also run backend='portfolio' (HiGHS and CP-SAT in parallel, 2 threads)")
    ap.add_argument("--configs", default="highs,highs+lns,cpsat",
                    help="configurations of the medium and reference parts, comma separated: "
                         "highs, highs+lns, cpsat, portfolio")
    ap.add_argument("--runs", type=int, default=1,
                    help="runs of each medium seed (the LNS helper's result depends on timing)")
    args = ap.parse_args()
    args.configs = args.configs.split(",")
    for name in args.configs:
        if name not in CONFIGS:
            ap.error(f"--configs: unknown configuration {name!r}; known: {', '.join(CONFIGS)}")
    if args.portfolio and "portfolio" not in args.configs:
        args.configs.append("portfolio")
    for name in args.parts.split(","):
        if name not in PARTS:
            ap.error(f"--parts: unknown part {name!r}; known: {', '.join(PARTS)}")
        t = time.perf_counter()
        PARTS[name](args)
        print(f"[{name}] part done in {time.perf_counter() - t:.0f} s", flush=True)


if __name__ == "__main__":
    main()
