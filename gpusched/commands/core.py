"""Core subcommands: generate, solve, check, families, methods."""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

# Nothing heavy at the top of a command module: the parser is built without numpy,
# numba, pandas or the solvers (``gpusched --help`` in a fraction of a second); a
# command imports what it needs when it runs.


def solve(inst: Any, method: str, **kw: Any) -> Any:
    """:func:`gpusched.solve`, imported on the first call."""
    from ..dispatch import solve as dispatch_solve

    return dispatch_solve(inst, method, **kw)

def json_ready(obj: Any) -> Any:
    """``obj`` as the command line writes it: every float :func:`instances.rounded`
    (float noise like 9.059999999999999 dropped), non-finite floats as ``None``
    (JSON has no NaN); dicts, lists and tuples are walked, tuples become lists.
    """
    if isinstance(obj, float):
        from instances.rounding import rounded

        return rounded(obj) if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: json_ready(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_ready(v) for v in obj]
    return obj


def json_line(obj: Any) -> str:
    """The one-line JSON that every ``--json`` flag prints (floats by :func:`json_ready`)."""
    return json.dumps(json_ready(obj), separators=(",", ":"))


def save_output(path: str, save: Callable[[Any, str], None], obj: Any) -> None:
    """``save(obj, path)``, saying on standard error when a folder is created for it.

    Every file a command writes goes through here: a missing folder is created
    (as ``bench -o`` creates its results folder), never silently.
    """
    folder = Path(path).parent
    created = not folder.exists()
    save(obj, path)
    if created:
        print(f"gpusched: created the folder {folder} for {path}", file=sys.stderr)


def write_text(output: str | None, text: str) -> None:
    """``text`` to the file ``output`` (through :func:`save_output`), or to standard output."""
    if output:
        from instances.io import atomic_write_text

        save_output(output, lambda t, p: atomic_write_text(p, t), text)
    else:
        sys.stdout.write(text)


def seconds(text: str) -> float:
    """An argparse type: a number of seconds ``>= 0`` (``--time-limit`` and the like)."""
    value = float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


def positive(text: str) -> int:
    """An argparse type: an integer ``>= 1`` (``--workers``, ``--replan``)."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text}")
    return value


def bars_wanted(off: bool = False) -> bool:
    """Whether a command draws progress bars: on a terminal only, never with ``off``
    (``--no-progress``, ``--json``); a bar written to a file or a pipe is a log
    of carriage returns."""
    return not off and sys.stderr.isatty()


def count(n: int, noun: str) -> str:
    """``1 job``, ``2 jobs``: a count and its noun, plural when it is not 1."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def seed_number(text: str) -> int:
    """An argparse type: one seed, an integer ``>= 0`` (``--seed``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


SEEDS_FORMS = "5 = a count, seeds 0-4; 0-9 = a range; 3,7 = a list"
"""The forms ``--seeds`` takes, as every help says them."""


def seed_flags(p: argparse.ArgumentParser, default: int | str, *, prefix: str = "",
               one: str = "one seed, this one alone") -> None:
    """Add ``--seeds SEEDS`` and, beside it, ``--seed N`` (one or the other) to ``p``;
    :func:`seeds_wanted` reads them (``default`` when neither is given).
    """
    g = p.add_mutually_exclusive_group()
    g.add_argument("--seeds", default=None, metavar="SEEDS",
                   help=f"{prefix}the seeds: {SEEDS_FORMS} (default {default}); one seed: "
                        "--seed N")
    g.add_argument("--seed", type=seed_number, default=None, metavar="N",
                   help=f"{one} (--seed 5 runs seed 5; --seeds 5 runs seeds 0-4)")
    p.set_defaults(seeds_default=default)


def seeds_wanted(args: argparse.Namespace) -> tuple[int, ...]:
    """The seeds of :func:`seed_flags`: ``(N,)`` for ``--seed N``, else ``--seeds`` read by
    :func:`gpusched.sweep.seeds.parse_seeds` (its default when not given).

    Raises
    ------
    ValueError
        For a bad ``--seeds`` (the message names ``--seeds``).
    """
    from ..sweep.seeds import parse_seeds

    if args.seed is not None:
        return (args.seed,)
    spec = args.seeds if args.seeds is not None else args.seeds_default
    try:
        return parse_seeds(spec)
    except ValueError as e:
        raise ValueError(f"--seeds: {str(e).removeprefix('seeds: ')}") from None


def seeds_line(command: str, seeds: tuple[int, ...], args: argparse.Namespace,
               cells: int | None = None) -> str:
    """The first line of a run: which seeds run (``--seeds 5`` said to be a count)."""
    from ..sweep.seeds import describe_seeds

    parts = [f"gpusched {command}: {describe_seeds(seeds)}"]
    given = getattr(args, "seeds", None)
    if given is not None and getattr(args, "seed", None) is None and given.strip().isdigit():
        n = int(given)
        parts.append(f"--seeds {n} is a count from 0 (seed {n} alone: --seed {n})")
    if cells is not None:
        parts.append(count(cells, "cell"))
    return "; ".join(parts)


def say_seeds(command: str, seeds: tuple[int, ...], args: argparse.Namespace,
              cells: int | None = None) -> None:
    """Print :func:`seeds_line` on standard error (before the run's bar)."""
    print(seeds_line(command, seeds, args, cells), file=sys.stderr)


def register(sub: Any) -> None:
    """Add the core subcommands to ``sub`` (an argparse subparsers object)."""
    p = sub.add_parser("generate", help="write an instance of a named family")
    p.add_argument("family", help="family name (see `gpusched families`)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                   help="family parameter, e.g. -p num_jobs=2000 (repeatable)")
    p.add_argument("--node-gpus", metavar="SHAPE", default=None,
                   help="put the GPUs on nodes: N (nodes of N GPUs, and a last, smaller node of "
                        "the rest when N does not divide the pool: 12 GPUs in nodes of 8 are 8 "
                        "and 4), a list like 8,4,2,2 (summing to the pool), or openb (the openb "
                        "cluster's node mix); default: one flat pool")
    p.add_argument("-o", "--output", help="instance file to write (default: standard output)")
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser("solve", help="run a method on an instance file")
    p.add_argument("instance", help="instance file (gpusched-instance/1)")
    p.add_argument("--method", "-m", default="best", help="method name (see `gpusched methods`)")
    p.add_argument("--time-limit", type=seconds, default=None, help="seconds (exact methods: default 60)")
    p.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                   help="method parameter, e.g. -p rule=value (repeatable)")
    p.add_argument("-o", "--output", help="schedule file to write (gpusched-schedule/1)")
    p.add_argument("--json", action="store_true", help="print one JSON object on one line")
    p.set_defaults(func=cmd_solve)

    p = sub.add_parser("check", help="check a schedule against an instance")
    p.add_argument("instance", help="instance file")
    p.add_argument("schedule", help="schedule file")
    p.add_argument("--reservation", choices=("curve", "peak"), default="curve",
                   help="reservation for reserved_idle (default curve)")
    p.add_argument("--enforce-reservation", action="store_true",
                   help="also require batch work to fit in the capacity the reservation leaves")
    p.add_argument("--json", action="store_true", help="print one JSON object on one line")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("families", help="list the instance families (each takes a node shape)")
    p.set_defaults(func=cmd_families)
    p = sub.add_parser("methods", help="list the methods")
    p.set_defaults(func=cmd_methods)


def parse_params(items: list[str], where: str = "--param") -> dict[str, Any]:
    """Parse ``KEY=VALUE`` items; a value is read as JSON when it parses, else as text.

    Raises
    ------
    ValueError
        For an item without ``=`` or a non-finite number (``NaN``, ``Infinity``).
    """
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ValueError(f"{where}: expected KEY=VALUE, got {item!r}")
        try:
            value = json.loads(raw)
        except (json.JSONDecodeError, RecursionError):
            value = raw
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{where} {key}: must be a finite number, got {raw!r}")
        out[key] = value
    return out


def _with_params(fn: Callable[..., Any], params: dict[str, Any], *args: Any, **kw: Any) -> Any:
    """``fn(*args, **kw, **params)``; a parameter of the wrong type it trips over is bad input."""
    try:
        return fn(*args, **kw, **params)
    except TypeError as e:
        if not params:
            raise
        logger.debug("parameter error", exc_info=e)
        raise ValueError(f"--param: a parameter has the wrong type ({' '.join(str(e).split())}); "
                         f"given: {params}") from None


def parse_node_gpus(text: str) -> int | list[int] | str:
    """``--node-gpus``: ``8`` -> 8, ``8,4,2,2`` -> [8, 4, 2, 2], ``openb`` as it is.

    Raises
    ------
    ValueError
        For anything else (naming ``--node-gpus``).
    """
    t = text.strip()
    if t == "openb":
        return t
    parts = [x.strip() for x in t.split(",")]
    if t and all(x.isdigit() for x in parts):
        return int(parts[0]) if len(parts) == 1 else [int(x) for x in parts]
    raise ValueError(f"--node-gpus: expected N, a list like 8,4,2,2, or openb, got {text!r}")


def cmd_generate(args: argparse.Namespace) -> int:
    import instances
    from instances.nodes import describe_nodes

    params = parse_params(args.param)
    if args.node_gpus is not None:
        if "node_gpus" in params:
            raise ValueError("--node-gpus: given twice (also as -p node_gpus=...)")
        params["node_gpus"] = parse_node_gpus(args.node_gpus)
    inst = _with_params(instances.generate, params, args.family, seed=args.seed)
    write_text(args.output, instances.dumps(inst))
    line = (f"{args.family} seed {args.seed}: {inst.name}, {count(inst.num_jobs, 'job')}, "
            f"{count(len(inst.services), 'inference service')}, {count(inst.horizon, 'slot')}, "
            f"{describe_nodes(inst)}")
    # like import: the summary on standard output beside a file, on standard error beside the instance
    print(f"{line}; wrote {args.output}" if args.output else line,
          file=sys.stdout if args.output else sys.stderr)
    return 0


def cmd_solve(args: argparse.Namespace) -> int:
    import instances

    from ..dispatch import EXACT_METHODS

    inst = instances.load(args.instance)
    params = parse_params(args.param)
    if args.method in EXACT_METHODS and "progress" not in params:
        params["progress"] = bars_wanted(off=args.json)
    result = _with_params(solve, params, inst, args.method, time_limit=args.time_limit)
    if args.output:
        save_output(args.output, instances.save_schedule, result.schedule)
    if args.json:
        print(json_line(result.to_json()))
    else:
        print(result.summary())
    return 1 if str(result.status) == "error" else 0


def cmd_check(args: argparse.Namespace) -> int:
    import instances
    from instances import InfeasibleScheduleError

    inst = instances.load(args.instance)
    schedule = instances.load_schedule(args.schedule)
    try:
        schedule.to_array(inst)  # an unknown job is bad input (exit 2), not a violation
    except ValueError as e:
        raise ValueError(f"{args.schedule}: {e}") from None
    if schedule.instance != inst.name:
        logger.warning("%s: schedule is for instance %r, checking against %r",
                       args.schedule, schedule.instance, inst.name)
    try:
        m = instances.evaluate(inst, schedule, args.reservation,
                               enforce_reservation=args.enforce_reservation)
    except InfeasibleScheduleError as e:
        if args.json:
            print(json_line({"feasible": False, "error": str(e), "job": e.job, "slot": e.slot,
                             "amount": e.amount}))
        else:
            print(f"infeasible: {e}")
        return 1
    if args.json:
        print(json_line({"feasible": True, **m.to_dict()}))
    else:
        print(f"feasible: value {instances.format_value(m.value)}, utilization {100 * m.utilization:.1f}%, "
              f"jobs run {m.jobs_run}, rejected {m.jobs_rejected}")
    return 0


def cmd_families(args: argparse.Namespace) -> int:
    import instances

    for name, desc in instances.FAMILIES.items():
        print(f"{name:22s} {desc}")
    print("\nEvery family takes a node shape: gpusched generate FAMILY --node-gpus 8 "
          "(nodes of 8 GPUs, and a last, smaller node of the rest when 8 does not divide the "
          "pool), --node-gpus 8,4,2,2 (a list summing to the pool) or "
          "--node-gpus openb (the openb cluster's node mix, drawn from the seed).")
    return 0


def cmd_methods(args: argparse.Namespace) -> int:
    import heuristics

    from ..dispatch import EXACT_METHODS, method_names

    for name in method_names():
        desc = heuristics.DESCRIPTIONS.get(name) or f"exact: {EXACT_METHODS[name]} backend"
        print(f"{name:22s} {desc}")
    return 0
