"""The arrays an instance derives from its fields: per job, per node, and the capacity
left for batch work under a reservation (:class:`InstanceArrays`, the base of
:class:`~instances.Instance`; computed once, read-only).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from .objective import worth_terms
from .resources import gpu_amounts, jobs_use_resources, shares_gpus

__all__ = ["InstanceArrays", "Reservation"]

Reservation = Literal["peak", "curve"]


def _readonly(a: npt.ArrayLike, dtype: Any) -> np.ndarray:
    arr = np.array(a, dtype=dtype)
    arr.setflags(write=False)
    return arr


class InstanceArrays:
    """The derived arrays of :class:`~instances.Instance` (its fields are the instance's)."""

    if TYPE_CHECKING:
        num_gpus: int
        horizon: int
        services: tuple[Any, ...]
        jobs: tuple[Any, ...]
        slot_hours: float
        nodes: tuple[Any, ...] | None
        objective: str

    @cached_property
    def demand(self) -> np.ndarray:
        """Inference demand, shape ``(num_services, horizon)``, int64, read-only."""
        if not self.services:
            return _readonly(np.zeros((0, self.horizon)), np.int64)
        return _readonly([s.demand for s in self.services], np.int64)

    @cached_property
    def total_demand(self) -> np.ndarray:
        """Summed inference demand per slot, shape ``(horizon,)``, read-only."""
        return _readonly(self.demand.sum(axis=0), np.int64)

    @cached_property
    def gpus(self) -> np.ndarray:
        """``g_j`` per job, int64, read-only."""
        return _readonly([j.gpus for j in self.jobs], np.int64)

    @cached_property
    def durations(self) -> np.ndarray:
        """``p_j`` per job, int64, read-only."""
        return _readonly([j.duration for j in self.jobs], np.int64)

    @cached_property
    def releases(self) -> np.ndarray:
        """``r_j`` per job, int64, read-only."""
        return _readonly([j.release for j in self.jobs], np.int64)

    @cached_property
    def deadlines(self) -> np.ndarray:
        """Effective end-by slot ``min(D_j, T)`` per job, int64, read-only."""
        return _readonly(
            [self.horizon if j.deadline is None else j.deadline for j in self.jobs], np.int64
        )

    @cached_property
    def priorities(self) -> np.ndarray:
        """``w_j`` per job, float64, read-only."""
        return _readonly([j.priority for j in self.jobs], np.float64)

    @cached_property
    def jobs_use_resources(self) -> bool:
        """Whether some job sets a version 3 field (looked up once: hot paths ask it per call)."""
        return jobs_use_resources(self)  # type: ignore[arg-type]

    @cached_property
    def shares_gpus(self) -> bool:
        """Whether some job is shared (``gpu_milli`` below 1000), looked up once."""
        return shares_gpus(self)  # type: ignore[arg-type]

    @cached_property
    def job_values(self) -> np.ndarray:
        """Value of running each job, ``w_j a_j p_j slot_hours``, read-only (``a_j = g_j`` on version 2)."""
        return _readonly(
            self.priorities * gpu_amounts(self) * self.durations * self.slot_hours,  # type: ignore[arg-type]
            np.float64,
        )

    @cached_property
    def worth_base(self) -> np.ndarray:
        """What running each job adds to the worth before its start's share, read-only
        (:func:`instances.objective.worth_terms`; ``job_values`` under ``value``).
        """
        return _readonly(self._worth_terms[0], np.float64)

    @cached_property
    def worth_slope(self) -> np.ndarray:
        """What each slot of delay takes from a job's worth, read-only (0 under ``value``)."""
        return _readonly(self._worth_terms[1], np.float64)

    @property
    def worth_offset(self) -> float:
        """``-C`` under ``flow`` (minus the flow of running no job), 0 under ``value``;
        :func:`instances.objective.report` turns a worth into ``F`` with it.
        """
        return self._worth_terms[2]

    @cached_property
    def _worth_terms(self) -> tuple[np.ndarray, np.ndarray, float]:
        return worth_terms(self)  # type: ignore[arg-type]

    @cached_property
    def job_index(self) -> Mapping[str, int]:
        """Map from job name to its position in :attr:`jobs`."""
        return {j.name: i for i, j in enumerate(self.jobs)}

    @property
    def num_jobs(self) -> int:
        """Number of batch jobs."""
        return len(self.jobs)

    @property
    def has_nodes(self) -> bool:
        """Whether the instance lists its nodes (else it is one flat pool)."""
        return self.nodes is not None

    @property
    def num_nodes(self) -> int:
        """Number of nodes (0 for a flat pool)."""
        return 0 if self.nodes is None else len(self.nodes)

    @cached_property
    def node_gpus(self) -> np.ndarray:
        """GPUs per node in list order, int64, read-only (empty for a flat pool)."""
        return _readonly([n.gpus for n in self.nodes or ()], np.int64)

    @cached_property
    def node_index(self) -> Mapping[str, int]:
        """Map from node name to its position in :attr:`nodes`."""
        return {n.name: k for k, n in enumerate(self.nodes or ())}

    @cached_property
    def multi_node(self) -> np.ndarray:
        """Per job, whether it is larger than the largest node (so takes whole nodes), read-only."""
        largest = int(self.node_gpus.max()) if self.nodes else self.num_gpus
        return _readonly(self.gpus > largest, np.bool_)

    @cached_property
    def max_span(self) -> int:
        """At least the number of nodes of any valid placement (1 without multi-node jobs): for
        a job larger than the largest node, how many of the smallest nodes sum to at most ``g_j``.
        """
        if not self.nodes or not self.multi_node.any():
            return 1
        cum = np.cumsum(np.sort(self.node_gpus))
        g = int(self.gpus[self.multi_node].max())
        return max(1, int(np.searchsorted(cum, g, side="right")))

    def node_withheld(self, reservation: Reservation = "peak") -> np.ndarray:
        """GPUs of each node withheld for inference for the whole horizon (a new array).

        Under ``peak``, ``min(G, sum_s max_t d_s[t])`` GPUs from the end of the node
        list; under ``curve`` none (inference takes any free GPU).
        """
        out = np.zeros(self.num_nodes, dtype=np.int64)
        if reservation == "curve":
            return out
        if reservation != "peak":
            raise ValueError(f"reservation: must be 'peak' or 'curve', got {reservation!r}")
        left = min(self.num_gpus, int(self.demand.max(axis=1).sum()) if self.services else 0)
        for k in range(self.num_nodes - 1, -1, -1):
            out[k] = min(left, int(self.node_gpus[k]))
            left -= int(out[k])
        return out

    def node_capacity(self, reservation: Reservation = "curve") -> np.ndarray:
        """GPUs of each node left for batch work under a reservation (a new array; batch work
        must also fit the pool's :meth:`batch_capacity`).
        """
        return self.node_gpus - self.node_withheld(reservation)

    def batch_capacity(self, reservation: Reservation = "curve") -> np.ndarray:
        """GPUs left for batch work in each slot (a new array): ``G - sum_s d_s[t]`` under
        ``curve``, ``max(0, G - sum_s max_t d_s[t])`` under ``peak``.
        """
        if reservation == "curve":
            return self.num_gpus - self.total_demand
        if reservation == "peak":
            peak = int(self.demand.max(axis=1).sum()) if self.services else 0
            return np.full(self.horizon, max(0, self.num_gpus - peak), dtype=np.int64)
        raise ValueError(f"reservation: must be 'peak' or 'curve', got {reservation!r}")
