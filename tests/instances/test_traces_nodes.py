"""Node lists for trace import: the openb node CSV, the pool selection rule, placements."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import paths
import pytest

from instances.traces import from_trace, placeable, read_nodes, select_nodes, shipped

DATA = paths.DATA / "traces"
BROKEN = paths.DATA / "broken" / "traces"


def test_read_nodes_sample():
    # node-4 has no GPU and is left out
    assert read_nodes(DATA / "openb_nodes.csv") == [
        ("node-0", 2), ("node-1", 2), ("node-2", 8), ("node-3", 8), ("node-5", 4), ("node-6", 1),
    ]


def test_read_nodes_shipped():
    nodes = read_nodes(shipped("openb:nodes"))
    assert len(nodes) == 1213 and sum(g for _, g in nodes) == 6212
    assert Counter(g for _, g in nodes) == {8: 617, 2: 518, 4: 54, 1: 24}


@pytest.mark.parametrize("text, frag", [
    ("", "empty file"),
    ("sn,model\na,P100\n", "missing column 'gpu'"),
    ("sn,gpu\na,two\n", "line 2: gpu"),
    ("sn,gpu\na,-1\n", "line 2: gpu"),
    ("sn,gpu\na,1\na,2\n", "line 3: sn: node 'a' repeats line 2"),
    ("sn,gpu\na,1,3\n", "line 2: expected 2 fields"),
    ("sn,gpu\na,0\n", "no node with a GPU"),
    ("sn,gpu\n,4\n", "line 2: sn"),
])
def test_read_nodes_errors(tmp_path, text, frag):
    p = tmp_path / "n.csv"
    p.write_text(text)
    with pytest.raises(ValueError, match=frag) as e:
        read_nodes(p)
    assert str(p) in str(e.value)


def test_select_rule_by_hand():
    nodes = [("a", 2), ("b", 8), ("c", 2), ("d", 8), ("e", 1), ("f", 8), ("g", 2), ("h", 1)]
    # N = 32; num_gpus 16: quotas 8-GPU 24*16/32 = 12 -> 1 node (8), 2-GPU 3 -> 1 node,
    # 1-GPU 1 -> 1 node; rest 16 - 11 = 5: least used quota among sizes <= 5 is
    # 2-GPU (3 - 2 = 1 vs 1-GPU 0): one more 2-GPU node, rest 3; then 2-GPU (-1) vs
    # 1-GPU (0): a 1-GPU node, rest 2; then the 2-GPU (-1)... no 1-GPU left (2 of 2 taken):
    # the last 2-GPU node; rest 0.
    # Which: 8-GPU nodes b, d, f -> k = 1: position floor(0.5 * 3 / 1) = 1 -> d;
    # 2-GPU a, c, g -> k = 3: all; 1-GPU e, h -> k = 2: both.
    got = select_nodes(nodes, 16)
    assert got == [("a", 2), ("c", 2), ("d", 8), ("e", 1), ("g", 2), ("h", 1)]
    assert sum(g for _, g in got) == 16


@pytest.mark.parametrize("G", [1, 2, 7, 8, 13, 64, 100, 333, 512, 1024, 4096, 6211, 6212])
def test_select_shipped_exact_and_in_list_order(G):
    nodes = read_nodes(shipped("openb:nodes"))
    got = select_nodes(nodes, G)
    assert sum(g for _, g in got) == G
    pos = {n: i for i, (n, _) in enumerate(nodes)}
    assert [pos[n] for n, _ in got] == sorted(pos[n] for n, _ in got)
    assert got == select_nodes(nodes, G)
    if G >= 512:  # the mix of sizes follows the list's within a few nodes
        mix = Counter(g for _, g in got)
        for s, n in Counter(g for _, g in nodes).items():
            assert abs(mix[s] - n * G / 6212) <= 2


def test_select_spreads_and_falls_back_to_the_earliest_exact_set():
    # 8 of (3, 5, 5): quotas 3-GPU 8*3/13 = 1.8 -> 0, 5-GPU 6.2 -> 1 node; rest 3: a 3-GPU
    # node. Of the two 5-GPU nodes the one at floor(0.5 * 2 / 1) = 1: z.
    nodes = [("x", 3), ("y", 5), ("z", 5)]
    assert select_nodes(nodes, 8) == [("x", 3), ("z", 5)]
    assert select_nodes(nodes, 10) == [("y", 5), ("z", 5)]
    # 8 of (3, 3, 8): quotas 3-GPU 8*6/14 = 3.4 -> 1 node, 8-GPU 4.6 -> 0; rest 5: one more
    # 3-GPU node, rest 2: no size fits. The earliest set summing to 8 is {c}.
    assert select_nodes([("a", 3), ("b", 3), ("c", 8)], 8) == [("c", 8)]


@pytest.mark.parametrize("nodes, G, frag", [
    ([("a", 8), ("b", 8)], 4, "no set of whole nodes"),
    ([("a", 8), ("b", 8)], 12, "no set of whole nodes"),
    ([("a", 8), ("b", 8)], 17, "more than the 16 GPUs"),
    ([("a", 8)], 0, "num_gpus"),
    ([], 4, "empty"),
    ([("a", 8), ("a", 8)], 8, "duplicate"),
    ([("a", 0)], 1, "gpus must be"),
])
def test_select_errors(nodes, G, frag):
    with pytest.raises(ValueError, match=frag):
        select_nodes(nodes, G)


def _brute_placeable(sizes, g):
    if 1 <= g <= max(sizes):
        return True
    return any(sum(c) == g for r in range(1, len(sizes) + 1)
               for c in itertools.combinations(sizes, r))


def test_placeable_against_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(60):
        sizes = [int(x) for x in rng.choice([1, 2, 4, 8, 3], size=rng.integers(1, 7))]
        nodes = [(f"n{i}", s) for i, s in enumerate(sizes)]
        g = np.arange(-1, sum(sizes) + 3)
        assert placeable(nodes, g).tolist() == [_brute_placeable(sizes, int(x)) for x in g]


def test_placeable_by_hand():
    nodes = [("a", 8), ("b", 8), ("c", 4)]
    assert placeable(nodes, [1, 8, 9, 12, 16, 20, 21, 0]).tolist() == [
        True, True, False, True, True, True, False, False]


def test_import_with_nodes():
    pods = DATA / "openb_pods.csv"
    # nodes 2, 2, 8, 8, 4, 1 = 25 GPUs: pod-i's 16 = 8 + 8 has a placement now
    inst = from_trace("openb", pods, nodes=DATA / "openb_nodes.csv")
    assert inst.num_gpus == 25
    assert "pod-i" in [j.name for j in inst.jobs]
    assert inst.meta["import"]["nodes"][0] == ["node-0", 2]
    assert inst.nodes is not None and inst.nodes[0].name == "node-0"
    assert sum(n.gpus for n in inst.nodes) == inst.num_gpus
    # 10 GPUs of it: quota 8-GPU 16*10/25 = 6.4 -> 0, 4-GPU 1.6 -> 0, 2-GPU 1.6 -> 0,
    # 1-GPU 0.4 -> 0; rest 10: 8-GPU (6.4) -> rest 2; then 2-GPU (1.6) -> rest 0; of two
    # nodes of a size, the one at floor(0.5 * 2 / 1) = 1: node-1 and node-3
    inst = from_trace("openb", pods, nodes=DATA / "openb_nodes.csv", num_gpus=10)
    assert inst.meta["import"]["nodes"] == [["node-1", 2], ["node-3", 8]]
    assert [(n.name, n.gpus) for n in inst.nodes] == [("node-1", 2), ("node-3", 8)]
    # pod-d (8 GPUs) fits node-2; pod-i (16) is more than the pool
    assert inst.meta["import"]["skipped"]["too_large"] == 1


def test_num_gpus_below_what_the_node_list_allows():
    with pytest.raises(ValueError, match="num_gpus: no set of whole nodes") as e:
        from_trace("openb", DATA / "openb_pods.csv", nodes=BROKEN / "nodes_8.csv", num_gpus=4)
    assert "nodes_8.csv" in str(e.value)
