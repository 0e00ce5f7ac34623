"""What the running jobs occupy during a replay, and whether a planned start fits beside them.

One interface (:class:`Occupancy`), two states read from the one capacity
model (:func:`instances.capacity.capacity`):

- :class:`Counts` (model versions 1 and 2): GPUs in use in the pool and on each
  node; a start fits when ``a[t]`` plus the running GPUs plus its own fit in
  ``G`` and each of its nodes has its GPUs free.
- :class:`Shares` (version 3): the heuristics' own free state
  (:class:`heuristics.free_state.FreeState`) over the instance with the actual
  demand, read one slot at a time. Its view of slot ``t`` says what is free
  there (each GPU's milli, each node's CPU and memory, the pool row counting a
  GPU busy once however many shares run on it), so a planned start fits when
  its node has room for it (model, CPU, memory, pool) and each of its GPU
  indices has room for its share or, for a whole-GPU job, is wholly free: the
  rule :func:`heuristics.scoring.choose_gpus` holds a user's GPUs to.

Only slot ``t`` is looked at: running jobs only end, so room beside them at a
job's start is room over its whole run; later starts check beside it, and the
future demand is the preemption rule's business (docs/simulation.md).
"""

from __future__ import annotations

from typing import Protocol

from heuristics.free_state import FreeState
from instances import Instance
from instances.capacity import Capacity
from instances.resources import FULL_GPU_MILLI

from .plan import Where

__all__ = ["Counts", "Occupancy", "Shares", "occupancy"]


class Occupancy(Protocol):
    """The running jobs' hold on the cluster during a replay."""

    def busy(self, t: int) -> int:
        """GPUs the running jobs keep busy at slot ``t`` (the pool row's batch part)."""
        ...

    def fits(self, j: int, where: Where, t: int, a: int) -> bool:
        """Whether job ``j`` can start at ``t`` on ``where`` beside inference ``a`` (= ``a[t]``)
        and the running jobs."""
        ...

    def start(self, j: int, where: Where, t: int) -> None:
        """Job ``j`` starts at ``t`` on ``where`` and runs its whole duration."""
        ...

    def stop(self, j: int, t: int) -> None:
        """Job ``j`` leaves at slot ``t``: completed (``t`` its end) or preempted (before it)."""
        ...


class Counts:
    """:class:`Occupancy` of model versions 1 and 2: GPU counts in the pool and per node."""

    def __init__(self, inst: Instance, cap: Capacity) -> None:
        self.G = inst.num_gpus
        self.gpus = inst.gpus.tolist()
        self.sizes = cap.sizes.tolist()
        self.node_used = [0] * len(self.sizes)
        self.used = 0
        self.on: dict[int, Where] = {}

    def busy(self, t: int) -> int:
        return self.used

    def fits(self, j: int, where: Where, t: int, a: int) -> bool:
        return a + self.used + self.gpus[j] <= self.G and all(
            self.node_used[k] + c <= self.sizes[k] for k, c in where.nodes
        )

    def start(self, j: int, where: Where, t: int) -> None:
        self.on[j] = where
        for k, c in where.nodes:
            self.node_used[k] += c
        self.used += self.gpus[j]

    def stop(self, j: int, t: int) -> None:
        for k, c in self.on.pop(j).nodes:
            self.node_used[k] -= c
        self.used -= self.gpus[j]


class Shares:
    """:class:`Occupancy` of model version 3: the heuristics' free state on the actual demand.

    A running job is charged from its start to its end. A preempted job's charge is
    given back by building the state again from the slot of the preemption with the
    jobs still running (preemptions are rare; the state has no "untake").

    Parameters
    ----------
    actual
        The instance with the actual demand (its pool row is ``G - a[t]``).
    """

    def __init__(self, actual: Instance) -> None:
        self.actual = actual
        self.left = actual.batch_capacity("curve")
        self.dur = actual.durations.tolist()
        self.state = FreeState(actual, "curve")
        sh = self.state.shares
        assert sh is not None, "the Shares occupancy is for version 3 instances"
        self.eligible = sh.eligible
        self.sizes = self.state.sizes
        self.on: dict[int, tuple[Where, int]] = {}

    def busy(self, t: int) -> int:
        return int(self.left[t] - self.state.pool[t])

    def fits(self, j: int, where: Where, t: int, a: int) -> bool:
        state = self.state
        job = state.job(j)._replace(duration=1)
        view = state.view(job, t)
        free = view.gpu_free_milli
        if len(where.nodes) > 1:  # whole nodes: every GPU of each wholly free, and the pool
            return int(state.pool[t]) >= job.gpus and all(
                bool(self.eligible[j, k]) and bool((free[k, : self.sizes[k]] >= FULL_GPU_MILLI).all())
                for k, _ in where.nodes
            )
        k = where.nodes[0][0]
        need = job.gpu_milli if job.gpus == 1 else FULL_GPU_MILLI
        return bool(view.fits[k]) and all(int(free[k, i]) >= need for i in where.gpus)

    def start(self, j: int, where: Where, t: int) -> None:
        self.on[j] = (where, t + self.dur[j])
        self._take(j, where, t, self.dur[j])

    def stop(self, j: int, t: int) -> None:
        _, end = self.on.pop(j)
        if t < end:  # preempted: the state again, from t, with the jobs still running
            self.state = FreeState(self.actual, "curve")
            for i, (where, e) in self.on.items():
                self._take(i, where, t, e - t)

    def _take(self, j: int, where: Where, t: int, duration: int) -> None:
        state = self.state
        state.take(state.job(j)._replace(duration=duration), t, [k for k, _ in where.nodes],
                   list(where.gpus))


def occupancy(inst: Instance, actual: Instance, cap: Capacity) -> Occupancy:
    """The :class:`Occupancy` of a replay of ``inst`` (``actual``: with the actual demand)."""
    return Counts(inst, cap) if cap.shares is None else Shares(actual)
