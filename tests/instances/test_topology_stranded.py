"""``instances.stranded_gpus``: the per-slot figure that ``Metrics.fragmentation`` sums."""

from __future__ import annotations

import pytest

import gpusched
import instances
from instances import InfeasibleScheduleError, Instance, Job, Node, Schedule, Service, evaluate


def test_stranded_by_slot_by_hand() -> None:
    """Holes of 1 (n0) and 2 (n1) GPUs; z (2 GPUs) pending in slots 0 and 1.

    Slot 0: inference 2 fills the 1-hole, then one GPU of the 2-hole: 1 free GPU,
    less than z needs, so 0. Slot 1: no inference, z fits n1's 2, n0's 1 is stranded.
    """
    inst = Instance("f", 8, 2, (Service("s", 1.0, (2, 0)),),
                    (Job("x", 3, 2), Job("y", 2, 2), Job("z", 2, 1)),
                    nodes=(Node("n0", 4), Node("n1", 4)))
    s = Schedule("f", {"x": 0, "y": 0}, {"x": {"n0": 3}, "y": {"n1": 2}})
    assert instances.stranded_gpus(inst, s) == [0, 1]
    two = Instance("g", 8, 2, (), (Job("x", 3, 2), Job("y", 3, 2), Job("z", 2, 1)),
                   nodes=(Node("n0", 4), Node("n1", 4)))
    s2 = Schedule("g", {"x": 0, "y": 0}, {"x": {"n0": 3}, "y": {"n1": 3}})
    assert instances.stranded_gpus(two, s2) == [2, 2]


def test_zero_on_a_flat_pool_and_infeasible_refused() -> None:
    inst = instances.generate("hc-mixed", seed=3)
    res = gpusched.solve(inst, "fifo")
    assert instances.stranded_gpus(inst, res.schedule) == [0] * inst.horizon
    on_nodes = instances.generate("hc-mixed", seed=3, node_gpus=8)
    with pytest.raises(InfeasibleScheduleError, match="no placement"):
        instances.stranded_gpus(on_nodes, res.schedule)


@pytest.mark.parametrize("family", ["seed-training-heavy", "hc-mixed", "hc-multi-service"])
@pytest.mark.parametrize("shape", [8, "openb", [4, 4, 4, 4]])
def test_the_sum_is_the_metric(family, shape) -> None:
    total, single = 0, True
    for seed in range(3):
        try:
            inst = instances.generate(family, seed=seed, node_gpus=shape)
        except ValueError as e:  # a shape some family's jobs do not fit
            assert "node_gpus" in str(e)
            continue
        single &= inst.num_nodes == 1
        for method, params in (("fifo", {}), ("list", {"placement": "best-fit"}),
                               ("local-search", {"placement": "frag", "iterations": 50})):
            res = gpusched.solve(inst, method, **params)
            per_slot = instances.stranded_gpus(inst, res.schedule)
            assert len(per_slot) == inst.horizon and min(per_slot) >= 0
            assert sum(per_slot) == evaluate(inst, res.schedule).fragmentation
            assert sum(per_slot) == res.metrics.fragmentation
            total += sum(per_slot)
    if single:  # one node holds the pool: nothing can be stranded
        assert total == 0


def test_small_nodes_strand_gpus_under_fifo() -> None:
    """16 GPUs on four 4-GPU nodes: FIFO leaves holes that the waiting jobs cannot use."""
    per_seed = []
    for seed in range(3):
        inst = instances.generate("hc-multi-service", seed=seed, node_gpus=[4, 4, 4, 4])
        per_seed.append(sum(instances.stranded_gpus(inst, gpusched.solve(inst, "fifo").schedule)))
    assert sum(per_seed) > 0
