"""FGD's six placement policies on a packing, and the toolkit's first fit.

``place(packing, policy)`` runs the online loop (:mod:`.online`) over the
pods in arrival order, or in an offline order (:mod:`.orders`), and returns
a :class:`PackRun` whose placement has passed the independent checker
(:func:`instances.packing.evaluate_placement`).

Policies: ``random``, ``dotprod``, ``clustering``, ``packing``, ``bestfit``,
``fgd`` (the scores of :mod:`.scores`), and ``firstfit`` (the toolkit's own
rule: the first node in list order with room, the lowest-indexed GPU with
room).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from instances.packing import (
    Packing,
    PackingMetrics,
    Placement,
    TargetWorkload,
    evaluate_placement,
    target_workload,
)

from ..rules import check_known
from .online import POLICY_CODES, run_online
from .orders import ORDERS, check_order, pod_order

__all__ = ["FGD_POLICIES", "ORDERS", "POLICIES", "PackRun", "check_policy", "place", "pod_order"]

FGD_POLICIES: tuple[str, ...] = ("random", "dotprod", "clustering", "packing", "bestfit", "fgd")
"""The six policies of FGD's evaluation, in the paper's order."""

POLICIES: tuple[str, ...] = (*FGD_POLICIES, "firstfit")
"""Every policy :func:`place` knows."""


def check_policy(policy: str) -> str:
    """Return ``policy`` or raise :class:`ValueError` listing the known ones."""
    return check_known("policy", policy, POLICIES)


@dataclass(frozen=True)
class PackRun:
    """One policy's run on a packing.

    Attributes
    ----------
    policy, order, seed
        What ran (``seed`` drives ``random``'s draws only).
    placement
        Where each placed pod went (checked).
    metrics
        The checker's figures of the placement.
    node_of
        Node index of every pod (-1: failed or not in the order).
    runtime_s
        Seconds of the placement loop.
    """

    policy: str
    order: str
    seed: int
    placement: Placement
    metrics: PackingMetrics
    node_of: np.ndarray
    runtime_s: float


def place(packing: Packing, policy: str, *, seed: int = 0, order: str = "arrival",
          workload: TargetWorkload | None = None) -> PackRun:
    """Place ``packing``'s pods one by one with ``policy``.

    Parameters
    ----------
    packing
        Nodes and pods.
    policy
        One of :data:`POLICIES`.
    seed
        Seeds ``random``'s draws.
    order
        One of :data:`ORDERS` (``arrival``: the online experiment).
    workload
        FGD's target workload (default: the packing's own).

    Raises
    ------
    ValueError
        For an unknown policy or order.
    """
    code = POLICY_CODES[check_policy(policy)]
    a = packing.arrays
    seq = pod_order(a, check_order(order))
    w = workload
    if w is None and policy == "fgd" and packing.pods:
        w = target_workload(packing)
    t = _workload_arrays(w, len(a.models))
    rng = np.random.default_rng(seed)
    u_node, u_gpu = rng.random(len(packing.pods)), rng.random(len(packing.pods))
    t0 = time.perf_counter()
    kernel: Any = run_online  # a numba dispatcher
    node_of, mask = kernel(code, seq, a.pod_gpus, a.pod_milli, a.pod_cpu, a.pod_mem,
                               a.pod_allowed, a.node_gpus, a.node_cpu, a.node_mem, a.node_model,
                               *t, u_node, u_gpu)
    runtime = time.perf_counter() - t0
    assign = {}
    for j in seq:
        n = int(node_of[j])
        if n >= 0:
            m = int(mask[j])
            gpus = tuple(i for i in range(int(a.node_gpus[n])) if m >> i & 1)
            assign[packing.pods[j].name] = (packing.nodes[n].name, gpus)
    placement = Placement(packing.name, assign)
    metrics = evaluate_placement(packing, placement)
    return PackRun(policy, order, seed, placement, metrics, node_of, runtime)


def _workload_arrays(w: TargetWorkload | None, models: int) -> tuple[np.ndarray, ...]:
    if w is None:  # no fragmentation needed: an empty workload
        return (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64),
                np.zeros((0, max(models, 1)), np.bool_), np.zeros(0))
    return w.cpu, w.milli, w.gpus, w.allowed, w.freq
