"""The packing loop under a user's rule: every node scored unless the rule declares
``per_node = True`` (docs/extending.md, "Scored per node"); then fewer rows, the same
placements. And which loop a rule runs in: a compiled score with a Python ``gpus()``
keeps its GPUs."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit
from packing_cases import random_packing
from user_bestfit import bestfit, bestfit_compiled

from heuristics.packing import place
from instances.packing import Packing, PackNode, openb_packing


class PerNode:
    """``score`` declared per node (the same function, undeclared, is the control)."""

    per_node = True

    def __init__(self, score):  # type: ignore[no-untyped-def]
        self.score = score


def clustered(seed: int, copies: int = 3) -> Packing:
    """A random packing whose nodes come ``copies`` times each, side by side and spread
    out: many untouched nodes of one type, and many ties (FGD's BestFit scores 0..100)."""
    p = random_packing(seed, nodes=6, pods=90)
    nodes = [PackNode(f"{n.name}-{c}", n.gpus, n.model, n.cpu_milli, n.memory_mib)
             for c in range(copies) for n in p.nodes]
    return Packing(p.name, tuple(nodes), p.pods)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("rule", [bestfit, bestfit_compiled], ids=["plain", "compiled"])
def test_a_rule_declared_per_node_places_as_undeclared(seed, rule):
    p = clustered(seed)
    undeclared, declared = place(p, rule), place(p, PerNode(rule))
    assert declared.placement.assign == undeclared.placement.assign
    assert declared.placement.assign == place(p, "bestfit").placement.assign
    assert declared.metrics.placed > 0 and declared.metrics.failed > 0  # the cluster fills


def test_declared_compiled_bestfit_places_as_the_builtin_on_openb():
    p = openb_packing(0)
    assert place(p, PerNode(bestfit_compiled)).placement.assign == \
        place(p, "bestfit").placement.assign


def _recording(declared: bool):  # type: ignore[no-untyped-def]
    calls: list[tuple[int, bool]] = []

    def rule(view, job):  # type: ignore[no-untyped-def]
        calls.append((view.fits.size, bool(view.fits.all())))
        return bestfit(view, job)

    if declared:
        rule.per_node = True  # type: ignore[attr-defined]
    return rule, calls


def test_an_undeclared_rule_is_scored_on_every_node_and_a_declared_one_on_fewer():
    p = clustered(1)
    rule, every = _recording(False)
    local, some = _recording(True)
    assert place(p, rule).placement.assign == place(p, local).placement.assign
    # called for the same pods (those some node fits), in the same number
    assert len(every) == len(some) > 0
    # undeclared: the view of every node, whatever the rule reads
    assert {n for n, _ in every} == {len(p.nodes)}
    assert not all(ok for _, ok in every)  # and some nodes do not fit
    # declared: only nodes the pod fits, untouched nodes of a type once; the first pod sees
    # one row per node type (nothing is placed yet)
    assert all(ok for _, ok in some)
    assert some[0][0] <= len(p.nodes) // 3
    assert sum(n for n, _ in some) < sum(n for n, _ in every) / 2


def test_the_declaration_is_read_as_true_only():
    p = clustered(2)
    rule, calls = _recording(False)
    rule.per_node = "yes"  # type: ignore[attr-defined]  # not True: not declared
    place(p, rule)
    assert {n for n, _ in calls} == {len(p.nodes)}


@njit(cache=True)
def _three(view, job):  # type: ignore[no-untyped-def]  # pragma: no cover (compiled)
    return np.zeros(3)


def test_a_declared_compiled_rule_of_the_wrong_length_names_the_pod_and_the_rows():
    p = clustered(0)
    with pytest.raises(ValueError, match=r"on job 'p0' \(index 0\): returned scores of the "
                                         r"wrong length, expected one per row of the view"):
        place(p, PerNode(_three))


@njit(cache=True)
def _zeros(view, job):  # type: ignore[no-untyped-def]  # pragma: no cover (compiled)
    return np.zeros(view.gpus.shape[0])


class LastGpus:
    """Every node alike (the earliest wins), the highest-indexed GPUs that can host the pod."""

    def __init__(self, score):  # type: ignore[no-untyped-def]
        self.score = score

    def gpus(self, view, job, node):  # type: ignore[no-untyped-def]
        free = view.gpu_free_milli[node, : view.gpus[node]]
        need = job.gpu_milli if job.gpus == 1 and job.gpu_milli < 1000 else 1000
        return np.flatnonzero(free >= need)[::-1][: job.gpus].tolist()


@pytest.mark.parametrize("seed", range(3))
def test_a_compiled_score_keeps_its_rules_own_gpus(seed):
    # the compiled loop takes the default GPUs: a rule with its own gpus() runs in the plain
    # loop, compiled score or not
    p = random_packing(seed)
    compiled = place(p, LastGpus(_zeros))
    plain = place(p, LastGpus(lambda view, job: np.zeros(view.gpus.shape[0])))
    assert compiled.placement.assign == plain.placement.assign
    default = place(p, _zeros).placement.assign
    assert compiled.placement.assign != default  # the GPUs differ from the default's
