"""FGD's fragmentation measure and target workload, on hand-worked cases."""

from __future__ import annotations

import numpy as np
import pytest
from packing_cases import node, pod

from instances.packing import Packing, TargetWorkload, node_frag, nodes_frag, target_workload


def _workload(rows, models=("A", "B")):
    """rows: (cpu, milli, gpus, models, freq)."""
    allowed = np.array([[not r[3] or m in r[3] for m in models] for r in rows])
    return TargetWorkload(
        cpu=np.array([r[0] for r in rows]), milli=np.array([r[1] for r in rows]),
        gpus=np.array([r[2] for r in rows]), allowed=allowed,
        freq=np.array([r[4] for r in rows], dtype=float), count=np.ones(len(rows), dtype=int),
        models=tuple(r[3] for r in rows))


W = _workload([
    (500, 0, 0, (), 0.2),         # CPU-only: every idle milli counts (2300 x 0.2 = 460)
    (1000, 500, 1, (), 0.3),      # fits a free GPU: the 300 + 0 below 500 (300 x 0.3 = 90)
    (1000, 1000, 2, (), 0.2),     # two free GPUs: the 300 below 1000 (300 x 0.2 = 60)
    (4000, 1000, 1, (), 0.2),     # lacks CPU: all idle (2300 x 0.2 = 460)
    (100, 200, 1, ("B",), 0.1),   # not on model A: all idle (2300 x 0.1 = 230)
])


def _frag(cpu_left, left, model=0, w=W):
    return node_frag(cpu_left, np.array(left, dtype=np.int64), model, w.cpu, w.milli, w.gpus,
                     w.allowed, w.freq)


def test_node_frag_hand_worked():
    assert _frag(2000, [1000, 1000, 300, 0]) == pytest.approx(460 + 90 + 60 + 460 + 230)
    # on model B the last shape fits: 300 + 0 are below 200? no: only the 0 GPU, 0 milli
    assert _frag(2000, [1000, 1000, 300, 0], model=1) == pytest.approx(460 + 90 + 60 + 460)
    # one free GPU only: the 2-GPU shape cannot fit, so all 1300 idle count for it
    assert _frag(2000, [1000, 300, 0, 0]) == pytest.approx(
        0.2 * 1300 + 0.3 * 300 + 0.2 * 1300 + 0.2 * 1300 + 0.1 * 1300)
    assert _frag(2000, [0, 0]) == 0.0  # nothing idle, nothing fragmented
    # enough CPU for every shape: the 1-GPU 4000-CPU shape now sees only the 300 below it
    assert _frag(8000, [1000, 1000, 300, 0]) == pytest.approx(460 + 90 + 60 + 0.2 * 300 + 230)


def test_nodes_frag_matches_node_frag():
    left = np.array([[1000, 1000, 300, 0], [1000, 200, 0, 0]], dtype=np.int64)
    got = nodes_frag(np.array([2000, 500]), left, np.array([4, 2]), np.array([0, 1]), W.cpu,
                     W.milli, W.gpus, W.allowed, W.freq)
    assert got[0] == pytest.approx(_frag(2000, [1000, 1000, 300, 0]))
    assert got[1] == pytest.approx(_frag(500, [1000, 200], model=1))


def test_target_workload_covers_95_percent_most_frequent_first():
    pods = ([pod(f"x{i}", 1, 500, cpu=1000) for i in range(10)]
            + [pod(f"y{i}", 1, cpu=2000) for i in range(5)]
            + [pod(f"z{i}", 0, cpu=3000) for i in range(3)]
            + [pod("w", 2, cpu=9000), pod("v", 2, cpu=8000)])
    w = target_workload(Packing("t", (node("a", 8),), tuple(pods)))
    # 19 of the 20 pods: x (10), y (5), z (3), then the tie w/v goes to the larger CPU (w)
    assert list(zip(w.cpu, w.milli, w.gpus)) == [(1000, 500, 1), (2000, 1000, 1), (3000, 0, 0),
                                                 (9000, 1000, 2)]
    assert w.freq.tolist() == pytest.approx([10 / 19, 5 / 19, 3 / 19, 1 / 19])
    assert w.count.tolist() == [10, 5, 3, 1]


def test_target_workload_keeps_models_apart():
    pods = [pod("a", 1, 500, models=("B",)), pod("b", 1, 500), pod("c", 1, 500)]
    w = target_workload(Packing("t", (node("n", 2, model="A"), node("m", 2, model="B")),
                                tuple(pods)), coverage=1.0)
    assert w.models == ((), ("B",))
    assert w.allowed.tolist() == [[True, True], [False, True]]
    with pytest.raises(ValueError, match="coverage"):
        target_workload(Packing("t", (node("n", 1),), tuple(pods)), coverage=0)


@pytest.mark.parametrize("freq", ["counts", "shares"])
def test_moved_frag_is_node_frag_after_the_move(freq):
    """The per-shape counts of a node and the frag after n GPUs move from one free milli to
    another, against node_frag on the node after: equal, float for float (the same terms)."""
    from instances.packing.frag import moved_frag, node_frag_shapes

    rng = np.random.default_rng(7)
    for _ in range(300):
        S, ng = int(rng.integers(1, 12)), int(rng.integers(1, 9))
        milli = rng.choice([0, 100, 250, 500, 1000], size=S)
        w = TargetWorkload(
            cpu=rng.integers(0, 5, size=S) * 1000, milli=milli,
            gpus=np.where(milli == 1000, rng.integers(1, 4, size=S), np.minimum(milli, 1)),
            allowed=rng.random((S, 2)) < 0.8,
            freq=(rng.integers(0, 9, size=S) if freq == "counts" else rng.random(S)),
            count=np.ones(S, dtype=int), models=((),) * S)
        left = rng.choice([0, 100, 300, 500, 750, 1000], size=ng).astype(np.int64)
        cpu, model = int(rng.integers(0, 6000)), int(rng.integers(0, 2))
        args = (w.cpu, w.milli, w.gpus, w.allowed, w.freq)
        room, short = np.zeros(S, dtype=np.int64), np.zeros(S, dtype=np.int64)
        assert node_frag_shapes(cpu, left, model, *args, room, short) == node_frag(
            cpu, left, model, *args)
        for i in range(ng):  # a share of m on GPU i
            m = int(rng.integers(1, left[i] + 1)) if left[i] else 0
            after = left.copy()
            after[i] -= m
            assert moved_frag(cpu - 500, left, 1, int(left[i]), int(after[i]), model, *args,
                              room, short) == node_frag(cpu - 500, after, model, *args)
        free = np.flatnonzero(left == 1000)
        for g in range(1, free.size + 1):  # g whole GPUs
            after = left.copy()
            after[free[:g]] = 0
            assert moved_frag(cpu, left, g, 1000, 0, model, *args, room, short) == node_frag(
                cpu, after, model, *args)
