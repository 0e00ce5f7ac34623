"""Small instances under the flow objective (section 15): the MILP against brute force and CP-SAT.

For each size and seed, a random instance (the tests' tiny families: flat, on nodes, version
3) judged by flow; prints, side by side, brute force's optimum ``F`` and its time, the MILP's
(HiGHS, ``mip_gap=0``) value, status and time, and CP-SAT's; asserts nothing. The target of
issue 39: every MILP optimal within 10 s and equal to brute force and CP-SAT.

Usage::

    python benchmarks/bench_flow_small.py                     # sizes 4-12, 5 seeds each
    python benchmarks/bench_flow_small.py --sizes 12 --seeds 10
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "oracles"))

from brute import brute_force, tiny_instance
from brute_nodes import brute_force_nodes, tiny_node_instance
from brute_v3 import brute_force_v3, tiny_v3_instance

import milp


def _instance(kind: str, seed: int, n: int):  # type: ignore[no-untyped-def]
    if kind == "flat":
        return tiny_instance(seed, n=n, T=10), brute_force
    if kind == "nodes":
        return tiny_node_instance(seed, n=n, shape=(4, 2, 2), T=8), brute_force_nodes
    return tiny_v3_instance(seed, n=n, shape=(2, 2), T=5, shared=0.6), brute_force_v3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="4,8,12", help="job counts (comma list)")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--kinds", default="flat,nodes,v3")
    ap.add_argument("--v3-max", type=int, default=8, help="largest version 3 size (brute force)")
    args = ap.parse_args()
    print(f"{'kind':5s} {'n':>3s} {'seed':>4s} {'brute F':>10s} {'s':>6s} {'milp F':>10s} "
          f"{'status':>8s} {'s':>6s} {'cpsat F':>10s} {'s':>6s}  equal")
    worst = 0.0
    unequal = 0
    for kind in args.kinds.split(","):
        for n in (int(x) for x in args.sizes.split(",")):
            if kind == "v3" and n > args.v3_max:
                continue
            for seed in range(args.seeds):
                inst, brute = _instance(kind, seed, n)
                inst = inst.replace(objective="flow")
                t = time.perf_counter()
                best, _ = brute(inst)
                tb = time.perf_counter() - t
                t = time.perf_counter()
                res = milp.solve(inst, time_limit=10, mip_gap=0)
                tm = time.perf_counter() - t
                t = time.perf_counter()
                cp = milp.solve(inst, backend="cpsat", time_limit=10, mip_gap=0)
                tc = time.perf_counter() - t
                ok = abs(res.value - best) <= 1e-6 * best and abs(cp.value - best) <= 1e-6 * best
                unequal += not ok or res.status != "optimal"
                worst = max(worst, tm)
                print(f"{kind:5s} {n:3d} {seed:4d} {best:10.2f} {tb:6.2f} {res.value:10.2f} "
                      f"{res.status!s:>8s} {tm:6.2f} {cp.value:10.2f} {tc:6.2f}  {ok}", flush=True)
    print(f"\nslowest MILP {worst:.2f} s; {unequal} instance(s) not optimal or not equal")


if __name__ == "__main__":
    main()
