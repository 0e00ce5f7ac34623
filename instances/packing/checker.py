"""The independent checker of a placement: plain loops, nothing shared with the policies.

A placement is valid iff every placed pod sits on one node whose model it
accepts, lists as many GPUs of that node as it asks (one for a shared pod,
none for a CPU-only pod), no GPU of a whole-GPU pod is used by another pod,
the shares on every GPU sum to at most 1000 milli, and the CPU and memory of
the pods on every node fit the node. Each violation names the pod, the node,
the GPU index (where one applies) and the resource.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass

from .model import GPU_MILLI, Packing, Placement

__all__ = ["InvalidPlacementError", "PackingMetrics", "Violation", "evaluate_placement",
           "placement_violations"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Violation:
    """One broken rule: which pod, node, GPU index and resource, and by how much."""

    pod: str
    node: str
    gpu: int | None
    resource: str
    message: str

    def __str__(self) -> str:
        return self.message


class InvalidPlacementError(ValueError):
    """A placement breaks a rule of the packing model (:attr:`violations` lists them all)."""

    def __init__(self, violations: list[Violation]) -> None:
        self.violations = violations
        more = f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""
        super().__init__(f"{violations[0]}{more}")


@dataclass(frozen=True)
class PackingMetrics:
    """What a valid placement achieves, recomputed from the placement alone.

    Attributes
    ----------
    allocated_milli
        GPU milli of the placed pods (``gpus * gpu_milli`` summed).
    capacity_milli
        GPU milli of the cluster.
    request_milli
        GPU milli asked by all pods of the packing.
    placed, failed
        Pods placed and pods not placed.
    """

    allocated_milli: int
    capacity_milli: int
    request_milli: int
    placed: int
    failed: int

    @property
    def allocated_pct(self) -> float:
        """Allocated GPU milli over the capacity, in percent."""
        return 100.0 * self.allocated_milli / self.capacity_milli

    @property
    def unallocated_pct(self) -> float:
        """``100 - allocated_pct``."""
        return 100.0 - self.allocated_pct

    def to_dict(self) -> dict[str, float | int]:
        """The figures as a flat dictionary (with the percentages)."""
        return {**asdict(self), "allocated_pct": self.allocated_pct,
                "unallocated_pct": self.unallocated_pct}


def _resolve(packing: Packing, placement: Placement) -> None:
    """Unknown pods and nodes are bad input, not violations."""
    pods, nodes = packing.pod_index, packing.node_index
    for pod, (node, _) in placement.assign.items():
        if pod not in pods:
            raise ValueError(f"placement[{pod!r}]: no pod {pod!r} in packing {packing.name!r}")
        if node not in nodes:
            raise ValueError(f"placement[{pod!r}]: no node {node!r} in packing {packing.name!r}")


def placement_violations(packing: Packing, placement: Placement) -> list[Violation]:
    """Every rule ``placement`` breaks on ``packing`` (empty when it is valid).

    Raises
    ------
    ValueError
        If the placement names a pod or a node the packing does not have.
    """
    _resolve(packing, placement)
    if placement.packing != packing.name:
        logger.warning("placement is for packing %r, checking against %r",
                       placement.packing, packing.name)
    pods = {p.name: p for p in packing.pods}
    nodes = {n.name: n for n in packing.nodes}
    out: list[Violation] = []
    on_gpu: dict[tuple[str, int], list[str]] = {}  # (node, GPU) -> pods, in placement order
    on_node: dict[str, list[str]] = {}
    for name, (node_name, gpus) in placement.assign.items():
        pod, node = pods[name], nodes[node_name]
        at = f"pod {name!r} on node {node_name!r}"
        if pod.gpu_models and node.model not in pod.gpu_models:
            out.append(Violation(name, node_name, None, "model",
                                 f"{at}: model {node.model!r} is not in the pod's gpu_models "
                                 f"{list(pod.gpu_models)}"))
        want = 1 if pod.shared else pod.gpus
        if len(gpus) != want:
            out.append(Violation(name, node_name, None, "gpus",
                                 f"{at}: lists {len(gpus)} GPU indices, the pod takes {want}"))
        for g in gpus:
            if g >= node.gpus:
                out.append(Violation(name, node_name, g, "GPU index",
                                     f"{at} GPU {g}: the node has GPUs 0..{node.gpus - 1}"))
            else:
                on_gpu.setdefault((node_name, g), []).append(name)
        on_node.setdefault(node_name, []).append(name)
    for (node_name, g), names in on_gpu.items():
        whole = [x for x in names if not pods[x].shared]
        if whole and len(names) > 1:
            holder = whole[0]
            out.extend(Violation(x, node_name, g, "GPU",
                                 f"pod {x!r} on node {node_name!r} GPU {g}: the GPU is held whole "
                                 f"by pod {holder!r}")
                       for x in names if x != holder)
            continue
        used = sum(pods[x].gpu_milli for x in names)
        if used > GPU_MILLI:
            out.append(Violation(names[-1], node_name, g, "gpu_milli",
                                 f"pod {names[-1]!r} on node {node_name!r} GPU {g}: gpu_milli "
                                 f"{used} > {GPU_MILLI} (pods {', '.join(map(repr, names))})"))
    for node_name, names in on_node.items():
        node = nodes[node_name]
        for res, cap in (("cpu_milli", node.cpu_milli), ("memory_mib", node.memory_mib)):
            used = sum(getattr(pods[x], res) for x in names)
            if used > cap:
                out.append(Violation(names[-1], node_name, None, res,
                                     f"pod {names[-1]!r} on node {node_name!r}: {res} {used} > "
                                     f"{cap} ({len(names)} pods on the node)"))
    return out


def evaluate_placement(packing: Packing, placement: Placement) -> PackingMetrics:
    """Check ``placement`` and recompute what it achieves.

    Raises
    ------
    InvalidPlacementError
        If a rule is broken (every violation is listed).
    ValueError
        If the placement names a pod or a node the packing does not have.
    """
    bad = placement_violations(packing, placement)
    if bad:
        raise InvalidPlacementError(bad)
    pods = {p.name: p for p in packing.pods}
    allocated = sum(pods[x].gpus * pods[x].gpu_milli for x in placement.assign)
    placed = len(placement.assign)
    return PackingMetrics(
        allocated_milli=allocated,
        capacity_milli=sum(GPU_MILLI * n.gpus for n in packing.nodes),
        request_milli=sum(p.gpus * p.gpu_milli for p in packing.pods),
        placed=placed,
        failed=len(packing.pods) - placed,
    )
