"""The packing experiment's vocabulary: GPU nodes, pods that never leave, placements.

A :class:`Packing` is section 13 of the specification (docs/packing.md): nodes
with a GPU model, CPU and memory, and pods in arrival order that ask for whole
GPUs, a share of one GPU, or no GPU at all. Every object is immutable and
validated when it is built; a bad field raises :class:`ValueError` naming the
field and the offending value (``pods[3].gpu_milli: must be 1000 when gpus > 1,
got 500``). :class:`PackingArrays` is the same data as read-only numpy arrays,
what the policies, the bound and the metrics work on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

__all__ = [
    "GPU_MILLI",
    "MAX_NODE_GPUS",
    "MAX_PODS",
    "MAX_RESOURCE",
    "PackNode",
    "Packing",
    "PackingArrays",
    "Placement",
    "Pod",
]

GPU_MILLI = 1000
"""Milli-GPUs in one GPU."""

MAX_NODE_GPUS = 64
"""Most GPUs on one node (FGD's scores normalise by 8 GPUs; 64 leaves room)."""

MAX_PODS = 1_000_000
"""Most pods in one packing."""

MAX_RESOURCE = 2**53
"""Largest CPU milli or memory MiB accepted (exact in a 64-bit float)."""


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _int(where: str, x: Any, lo: int, hi: int) -> int:
    if not _is_int(x):
        raise ValueError(f"{where}: must be an integer, got {x!r}")
    if not lo <= int(x) <= hi:
        raise ValueError(f"{where}: must be in [{lo}, {hi}], got {x}")
    return int(x)


def _name(where: str, x: Any) -> str:
    if not isinstance(x, str) or not x:
        raise ValueError(f"{where}: must be a non-empty string, got {x!r}")
    return x


@dataclass(frozen=True)
class PackNode:
    """A GPU node: ``gpus`` GPUs of one ``model``, with CPU and memory.

    Parameters
    ----------
    name
        Unique name.
    gpus
        GPUs on the node, numbered ``0 .. gpus-1``.
    model
        GPU model (a pod listing ``gpu_models`` fits only where it is listed).
    cpu_milli, memory_mib
        What the pods on the node may take together.
    """

    name: str
    gpus: int
    model: str
    cpu_milli: int
    memory_mib: int

    def __post_init__(self) -> None:
        _name("node.name", self.name)
        where = f"node {self.name!r}"
        object.__setattr__(self, "gpus", _int(f"{where}.gpus", self.gpus, 1, MAX_NODE_GPUS))
        _name(f"{where}.model", self.model)
        for f in ("cpu_milli", "memory_mib"):
            object.__setattr__(self, f, _int(f"{where}.{f}", getattr(self, f), 0, MAX_RESOURCE))


@dataclass(frozen=True)
class Pod:
    """A pod: whole GPUs, a share of one GPU, or none, with CPU and memory.

    Parameters
    ----------
    name
        Unique name.
    gpus
        GPUs asked (0: a CPU-only pod).
    gpu_milli
        Milli-GPUs on each of its GPUs: 1000 for whole GPUs, 1..999 for a
        **shared** pod (``gpus == 1`` only), 0 for a CPU-only pod.
    gpu_models
        GPU models the pod may run on; empty means any.
    cpu_milli, memory_mib
        CPU and memory taken on its node.
    """

    name: str
    gpus: int
    gpu_milli: int
    cpu_milli: int
    memory_mib: int
    gpu_models: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _name("pod.name", self.name)
        where = f"pod {self.name!r}"
        g = _int(f"{where}.gpus", self.gpus, 0, MAX_NODE_GPUS)
        m = _int(f"{where}.gpu_milli", self.gpu_milli, 0, GPU_MILLI)
        if g == 0 and m != 0:
            raise ValueError(f"{where}.gpu_milli: must be 0 when gpus == 0, got {m}")
        if g > 0 and m == 0:
            raise ValueError(f"{where}.gpu_milli: must be >= 1 when gpus >= 1, got 0")
        if g > 1 and m != GPU_MILLI:
            raise ValueError(f"{where}.gpu_milli: must be 1000 when gpus > 1, got {m}")
        object.__setattr__(self, "gpus", g)
        object.__setattr__(self, "gpu_milli", m)
        for f in ("cpu_milli", "memory_mib"):
            object.__setattr__(self, f, _int(f"{where}.{f}", getattr(self, f), 0, MAX_RESOURCE))
        models = self.gpu_models
        if isinstance(models, str) or not isinstance(models, Iterable):
            raise ValueError(f"{where}.gpu_models: must be a list of model names, got {models!r}")
        models = tuple(models)
        for i, x in enumerate(models):
            _name(f"{where}.gpu_models[{i}]", x)
        if len(set(models)) != len(models):
            raise ValueError(f"{where}.gpu_models: a model is listed twice: {list(models)}")
        object.__setattr__(self, "gpu_models", models)

    @property
    def request_milli(self) -> int:
        """GPU request ``gpus * gpu_milli`` (what ``arrived`` and ``allocated`` count)."""
        return self.gpus * self.gpu_milli

    @property
    def shared(self) -> bool:
        """Whether the pod asks for a share of one GPU."""
        return self.gpus == 1 and self.gpu_milli < GPU_MILLI


@dataclass(frozen=True)
class Packing:
    """Nodes and pods in arrival order (``gpusched-packing/1``).

    Raises
    ------
    ValueError
        Naming the field: ``nodes[2].gpus``, ``pods[7].name`` (a name used
        twice), ``pods``: more than :data:`MAX_PODS`.
    """

    name: str
    nodes: tuple[PackNode, ...]
    pods: tuple[Pod, ...]

    def __post_init__(self) -> None:
        _name("name", self.name)
        nodes, pods = tuple(self.nodes), tuple(self.pods)
        if not nodes:
            raise ValueError("nodes: at least one node is needed")
        if len(pods) > MAX_PODS:
            raise ValueError(f"pods: at most {MAX_PODS} pods are accepted, got {len(pods)}")
        for key, items, cls in (("nodes", nodes, PackNode), ("pods", pods, Pod)):
            seen: set[str] = set()
            for i, x in enumerate(items):
                if not isinstance(x, cls):
                    raise ValueError(f"{key}[{i}]: must be a {cls.__name__}, got {x!r}")
                if x.name in seen:
                    raise ValueError(f"{key}[{i}].name: {x.name!r} is used twice")
                seen.add(x.name)
        object.__setattr__(self, "nodes", nodes)
        object.__setattr__(self, "pods", pods)

    @property
    def capacity_milli(self) -> int:
        """Milli-GPUs of the whole cluster."""
        return GPU_MILLI * sum(n.gpus for n in self.nodes)

    @property
    def request_milli(self) -> int:
        """GPU request of all pods."""
        return sum(p.request_milli for p in self.pods)

    @cached_property
    def arrays(self) -> PackingArrays:
        """The packing as read-only numpy arrays (built once)."""
        return PackingArrays.of(self)

    @cached_property
    def node_index(self) -> dict[str, int]:
        """Node name -> position in :attr:`nodes`."""
        return {n.name: i for i, n in enumerate(self.nodes)}

    @cached_property
    def pod_index(self) -> dict[str, int]:
        """Pod name -> position in :attr:`pods`."""
        return {p.name: i for i, p in enumerate(self.pods)}

    def head(self, k: int) -> Packing:
        """The same nodes with the first ``k`` pods (those arrived after pod ``k``)."""
        return Packing(self.name, self.nodes, self.pods[:k])


def _readonly(a: Any, dtype: Any) -> np.ndarray:
    arr = np.ascontiguousarray(np.asarray(a, dtype=dtype))
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True)
class PackingArrays:
    """A packing by index: node ``i`` and pod ``j`` as in the packing's lists.

    Attributes
    ----------
    models
        The distinct node models, in order of first appearance.
    node_gpus, node_cpu, node_mem, node_model
        Per node; ``node_model`` indexes :attr:`models`.
    pod_gpus, pod_milli, pod_cpu, pod_mem
        Per pod (``int64``).
    pod_allowed
        ``(pods, models)`` booleans: whether pod ``j`` may run on model ``m``.
    """

    models: tuple[str, ...]
    node_gpus: np.ndarray
    node_cpu: np.ndarray
    node_mem: np.ndarray
    node_model: np.ndarray
    pod_gpus: np.ndarray
    pod_milli: np.ndarray
    pod_cpu: np.ndarray
    pod_mem: np.ndarray
    pod_allowed: np.ndarray

    @classmethod
    def of(cls, packing: Packing) -> PackingArrays:
        """The arrays of ``packing``."""
        models = tuple(dict.fromkeys(n.model for n in packing.nodes))
        mix = {m: i for i, m in enumerate(models)}
        allowed = np.ones((len(packing.pods), len(models)), dtype=np.bool_)
        for j, p in enumerate(packing.pods):
            if p.gpu_models:
                listed = set(p.gpu_models)
                allowed[j] = [m in listed for m in models]
        nodes, pods = packing.nodes, packing.pods
        return cls(
            models=models,
            node_gpus=_readonly([n.gpus for n in nodes], np.int64),
            node_cpu=_readonly([n.cpu_milli for n in nodes], np.int64),
            node_mem=_readonly([n.memory_mib for n in nodes], np.int64),
            node_model=_readonly([mix[n.model] for n in nodes], np.int64),
            pod_gpus=_readonly([p.gpus for p in pods], np.int64),
            pod_milli=_readonly([p.gpu_milli for p in pods], np.int64),
            pod_cpu=_readonly([p.cpu_milli for p in pods], np.int64),
            pod_mem=_readonly([p.memory_mib for p in pods], np.int64),
            pod_allowed=_readonly(allowed, np.bool_),
        )

    @property
    def pod_request(self) -> np.ndarray:
        """GPU request ``gpus * gpu_milli`` of every pod."""
        return self.pod_gpus * self.pod_milli


@dataclass(frozen=True)
class Placement:
    """Where each placed pod runs (``gpusched-placement/1``); pods not listed failed.

    Parameters
    ----------
    packing
        Name of the packing the placement is for.
    assign
        Pod name -> ``(node name, GPU indices)``; a CPU-only pod lists none.
    """

    packing: str
    assign: Mapping[str, tuple[str, tuple[int, ...]]]

    def __post_init__(self) -> None:
        _name("packing", self.packing)
        clean: dict[str, tuple[str, tuple[int, ...]]] = {}
        for pod, where in dict(self.assign).items():
            _name("placement (a pod name)", pod)
            if not isinstance(where, tuple) or len(where) != 2:
                raise ValueError(f"placement[{pod!r}]: must be (node, GPU indices), got {where!r}")
            node = _name(f"placement[{pod!r}] (its node)", where[0])
            idx = tuple(_int(f"placement[{pod!r}][{node!r}][{i}]", x, 0, MAX_NODE_GPUS - 1)
                        for i, x in enumerate(where[1]))
            clean[pod] = (node, idx)
        object.__setattr__(self, "assign", clean)

    def to_dict(self) -> dict[str, Any]:
        """The ``gpusched-placement/1`` object (pods in the mapping's order)."""
        return {
            "format": "gpusched-placement/1",
            "packing": self.packing,
            "placement": {p: {n: list(g)} for p, (n, g) in self.assign.items()},
        }
