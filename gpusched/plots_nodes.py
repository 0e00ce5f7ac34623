"""The node Gantt chart: GPUs within a node, one lane per GPU index, and shared GPUs.

A whole-GPU job is a bar on each GPU lane it holds, as tall as the lane's
room. The shared jobs of one GPU lie inside its lane, stacked: each takes a
band of that room in proportion to its share (``gpu_milli / 1000``), labelled
with the job and its share where that fits, so a lane whose bands reach the
top of its room is full. Meant for a few nodes (the nodes a schedule uses, or
the ones named): one lane per GPU of each, and the GPUs of a node that hold no
job in one lane of their own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

from matplotlib.axes import Axes
from matplotlib.patches import Patch, Rectangle

from instances import Instance, Schedule

from .plots import (
    FONT_SIZE,
    KIND_COLORS,
    NODE_BAND_COLOR,
    assign_gpus,
    new_axes,
    node_rows,
    plot_gantt,
)
from .plots_text import FittedLabel, short_names

__all__ = [
    "LANE_HEIGHT", "MAX_NODES", "Lane", "gpu_indices", "node_lanes", "plot_node_gantt",
    "plot_schedule_gantt", "share_bands",
]

MAX_NODES = 8
"""Nodes drawn by default (the first that the schedule uses, in node order)."""

FULL = 1000
"""``gpu_milli`` of one whole GPU."""

SHARED_EDGE = "#333333"
IDLE_HATCH = "#CCCCCC"

LANE_PAD = 0.12
"""Room left empty above and below a lane's bars (in lanes): bars stay clear of the lines."""
LANE_HEIGHT = 1.0 - 2 * LANE_PAD
"""Height of a whole GPU in its lane (a share takes its fraction of it)."""


@dataclass(frozen=True)
class Lane:
    """One row of the chart: GPU ``gpu`` of node ``node``, drawn at height ``row``; or, where
    ``idle`` lists GPUs, one row for those GPUs of the node, which hold no job."""

    node: str
    gpu: int
    row: int
    idle: tuple[int, ...] = ()

    @property
    def label(self) -> str:
        """``GPU 3``, or ``GPU 6-7 idle`` (``GPU 1, 4 idle``) for GPUs that hold no job."""
        if not self.idle:
            return f"GPU {self.gpu}"
        g = self.idle
        run = list(g) == list(range(g[0], g[0] + len(g)))
        names = f"{g[0]}-{g[-1]}" if run and len(g) > 1 else ", ".join(map(str, g))
        return f"GPU {names} idle"


def gpu_indices(inst: Instance, schedule: Schedule) -> dict[str, dict[str, tuple[int, ...]]]:
    """The GPU indices of every job that runs, per node.

    A schedule that lists indices (``schedule.indices``, model version 3) gives them;
    one that gives counts (version 2, whole GPUs only) gets the rows the flat Gantt chart
    draws (:func:`gpusched.plots.assign_gpus`: one block of adjacent GPUs on each node
    where the schedule allows it).
    """
    if inst.nodes is None:
        raise ValueError("inst: the node Gantt chart needs an instance with nodes")
    if schedule.indices:
        return {j: {k: tuple(v) for k, v in on.items() if v}
                for j, on in schedule.indices.items() if j in schedule.starts}
    rows = {name: first for name, first, _ in node_rows(inst)}
    bounds = sorted((first, name) for name, first in rows.items())
    out: dict[str, dict[str, tuple[int, ...]]] = {}
    for job, taken in assign_gpus(inst, schedule).items():
        per: dict[str, list[int]] = {}
        for g in taken:
            first, name = max(b for b in bounds if b[0] <= g)
            per.setdefault(name, []).append(g - first)
        out[job] = {k: tuple(v) for k, v in per.items()}
    return out


def node_lanes(inst: Instance, nodes: Sequence[str],
               busy: Mapping[str, Iterable[int]] | None = None) -> list[Lane]:
    """The lanes of ``nodes`` (in the instance's node order), GPU 0 of the first node on top.

    With ``busy`` (node -> the GPUs that hold a job), the other GPUs of each node share one
    lane, below the node's busy ones (:attr:`Lane.idle`).
    """
    if inst.nodes is None:
        raise ValueError("inst: the node Gantt chart needs an instance with nodes")
    known = {n.name: n.gpus for n in inst.nodes}
    for name in nodes:
        if name not in known:
            raise ValueError(f"nodes: instance {inst.name!r} has no node {name!r}")
    wanted = set(nodes)
    per: list[tuple[str, list[int], tuple[int, ...]]] = []
    for name in (n.name for n in inst.nodes if n.name in wanted):
        gpus = list(range(known[name]))
        used = set(gpus) if busy is None else set(busy.get(name, ()))
        per.append((name, [g for g in gpus if g in used], tuple(g for g in gpus if g not in used)))
    row = sum(len(shown) + bool(idle) for _, shown, idle in per)
    lanes = []
    for name, shown, idle in per:
        for g in shown:
            row -= 1
            lanes.append(Lane(name, g, row))
        if idle:
            row -= 1
            lanes.append(Lane(name, idle[0], row, idle))
    return lanes


def share_bands(jobs: Sequence[tuple[str, int, int, int]]) -> list[tuple[str, int, int, int, int]]:
    """Where the shared jobs of one GPU lie in its lane: ``(job, start, end, low, high)``.

    ``jobs`` are ``(job, start, end, gpu_milli)``. Each job keeps one band ``[low,
    high)`` of ``0..1000`` for its whole run, the lowest free beside the jobs
    overlapping it (taken by start). When no band is free for a job (a feasible
    schedule may still need its shares to move), that GPU's jobs are stacked slot
    range by slot range instead: between two consecutive starts or ends, the jobs
    running are stacked in order of start, so a job may then be drawn in pieces.
    """
    order = sorted(jobs, key=lambda j: (j[1], j[2], j[0]))
    placed: list[tuple[str, int, int, int, int]] = []
    for name, s, e, m in order:
        busy = sorted((lo, hi) for _, s2, e2, lo, hi in placed if s2 < e and s < e2)
        low = 0
        for lo, hi in busy:
            if low + m <= lo:
                break
            low = max(low, hi)
        if low + m > FULL:
            return _stacked(order)
        placed.append((name, s, e, low, low + m))
    return placed


def _stacked(order: Sequence[tuple[str, int, int, int]]) -> list[tuple[str, int, int, int, int]]:
    cuts = sorted({t for _, s, e, _ in order for t in (s, e)})
    out = []
    for a, b in pairwise(cuts):
        low = 0
        for name, s, e, m in order:
            if s <= a and b <= e:
                out.append((name, a, b, low, low + m))
                low += m
    return out


def _share_text(milli: int) -> str:
    return f"{milli / FULL:.2f}".rstrip("0").rstrip(".") if milli % 10 == 0 else f"{milli / FULL:.3f}"


def _share_labels(name: str, milli: int) -> list[str]:
    """The texts to try on a share's band: ``8083: 0.65``, ``8083``, then ``0.65``."""
    share = _share_text(milli)
    tail = short_names(name)[-1]
    return [f"{tail}: {share}", tail, share]


def plot_node_gantt(
    inst: Instance, schedule: Schedule, *, nodes: Sequence[str] | None = None,
    ax: Axes | None = None, labels: bool = True, title: str | None = None,
    merge_idle: bool = True,
) -> Axes:
    """Gantt chart of the GPUs of a few nodes: one lane per GPU index, shares stacked.

    Parameters
    ----------
    nodes
        The nodes to draw; default the first :data:`MAX_NODES` nodes the schedule uses
        (in node order), or the first node when it uses none.
    labels
        Job names on whole-GPU bars, and the job and its share (``8083: 0.5``, or less) on
        shared ones, where they fit.
    merge_idle
        The GPUs of a drawn node that hold no job share one lane (``GPU 6-7 idle``);
        ``False``: one lane for each.

    Returns
    -------
    Axes
        With one y tick per lane (``GPU i``) and the node names (model) on the left; the
        default title says which nodes are drawn and how many of their GPUs stay idle.
    """
    place = gpu_indices(inst, schedule)
    used = {k for on in place.values() for k in on}
    chosen = nodes is None
    if nodes is None:
        nodes = [n.name for n in inst.nodes or () if n.name in used][:MAX_NODES]
        if not nodes and inst.nodes:
            nodes = [inst.nodes[0].name]
    busy: dict[str, set[int]] = {}
    for on in place.values():
        for k, gpus in on.items():
            busy.setdefault(k, set()).update(gpus)
    lanes = node_lanes(inst, nodes, busy if merge_idle else None)
    row = {(ln.node, ln.gpu): ln.row for ln in lanes if not ln.idle}
    R, T = len(lanes), inst.horizon
    ax = new_axes(ax, (min(14.0, max(6.0, 0.45 * T + 3)), min(12.0, max(2.5, 0.5 * R + 1.4))))
    idx = inst.job_index
    shared: dict[tuple[str, int], list[tuple[str, int, int, int]]] = {}
    for name, on in place.items():
        job = inst.jobs[idx[name]]
        s = schedule.starts[name]
        color = KIND_COLORS.get(job.kind, "#999999")
        for node, gpus in on.items():
            for g in gpus:
                if (node, g) not in row:
                    continue
                if job.gpu_milli < FULL:
                    shared.setdefault((node, g), []).append((name, s, s + job.duration, job.gpu_milli))
                    continue
                bar = Rectangle((s, row[node, g] + LANE_PAD), job.duration, LANE_HEIGHT,
                                facecolor=color, edgecolor="black", linewidth=0.6)
                ax.add_patch(bar)
                if labels:
                    ax.add_artist(FittedLabel(bar, short_names(name), fontsize=FONT_SIZE, color="white"))
    share_color = KIND_COLORS["batch_inference"]
    for (node, g), js in shared.items():
        base = row[node, g] + LANE_PAD
        for name, a, b, lo, hi in share_bands(js):
            bar = Rectangle((a, base + LANE_HEIGHT * lo / FULL), b - a, LANE_HEIGHT * (hi - lo) / FULL,
                            facecolor=share_color, alpha=0.85, edgecolor=SHARED_EDGE, linewidth=0.5)
            ax.add_patch(bar)
            if labels:
                ax.add_artist(FittedLabel(bar, _share_labels(name, hi - lo), fontsize=FONT_SIZE,
                                          color="black"))
    for ln in lanes:
        if ln.idle:
            ax.add_patch(Rectangle((0, ln.row + LANE_PAD), T, LANE_HEIGHT, facecolor="none",
                                   hatch="////", edgecolor=IDLE_HATCH, linewidth=0.0))
    _bands(ax, inst, lanes)
    ax.set_xlim(0, T)
    ax.set_ylim(0, R)
    ax.set_xlabel(f"slot ({inst.slot_hours:g} h)")
    ran = sum(1 for on in place.values() if set(on) & set(nodes))
    ax.set_title(title or _title(inst, nodes, used, lanes, ran, chosen))
    kinds = {inst.jobs[idx[j]].kind for j in place if inst.jobs[idx[j]].gpu_milli == FULL}
    handles = [Patch(facecolor=c, edgecolor="black", label=f"{k} (whole GPU)")
               for k, c in KIND_COLORS.items() if k in kinds]
    if shared:
        handles.append(Patch(facecolor=share_color, alpha=0.85, edgecolor=SHARED_EDGE,
                             label="shared GPU (height: share)"))
    if any(ln.idle for ln in lanes):
        handles.append(Patch(facecolor="none", hatch="////", edgecolor=IDLE_HATCH,
                             label="GPUs idle all along"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=FONT_SIZE,
              frameon=False)
    return ax


def _title(inst: Instance, nodes: Sequence[str], used: set[str], lanes: Sequence[Lane],
           ran: int, chosen: bool) -> str:
    """What the chart shows: which nodes, how many jobs, how many of their GPUs stay idle."""
    holding = [n for n in nodes if n in used]
    if chosen and holding:
        which = (f"the {len(nodes)} nodes that hold jobs" if len(used) == len(nodes)
                 else f"{len(nodes)} of the {len(used)} nodes that hold jobs")
    else:
        which = f"{len(nodes)} node(s), {len(holding)} of them holding jobs"
    gpus = sum(n.gpus for n in inst.nodes or () if n.name in set(nodes))
    idle = sum(len(ln.idle) for ln in lanes)
    rest = f"; {idle} of their {gpus} GPUs idle all along" if idle else ""
    return f"{inst.name}: {which}, {ran} jobs{rest}"


def _bands(ax: Axes, inst: Instance, lanes: Sequence[Lane]) -> None:
    """Lane ticks (``GPU i``), a shaded band and a label per node (name and model)."""
    models: Mapping[str, str | None] = {n.name: n.model for n in inst.nodes or ()}
    ax.set_yticks([ln.row + 0.5 for ln in lanes])
    ax.set_yticklabels([ln.label for ln in lanes], fontsize=FONT_SIZE)
    gap = 0.56 * FONT_SIZE * max(len(ln.label) for ln in lanes) + 14  # past the tick labels
    by: dict[str, list[int]] = {}
    for ln in lanes:
        by.setdefault(ln.node, []).append(ln.row)
    for k, (name, rows) in enumerate(by.items()):
        lo, hi = min(rows), max(rows) + 1
        if k % 2 == 1:
            ax.axhspan(lo, hi, facecolor=NODE_BAND_COLOR, edgecolor="none", zorder=0)
        if hi < len(lanes):
            ax.axhline(hi, color="black", linewidth=0.9, zorder=3)
        for r in rows[1:]:
            ax.axhline(r + 1, color="#999999", linewidth=0.5, zorder=0.5)
        model = models.get(name)
        text = name if model is None else f"{name}\n{model}"
        ax.annotate(text, xy=(0, (lo + hi) / 2), xycoords=("axes fraction", "data"),
                    xytext=(-gap, 0), textcoords="offset points", ha="right", va="center",
                    fontsize=FONT_SIZE, annotation_clip=False)
    ax.set_ylabel("")


def plot_schedule_gantt(
    inst: Instance, schedule: Schedule, *, reservation: str = "curve", ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """The Gantt chart that fits the schedule: :func:`plot_node_gantt` for one that lists GPU
    indices or an instance with shared jobs (model version 3: one row per GPU would stack
    shares that cannot be told apart), else :func:`gpusched.plots.plot_gantt` (one row per GPU
    of the pool, inference and the reservation shaded)."""
    if inst.nodes is not None and (schedule.indices or inst.shares_gpus):
        return plot_node_gantt(inst, schedule, ax=ax, title=title)
    return plot_gantt(inst, schedule, reservation=reservation, ax=ax, title=title)
