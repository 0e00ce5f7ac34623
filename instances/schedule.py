"""Schedules: which batch jobs run, and from which slot."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from .model import MAX_HORIZON

__all__ = ["Schedule"]


@dataclass(frozen=True)
class Schedule:
    """Start slots for the jobs that run; jobs not listed are not run.

    Parameters
    ----------
    instance
        Name of the instance the schedule is for.
    starts
        Map from job name to its start slot (an ``int``).

    Raises
    ------
    ValueError
        If a job name is not a non-empty string or a start is not an integer
        slot in ``[0, MAX_HORIZON)`` (no instance has a later slot).
        Whether the schedule is *feasible* is :func:`instances.evaluate`'s job.
    """

    instance: str
    starts: Mapping[str, int] = field(default_factory=dict)

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
            if not isinstance(s, (int, np.integer)) or isinstance(s, (bool, np.bool_)):
                raise ValueError(f"{where}: must be an integer slot, got {s!r}")
            if not 0 <= s < MAX_HORIZON:
                raise ValueError(f"{where}: must be a slot in [0, {MAX_HORIZON}), got {s}")
            clean[name] = int(s)
        object.__setattr__(self, "starts", MappingProxyType(clean))

    def __hash__(self) -> int:
        return hash((self.instance, tuple(sorted(self.starts.items()))))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Schedule):
            return NotImplemented
        return self.instance == other.instance and dict(self.starts) == dict(other.starts)

    def __len__(self) -> int:
        return len(self.starts)

    @classmethod
    def from_array(cls, inst: Any, start: np.ndarray) -> Schedule:
        """Build a schedule from a per-job start array (``-1`` means not run).

        Parameters
        ----------
        inst
            The :class:`~instances.Instance` whose job order the array follows.
        start
            Integer array of length ``num_jobs``.
        """
        start = np.asarray(start)
        if start.shape != (inst.num_jobs,):
            raise ValueError(
                f"start: must have shape ({inst.num_jobs},), got {start.shape}"
            )
        run = np.flatnonzero(start >= 0)
        return cls(inst.name, {inst.jobs[i].name: int(start[i]) for i in run})

    def to_array(self, inst: Any) -> np.ndarray:
        """Per-job start array in the instance's job order (``-1``: not run).

        Raises
        ------
        ValueError
            If the schedule names a job the instance does not have.
        """
        out = np.full(inst.num_jobs, -1, dtype=np.int64)
        index = inst.job_index
        for name, s in self.starts.items():
            if name not in index:
                raise ValueError(
                    f"starts[{json.dumps(name)}]: no job of that name in instance {inst.name!r}"
                )
            out[index[name]] = s
        return out

    def to_dict(self) -> dict[str, Any]:
        """The ``gpusched-schedule/1`` JSON object."""
        return {"format": "gpusched-schedule/1", "instance": self.instance, "starts": dict(self.starts)}
