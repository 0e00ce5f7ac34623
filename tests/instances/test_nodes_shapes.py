"""Node shapes: uniform nodes with a ragged last one, explicit lists, the openb mix, the price."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

import instances
from instances import Result, Schedule, Status, openb_node_mix, price_of_topology, with_nodes
from instances.nodes import openb_node_counts

DATA = Path(instances.__file__).parent / "data" / "openb"


def test_uniform_nodes_and_a_ragged_last_node() -> None:
    inst = instances.generate("medium", seed=0)  # 15 GPUs
    on = with_nodes(inst, 8)
    assert on.node_gpus.tolist() == [8, 7]
    assert [n.name for n in on.nodes or ()] == ["node-0", "node-1"]
    assert on.replace(nodes=None) == inst and on.meta["node_gpus"] == 8
    assert with_nodes(inst, 12).node_gpus.tolist() == [12, 3]
    assert with_nodes(inst, [4, 4, 4, 3]).node_gpus.tolist() == [4, 4, 4, 3]  # 8s take two 4s


def test_with_nodes_refuses_bad_shapes() -> None:
    inst = instances.generate("medium", seed=0)
    with pytest.raises(ValueError, match="node_gpus: must be an integer >= 1"):
        with_nodes(inst, 0)
    with pytest.raises(ValueError, match="node_gpus: must be an integer"):
        with_nodes(inst, "8")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"nodes: the nodes' GPUs sum to 14"):
        with_nodes(inst, [8, 6])
    with pytest.raises(ValueError, match=r"node_gpus\[1\]"):
        with_nodes(inst, [15, 0])
    # 8-GPU jobs on 4-GPU nodes are fine (two whole nodes); a 6-GPU job on 4s is not
    seed = instances.generate("seed-training-heavy", seed=0)
    assert 6 in seed.gpus.tolist()
    with pytest.raises(ValueError, match=r"jobs\[\d+\]\.gpus: job '.*' has no valid placement"):
        with_nodes(seed, 4)


def test_openb_counts_match_the_shipped_file() -> None:
    rows = list(csv.DictReader((DATA / "openb_node_list_gpu_node.csv").read_text().splitlines()))
    assert len(rows) == 1213
    assert openb_node_counts() == {1: 24, 2: 518, 4: 54, 8: 617}
    assert sum(int(r["gpu"]) for r in rows) == 6212
    assert "Beware of Fragmentation" in (DATA / "README.md").read_text()


@pytest.mark.parametrize("G", [1, 3, 8, 16, 24, 64, 256, 1024])
def test_openb_mix_sums_to_the_pool_and_follows_the_shares(G: int) -> None:
    sizes = openb_node_mix(G, seed=0)
    assert sum(sizes) == G and set(sizes) <= {1, 2, 4, 8}
    assert openb_node_mix(G, seed=0) == sizes  # deterministic
    assert sorted(openb_node_mix(G, seed=1)) == sorted(sizes)  # the seed only orders
    if G >= 64:  # GPU shares within a node of the cluster's (79% on 8s, 17% on 2s)
        on8 = sum(s for s in sizes if s == 8) / G
        on2 = sum(s for s in sizes if s == 2) / G
        assert abs(on8 - 4936 / 6212) <= 8 / G and abs(on2 - 1036 / 6212) <= 2 / G + 8 / G


def test_openb_mix_by_hand() -> None:
    """256 GPUs: shares 4936, 1036, 216, 24 of 6212 -> 203.4, 42.7, 8.9, 0.99 GPUs ->
    floors 25 x 8, 21 x 2, 2 x 4, 0 x 1 (250 GPUs); 6 left: 1 (remainder 0.99; 8's
    3.4 does not fit), then 4 (0.9), then 1 again: 25 x 8, 3 x 4, 21 x 2, 2 x 1."""
    from collections import Counter

    assert Counter(openb_node_mix(256)) == {8: 25, 4: 3, 2: 21, 1: 2}
    with pytest.raises(ValueError, match="num_gpus"):
        openb_node_mix(0)


def _res(value: float, ub: float | None) -> Result:
    return Result("m", Status.OPTIMAL if ub == value else Status.FEASIBLE, Schedule("x"), value, ub)


def test_price_of_topology_brackets() -> None:
    assert price_of_topology(_res(100, 100), _res(90, 90)) == {"low": 10, "high": 10, "price": 10}
    assert price_of_topology(_res(100, 104), _res(90, 95)) == {"low": 5, "high": 14, "price": None}
    assert price_of_topology(_res(100, 100), _res(90, None)) == {"low": None, "high": 10, "price": None}
    assert price_of_topology(_res(90, 90), _res(80, 120))["low"] == 0.0
