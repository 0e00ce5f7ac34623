"""FGD's six placement policies on a packing, and the toolkit's first fit.

``place(packing, policy)`` runs the online loop (:mod:`.online`) over the
pods in arrival order, or in an offline order (:mod:`.orders`), and returns
a :class:`PackRun` whose placement has passed the independent checker
(:func:`instances.packing.evaluate_placement`).

Policies: ``random``, ``dotprod``, ``clustering``, ``packing``, ``bestfit``,
``fgd`` (the scores of :mod:`.scores`), ``first-fit`` (the toolkit's own
rule: the first node in list order with room, the lowest-indexed GPU with
room), and any placement rule of :data:`heuristics.placement_rules.PLACEMENT_RULES`
or a user's rule itself (:mod:`.custom`, section 14 of the specification);
``guided`` (section 17, :mod:`heuristics.guided`) in its own compiled loop (:mod:`.guided`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from instances.compile_clock import own_seconds
from instances.packing import (
    Packing,
    PackingMetrics,
    Placement,
    TargetWorkload,
    evaluate_placement,
    target_workload,
)

from ..guided import Guided
from ..placement_rules import (
    BUILTIN_PACKING,
    FGD_POLICIES,
    PlacementRule,
    resolve_placement,
)
from .custom import CompiledRuleError, plain_loop, run_compiled
from .guided import run_guided
from .online import POLICY_CODES, Draws, run_online
from .orders import ORDERS, check_order, pod_order
from .scores import Target
from .state import empty_free, gpu_lists, nodes_of, pods_of

__all__ = ["FGD_POLICIES", "ORDERS", "POLICIES", "PackRun", "check_policy", "place", "pod_order"]

POLICIES: tuple[str, ...] = BUILTIN_PACKING
"""The built-in policies of :func:`place` (FGD's six and ``first-fit``)."""


def check_policy(policy: Any) -> PlacementRule:
    """The placement rule ``policy`` names or is, one that runs in the packing experiment.

    Raises
    ------
    ValueError
        For an unknown rule, or a built-in that runs only in time.
    """
    try:
        entry = resolve_placement(policy)
    except ValueError:
        if isinstance(policy, str) and ":" not in policy:  # say the packing policies only
            raise ValueError(f"policy: unknown policy {policy!r}; known: {', '.join(POLICIES)} "
                             "(random:SEED; MODULE:NAME for your own rule)") from None
        raise
    if entry.builtin and "packing" not in entry.where:
        raise ValueError(f"policy: {entry.name!r} is a placement rule in time only; the packing "
                         f"policies are {', '.join(POLICIES)} and any user rule (MODULE:NAME)")
    return entry


@dataclass(frozen=True)
class PackRun:
    """One policy's run on a packing.

    Attributes
    ----------
    policy, order, seed
        What ran: the rule's name (a user's rule not registered:
        ``MODULE:NAME``); ``seed`` drives ``random``'s draws only.
    placement
        Where each placed pod went (checked).
    metrics
        The checker's figures of the placement.
    node_of
        Node index of every pod (-1: failed or not in the order).
    runtime_s
        Seconds of the placement loop (less kernel compiling or cache loading).
    """

    policy: str
    order: str
    seed: int
    placement: Placement
    metrics: PackingMetrics
    node_of: np.ndarray
    runtime_s: float


def place(packing: Packing, policy: Any, *, seed: int = 0, order: str = "arrival",
          workload: TargetWorkload | None = None) -> PackRun:
    """Place ``packing``'s pods one by one with ``policy``.

    Parameters
    ----------
    packing
        Nodes and pods.
    policy
        A placement rule: one of :data:`POLICIES`, a registered rule's name,
        ``MODULE:NAME``, or a user's rule itself (``rule(view, job) -> scores``,
        plain or numba-compiled, or an object with ``score``).
    seed
        Seeds ``random``'s draws.
    order
        One of :data:`ORDERS` (``arrival``: the online experiment).
    workload
        FGD's target workload (default: the packing's own); ``guided`` takes it for its
        fragmentation term and the packing's pod-shape frequencies for the rest.

    Raises
    ------
    ValueError
        For an unknown policy or order, or a user's rule that raises or returns
        anything but one score per node (naming the rule and the pod).
    """
    entry = check_policy(policy)
    a = packing.arrays
    seq = pod_order(a, check_order(order))
    if isinstance(entry.rule, Guided):  # section 17's rule: its own compiled loop
        rule = entry.rule.for_packing(packing, workload)
        t0 = time.perf_counter()
        node_of, gpus = run_guided(rule, a, seq)
        return _checked(packing, entry.name, order, seed, seq, node_of, gpus, own_seconds(t0))
    if not entry.builtin:
        return _place_user(packing, entry, seq, order, seed)
    code = POLICY_CODES[entry.name.partition(":")[0]]
    if entry.seed:
        seed = entry.seed
    w = workload
    if w is None and entry.name == "fgd" and packing.pods:
        w = target_workload(packing)
    rng = np.random.default_rng(seed)
    draws = Draws(rng.random(len(packing.pods)), rng.random(len(packing.pods)))
    nodes, pods, free, target = nodes_of(a), pods_of(a), empty_free(a), _target(w, len(a.models))
    t0 = time.perf_counter()
    kernel: Any = run_online  # a numba dispatcher
    node_of, mask = kernel(code, seq, nodes, pods, free, target, draws)
    runtime = own_seconds(t0)
    return _checked(packing, entry.name, order, seed, seq, node_of,
                    gpu_lists(nodes, node_of, mask), runtime)


def _place_user(packing: Packing, entry: PlacementRule, seq: np.ndarray, order: str,
                seed: int) -> PackRun:
    """:func:`place` under a user's rule: compiled inside the loop, or called per pod.

    A rule whose own ``gpus`` is Python runs in the plain loop even with a compiled score
    (the compiled loop takes the default GPUs). ``runtime_s`` counts the loop, as the
    built-ins' does: not the pods' arrays built before it nor the GPU masks read after it.
    """
    names = tuple(p.name for p in packing.pods)
    models = tuple(tuple(p.gpu_models) for p in packing.pods)
    a = packing.arrays
    t0 = time.perf_counter()
    if entry.compiled and entry.gpus is None:
        try:
            node_of, mask = run_compiled(entry, a, names, seq)
        except CompiledRuleError:
            # the compiled loop cannot say on which pod the rule failed: the plain loop,
            # calling the same compiled rule pod by pod, names it (if it fails there too)
            plain_loop(entry, a, names, models, seq)
            raise
    else:
        node_of, mask = plain_loop(entry, a, names, models, seq)
    runtime = own_seconds(t0)
    return _checked(packing, entry.name, order, seed, seq, node_of,
                    gpu_lists(nodes_of(a), node_of, mask), runtime)


def _checked(packing: Packing, policy: str, order: str, seed: int, seq: np.ndarray,
             node_of: np.ndarray, gpus: list[list[int]], runtime: float) -> PackRun:
    """The run's placement, through the independent checker."""
    assign = {packing.pods[j].name: (packing.nodes[int(node_of[j])].name, tuple(gpus[j]))
              for j in seq.tolist() if node_of[j] >= 0}
    placement = Placement(packing.name, assign)
    metrics = evaluate_placement(packing, placement)
    return PackRun(policy, order, seed, placement, metrics, node_of, runtime)


def _target(w: TargetWorkload | None, models: int) -> Target:
    """FGD's target workload as the compiled loop reads it (none: an empty workload)."""
    if w is None:  # no fragmentation needed
        return Target(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64),
                      np.zeros((0, max(models, 1)), np.bool_), np.zeros(0))
    return Target(w.cpu, w.milli, w.gpus, w.allowed, w.freq)
