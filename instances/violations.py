"""The error of an infeasible schedule, shared by the checker's modules."""

from __future__ import annotations

__all__ = ["InfeasibleScheduleError"]


class InfeasibleScheduleError(ValueError):
    """A schedule violates a constraint of the model.

    Attributes
    ----------
    job
        Name of the job involved, if one is.
    slot
        Slot of the violation, if one applies.
    amount
        By how much the constraint is violated (GPUs, slots, or units of the resource).
    node
        Name of the node involved, if one is (model version 2 and 3).
    gpu
        Index of the GPU on that node, if one is (model version 3).
    resource
        The resource whose rule is violated, if one is: ``"gpu"`` (a GPU
        held whole), ``"gpu_milli"``, ``"model"``, ``"cpu_milli"`` or ``"memory_mib"``.
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
