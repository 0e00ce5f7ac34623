"""Schedules: which batch jobs run, from which slot, and (on nodes) where."""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from .model import MAX_GPUS, MAX_HORIZON, is_int
from .resources import FULL_GPU_MILLI, refuse_resources, shares_gpus

__all__ = ["Schedule"]


def _count(where: str, c: Any) -> int:
    if not is_int(c) or not 0 <= c <= MAX_GPUS:
        raise ValueError(
            f"{where}: must be an integer number of GPUs in [0, {MAX_GPUS}] "
            f"or a list of GPU indices, got {c!r}"
        )
    return int(c)


def _indices(where: str, c: Any) -> tuple[int, ...]:
    """A list of distinct GPU indices, checked and sorted."""
    if isinstance(c, (str, bytes, Mapping)) or not isinstance(c, (list, tuple)):
        raise ValueError(f"{where}: must be a list of GPU indices, got {c!r}")
    for i, g in enumerate(c):
        if not is_int(g) or not 0 <= g < MAX_GPUS:
            raise ValueError(f"{where}[{i}]: must be an integer GPU index in [0, {MAX_GPUS}), got {g!r}")
    out = tuple(sorted(int(g) for g in c))
    twice = next((a for a, b in itertools.pairwise(out) if a == b), None)
    if twice is not None:
        raise ValueError(f"{where}: GPU index {twice} is listed twice")
    return out


def _rows(
    where: str, mapping: Any, what: str
) -> list[tuple[str, str, Mapping[str, Any]]]:
    """``(job, field, {node: value})`` of a placement-like mapping, names checked."""
    if not isinstance(mapping, Mapping):
        raise ValueError(f"{where}: must be a mapping of job name to {what}, got {mapping!r}")
    out = []
    for name, on in mapping.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"{where}: job names must be non-empty strings, got {name!r}")
        at = f"{where}[{json.dumps(name)}]"
        if not isinstance(on, Mapping):
            raise ValueError(f"{at}: must be a mapping of node name to GPUs, got {on!r}")
        for node in on:
            if not isinstance(node, str) or not node:
                raise ValueError(f"{at}: node names must be non-empty strings, got {node!r}")
        out.append((name, at, on))
    return out


@dataclass(frozen=True)
class Schedule:
    """Start slots for the jobs that run (jobs not listed are not run) and, on nodes, where.

    Parameters
    ----------
    starts
        Job name -> start slot.
    placement
        On nodes: job name -> node name -> GPUs held there (empty on a flat pool).
        Lists of GPU indices given here (as in a schedule file) move to ``indices``.
    indices
        Model version 3: job name -> node name -> the GPU indices held (sorted);
        they give ``placement`` its counts. One schedule uses counts or index lists.

    Raises
    ------
    ValueError
        For a name that is not a non-empty string, a start outside ``[0,
        MAX_HORIZON)``, a GPU count outside ``[0, MAX_GPUS]``, a bad or repeated GPU
        index, or both forms of placement. Feasibility is :func:`instances.evaluate`'s job.
    """

    instance: str
    starts: Mapping[str, int] = field(default_factory=dict)
    placement: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    indices: Mapping[str, Mapping[str, tuple[int, ...]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.instance, str):
            raise ValueError(f"instance: must be a string, got {self.instance!r}")
        if not isinstance(self.starts, Mapping):
            raise ValueError(f"starts: must be a mapping of job name to slot, got {self.starts!r}")
        clean: dict[str, int] = {}
        for name, s in self.starts.items():
            if not isinstance(name, str) or not name:
                raise ValueError(f"starts: job names must be non-empty strings, got {name!r}")
            where = f"starts[{json.dumps(name)}]"
            if not is_int(s):
                raise ValueError(f"{where}: must be an integer slot, got {s!r}")
            if not 0 <= s < MAX_HORIZON:
                raise ValueError(f"{where}: must be a slot in [0, {MAX_HORIZON}), got {s}")
            clean[name] = int(s)
        object.__setattr__(self, "starts", MappingProxyType(clean))
        counts: dict[str, dict[str, int]] = {}
        lists: dict[str, dict[str, tuple[int, ...]]] = {}
        forms: dict[str, str] = {}  # form -> the first field that gives it
        for key, what in (("placement", "node counts"), ("indices", "GPU index lists")):
            for name, at, on in _rows(key, getattr(self, key), what):
                if key == "placement":
                    counts.setdefault(name, {})
                for node, c in on.items():
                    here = f"{at}[{json.dumps(node)}]"
                    if key == "indices" or isinstance(c, (list, tuple)):
                        lists.setdefault(name, {})[node] = _indices(here, c)
                        form = "a list of GPU indices"
                    else:
                        counts[name][node] = _count(here, c)
                        form = "a GPU count"
                    if c:
                        forms.setdefault(form, here)
        if len(forms) > 1:
            (f1, w1), (f2, w2) = sorted(forms.items(), key=lambda kv: kv[0] == "a GPU count")
            raise ValueError(f"{w1}: {f1}, but {w2} gives {f2}: one schedule uses one form of placement")
        for name, on in lists.items():
            row = counts.setdefault(name, {})
            for node, held in on.items():
                row[node] = len(held)
        object.__setattr__(self, "placement", MappingProxyType(
            {j: MappingProxyType(c) for j, c in counts.items()}))
        object.__setattr__(self, "indices", MappingProxyType(
            {j: MappingProxyType(c) for j, c in lists.items()}))

    @property
    def lists_indices(self) -> bool:
        """Whether the placements list GPU indices (model version 3) rather than counts."""
        return any(held for on in self.indices.values() for held in on.values())

    def _placement_items(self) -> tuple[Any, ...]:
        counts = tuple(sorted((j, tuple(sorted(c.items()))) for j, c in self.placement.items()))
        lists = tuple(sorted((j, tuple(sorted(c.items()))) for j, c in self.indices.items()))
        return counts, lists

    def __hash__(self) -> int:
        return hash((self.instance, tuple(sorted(self.starts.items())), self._placement_items()))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Schedule):
            return NotImplemented
        return (
            self.instance == other.instance
            and dict(self.starts) == dict(other.starts)
            and self._placement_items() == other._placement_items()
        )

    def __len__(self) -> int:
        return len(self.starts)

    @classmethod
    def from_array(cls, inst: Any, start: np.ndarray, place: np.ndarray | None = None) -> Schedule:
        """Build a schedule from a per-job start array (``-1``: not run).

        ``place``, on nodes, is a placement array (:meth:`to_placement_array`): row
        ``j`` holds job ``j``'s node positions padded with ``-1``; on one node the job
        holds its ``g_j`` GPUs, on several each in full.
        """
        start = np.asarray(start)
        if start.shape != (inst.num_jobs,):
            raise ValueError(
                f"start: must have shape ({inst.num_jobs},), got {start.shape}"
            )
        run = np.flatnonzero(start >= 0)
        starts = {inst.jobs[i].name: int(start[i]) for i in run}
        if place is None:
            return cls(inst.name, starts)
        refuse_resources(inst, "Schedule.from_array", shares_only=True)
        place = np.asarray(place)
        if place.ndim != 2 or place.shape[0] != inst.num_jobs:
            raise ValueError(f"place: must have shape ({inst.num_jobs}, width), got {place.shape}")
        nodes = inst.nodes or ()
        placement: dict[str, dict[str, int]] = {}
        for i in run.tolist():
            ks = [int(k) for k in place[i] if k >= 0]
            if len(ks) == 1:
                placement[inst.jobs[i].name] = {nodes[ks[0]].name: int(inst.jobs[i].gpus)}
            elif ks:
                placement[inst.jobs[i].name] = {nodes[k].name: nodes[k].gpus for k in ks}
        return cls(inst.name, starts, placement)

    def to_array(self, inst: Any) -> np.ndarray:
        """Per-job start array in the instance's job order (``-1``: not run).

        Raises
        ------
        ValueError
            For a job the instance does not have, or a GPU count where the instance
            has a shared job (model version 3: placements then list GPU indices).
        """
        out = np.full(inst.num_jobs, -1, dtype=np.int64)
        index = inst.job_index
        for name, s in self.starts.items():
            if name not in index:
                raise ValueError(
                    f"starts[{json.dumps(name)}]: no job of that name in instance {inst.name!r}"
                )
            out[index[name]] = s
        for name in self.placement:
            if name not in index:
                raise ValueError(
                    f"placement[{json.dumps(name)}]: no job of that name in instance {inst.name!r}"
                )
        problem = count_form_problem(inst, self)
        if problem is not None:
            raise ValueError(problem)
        return out

    def to_placement_array(self, inst: Any) -> np.ndarray:
        """The placement as an array ``(num_jobs, inst.max_span)``: row ``j`` lists job ``j``'s
        node positions ascending, ``-1`` padded (all ``-1`` without a placement).

        Raises
        ------
        ValueError
            For a job or node the instance does not have, or a job on more nodes than
            any valid placement uses.
        """
        width = inst.max_span
        out = np.full((inst.num_jobs, width), -1, dtype=np.int64)
        jobs, nodes = inst.job_index, inst.node_index
        for name, counts in self.placement.items():
            where = f"placement[{json.dumps(name)}]"
            if name not in jobs:
                raise ValueError(f"{where}: no job of that name in instance {inst.name!r}")
            ks = []
            for node, c in counts.items():
                if node not in nodes:
                    raise ValueError(
                        f"{where}[{json.dumps(node)}]: no node of that name in instance {inst.name!r}"
                    )
                if c > 0:
                    ks.append(nodes[node])
            if len(ks) > width:
                raise ValueError(
                    f"{where}: {len(ks)} nodes, more than any valid placement uses ({width})"
                )
            out[jobs[name], : len(ks)] = sorted(ks)
        return out

    def to_dict(self) -> dict[str, Any]:
        """The ``gpusched-schedule/1`` JSON object (``placement`` only when there is one)."""
        out: dict[str, Any] = {
            "format": "gpusched-schedule/1", "instance": self.instance, "starts": dict(self.starts),
        }
        if self.placement:
            out["placement"] = {
                j: {n: list(self.indices[j][n]) if n in self.indices.get(j, {}) else v
                    for n, v in c.items()}
                for j, c in self.placement.items()
            }
        return out


def count_form_problem(inst: Any, schedule: Schedule) -> str | None:
    """Why a count-form placement is refused on ``inst`` (one with a shared job, where
    every placement lists GPU indices), or ``None``.
    """
    if not shares_gpus(inst):
        return None
    for name in schedule.starts:
        for node, held in schedule.placement.get(name, {}).items():
            if held > 0 and node not in schedule.indices.get(name, {}):
                shared = next(j.name for j in inst.jobs if j.gpu_milli < FULL_GPU_MILLI)
                return (
                    f"placement[{json.dumps(name)}][{json.dumps(node)}]: a GPU count ({held}), "
                    f"but instance {inst.name!r} has a shared job ({shared!r}), so every "
                    f"placement lists GPU indices"
                )
    return None
