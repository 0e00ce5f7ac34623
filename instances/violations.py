"""The error of an infeasible schedule, shared by the checker's modules."""

from __future__ import annotations

__all__ = ["InfeasibleScheduleError"]


class InfeasibleScheduleError(ValueError):
    """A schedule violates a constraint of the model.

    Its attributes say where, when known: the ``job``, ``slot``, ``node`` and
    ``gpu`` (an index on that node), the ``amount`` of the violation, and the
    ``resource`` whose rule is broken (``"gpu"``, ``"gpu_milli"``, ``"model"``,
    ``"cpu_milli"`` or ``"memory_mib"``).
    """

    def __init__(
        self, message: str, *, job: str | None = None, slot: int | None = None,
        amount: int | None = None, node: str | None = None, gpu: int | None = None,
        resource: str | None = None,
    ) -> None:
        super().__init__(message)
        self.job = job
        self.slot = slot
        self.amount = amount
        self.node = node
        self.gpu = gpu
        self.resource = resource
