"""The one capacity model's speed: the flat pass against an older tree, the node pass against the flat.

Two figures side by side, as ratios, in one run (a shared machine drifts, so
each ratio is taken pair by pair and the median of the pairs is reported):

- **flat, before and after**: with ``--before DIR`` (a checkout of an older
  commit), a worker process imports that tree and another this one; they
  time the same call in turn, ``--rounds`` times (each time the median of
  ``--reps`` calls, after a warm-up), and the ratio is after / before. The
  calls: the list pass (:func:`heuristics.listsched.list_starts`, priority
  order, ``curve``) on ``large`` (default size and 2,000 jobs on 256 GPUs) and
  on ``medium``; then FIFO, EASY, conservative backfilling, the parallel
  scheme, 20 sampling passes and 200 local-search moves, flat and on 32 nodes
  of 8 GPUs.
- **nodes over flat**: in this tree, the list pass on the 2,000-job
  instance put on 32 nodes of 8 GPUs (``instances.with_nodes(inst, 8)``) over
  the same pass flat, for each placement rule: the whole call (profile built,
  decoded) and the decoder alone on a copy of a built profile.

With ``--before``, the starts and placements of the list passes (flat, and
on 32 nodes of 8 GPUs for each rule) are first compared, by hash, with the
older tree's; the exit code is 1 when one differs.

Usage::

    python benchmarks/bench_capacity.py [--before DIR] [--rounds 7] [--reps 21] [--quick]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WORKER = r"""
import hashlib, json, statistics, sys, time
import numpy as np
import instances
from heuristics.backfill import conservative_starts, easy_starts
from heuristics.fifo import fifo_starts
from heuristics.listsched import list_starts, parallel_starts
from heuristics.rules import order_by
from heuristics.search import local_search_order, sampling_order

SHAPES = {"medium": ("medium", {}), "large": ("large", {}),
          "large2000": ("large", {"num_jobs": 2000, "num_gpus": 256})}
_insts = {}


def inst_of(name):
    if name not in _insts:
        base, _, nodes = name.partition("@")
        fam, kw = SHAPES[base]
        inst = instances.generate(fam, seed=0, **kw)
        _insts[name] = instances.with_nodes(inst, int(nodes)) if nodes else inst
    return _insts[name]


def decoder_pass(inst, order, rule):
    # the decoder alone, on a copy of a profile built once (the API of either tree)
    try:
        from heuristics.decoder import job_arrays, serial_starts
        try:
            from heuristics.engine import new_profile
        except ImportError:  # the tree before the one capacity engine
            from heuristics.profile import new_profile
    except ImportError:  # the tree before the one capacity model
        from heuristics._core import job_arrays, serial_starts
        from heuristics.placement import new_place, node_profile
        cap, jobs = inst.batch_capacity("curve"), job_arrays(inst)
        if not inst.has_nodes:
            return lambda: serial_starts(cap.copy(), order, jobs)
        prof = node_profile(inst, "curve", rule)
        return lambda: serial_starts(cap.copy(), order, jobs, nodes=prof.copy(),
                                     place=new_place(inst))
    prof, jobs = new_profile(inst, "curve", rule), job_arrays(inst)
    return lambda: serial_starts(prof.copy(), order, jobs)


def case(name):
    where, what, rule = (name.split(":") + ["first-fit"])[:3]
    inst = inst_of(where)
    order = order_by(inst, "priority")
    kw = {"placement": rule} if inst.has_nodes else {}
    return {
        "list": lambda: list_starts(inst, order, "curve", **kw),
        "pass": decoder_pass(inst, order, rule),
        "parallel": lambda: parallel_starts(inst, order, "curve", **kw),
        "fifo": lambda: fifo_starts(inst, "peak"),
        "easy": lambda: easy_starts(inst, "curve"),
        "conservative": lambda: conservative_starts(inst, "curve"),
        "sampling": lambda: sampling_order(inst, passes=20, **kw),
        "search": lambda: local_search_order(inst, order, iterations=200, **kw),
    }[what]


def digest(name):
    # the starts and placements of the list pass of case ``name``, hashed (the same API in both trees)
    from heuristics.placement import new_place
    where, _, rule = (name.split(":") + ["first-fit"])[:3]
    inst = inst_of(where)
    place = new_place(inst)
    kw = {"placement": rule, "place": place} if inst.has_nodes else {}
    start = list_starts(inst, order_by(inst, "priority"), "curve", **kw)
    text = json.dumps([start.tolist(), place.tolist() if inst.has_nodes else []])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


for line in sys.stdin:
    name, reps = line.split()
    if reps == "digest":
        print(digest(name), flush=True)
        continue
    fn = case(name)
    fn()
    times = []
    for _ in range(int(reps)):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    print(statistics.median(times), flush=True)
"""

FLAT_CASES = ("large:list", "large2000:list", "medium:list", "large2000:pass", "medium:pass",
              "large2000:fifo", "large2000:easy", "large2000:conservative", "large2000:parallel",
              "large2000:sampling", "large2000:search", "medium:search")
NODE_CASES = ("large2000@8:list", "large2000@8:list:best-fit", "large2000@8:list:frag",
              "large2000@8:fifo", "large2000@8:easy", "large2000@8:parallel",
              "large2000@8:sampling", "large2000@8:search")
RULES = ("first-fit", "best-fit", "frag")
SCHEDULE_CASES = (*FLAT_CASES[:3], *(f"large2000@8:list:{rule}" for rule in RULES))
"""The list passes whose starts and placements are compared with the older tree's."""


class Worker:
    """A Python process that imports the tree at ``path`` and times the calls it is sent."""

    def __init__(self, path: Path) -> None:
        env = dict(os.environ, PYTHONPATH=str(path))
        self.proc = subprocess.Popen([sys.executable, "-c", WORKER], env=env, cwd=path, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def time(self, name: str, reps: int) -> float:
        """Median seconds of ``reps`` calls of case ``name``."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{name} {reps}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the worker stopped on {name!r} (exit {self.proc.wait()})")
        return float(line)

    def digest(self, name: str) -> str:
        """The hash of the starts and placements of the list pass of case ``name``."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{name} digest\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline().strip()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def paired(a: Worker, name_a: str, b: Worker, name_b: str, rounds: int,
           reps: int) -> tuple[float, float, float]:
    """``a`` on ``name_a`` and ``b`` on ``name_b`` in turn (who goes first alternates).

    Returns the median seconds of each and the median over the rounds of ``b / a``.
    """
    ta, tb = [], []
    for r in range(rounds):
        if r % 2:
            tb.append(b.time(name_b, reps))
            ta.append(a.time(name_a, reps))
        else:
            ta.append(a.time(name_a, reps))
            tb.append(b.time(name_b, reps))
    return (statistics.median(ta), statistics.median(tb),
            statistics.median(y / x for x, y in zip(ta, tb)))


def _reps(name: str, reps: int) -> int:
    """Fewer calls for the slow cases (the searches, the node methods in numpy)."""
    slow = any(w in name for w in ("sampling", "search", "easy", "parallel", "fifo"))
    return max(3, reps // 5) if slow else reps


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, help="a checkout of the older tree to time beside this one")
    ap.add_argument("--rounds", type=int, default=7, help="timings per side of each ratio (median)")
    ap.add_argument("--reps", type=int, default=21, help="calls per timing (median)")
    ap.add_argument("--quick", action="store_true", help="the list passes only")
    args = ap.parse_args(argv)
    import numba
    import numpy

    print(f"Python {platform.python_version()}, numpy {numpy.__version__}, numba {numba.__version__}, "
          f"{os.cpu_count()} cores; {args.rounds} rounds of medians of {args.reps} calls")
    after = Worker(ROOT)
    differ: list[str] = []
    try:
        if args.before is not None:
            before = Worker(args.before.resolve())
            differ = [name for name in SCHEDULE_CASES if before.digest(name) != after.digest(name)]
            print(f"starts and placements of the {len(SCHEDULE_CASES)} list passes against the older "
                  f"tree: {'identical' if not differ else 'DIFFERENT in ' + ', '.join(differ)}")
            cases = FLAT_CASES[:3] if args.quick else FLAT_CASES + NODE_CASES
            print(f"\n{'call':30s} {'before ms':>10s} {'after ms':>10s} {'after/before':>13s}")
            for name in cases:
                t0, t1, ratio = paired(before, name, after, name, args.rounds, _reps(name, args.reps))
                print(f"{name:30s} {1e3 * t0:10.3f} {1e3 * t1:10.3f} {ratio:12.2f}x")
            before.close()
        print(f"\n{'nodes over flat (this tree)':30s} {'flat ms':>10s} {'32 x 8 ms':>10s} {'ratio':>13s}")
        for what in ("list", "pass"):
            for rule in RULES:
                t0, t1, ratio = paired(after, f"large2000:{what}", after, f"large2000@8:{what}:{rule}",
                                       args.rounds, args.reps)
                print(f"{what + ' ' + rule:30s} {1e3 * t0:10.3f} {1e3 * t1:10.3f} {ratio:12.2f}x")
    finally:
        after.close()
    return 1 if args.before is not None and differ else 0


if __name__ == "__main__":
    sys.exit(main())
