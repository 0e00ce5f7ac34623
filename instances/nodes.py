"""Node shapes for instances: uniform nodes, an explicit list, or the real openb node mix
(nodes of 1, 2, 4 and 8 GPUs, ``instances/data/openb/``).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from .model import Instance, Node

__all__ = [
    "OPENB_NODE_FILE",
    "describe_nodes",
    "openb_node_counts",
    "openb_node_mix",
    "price_of_topology",
    "uniform_nodes",
    "with_nodes",
]

OPENB_NODE_FILE = "data/openb/openb_node_list_gpu_node.csv"
"""The openb node list shipped with the package (see its README for the attribution)."""


def uniform_nodes(num_gpus: int, node_gpus: int) -> list[int]:
    """``num_gpus // node_gpus`` nodes of ``node_gpus``, and a last, smaller node of the rest.

    The pool keeps its size: 12 GPUs in nodes of 8 are nodes of 8 and 4, 12 in
    nodes of 5 are 5, 5 and 2 (:func:`describe_nodes` says so).
    """
    if not isinstance(node_gpus, int) or isinstance(node_gpus, bool) or node_gpus < 1:
        raise ValueError(f"node_gpus: must be an integer >= 1 or a list of them, got {node_gpus!r}")
    full, rest = divmod(num_gpus, node_gpus)
    return [node_gpus] * full + ([rest] if rest else [])


def with_nodes(inst: Instance, node_gpus: int | Sequence[int] = 8) -> Instance:
    """The same instance with its GPUs on nodes named ``node-0``, ``node-1``, ...

    ``node_gpus``: an integer, nodes of that many GPUs and a last, smaller one of the
    rest (:func:`uniform_nodes`); or a list of the nodes' GPUs, summing to ``num_gpus``.

    Raises
    ------
    ValueError
        For a bad ``node_gpus``, sizes not summing to ``num_gpus``, or a job with no
        valid placement on the nodes (naming the job).
    """
    if isinstance(node_gpus, (int, np.integer)) and not isinstance(node_gpus, bool):
        sizes = uniform_nodes(inst.num_gpus, int(node_gpus))
    elif isinstance(node_gpus, Sequence) and not isinstance(node_gpus, str):
        sizes = list(node_gpus)
    else:
        raise ValueError(f"node_gpus: must be an integer >= 1 or a list of them, got {node_gpus!r}")
    nodes = []
    for k, g in enumerate(sizes):
        try:
            nodes.append(Node(f"node-{k}", g))
        except ValueError as e:
            raise ValueError(f"node_gpus[{k}]: {e}") from None
    meta: dict[str, Any] = {**inst.meta, "node_gpus": node_gpus if isinstance(node_gpus, int) else sizes}
    return inst.replace(nodes=tuple(nodes), meta=meta)


def describe_nodes(inst: Instance) -> str:
    """How an instance's GPUs sit on nodes, in words, for the command line (``12 GPUs on 1
    node of 8 and a last node of the 4 left over ...``, ``12 GPUs on 3 nodes: 2 of 4, 2 of 2``).
    """
    G = inst.num_gpus
    if inst.nodes is None:
        return f"{G} GPUs in one pool"
    sizes = [n.gpus for n in inst.nodes]
    k = inst.meta.get("node_gpus")
    if isinstance(k, int) and not isinstance(k, bool) and sizes == uniform_nodes(G, k):
        full, rest = divmod(G, k)
        if not full:
            return f"{G} GPUs on one node of {G} (the pool is smaller than {k})"
        text = f"{G} GPUs on {full} node{'s' if full != 1 else ''} of {k}"
        if rest:
            text += f" and a last node of the {rest} left over ({G} is not a multiple of {k})"
        return text
    counts: dict[int, int] = {}
    for g in sorted(sizes, reverse=True):
        counts[g] = counts.get(g, 0) + 1
    if len(sizes) == 1:
        return f"{G} GPUs on one node of {G}"
    return f"{G} GPUs on {len(sizes)} nodes: " + ", ".join(f"{c} of {g}" for g, c in counts.items())


@cache
def openb_node_counts() -> dict[int, int]:
    """Nodes of the openb cluster by GPUs per node: ``{1: 24, 2: 518, 4: 54, 8: 617}``."""
    text = resources.files("instances").joinpath(OPENB_NODE_FILE).read_text()
    counts: dict[int, int] = {}
    for row in csv.DictReader(text.splitlines()):
        g = int(row["gpu"])
        counts[g] = counts.get(g, 0) + 1
    return dict(sorted(counts.items()))


def openb_node_mix(num_gpus: int, seed: int = 0) -> list[int]:
    """Node sizes of a pool of exactly ``num_gpus`` GPUs in the openb cluster's mix.

    Each size ``k`` gets ``floor(G share_k / k)`` nodes (``share_k`` its share of
    the cluster's GPUs); the GPUs left go one node at a time to the size with the
    largest remainder that still fits. The list is then shuffled by ``seed`` (node
    order matters: FIFO fills the first nodes, peak reservation withholds the last).

    Raises
    ------
    ValueError
        For ``num_gpus < 1``.
    """
    if not isinstance(num_gpus, int) or isinstance(num_gpus, bool) or num_gpus < 1:
        raise ValueError(f"num_gpus: must be an integer >= 1, got {num_gpus!r}")
    counts = openb_node_counts()
    total = sum(k * c for k, c in counts.items())
    target = {k: num_gpus * k * c / total for k, c in counts.items()}
    n = {k: math.floor(target[k] / k) for k in counts}
    left = num_gpus - sum(k * n[k] for k in n)
    while left > 0:
        fits = [k for k in counts if k <= left]
        k = max(fits, key=lambda k: (target[k] - k * n[k], k))
        n[k] += 1
        left -= k
    sizes = [k for k in sorted(n, reverse=True) for _ in range(n[k])]
    order = np.random.default_rng(seed).permutation(len(sizes))
    return [sizes[i] for i in order.tolist()]


def price_of_topology(flat: Any, on_nodes: Any) -> dict[str, float | None]:
    """Price of topology ``F* - N*`` (flat optimum less node optimum) from a flat and a
    node :class:`~instances.Result` of the same instance.

    Returns ``low = max(0, flat.value - on_nodes.upper_bound)`` and ``high =
    flat.upper_bound - on_nodes.value`` (``None`` where a bound is missing), and
    ``price`` when they meet (both proven optimal), else ``None``.
    """
    low = None if on_nodes.upper_bound is None else flat.value - on_nodes.upper_bound
    high = None if flat.upper_bound is None else flat.upper_bound - on_nodes.value
    if low is not None:
        low = max(0.0, low)  # the flat optimum is never below the node optimum
    price = low if low is not None and high is not None and math.isclose(low, high, abs_tol=1e-9) else None
    return {"low": low, "high": high, "price": price}
