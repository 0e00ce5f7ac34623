"""The ``import`` subcommand: a trace file as an instance file (the specification (docs/model.md))."""

from __future__ import annotations

import argparse
import logging
import math
import sys
from typing import TYPE_CHECKING, Any

from .core import json_line, write_text

if TYPE_CHECKING:
    import instances

FORMAT_NAMES: tuple[str, ...] = ("swf", "openb", "philly", "helios", "pai", "itp", "philly-csv")
"""The trace formats, as the help names them (without importing the importers; a test
holds them to :data:`instances.traces.FORMATS`)."""

logger = logging.getLogger(__name__)


def register(sub: Any) -> None:
    """Add ``import`` to ``sub`` (an argparse subparsers object)."""
    p = sub.add_parser(
        "import", help=f"import a window of a trace file ({', '.join(FORMAT_NAMES)})",
        description="Import one window of a cluster trace as an instance file; "
        "the rules are in docs/traces.md.",
    )
    p.add_argument("format", help=f"trace format: {', '.join(FORMAT_NAMES)}")
    p.add_argument("path", help="trace file ('openb:default', 'itp:cluster04', "
                   "'philly-csv:default': the shipped ones)")
    p.add_argument("-o", "--output", help="instance file to write (default: standard output)")
    p.add_argument("--start", default=None,
                   help="window start in trace seconds (default: the earliest submit)")
    p.add_argument("--hours", type=float, default=None, help="window length (default 24)")
    p.add_argument("--drain", type=float, default=None, metavar="HOURS",
                   help="hours added to the horizon after the window so that its jobs can end "
                   "(default 0)")
    p.add_argument("--load", type=float, default=None,
                   help="arrival-rate factor: submit times from the window's start divided "
                   "by it (default 1)")
    p.add_argument("--slot-minutes", type=float, default=None,
                   help="slot length (default 60; 15 with --cluster)")
    p.add_argument("--num-gpus", type=int, default=None,
                   help="pool size (with --nodes: the part of the node list taken)")
    p.add_argument("--nodes", default=None,
                   help="node list, an openb node CSV ('openb:nodes' for the shipped one)")
    p.add_argument("--priority", action="append", default=None, metavar="CLASS=WEIGHT",
                   help="priority of a class value (qos, queue, vc, user); repeatable; "
                   "replaces the format's default mapping")
    p.add_argument("--service", default=None, metavar="SERIES:SHARE",
                   help="inference curve, e.g. servegen:0.3 (peak = 30%% of the pool)")
    p.add_argument("--max-jobs", type=int, default=None, help="keep the first N jobs in submit order")
    p.add_argument("--skip-bad", action="store_true", help="skip malformed records and count them")
    p.add_argument("--procs-per-gpu", type=int, default=1, help="swf: processors per GPU (default 1)")
    p.add_argument("--tasks", default=None, help="pai: the task table (default beside the job table)")
    p.add_argument("--resources", choices=("gpus", "full"), default="gpus",
                   help="gpus: GPU counts only (default); full: openb shares, models, CPU, memory")
    p.add_argument("--cluster", nargs="?", const=True, default=None, metavar="ID",
                   help="philly-csv: keep the rows of virtual cluster ID; openb (no ID): the "
                   "whole cluster in one instance (every GPU node of --nodes, default the "
                   "shipped list; the trace's days 115-149 in 15-minute slots)")
    p.add_argument("--json", action="store_true", help="print the import summary as one JSON line")
    p.set_defaults(func=cmd_import)


def _start(raw: str | None) -> float | str | None:
    if raw is None:
        return None
    try:
        v = float(raw)
    except ValueError:
        return raw  # a date-time, checked by the importer
    if not math.isfinite(v):
        raise ValueError(f"--start: must be a finite number, got {raw!r}")
    return v


def _priorities(items: list[str] | None) -> dict[str, float] | None:
    if items is None:
        return None
    out: dict[str, float] = {}
    for item in items:
        key, sep, raw = item.rpartition("=")
        if not sep or not key:
            raise ValueError(f"--priority: expected CLASS=WEIGHT, got {item!r}")
        try:
            w = float(raw)
        except ValueError:
            raise ValueError(f"--priority {key}: weight must be a number, got {raw!r}") from None
        out[key] = w
    return out


def summary(meta: dict[str, Any]) -> str:
    """One line: records read, jobs kept, skipped by reason (in the order they are tried)."""
    sk = meta["skipped"]
    parts = ", ".join(f"{k} {v}" for k, v in sk.items())
    return (
        f"{meta['format']} {meta['file']}: {meta['records']} records, kept {meta['kept']} jobs "
        f"on {meta['num_gpus']} GPUs; skipped: {parts}"
    )


CLUSTER_FIXED = (
    "start", "hours", "num_gpus", "priority", "max_jobs", "skip_bad", "tasks", "drain", "load",
)
"""Options ``--cluster`` fixes itself (the window, the pool) or that do not apply to it."""


def _cluster(args: argparse.Namespace) -> instances.Instance:
    """``import openb PATH --cluster``: :func:`instances.traces.openb_cluster`."""
    from instances.traces import openb_cluster

    if args.format != "openb":
        if args.cluster is not True:
            raise ValueError(
                f"--cluster {args.cluster}: a virtual-cluster filter is for philly-csv, "
                f"got format {args.format!r}"
            )
        raise ValueError(f"--cluster: the whole cluster is an openb import, got format {args.format!r}")
    if args.cluster is not True:
        raise ValueError(f"--cluster: openb's whole cluster takes no ID, got {args.cluster!r}")
    for key in CLUSTER_FIXED:
        if getattr(args, key) not in (None, False):
            raise ValueError(
                f"--{key.replace('_', '-')}: not an option of --cluster (it takes the whole "
                f"node list over days 115-149)"
            )
    kw: dict[str, Any] = {} if args.slot_minutes is None else {"slot_minutes": args.slot_minutes}
    return openb_cluster(
        args.resources, service=args.service, pods=args.path,
        nodes="openb:nodes" if args.nodes is None else args.nodes, **kw,
    )


def cmd_import(args: argparse.Namespace) -> int:
    import instances
    from instances.traces import CLUSTER_FORMATS

    if args.cluster is not None and args.format not in CLUSTER_FORMATS:
        inst = _cluster(args)
    else:
        if args.cluster is True:
            raise ValueError(f"--cluster: {args.format} needs a virtual-cluster ID (--cluster ID)")
        inst = instances.from_trace(
            args.format, args.path, start=_start(args.start),
            hours=24.0 if args.hours is None else args.hours,
            slot_minutes=60.0 if args.slot_minutes is None else args.slot_minutes,
            num_gpus=args.num_gpus, nodes=args.nodes, priorities=_priorities(args.priority),
            service=args.service, max_jobs=args.max_jobs, skip_bad=args.skip_bad,
            procs_per_gpu=args.procs_per_gpu, tasks=args.tasks, resources=args.resources,
            drain=0.0 if args.drain is None else args.drain, cluster=args.cluster,
            load=1.0 if args.load is None else args.load,
        )
    meta = dict(inst.meta["import"])
    write_text(args.output, instances.dumps(inst))
    line = json_line(meta) if args.json else summary(meta)
    print(line, file=sys.stderr if not args.output else sys.stdout)
    return 0
