"""The checker on nodes: placements, per-node capacity, peak withholding, fragmentation.

Every expected figure is worked out by hand in the comments.
"""

from __future__ import annotations

import pytest

from instances import InfeasibleScheduleError, Instance, Job, Node, Schedule, Service, evaluate


def _inst(services=((1, 2, 3, 1),)) -> Instance:
    """16 GPUs on nodes n0:8, n1:4, n2:4; four slots; inference peak 3."""
    return Instance(
        "x", 16, 4,
        tuple(Service(f"s{i}", 1.0, d) for i, d in enumerate(services)),
        (Job("a", 4, 2), Job("b", 12, 1), Job("c", 2, 1), Job("d", 4, 2)),
        nodes=(Node("n0", 8), Node("n1", 4), Node("n2", 4)),
    )


VALID = Schedule("x", {"a": 0, "b": 2}, {"a": {"n1": 4}, "b": {"n0": 8, "n2": 4}})


def test_a_valid_placement_passes_and_is_valued_as_before() -> None:
    inst = _inst()
    m = evaluate(inst, VALID)
    # a: 4 GPUs x 2 slots, b: 12 x 1 -> value 8 + 12 = 20, batch GPU-slots 20
    assert m.value == 20.0 and m.batch_gpu_slots == 20
    flat = evaluate(inst.replace(nodes=None), Schedule("x", dict(VALID.starts)))
    assert (m.value, m.utilization, m.reserved_idle) == (flat.value, flat.utilization, flat.reserved_idle)


@pytest.mark.parametrize(
    ("starts", "placement", "needle"),
    [
        ({"a": 0}, {}, "job 'a' has no placement"),
        ({"a": 0}, {"c": {"n1": 2}}, "job 'a' has no placement"),
        ({"a": 0}, {"a": {"n9": 4}}, "job 'a': placement names node 'n9'"),
        ({"a": 0}, {"a": {"n1": 3}}, "job 'a': placement holds 3 GPUs, the job needs 4"),
        ({"a": 0}, {"a": {"n1": 5}}, "job 'a': placement puts 5 GPUs on node 'n1', which has 4"),
        ({"a": 0}, {"a": {"n1": 2, "n2": 2}}, "job 'a' (4 GPUs, no more than the largest node's 8) is split"),
        ({"b": 0}, {"b": {"n0": 8, "n1": 2, "n2": 2}}, "must take whole nodes, but holds 2 of node 'n1'"),
        ({"b": 0}, {"b": {"n0": 8, "n1": 3}}, "placement holds 11 GPUs, the job needs 12"),
    ],
)
def test_invalid_placements_name_job_and_reason(starts, placement, needle) -> None:
    with pytest.raises(InfeasibleScheduleError) as err:
        evaluate(_inst(), Schedule("x", starts, placement))
    assert needle in str(err.value)
    assert err.value.job == next(iter(starts))


def test_zero_counts_and_placements_of_jobs_not_started_are_ignored() -> None:
    inst = _inst()
    s = Schedule("x", {"a": 0}, {"a": {"n1": 4, "n0": 0, "n9": 0}, "c": {"n9": 7}, "d": {"n0": 1}})
    assert evaluate(inst, s).jobs_run == 1


def test_placement_on_a_flat_instance_names_a_node_it_does_not_have() -> None:
    flat = _inst().replace(nodes=None)
    assert evaluate(flat, Schedule("x", {"a": 0}, {"a": {"n1": 0}})).jobs_run == 1
    with pytest.raises(InfeasibleScheduleError, match="has no nodes"):
        evaluate(flat, Schedule("x", {"a": 0}, {"a": {"n1": 4}}))


def test_node_capacity_per_slot_names_job_node_and_slot() -> None:
    inst = _inst()
    # a and d (4 GPUs each) both on n1 in slots 0-1: 8 on a 4-GPU node; the pool has room
    s = Schedule("x", {"a": 0, "d": 0}, {"a": {"n1": 4}, "d": {"n1": 4}})
    with pytest.raises(InfeasibleScheduleError) as err:
        evaluate(inst, s)
    assert "slot 0, node 'n1': 4 GPU(s) over the node's capacity" in str(err.value)
    assert (err.value.job, err.value.slot, err.value.amount) == ("d", 0, 4)
    # d one slot later: the overlap is slot 1 only
    s = Schedule("x", {"a": 0, "d": 1}, {"a": {"n1": 4}, "d": {"n1": 4}})
    with pytest.raises(InfeasibleScheduleError) as err:
        evaluate(inst, s)
    assert err.value.slot == 1
    # touching blocks are legal
    assert evaluate(inst, Schedule("x", {"a": 0, "d": 2}, {"a": {"n1": 4}, "d": {"n1": 4}})).jobs_run == 2


def test_pool_constraint_still_holds_on_nodes() -> None:
    inst = _inst()
    # slot 2: b (12) + a... a 4 on n1 starting at 2 -> 16 batch + 3 inference = 19 > 16
    s = Schedule("x", {"a": 2, "b": 2}, {"a": {"n1": 4}, "b": {"n0": 8, "n2": 4}})
    with pytest.raises(InfeasibleScheduleError, match=r"slot 2: 3 GPU\(s\) over capacity of the pool"):
        evaluate(inst, s)


def test_peak_reservation_withholds_from_the_end_of_the_node_list() -> None:
    inst = _inst()  # peak 3: withheld n2: 3, so batch may use 1 GPU of n2 under enforced peak
    on_n2 = Schedule("x", {"c": 0}, {"c": {"n2": 2}})
    assert evaluate(inst, on_n2, "peak").jobs_run == 1  # not enforced: only the node and the pool
    with pytest.raises(InfeasibleScheduleError) as err:
        evaluate(inst, on_n2, "peak", enforce_reservation=True)
    assert "node 'n2': 1 GPU(s) over the node's capacity left by the reservation" in str(err.value)
    assert "limit 1 of 4" in str(err.value)
    assert evaluate(inst, Schedule("x", {"c": 0}, {"c": {"n1": 2}}), "peak",
                    enforce_reservation=True).jobs_run == 1
    # peaks 3 + 3 = 6: n2 in full, then 2 of n1; a 4-GPU job on n1 no longer fits
    two = _inst(services=((1, 2, 3, 1), (3, 0, 0, 0)))
    a_n1 = Schedule("x", {"a": 1}, {"a": {"n1": 4}})
    with pytest.raises(InfeasibleScheduleError, match=r"node 'n1': 2 GPU\(s\) over .* limit 2 of 4"):
        evaluate(two, a_n1, "peak", enforce_reservation=True)
    assert evaluate(two, a_n1, "curve", enforce_reservation=True).jobs_run == 1
    assert evaluate(two, Schedule("x", {"a": 1}, {"a": {"n0": 4}}), "peak",
                    enforce_reservation=True).jobs_run == 1


# ---------------------------------------------------------------- fragmentation
def test_fragmentation_is_zero_on_a_flat_pool() -> None:
    inst = _inst().replace(nodes=None)
    assert evaluate(inst, Schedule("x", {"a": 0})).fragmentation == 0
    assert evaluate(inst, Schedule("x", {})).fragmentation == 0


def test_fragmentation_two_stranded_holes_by_hand() -> None:
    """Two 4-GPU nodes, x and y (3 GPUs each) fill them to 1 free GPU each in slots 0-1.

    z (2 GPUs, 1 slot) is pending in both slots (never run, last start 1). Each
    slot: free 1 + 1 = 2 >= 2, but no node has 2 free: 2 GPUs stranded, so 4
    GPU-slots in all. On one flat pool, z would fit: fragmentation is the
    node split's doing.
    """
    inst = Instance("f", 8, 2, (), (Job("x", 3, 2), Job("y", 3, 2), Job("z", 2, 1)),
                    nodes=(Node("n0", 4), Node("n1", 4)))
    s = Schedule("f", {"x": 0, "y": 0}, {"x": {"n0": 3}, "y": {"n1": 3}})
    assert evaluate(inst, s).fragmentation == 4
    # z released at slot 1: pending in slot 1 only, 2 GPU-slots
    late = inst.replace(jobs=(Job("x", 3, 2), Job("y", 3, 2), Job("z", 2, 1, release=1)))
    assert evaluate(late, s).fragmentation == 2
    # a 1-GPU pending job can use either hole: nothing stranded
    small = inst.replace(jobs=(*inst.jobs, Job("u", 1, 1)))
    assert evaluate(small, s).fragmentation == 0
    # no pending job at all: idle, not fragmented
    assert evaluate(inst.replace(jobs=inst.jobs[:2]), s).fragmentation == 0


def test_fragmentation_counts_inference_in_the_smallest_holes_first() -> None:
    """Inference of 1 GPU in slot 0 takes one of the two 1-GPU holes (ties: the later node).

    Slot 0 then has 1 free GPU < 2 (z does not fit the pool either): 0; slot 1: 2. Total 2.
    """
    inst = Instance("f", 8, 2, (Service("s", 1.0, (1, 0)),),
                    (Job("x", 3, 2), Job("y", 3, 2), Job("z", 2, 1)),
                    nodes=(Node("n0", 4), Node("n1", 4)))
    s = Schedule("f", {"x": 0, "y": 0}, {"x": {"n0": 3}, "y": {"n1": 3}})
    assert evaluate(inst, s).fragmentation == 2
    # inference of 2 in slot 0 on nodes with 1 and 2 free: it fills the 1-hole, then 1 of the
    # 2-hole, leaving 1 free < 2: 0 stranded there; slot 1 has holes 1 and 2: z fits the 2,
    # the 1 on n0 is stranded (1 GPU): total 1
    inst2 = Instance("f", 8, 2, (Service("s", 1.0, (2, 0)),),
                     (Job("x", 3, 2), Job("y", 2, 2), Job("z", 2, 1)),
                     nodes=(Node("n0", 4), Node("n1", 4)))
    s2 = Schedule("f", {"x": 0, "y": 0}, {"x": {"n0": 3}, "y": {"n1": 2}})
    assert evaluate(inst2, s2).fragmentation == 1


def test_fragmentation_with_a_pending_multi_node_job() -> None:
    """Three 4-GPU nodes; a (2 GPUs) on n0 in slot 0; big (8 GPUs) pending.

    Free 2, 4, 4 = 10 >= 8; n1 and n2 are wholly free and hold 8 together, so
    they are usable; n0's 2 free GPUs are not (big takes whole nodes, no
    one-node job pending): 2 stranded.
    """
    inst = Instance("m", 12, 1, (), (Job("a", 2, 1), Job("big", 8, 1)),
                    nodes=(Node("n0", 4), Node("n1", 4), Node("n2", 4)))
    s = Schedule("m", {"a": 0}, {"a": {"n0": 2}})
    assert evaluate(inst, s).fragmentation == 2
    # a pending 2-GPU job makes n0's hole usable
    more = inst.replace(jobs=(*inst.jobs, Job("c", 2, 1)))
    assert evaluate(more, s).fragmentation == 0
    # a pending 4-GPU job does not (2 < 4): still 2
    four = inst.replace(jobs=(*inst.jobs, Job("e", 4, 1)))
    assert evaluate(four, s).fragmentation == 2
