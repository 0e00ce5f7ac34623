"""What a user's placement rule sees: the cluster's nodes and the job (section 14 of the specification).

A placement rule is called as ``rule(view, job)`` and returns one score per
node. :class:`NodeView` holds one row per node in the instance's node order;
:class:`JobView` the job. Both are ``NamedTuple``s of numpy arrays and
numbers, so the same rule runs in plain Python and, compiled with numba,
inside the compiled packing loop (where ``name`` and ``models`` are left
out and ``gpu_models`` is an array: strings do not enter nopython code).

In the packing experiment the free amounts are those free now; in time they
are the amounts free throughout the job's run from ``view.start``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["NO_LIMIT", "JobView", "NodeView", "readonly"]

NO_LIMIT = int(np.iinfo(np.int64).max)
"""CPU or memory of a node that sets no limit, as the view shows it (the largest int64)."""


class NodeView(NamedTuple):
    """The nodes as a rule sees them (every array read-only, one row per node).

    Attributes
    ----------
    gpus, cpu_milli, memory_mib
        Capacities: GPUs, CPU milli and memory MiB of each node (:data:`NO_LIMIT`
        where the node sets no CPU or memory limit).
    model
        Each node's GPU model as an index into :attr:`models` (-1: no model).
    gpu_free_milli
        ``(nodes, largest node's GPUs)``: the free milli of each GPU, -1 where
        the node has no such GPU.
    cpu_free_milli, memory_free_mib
        Free CPU milli and memory MiB of each node.
    fits
        Whether the job has a valid placement on the node (model, CPU, memory,
        GPUs, and in time the pool row).
    models
        The model names the codes of :attr:`model` index.
    start
        In time, the start slot being tried; -1 in the packing experiment.
    """

    gpus: np.ndarray
    cpu_milli: np.ndarray
    memory_mib: np.ndarray
    model: np.ndarray
    gpu_free_milli: np.ndarray
    cpu_free_milli: np.ndarray
    memory_free_mib: np.ndarray
    fits: np.ndarray
    models: tuple[str, ...]
    start: int


class JobView(NamedTuple):
    """The job being placed.

    Attributes
    ----------
    index, name
        Its position and name in the instance (or packing).
    gpus, gpu_milli, cpu_milli, memory_mib
        What it asks: ``gpus`` GPUs of ``gpu_milli`` each (a share when
        ``gpus == 1`` and ``gpu_milli < 1000``), CPU and memory.
    gpu_models
        The models it accepts (a tuple of names), or ``None`` for any.
    duration, release, priority
        In time: slots it runs, its release slot and priority ``w``; in the
        packing experiment 0, 0 and 1.0.
    """

    index: int  # type: ignore[assignment]  # the name section 14 gives it
    name: str
    gpus: int
    gpu_milli: int
    cpu_milli: int
    memory_mib: int
    gpu_models: tuple[str, ...] | None
    duration: int = 0
    release: int = 0
    priority: float = 1.0


def readonly(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a`` (the rule cannot write into the state behind it)."""
    v = a.view()
    v.flags.writeable = False
    return v
