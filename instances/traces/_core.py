"""The rules of trace import shared by every format (docs/traces.md).

A reader parses its file into :class:`Records` and hands them to an
:class:`Importer`, which keeps the records inside the window, counts every
other under the first skip reason that applies, and builds the instance.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from ..model import MAX_HORIZON, Instance, Job, Node, Service
from ..servegen import servegen_hourly_rps
from . import nodes as _nodes
from ._resources import fits_resources, job_fields

__all__ = [
    "REASONS",
    "RESOURCES",
    "Importer",
    "Options",
    "Records",
    "parse_service",
]

REASONS: tuple[str, ...] = (
    "window", "no_gpus", "too_large", "no_run_time", "past_horizon", "max_jobs",
)
"""Skip reasons in the order they are tried; a record counts under the first that applies.

``window``: submitted outside ``[start, start + hours)``; ``no_gpus``: no GPU
asked; ``too_large``: more GPUs than the pool, or no valid placement on its
nodes; ``no_run_time``: run time missing (SWF ``-1``) or zero (a negative run
time is a malformed record, as the trace-import issue asks); ``past_horizon``:
release plus duration past the horizon; ``max_jobs``: beyond ``max_jobs`` in
submit order. Malformed records skipped under ``skip_bad`` count as ``bad``. A format
may count a reason ahead of these (:meth:`Importer.skip`): ``philly-csv``'s
``other_cluster``, a row of another virtual cluster than the one asked."""

RESOURCES: tuple[str, ...] = ("gpus", "full")
"""What an import keeps of a record's resources: ``gpus`` (section 9: GPU counts only) or
``full`` (openb, model version 3: GPU shares and models, CPU and memory of pods and nodes)."""

MAX_BAD_MESSAGES = 20
"""How many messages of skipped malformed records ``meta["import"]["bad_lines"]`` keeps."""


@dataclass(frozen=True)
class Options:
    """The import options of section 9, checked.

    See :func:`instances.traces.from_trace` for their meaning.
    """

    start: float | None = None
    hours: float = 24.0
    slot_minutes: float = 60.0
    num_gpus: int | None = None
    nodes: tuple[tuple[str, int], ...] | None = None
    nodes_source: str | None = None
    priorities: Mapping[str, float] | None = None
    service: str | None = None
    max_jobs: int | None = None
    skip_bad: bool = False
    progress: bool | None = None
    resources: str = "gpus"
    node_resources: Mapping[str, tuple[str | None, int | None, int | None]] | None = None
    drain: float = 0.0
    load: float = 1.0
    cluster: str | None = None

    def __post_init__(self) -> None:
        if self.resources not in RESOURCES:
            raise ValueError(
                f"resources: must be one of {', '.join(map(repr, RESOURCES))}, got {self.resources!r}"
            )
        if self.resources == "full" and self.nodes is None:
            raise ValueError(
                "resources: 'full' keeps the pods' shares, models, CPU and memory, which are "
                "valid only on nodes: give a node list (nodes=..., --nodes)"
            )
        if self.start is not None and not (
            isinstance(self.start, (int, float)) and math.isfinite(self.start)
        ):
            raise ValueError(f"start: must be a finite number of trace seconds, got {self.start!r}")
        for key in ("hours", "slot_minutes"):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (
                math.isfinite(v) and v > 0
            ):
                raise ValueError(f"{key}: must be a finite number > 0, got {v!r}")
        if isinstance(self.drain, bool) or not isinstance(self.drain, (int, float)) or not (
            math.isfinite(self.drain) and self.drain >= 0
        ):
            raise ValueError(f"drain: must be a finite number of hours >= 0, got {self.drain!r}")
        if isinstance(self.load, bool) or not isinstance(self.load, (int, float)) or not (
            math.isfinite(self.load) and self.load > 0
        ):
            raise ValueError(f"load: must be a finite number > 0, got {self.load!r}")
        if self.cluster is not None and (not isinstance(self.cluster, str) or not self.cluster.strip()):
            raise ValueError(f"cluster: must be a non-empty virtual-cluster id, got {self.cluster!r}")
        if self.horizon > MAX_HORIZON:
            drained = f" and a drain of {self.drain}" if self.drain else ""
            raise ValueError(
                f"hours: {self.hours} hours{drained} of {self.slot_minutes}-minute slots is "
                f"{self.horizon} slots, over {MAX_HORIZON}"
            )
        for key in ("num_gpus", "max_jobs"):
            v = getattr(self, key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise ValueError(f"{key}: must be an integer >= 1, got {v!r}")
        if self.priorities is not None:
            for k, w in self.priorities.items():
                if isinstance(w, bool) or not isinstance(w, (int, float)) or not (
                    math.isfinite(w) and w > 0
                ):
                    raise ValueError(f"priorities[{k!r}]: must be a finite number > 0, got {w!r}")
        if self.service is not None:
            parse_service(self.service)

    @property
    def slot_seconds(self) -> float:
        """Slot length ``L`` in seconds."""
        return 60.0 * self.slot_minutes

    @property
    def span(self) -> float:
        """Window length in seconds, ``3600 * hours``."""
        return 3600.0 * self.hours

    @property
    def horizon(self) -> int:
        """``T = ceil(3600 * (hours + drain) / L)``: the submit window and the drain after it."""
        if not self.drain:
            return math.ceil(self.span / self.slot_seconds)
        return math.ceil(3600.0 * (self.hours + self.drain) / self.slot_seconds)

    def offsets(self, submit: np.ndarray, start: float) -> np.ndarray:
        """Seconds from the window's start on the window's clock: ``(submit - start) / load``
        (``submit - start`` itself at load 1); a record is in the window when this is in
        ``[0, 3600 * hours)`` and its release is ``floor(offset / L)``."""
        d = submit - start
        return d if self.load == 1 else d / self.load


@dataclass
class Records:
    """Parsed records in file order: one entry per record, malformed ones left out.

    ``gpus <= 0`` means no GPU; ``run`` is ``nan`` where missing; ``names``
    and ``classes`` are object arrays (or int arrays, turned into text at
    the end); ``line`` is the record's first physical line (from 1).
    ``res`` (an import with ``resources="full"``): per record the job's
    version 3 fields ``(gpu_milli, gpu_models, cpu_milli, memory_mib)``.
    """

    submit: np.ndarray
    gpus: np.ndarray
    run: np.ndarray
    line: np.ndarray
    names: np.ndarray
    classes: np.ndarray | None = None
    res: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.submit.shape[0])

    def take(self, idx: np.ndarray) -> Records:
        """The records at ``idx`` (a mask or an index array)."""
        picked: list[Any] = [None if c is None else c[idx] for c in self._columns()]
        return Records(*picked)

    def _columns(self) -> list[Any]:
        return [getattr(self, f.name) for f in fields(self)]

    @staticmethod
    def concat(parts: Sequence[Records]) -> Records:
        """One :class:`Records` of ``parts`` in order (a column missing from one part is missing)."""
        if not parts:
            e = np.zeros(0)
            return Records(e, e.astype(np.int64), e, e.astype(np.int64), e.astype(object), None)
        cols = zip(*(p._columns() for p in parts))
        joined: list[Any] = [None if any(c is None for c in col) else np.concatenate(col) for col in cols]
        return Records(*joined)


@dataclass
class Importer:
    """Accounting and window filter of one import.

    A reader calls :meth:`add` with each chunk of parsed records and
    :meth:`bad` for each malformed one; :meth:`finish` applies the remaining
    rules and builds the instance.
    """

    fmt: str
    path: str
    options: Options
    default_priorities: Mapping[str, float] | None = None
    read: int = 0
    bad_count: int = 0
    bad_messages: list[str] = field(default_factory=list)
    _parts: list[Records] = field(default_factory=list)
    _kept: int = 0
    _min: float = math.inf
    _pruned_at: int = 0
    first_skips: dict[str, int] = field(default_factory=dict)
    """Records skipped before section 9's reasons (``other_cluster``), by reason, in order."""

    def where(self, line: int, what: str) -> str:
        """``"<file>: line <n>: <what>"``, the prefix of every message about a record."""
        return f"{self.path}: line {line}: {what}"

    def bad(self, line: int, what: str, count: bool = True) -> None:
        """A malformed record: a :class:`ValueError`, or with ``skip_bad`` skipped and counted.

        ``what`` names the field and the problem. ``count=False`` for a record
        already counted as read.
        """
        msg = self.where(line, what)
        if not self.options.skip_bad:
            raise ValueError(msg)
        if count:
            self.read += 1
        self.bad_count += 1
        if len(self.bad_messages) < MAX_BAD_MESSAGES:
            self.bad_messages.append(msg)

    def skip(self, reason: str, n: int = 1) -> None:
        """Count ``n`` records as read and skipped under ``reason``, a reason tried before
        section 9's (:attr:`first_skips`)."""
        self.read += n
        self.first_skips[reason] = self.first_skips.get(reason, 0) + n

    def add(self, rec: Records) -> None:
        """Count ``rec`` as read and keep the records that can be in the window."""
        n = len(rec)
        if n == 0:
            return
        self.read += n
        span = self.options.span
        sub = rec.submit
        load = self.options.load
        if self.options.start is not None:
            lo = self.options.start
            if load == 1:
                mask = (sub >= lo) & (sub < lo + span)
            else:
                off = self.options.offsets(sub, lo)
                mask = (off >= 0) & (off < span)
        else:
            # The window starts at the earliest submit of the whole file: keep what
            # can still fall inside it (below the running minimum plus the span).
            self._min = min(self._min, float(sub.min()))
            mask = sub < self._min + span if load == 1 else self.options.offsets(
                sub, self._min) < span
        if mask.any():
            part = rec if mask.all() else rec.take(mask)
            self._parts.append(part)
            self._kept += len(part)
            if self.options.start is None and self._kept > 2 * self._pruned_at + 100_000:
                self._prune()

    def _prune(self) -> None:
        o = self.options
        if o.load == 1:
            hi = self._min + o.span
            self._parts = [p.take(p.submit < hi) for p in self._parts]
        else:
            self._parts = [p.take(o.offsets(p.submit, self._min) < o.span) for p in self._parts]
        self._kept = sum(len(p) for p in self._parts)
        self._pruned_at = self._kept

    @property
    def start(self) -> float:
        """The window's start: the option, else the earliest submit read."""
        return self.options.start if self.options.start is not None else self._min

    def candidates(self) -> Records:
        """The records inside the window, in file order."""
        if self.options.start is None:
            self._prune()
        return Records.concat(self._parts)

    def finish(self, cand: Records, extra_meta: Mapping[str, Any] | None = None) -> Instance:
        """Apply the rules after the window to the in-window records ``cand`` and build the instance.

        Raises
        ------
        ValueError
            When no job is left, for a duplicate job id, or a pool the node list
            cannot give.
        """
        o = self.options
        counts = dict.fromkeys(REASONS, 0)
        first = dict(self.first_skips)
        counts["window"] = self.read - self.bad_count - sum(first.values()) - len(cand)
        if self.read == 0:
            raise ValueError(f"{self.path}: no records")
        start = self.start if math.isfinite(self.start) else 0.0
        L = o.slot_seconds
        T = o.horizon

        order = np.argsort(cand.submit, kind="stable")  # submit order, ties by file order
        cand = cand.take(order)
        gpus = np.maximum(cand.gpus.astype(np.int64), 0)
        has_gpu = gpus > 0

        selected: list[tuple[str, int]] | None = None
        if o.nodes is not None:
            selected = (
                list(o.nodes) if o.num_gpus is None
                else _nodes.select_nodes(list(o.nodes), o.num_gpus, source=o.nodes_source)
            )
            G = sum(g for _, g in selected)
        elif o.num_gpus is not None:
            G = o.num_gpus
        else:
            G = int(gpus[has_gpu].max()) if has_gpu.any() else 1

        fits = gpus <= G
        if selected is not None:
            fits &= _nodes.placeable(selected, gpus)
            if cand.res is not None:
                fits &= fits_resources(selected, o.node_resources, gpus, cand.res, has_gpu & fits)
        run = cand.run.astype(np.float64)
        with np.errstate(invalid="ignore"):
            has_run = np.isfinite(run) & (run > 0)
        dur = np.where(has_run, np.maximum(1, np.ceil(np.where(has_run, run, 1.0) / L)), 0)
        dur = dur.astype(np.int64)
        release = np.floor(o.offsets(cand.submit, start) / L).astype(np.int64)
        ends = release + dur <= T

        reasons = [
            ("no_gpus", has_gpu),
            ("too_large", fits),
            ("no_run_time", has_run),
            ("past_horizon", ends),
        ]
        alive = np.ones(len(cand), dtype=bool)
        for key, ok in reasons:
            counts[key] = int((alive & ~ok).sum())
            alive &= ok
        idx = np.flatnonzero(alive)
        if o.max_jobs is not None and idx.size > o.max_jobs:
            counts["max_jobs"] = int(idx.size - o.max_jobs)
            idx = idx[: o.max_jobs]
        skipped = {**first, **counts, "bad": self.bad_count}
        kept = int(idx.size)
        assert kept + sum(skipped.values()) == self.read, (kept, skipped, self.read)
        if kept == 0:
            detail = ", ".join(f"{k} {v}" for k, v in skipped.items() if v)
            raise ValueError(
                f"{self.path}: no usable job in the window [{_num(start)}, "
                f"{_num(start + o.span * o.load)}) of {self.read} records (skipped: {detail})"
            )

        names = [_text(x) for x in cand.names[idx]]
        seen: dict[str, int] = {}
        for n, line in zip(names, cand.line[idx]):
            if n in seen:
                raise ValueError(
                    self.where(int(line), f"job id {n!r} repeats that of line {seen[n]}")
                )
            seen[n] = int(line)
        prio = self.options.priorities if self.options.priorities is not None else (
            self.default_priorities
        )
        if prio is None or cand.classes is None:
            weights = [1.0] * kept
        else:
            table = {str(k): float(v) for k, v in prio.items()}
            weights = [table.get(_text(c), 1.0) for c in cand.classes[idx]]
        fields = job_fields(cand.res[idx]) if cand.res is not None else [{}] * kept
        jobs = tuple(
            Job(name, int(g), int(p), w, "other", int(r), **f)
            for name, g, p, w, r, f in zip(names, gpus[idx], dur[idx], weights, release[idx], fields)
        )
        services: tuple[Service, ...] = ()
        if o.service is not None:
            services = (service_curve(o.service, G, T, L),)
        meta: dict[str, Any] = {
            "format": self.fmt,
            "file": os.path.basename(self.path),
            "start": _num(start),
            "hours": o.hours,
            "slot_minutes": o.slot_minutes,
            "num_gpus": G,
            "records": self.read,
            "kept": kept,
            "skipped": skipped,
            "priorities": None if prio is None else {str(k): float(v) for k, v in prio.items()},
            "service": o.service,
            "max_jobs": o.max_jobs,
        }
        for key, v, default in (("drain", o.drain, 0), ("load", o.load, 1), ("cluster", o.cluster, None)):
            if v != default:
                meta[key] = v
        if selected is not None:
            meta["nodes"] = [[n, g] for n, g in selected]
        if o.resources != "gpus":
            meta["resources"] = o.resources
        if self.bad_messages:
            meta["bad_lines"] = list(self.bad_messages)
        if extra_meta:
            meta.update(extra_meta)
        base = Path(self.path)
        if base.suffix in (".gz", ".bz2", ".xz"):  # a compressed file: the name inside
            base = base.with_suffix("")
        name = f"{self.fmt}-{base.stem or 'trace'}"
        nodes = None if selected is None else tuple(
            Node(n, g, *(o.node_resources or {}).get(n, (None, None, None))) for n, g in selected
        )
        return Instance(
            name, G, T, services, jobs, slot_hours=L / 3600.0, meta={"import": meta},
            nodes=nodes,
        )


def _num(x: float) -> float | int:
    """An integral float as an int (for readable meta and messages)."""
    return int(x) if float(x).is_integer() else float(x)


def _text(x: Any) -> str:
    """A job id or class value as text: integral numbers without a decimal point."""
    if isinstance(x, (float, np.floating)) and float(x).is_integer():
        return str(int(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    return str(x)


# ------------------------------------------------------------------ inference curves
SERIES: dict[str, tuple[str, Callable[[], np.ndarray]]] = {
    "servegen": ("servegen-m-large", servegen_hourly_rps),
    "servegen-m-large": ("servegen-m-large", servegen_hourly_rps),
}
"""Inference series by name: (service name, hourly request rate)."""

DEFAULT_SERVICE_PRIORITY = 3.0
"""Priority of an imported inference service (as in the ``trace-servegen`` family)."""


def parse_service(spec: str) -> tuple[str, float, float]:
    """Parse ``SERIES:SHARE[:PRIORITY]`` into (series, share, priority).

    Raises
    ------
    ValueError
        ``service: ...`` for an unknown series, a share outside ``(0, 1]`` or a
        priority that is not a number > 0.
    """
    if not isinstance(spec, str):
        raise ValueError(f"service: must be SERIES:SHARE, got {spec!r}")
    parts = spec.split(":")
    if len(parts) not in (2, 3):
        raise ValueError(f"service: must be SERIES:SHARE[:PRIORITY], got {spec!r}")
    series = parts[0]
    if series not in SERIES:
        raise ValueError(f"service: unknown series {series!r}; known: {', '.join(SERIES)}")
    try:
        share = float(parts[1])
        prio = float(parts[2]) if len(parts) == 3 else DEFAULT_SERVICE_PRIORITY
    except ValueError:
        raise ValueError(f"service: SHARE and PRIORITY must be numbers, got {spec!r}") from None
    if not (math.isfinite(share) and 0 < share <= 1):
        raise ValueError(f"service: SHARE must be in (0, 1], got {parts[1]!r}")
    if not (math.isfinite(prio) and prio > 0):
        raise ValueError(f"service: PRIORITY must be a number > 0, got {parts[2]!r}")
    return series, share, prio


def service_curve(spec: str, num_gpus: int, horizon: int, slot_seconds: float) -> Service:
    """The inference service of ``spec`` over the window: a slot's demand is
    ``ceil(share * num_gpus * rate / peak)``, its rate the largest hourly rate it
    overlaps (the series' hour 0 at the window's start, repeated past its end).
    """
    series, share, prio = parse_service(spec)
    name, load = SERIES[series]
    rate = np.asarray(load(), dtype=np.float64)
    t = np.arange(horizon)
    h0 = np.floor(t * slot_seconds / 3600.0).astype(np.int64)
    h1 = np.maximum(h0, np.ceil((t + 1) * slot_seconds / 3600.0).astype(np.int64) - 1)
    slot_rate = np.array([rate[np.arange(a, b + 1) % rate.size].max() for a, b in zip(h0, h1)])
    peak = float(slot_rate.max())
    demand = np.ceil(share * num_gpus * slot_rate / peak - 1e-9).astype(np.int64)
    demand = np.clip(demand, 0, num_gpus)
    return Service(name, prio, tuple(int(d) for d in demand))
