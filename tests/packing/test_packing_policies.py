"""The six policies (and first-fit): each rule on hand-built cases, and the compiled loop
against the plain-Python reference on random packings."""

from __future__ import annotations

import numpy as np
import pytest
from packing_cases import node, pod, random_packing
from packing_reference import place_reference

from heuristics.packing import FGD_POLICIES, POLICIES, place, pod_order
from instances.packing import Packing, target_workload


def _where(run, name):
    return run.placement.assign.get(name)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("seed", range(12))
def test_compiled_loop_matches_the_reference(policy, seed):
    p = random_packing(seed)
    run = place(p, policy, seed=seed)
    rng = np.random.default_rng(seed)
    u_node, u_gpu = rng.random(len(p.pods)), rng.random(len(p.pods))
    w = target_workload(p) if policy == "fgd" else None
    ref = place_reference(p, policy, list(range(len(p.pods))), w, u_node, u_gpu)
    assert dict(run.placement.assign) == ref


@pytest.mark.parametrize("order", ["largest", "gpus", "dominant"])
def test_offline_orders_match_the_reference(order):
    p = random_packing(99, nodes=5, pods=30)
    run = place(p, "bestfit", order=order)
    seq = [int(j) for j in pod_order(p.arrays, order)]
    ref = place_reference(p, "bestfit", seq, None, np.zeros(30), np.zeros(30))
    assert dict(run.placement.assign) == ref


def _packing(nodes, pods):
    return Packing("hand", tuple(nodes), tuple(pods))


def test_ties_go_to_the_earliest_node():
    p = _packing([node("a", 2), node("b", 2), node("c", 2)], [pod("x")])
    for policy in ("dotprod", "clustering", "packing", "bestfit", "fgd", "first-fit"):
        assert _where(place(p, policy), "x") == ("a", (0,)), policy


def test_whole_gpu_pods_take_the_lowest_free_gpus():
    p = _packing([node("a", 4)], [pod("s", 1, 300), pod("w", 2)])
    run = place(p, "bestfit")
    assert _where(run, "s") == ("a", (0,))
    assert _where(run, "w") == ("a", (1, 2))


def test_a_pod_that_fits_nowhere_fails():
    p = _packing([node("a", 2, cpu=1000)], [pod("x", cpu=2000), pod("y", 4), pod("z", 1, 500,
                                                                                 models=("B",))])
    run = place(p, "fgd")
    assert run.metrics.placed == 0 and run.metrics.failed == 3


def test_dotprod_prefers_the_node_whose_free_resources_align_least():
    # free (cpu, gpu) a = (128000, 2000): dot 0.5 + 0.03125, score 73;
    # b = (64000, 2000): dot 0.25 + 0.03125, score 85
    p = _packing([node("a", 2, cpu=128000), node("b", 2, cpu=64000)], [pod("x", cpu=64000)])
    assert _where(place(p, "dotprod"), "x")[0] == "b"
    # truncation makes ties: (32000, 2000) and (8000, 2000) both score 98 for a 4-core pod
    p = _packing([node("a", 2, cpu=32000), node("b", 2, cpu=8000)], [pod("x", cpu=4000)])
    assert _where(place(p, "dotprod"), "x")[0] == "a"


def test_bestfit_prefers_the_least_left_over():
    # after the pod: a leaves 1 GPU, b leaves 3 GPUs (same CPU): a scores higher
    p = _packing([node("b", 4), node("a", 2)], [pod("x")])
    assert _where(place(p, "bestfit"), "x")[0] == "a"


def test_clustering_keeps_classes_apart():
    # n1 holds a 2-GPU pod (another class), n2 holds a 1-GPU pod (the same class):
    # the 1-GPU pod joins n2 (75 + fullness) over n1 (0 + fullness) and empty n0 (25)
    nodes = [node("n0", 8), node("n1", 8), node("n2", 8)]
    pods = [pod("two", 2), pod("one", 1), pod("x", 1)]
    p = _packing(nodes, pods)
    run = place(p, "clustering", order="arrival")
    assert _where(run, "two")[0] == "n0"
    assert _where(run, "one")[0] == "n1"  # n0 holds another class: the empty n1 (25) wins
    assert _where(run, "x")[0] == "n1"  # the only-same-class node (75 + 0)


def test_clustering_score_values():
    from heuristics.packing.scores import clustering_score

    assert clustering_score(8000, 0, 0, 1) == 25  # empty 8-GPU node
    assert clustering_score(2000, 0, 0, 1) == 43  # empty 2-GPU node: 25 * 6000 // 8000 + 25
    assert clustering_score(7000, 1, 1, 1) == 78  # 3 + 75
    assert clustering_score(7000, 1, 2, 1) == 53  # 3 + 50
    assert clustering_score(7000, 0, 1, 1) == 3
    assert clustering_score(7000, 0, 0, 0) == 0  # CPU-only pods score 0 everywhere


def test_packing_score_values():
    from heuristics.packing.scores import packing_score

    empty8 = np.full(8, 1000)
    assert packing_score(empty8, 8, 1, 1000) == 25  # max(33 - 8, 8)
    assert packing_score(np.full(1, 1000), 1, 1, 500) == 32
    used = np.array([400, 1000, 1000, 0])
    assert packing_score(used, 2, 1, 1000) == 49  # a free GPU of a used node
    assert packing_score(used, 2, 2, 1000) == 48
    assert packing_score(used, 2, 1, 300) == 96  # the 400 GPU: 100 - (40 // 10)
    assert packing_score(used, 2, 1, 500) == 49  # only a free GPU has room
    assert packing_score(np.array([1000, 0]), 1, 1, 300) == 49
    assert packing_score(used, 2, 0, 0) == 0


def test_dotprod_and_bestfit_score_values():
    from heuristics.packing.scores import bestfit_score, dotprod_score

    # dot = (64000/128000)(16000/128000) + (4000/8000)(1000/8000) = 0.0625 + 0.0625
    assert dotprod_score(64000, 4000, 16000, 1000) == 93  # 100 (1 - 0.125 / 2) = 93.75
    # s = 48000/128000/2 + 3000/8000/2 = 0.375: 100 (1 - 0.375) = 62.5
    assert bestfit_score(64000, 4000, 16000, 1000) == 62


def test_fgd_takes_the_gpu_that_fragments_least():
    # workload: 500-milli shares (freq 0.8), one 400 and one 300 (0.1 each). After the 400
    # the GPUs have [600, 1000] free. The 300 on GPU 0 leaves [300, 1000]: 300 milli no
    # 500 or 400 share can use (fragmentation 0.8*300 + 0.1*300 = 270, score 43); on GPU 1 it
    # leaves [600, 700] (fragmentation 0, score 50). FGD takes GPU 1; best fit GPU 0.
    first, x = pod("first", 1, 400), pod("x", 1, 300)
    p = _packing([node("a", 2)], [first, *(pod(f"s{i}", 1, 500) for i in range(8)), x])
    w = target_workload(p)
    assert list(w.milli) == [500, 400, 300]
    two = _packing([node("a", 2)], [first, x])
    assert _where(place(two, "fgd", workload=w), "x") == ("a", (1,))
    assert _where(place(two, "bestfit"), "x") == ("a", (0,))


@pytest.mark.parametrize("policy", FGD_POLICIES)
def test_every_placement_passes_the_checker(policy):
    for seed in range(5):
        run = place(random_packing(100 + seed, nodes=8, pods=60), policy, seed=seed)
        assert run.metrics.placed + run.metrics.failed == 60


def test_random_is_reproducible_and_uses_its_seed():
    p = random_packing(3, nodes=8, pods=40)
    a, b, c = place(p, "random", seed=1), place(p, "random", seed=1), place(p, "random", seed=2)
    assert a.placement == b.placement
    assert a.placement != c.placement


def test_unknown_policy_and_order_are_refused():
    p = random_packing(0)
    with pytest.raises(ValueError, match="policy"):
        place(p, "fdg")
    with pytest.raises(ValueError, match="order"):
        place(p, "fgd", order="biggest")
