"""Bound subcommands: ``bound`` (find a certified upper bound) and ``check-bound`` (recompute one)."""

from __future__ import annotations

import argparse
import math
from typing import Any

from .core import json_line, save_output, seconds

BOUND_METHOD_NAMES: tuple[str, ...] = ("lagrangian", "subgradient", "lp-ipm", "pdlp")
"""``bound --method``'s choices, named without importing the solvers (a test holds them
to :data:`milp.bound.BOUND_METHODS`)."""


def register(sub: Any) -> None:
    """Add the bound subcommands to ``sub`` (an argparse subparsers object)."""
    p = sub.add_parser("bound", help="a certified bound: upper on value, lower on flow (Lagrangian multipliers)")
    p.add_argument("instance", help="instance file (gpusched-instance/1)")
    p.add_argument("--method", "-m", default="lagrangian", choices=BOUND_METHOD_NAMES,
                   help="how to find the multipliers (default lagrangian)")
    p.add_argument("--time-limit", type=seconds, default=None, help="seconds (default: until converged)")
    p.add_argument("-o", "--output", help="certificate file to write (gpusched-bound/1)")
    p.add_argument("--json", action="store_true", help="print one JSON object on one line")
    p.set_defaults(func=cmd_bound)

    p = sub.add_parser("check-bound", help="recompute a bound certificate: exit 0 if it holds, 1 if not")
    p.add_argument("instance", help="instance file")
    p.add_argument("certificate", help="certificate file (gpusched-bound/1)")
    p.add_argument("--schedule", help="a schedule file: the bound must not be past its value (below V, above F)")
    p.add_argument("--json", action="store_true", help="print one JSON object on one line")
    p.set_defaults(func=cmd_check_bound)


def cmd_bound(args: argparse.Namespace) -> int:
    import instances
    import milp
    from instances import format_value

    if args.time_limit is not None and not math.isfinite(args.time_limit):
        raise ValueError(f"--time-limit: must be a finite number >= 0, got {args.time_limit}")
    inst = instances.load(args.instance)
    from gpusched.dispatch import lagrangian_primal

    b = milp.bound(inst, args.method, time_limit=args.time_limit, primal=lagrangian_primal(inst))
    if args.output:
        save_output(args.output, instances.save_bound, b.certificate(inst))
    if args.json:
        print(json_line({"instance": inst.name, "method": b.method, "value": b.reported(inst),
                         "objective": inst.objective,
                         "runtime_s": b.runtime_s, "iterations": b.iterations,
                         "lower": b.lower, "message": b.message}))
    else:
        side = "lower" if inst.objective == "flow" else "upper"
        print(f"{inst.name}: {side} bound {format_value(b.reported(inst))} ({b.method}: "
              f"{b.iterations} iterations in {b.runtime_s:.2f} s, {b.message})")
    return 0


def cmd_check_bound(args: argparse.Namespace) -> int:
    import instances
    from instances import format_value
    from instances.bound_io import BOUND_TOLERANCE

    inst = instances.load(args.instance)
    cert = instances.load_bound(args.certificate, inst)
    schedule = instances.load_schedule(args.schedule) if args.schedule else None
    try:
        ok, recomputed = instances.check_bound(inst, cert, schedule)
    except ValueError as e:
        where = args.schedule if isinstance(e, instances.InfeasibleScheduleError) else args.certificate
        raise ValueError(f"{where}: {e}") from None
    side = "lower" if inst.objective == "flow" else "upper"
    if args.json:
        print(json_line({"holds": ok, "stated": cert.value, "recomputed": recomputed,
                         "method": cert.method}))
    elif ok:
        print(f"bound holds: {side} bound {format_value(cert.value)}, recomputed from the "
              f"multipliers {format_value(recomputed)}")
    else:
        short = abs(recomputed - cert.value) / max(abs(recomputed), 1e-300)
        print(f"bound does NOT hold: {side} bound {format_value(cert.value)} is "
              f"{'above' if side == 'lower' else 'below'} "
              f"{format_value(recomputed)} recomputed from the multipliers (by {short:.2g} "
              f"relative; the tolerance is {BOUND_TOLERANCE:g})")
    return 0 if ok else 1
