"""Peak memory of the largest family: generating it, the ``best`` heuristic, the MILP build.

Each measurement runs in a fresh Python process and reports that process's
peak resident set size (``ru_maxrss``), so the figures do not depend on what
ran before. Printed: one row per step, with the peak RSS in MiB, the increase
over the bare imports, the wall time, and a note (the model's size for the
build). A last row shows that a model over ``milp.build``'s size limit is
refused before it is built: its peak stays near the instance's.

Prints figures, asserts nothing.

Usage::

    python benchmarks/bench_memory.py                      # large, 10,000 jobs, 1,024 GPUs
    python benchmarks/bench_memory.py --num-jobs 2000 --num-gpus 256 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(
    """
    import json, resource, sys, time
    import instances, heuristics, milp
    step, num_jobs, num_gpus, horizon, seed = sys.argv[1], *map(int, sys.argv[2:6])
    t0 = time.perf_counter()
    note = ""
    if step != "imports":
        inst = instances.generate("large", seed=seed, num_jobs=num_jobs, num_gpus=num_gpus,
                                  horizon=horizon)
        note = inst.summary()
    if step == "best":
        res = heuristics.solve(inst, "best")
        note = f"value {res.value:.6g}, {res.message[:60]}"
    elif step == "fifo":
        res = heuristics.solve(inst, "fifo")
        note = f"value {res.value:.6g}"
    elif step == "milp.build":
        form = milp.build(inst)
        note = f"{form.num_cols} columns, {form.num_rows} rows"
    elif step == "milp.build (over limit)":
        try:
            milp.build(inst)
            note = "built (not over the limit)"
        except ValueError as e:
            note = "refused: " + str(e)[:70]
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(json.dumps({"peak_mib": peak / 1024, "wall_s": wall, "note": note}))
    """
)

STEPS = ("imports", "generate", "fifo", "best", "milp.build")


def measure(step: str, num_jobs: int, num_gpus: int, horizon: int, seed: int) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, step, str(num_jobs), str(num_gpus), str(horizon), str(seed)],
        capture_output=True, text=True, check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--num-jobs", type=int, default=10_000)
    ap.add_argument("--num-gpus", type=int, default=1024)
    ap.add_argument("--horizon", type=int, default=168)
    ap.add_argument("--over-limit-horizon", type=int, default=1000,
                    help="horizon of the instance whose model is over the size limit")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=1, help="runs per step (median reported)")
    args = ap.parse_args(argv)

    plan = [(s, args.horizon) for s in STEPS]
    plan.append(("milp.build (over limit)", args.over_limit_horizon))
    print(f"large family, seed {args.seed}: {args.num_jobs} jobs, {args.num_gpus} GPUs; "
          f"Python {sys.version.split()[0]}; peak RSS of a fresh process per step "
          f"(median of {args.repeat})")
    print(f"{'step':26s} {'horizon':>7s} {'peak MiB':>9s} {'+ MiB':>8s} {'wall s':>7s}  note")
    base = None
    for step, horizon in plan:
        runs = [measure(step, args.num_jobs, args.num_gpus, horizon, args.seed)
                for _ in range(args.repeat)]
        peak = statistics.median(r["peak_mib"] for r in runs)
        wall = statistics.median(r["wall_s"] for r in runs)
        if base is None:
            base = peak
        print(f"{step:26s} {horizon:7d} {peak:9.0f} {peak - base:8.0f} {wall:7.2f}  {runs[-1]['note']}")


if __name__ == "__main__":
    main()
