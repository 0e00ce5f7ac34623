"""Online-operation subcommands: ``scenario`` draws a day's actual demand,
``simulate`` replays a method's plans against it (the specification (docs/model.md))."""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
from typing import TYPE_CHECKING, Any

from .core import count, json_line, parse_params, positive, save_output, seconds

if TYPE_CHECKING:
    import instances

logger = logging.getLogger(__name__)


def register(sub: Any) -> None:
    """Add ``scenario`` and ``simulate`` to ``sub`` (an argparse subparsers object)."""
    p = sub.add_parser(
        "scenario", help="draw the actual demand of an instance's day, or a ServeGen day with its forecast",
        description="Draw the actual demand of an instance's day from a model (INSTANCE --model ...), "
        "or, with --trace-day D, build a day of the shipped ServeGen series: the forecast "
        "instance (the mean of the previous days at each hour) and the day that came.",
    )
    p.add_argument("instance", nargs="?", default=None,
                   help="instance file (its demand is the forecast); not with --trace-day")
    p.add_argument("--model", default=None, help="lognormal (default) or trace")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--sigma", type=float, default=None, help="lognormal: sigma of the log-noise (0.2)")
    p.add_argument("--rho", type=float, default=None, help="lognormal: lag-1 autocorrelation (0.5)")
    p.add_argument("--day", type=int, default=None, help="trace: day of the ServeGen series (7)")
    p.add_argument("--history", type=int, default=None,
                   help="trace, --trace-day: forecast from the last N days only (default: all before)")
    p.add_argument("--trace-day", type=int, default=None, metavar="D",
                   help="build day D of the ServeGen series (1-13): the forecast instance and its "
                   "actual day (instances.trace_scenario); -p goes to the trace-servegen family "
                   "(e.g. -p contention=2.5, -p num_gpus=32)")
    p.add_argument("--instance-out", default=None, metavar="FILE",
                   help="with --trace-day: the forecast instance file to write (required)")
    p.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                   help="other model parameter, e.g. -p mean_one=false (repeatable)")
    p.add_argument("-o", "--output", help="scenario file to write (default: standard output)")
    p.set_defaults(func=cmd_scenario)

    p = sub.add_parser("simulate", help="replay a method's plans against a scenario")
    p.add_argument("instance", help="instance file (its demand is the forecast)")
    p.add_argument("--scenario", required=True, help="scenario file (gpusched-scenario/1)")
    p.add_argument("--method", "-m", default="list", help="planning method (see `gpusched methods`)")
    p.add_argument("--replan", type=positive, default=None,
                   help="slots between plans (default: one plan, at slot 0)")
    p.add_argument("--headroom", type=float, default=0.0,
                   help="plan on the forecast scaled by 1 + H (default 0)")
    p.add_argument("--no-preempt", action="store_true",
                   help="never preempt batch work; count the inference left unserved")
    p.add_argument("--time-limit", type=seconds, default=None, help="seconds per plan")
    p.add_argument("--bound-time-limit", type=seconds, default=60.0,
                   help="seconds of the clairvoyant bound's MILP (default 60)")
    p.add_argument("--no-bound", action="store_true", help="skip the clairvoyant bound")
    p.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                   help="method parameter, e.g. -p rule=value (repeatable)")
    p.add_argument("-o", "--output", help="realized schedule file to write (gpusched-schedule/1)")
    p.add_argument("--json", action="store_true", help="print one JSON object on one line")
    p.set_defaults(func=cmd_simulate)


def cmd_scenario(args: argparse.Namespace) -> int:
    import instances

    params = parse_params(args.param)
    if args.trace_day is not None:
        inst, sc = _trace_day(args, params)
    else:
        if args.instance is None:
            raise ValueError("instance: an instance file is needed (or --trace-day D)")
        if args.instance_out is not None:
            raise ValueError("--instance-out: only with --trace-day (the instance is the file given)")
        inst = instances.load(args.instance)
        for key in ("sigma", "rho", "day", "history"):
            value = getattr(args, key)
            if value is not None:
                params[key] = value
        sc = instances.scenario(inst, args.model or "lognormal", seed=args.seed, **params)
    if args.output:
        save_output(args.output, instances.save_scenario, sc)
    else:
        sys.stdout.write(json.dumps(sc.to_dict()) + "\n")
    line = scenario_line(sc, inst)
    wrote = [f"the forecast instance to {args.instance_out}"] if args.trace_day is not None else []
    if args.output:
        wrote.insert(0, str(args.output))
    if wrote:
        line += f"; wrote {' and '.join(wrote)}"
    # as generate: on standard output beside a file, on standard error beside the scenario
    print(line, file=sys.stdout if args.output else sys.stderr)
    return 0


def scenario_line(sc: instances.Scenario, inst: instances.Instance) -> str:
    """One line on a scenario: its model, seed and parameters, its instance, its services
    and slots (what ``gpusched scenario`` prints)."""
    meta = dict(sc.meta)
    params = {k: v for k, v in dict(meta.get("params") or {}).items() if v is not None}
    how = ", ".join([f"seed {meta.get('seed', '?')}",
                     *(f"{k} {json.dumps(v) if isinstance(v, bool) else v}"
                       for k, v in params.items())])
    slots = max((len(v) for v in sc.actual.values()), default=inst.horizon)
    return (f"{meta.get('model', 'a')} scenario of {sc.instance} ({how}): "
            f"{count(len(sc.actual), 'service')} over {count(slots, 'slot')}")


def _trace_day(args: argparse.Namespace, params: dict[str, Any]) -> tuple[instances.Instance, instances.Scenario]:
    """``instances.trace_scenario`` from the command line; writes the forecast instance."""
    import instances

    if args.instance is not None:
        raise ValueError(
            f"instance: not taken with --trace-day (got {args.instance!r}); the forecast instance "
            "is built from the series and written to --instance-out"
        )
    for flag, value in (("--model", args.model), ("--sigma", args.sigma), ("--rho", args.rho),
                        ("--day", args.day)):
        if value is not None:
            raise ValueError(f"{flag}: not with --trace-day (the actual is the day itself)")
    if args.instance_out is None:
        raise ValueError("--instance-out: required with --trace-day (the scenario is for that instance)")
    for key in ("history", "seed"):
        if key in params:
            raise ValueError(f"--param {key}: give it as --{key}")
    inst, sc = instances.trace_scenario(args.trace_day, args.seed, history=args.history, **params)
    save_output(args.instance_out, instances.save, inst)
    return inst, sc


def cmd_simulate(args: argparse.Namespace) -> int:
    if not (math.isfinite(args.headroom) and args.headroom >= 0):
        raise ValueError(f"--headroom: must be a finite number >= 0, got {args.headroom}")
    import instances

    from ..simulate import simulate

    inst = instances.load(args.instance)
    sc = instances.load_scenario(args.scenario, inst)
    params = parse_params(args.param)
    if args.time_limit is not None:
        params["time_limit"] = args.time_limit
    result = simulate(
        inst, sc, args.method, replan=args.replan, headroom=args.headroom,
        preempt=not args.no_preempt, clairvoyant=not args.no_bound,
        bound_time_limit=args.bound_time_limit, **params,
    )
    if args.output:
        instances.save_schedule(result.schedule, args.output)
    if args.json:
        print(json_line(result.to_json()))
    else:
        print(result.summary())
    return 0
