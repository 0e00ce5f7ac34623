"""The checker on every rule of model version 3 (section 12), by hand-made schedules.

Each rule has a feasible schedule a wrong implementation would refuse and an infeasible one it
would accept; each violation names the job, the node, the GPU index, the slot and the resource.
"""

from __future__ import annotations

import math

import pytest

import instances
from instances import InfeasibleScheduleError, Instance, Job, Node, Schedule, Service
from instances.rounding import rounded

NODES = (Node("n0", 2, "T4", 8000, 16384), Node("n1", 2, "V100"), Node("n2", 4))
JOBS = (
    Job("w", 1, 2, 2.0, cpu_milli=1000),
    Job("w2", 1, 2),
    Job("s5", 1, 2, 1.0, gpu_milli=500, cpu_milli=3000),
    Job("s6", 1, 2, 3.0, gpu_milli=600),
    Job("s3", 1, 1, gpu_milli=300),
    Job("v", 2, 1, gpu_models=["V100"]),
    Job("hog", 1, 1, cpu_milli=6000),
    Job("mem", 1, 2, memory_mib=10000),
    Job("mem2", 1, 2, memory_mib=10000),
)


def _inst(demand=(0, 0, 0, 0)) -> Instance:
    return Instance("v3", 8, 4, (Service("s", 1.0, demand),), JOBS, nodes=NODES)


def _check(inst, starts, placement, **kw):
    return instances.evaluate(inst, Schedule(inst.name, starts, placement), **kw)


def _refused(inst, starts, placement, **kw) -> InfeasibleScheduleError:
    with pytest.raises(InfeasibleScheduleError) as err:
        _check(inst, starts, placement, **kw)
    return err.value


# ------------------------------------------------------------ a GPU held whole
def test_a_whole_gpu_job_holds_its_gpu_alone() -> None:
    inst = _inst()
    # the same GPU at different slots: feasible
    m = _check(inst, {"w": 0, "w2": 2}, {"w": {"n0": [0]}, "w2": {"n0": [0]}})
    assert m.jobs_run == 2 and m.batch_gpu_slots == 4
    e = _refused(inst, {"w": 0, "w2": 1}, {"w": {"n0": [0]}, "w2": {"n0": [0]}})
    assert (e.job, e.node, e.gpu, e.slot, e.resource) == ("w2", "n0", 0, 1, "gpu")
    assert "slot 1, node 'n0', GPU 0: job 'w' holds the GPU whole, and job 'w2' runs on it too" in str(e)
    # a shared job on a GPU a whole-GPU job holds, either order
    e = _refused(inst, {"s5": 0, "w": 1}, {"s5": {"n1": [1]}, "w": {"n1": [1]}})
    assert (e.node, e.gpu, e.slot, e.resource) == ("n1", 1, 1, "gpu") and "job 'w' holds" in str(e)
    e = _refused(inst, {"w": 0, "s3": 1}, {"w": {"n2": [3]}, "s3": {"n2": [3]}})
    assert (e.job, e.gpu, e.slot) == ("s3", 3, 1)


def test_shared_jobs_sum_to_at_most_1000_per_gpu_and_slot() -> None:
    inst = _inst()
    # 500 + 300 on one GPU, 600 on the other: feasible (a checker holding shares alone refuses it)
    m = _check(inst, {"s5": 0, "s3": 1, "s6": 0},
               {"s5": {"n0": [0]}, "s3": {"n0": [0]}, "s6": {"n0": [1]}})
    assert m.jobs_run == 3 and m.batch_gpu_slots == 4  # GPU 0 busy at 0 and 1, GPU 1 at 0 and 1
    # 500 + 600 one after the other: feasible
    _check(inst, {"s5": 0, "s6": 2}, {"s5": {"n0": [1]}, "s6": {"n0": [1]}})
    e = _refused(inst, {"s5": 0, "s6": 1}, {"s5": {"n0": [1]}, "s6": {"n0": [1]}})
    assert (e.job, e.node, e.gpu, e.slot, e.amount, e.resource) == ("s6", "n0", 1, 1, 100, "gpu_milli")
    assert "the gpu_milli of shared jobs 's5', 's6' sums to 1100, over 1000" in str(e)
    # 600 + 300 is 900: feasible; with 500 more it is not
    _check(inst, {"s6": 0, "s3": 1}, {"s6": {"n2": [2]}, "s3": {"n2": [2]}})
    e = _refused(inst, {"s6": 0, "s3": 1, "s5": 1},
                 {"s6": {"n2": [2]}, "s3": {"n2": [2]}, "s5": {"n2": [2]}})
    assert e.slot == 1 and e.gpu == 2 and "sums to 1400" in str(e)


def test_gpu_indices_exist_on_their_node() -> None:
    inst = _inst()
    e = _refused(inst, {"w": 0}, {"w": {"n0": [2]}})
    assert (e.job, e.node, e.gpu) == ("w", "n0", 2)
    assert "placement lists GPU 2 of node 'n0', which has GPUs 0..1" in str(e)
    _check(inst, {"w": 0}, {"w": {"n2": [3]}})
    e = _refused(inst, {"v": 0}, {"v": {"n1": [0, 1, 2]}})  # more GPUs than the node has
    assert e.job == "v"
    e = _refused(inst, {"v": 0}, {"v": {"n1": [0]}})  # one GPU of the two it asks
    assert "holds 1 GPUs, the job needs 2" in str(e)


# ------------------------------------------------------------------ models
def test_every_node_a_job_uses_has_a_model_it_accepts() -> None:
    inst = _inst()
    _check(inst, {"v": 0}, {"v": {"n1": [0, 1]}})
    e = _refused(inst, {"v": 0}, {"v": {"n0": [0, 1]}})
    assert (e.job, e.node, e.resource) == ("v", "n0", "model")
    assert "job 'v' asks GPU models ['V100'], but node 'n0' has model 'T4'" in str(e)
    e = _refused(inst, {"v": 1}, {"v": {"n2": [0, 1]}})
    assert e.node == "n2" and e.slot == 1 and "has no model" in str(e)
    _check(inst, {"w": 0, "w2": 0}, {"w": {"n2": [0]}, "w2": {"n1": [0]}})  # no list: any node


# ------------------------------------------------------------ CPU and memory
def test_cpu_per_node_and_slot() -> None:
    inst = _inst()
    # 6000 + 1000 on n0 (8000): feasible
    _check(inst, {"hog": 0, "w": 0}, {"hog": {"n0": [0]}, "w": {"n0": [1]}})
    # 6000 + 3000 at slot 1 is not; s5 (second in the schedule) takes n0 over
    e = _refused(inst, {"hog": 1, "s5": 0}, {"hog": {"n0": [0]}, "s5": {"n0": [1]}})
    assert (e.job, e.node, e.slot, e.amount, e.resource) == ("s5", "n0", 1, 1000, "cpu_milli")
    assert "slot 1, node 'n0': the cpu_milli of the jobs running there sums to 9000, over the node's 8000" in str(e)
    # the same two jobs at different slots, or on different nodes: feasible
    _check(inst, {"hog": 2, "s5": 0}, {"hog": {"n0": [0]}, "s5": {"n0": [1]}})
    _check(inst, {"hog": 1, "s5": 0}, {"hog": {"n1": [0]}, "s5": {"n0": [1]}})  # n1 states no CPU


def test_memory_per_node_and_slot() -> None:
    inst = _inst()
    e = _refused(inst, {"mem": 0, "mem2": 1}, {"mem": {"n0": [0]}, "mem2": {"n0": [1]}})
    assert (e.job, e.node, e.slot, e.amount, e.resource) == ("mem2", "n0", 1, 3616, "memory_mib")
    _check(inst, {"mem": 0, "mem2": 2}, {"mem": {"n0": [0]}, "mem2": {"n0": [1]}})
    _check(inst, {"mem": 0, "mem2": 1}, {"mem": {"n0": [0]}, "mem2": {"n2": [1]}})


def test_a_multi_node_job_charges_each_node_in_proportion_to_its_gpus() -> None:
    # big asks 6 GPUs (more than the largest node: whole nodes): 4 on a, 2 on b or c
    nodes = (Node("a", 4, cpu_milli=4000), Node("b", 2, cpu_milli=1000), Node("c", 2, cpu_milli=2000))

    def inst(cpu: int) -> Instance:
        return Instance("m", 8, 2, (), (Job("big", 6, 1, cpu_milli=cpu),), nodes=nodes)

    # 3000: a takes 2000, b 1000 (exactly its CPU); charging b all 3000 would refuse it
    _check(inst(3000), {"big": 0}, {"big": {"a": [0, 1, 2, 3], "b": [0, 1]}})
    # 3001: b's share is 1000.33..., over 1000 (rounding it down would accept it)
    e = _refused(inst(3001), {"big": 0}, {"big": {"a": [0, 1, 2, 3], "b": [0, 1]}})
    assert (e.job, e.node, e.slot, e.amount, e.resource) == ("big", "b", 0, 1, "cpu_milli")
    assert "sums to 1000.33, over the node's 1000" in str(e)
    _check(inst(3001), {"big": 0}, {"big": {"a": [0, 1, 2, 3], "c": [0, 1]}})
    # the count form (no shared job here) is checked the same way
    e = _refused(inst(3001), {"big": 1}, {"big": {"a": 4, "b": 2}})
    assert (e.node, e.slot, e.resource) == ("b", 1, "cpu_milli")


def test_count_placements_on_version_3_check_models_and_cpu() -> None:
    inst = Instance("c", 4, 2, (), (Job("a", 1, 1, gpu_models=["T4"], cpu_milli=600),
                                    Job("b", 1, 1, cpu_milli=600)),
                    nodes=(Node("x", 2, "T4", 1000), Node("y", 2)))
    _check(inst, {"a": 0, "b": 0}, {"a": {"x": 1}, "b": {"y": 1}})
    assert _refused(inst, {"a": 0}, {"a": {"y": 1}}).resource == "model"
    assert _refused(inst, {"a": 0, "b": 0}, {"a": {"x": 1}, "b": {"x": 1}}).resource == "cpu_milli"


# ------------------------------------------------------------------ the pool row
def test_the_pool_row_counts_busy_gpus() -> None:
    inst = _inst(demand=(6, 6, 6, 6))  # 2 GPUs left for batch work
    # s5 and s3 share GPU 0 (busy once), w holds GPU 1: 2 busy GPUs; the GPUs asked sum to 3
    m = _check(inst, {"s5": 0, "s3": 0, "w": 0},
               {"s5": {"n0": [0]}, "s3": {"n0": [0]}, "w": {"n0": [1]}})
    assert m.batch_gpu_slots == 2 + 2 and m.inference_gpu_slots == 24
    e = _refused(inst, {"s5": 0, "s3": 0, "w": 0, "w2": 1},
                 {"s5": {"n0": [0]}, "s3": {"n0": [0]}, "w": {"n0": [1]}, "w2": {"n1": [0]}})
    assert (e.job, e.slot, e.amount) == ("w2", 1, 1)
    assert "slot 1: 1 GPU(s) over capacity of the pool (batch 3 + inference 6, limit 8" in str(e)


def test_peak_reservation_withholds_the_last_nodes_highest_indices() -> None:
    inst = _inst(demand=(3, 0, 0, 0))  # P = 3: GPUs 1, 2, 3 of n2
    ok = {"w": {"n2": [0]}}
    _check(inst, {"w": 0}, ok, reservation="peak", enforce_reservation=True)
    bad = {"w": {"n2": [1]}}
    _check(inst, {"w": 1}, bad)  # not enforced: the GPU is free at slot 1
    e = _refused(inst, {"w": 1}, bad, reservation="peak", enforce_reservation=True)
    assert (e.job, e.node, e.gpu, e.slot) == ("w", "n2", 1, 1)
    assert "withholds (GPUs 1..3 there take no batch work)" in str(e)
    # P = 5: all of n2 and GPU 1 of n1
    inst5 = _inst(demand=(5, 0, 0, 0))
    _check(inst5, {"w": 0}, {"w": {"n1": [0]}}, reservation="peak", enforce_reservation=True)
    e = _refused(inst5, {"w": 0}, {"w": {"n1": [1]}}, reservation="peak", enforce_reservation=True)
    assert (e.node, e.gpu) == ("n1", 1)


# ------------------------------------------------------------- the figures
def test_value_and_utilization_use_the_gpu_amount() -> None:
    inst = _inst(demand=(1, 2, 0, 0))
    m = _check(inst, {"w": 0, "s5": 0, "s6": 2}, {"w": {"n1": [0]}, "s5": {"n0": [0]}, "s6": {"n0": [0]}})
    # value: w 2.0 * 1 * 2, s5 1.0 * 0.5 * 2, s6 3.0 * 0.6 * 2 (slot_hours 1)
    assert m.value == pytest.approx(4.0 + 1.0 + 3.6, abs=1e-12)
    assert m.batch_gpu_milli_slots == 2000 + 1000 + 1200
    assert m.batch_gpu_slots == 2 + 2 + 2  # busy GPU-slots
    # utilization: (inference 3 + amount 4.2) / (8 * 4)
    assert m.utilization == pytest.approx(7.2 / 32, abs=1e-15)
    assert m.total_value == pytest.approx(8.6 + 3.0)


def test_version_2_figures_are_unchanged() -> None:
    """``a_j = g_j``: value and utilization as version 2 computed them (one rounding at the boundary)."""
    inst = instances.generate("hc-mixed", seed=3, node_gpus=8)
    import heuristics

    res = heuristics.solve(inst, "fifo")
    m = instances.evaluate(inst, res.schedule)
    value = sum(j.priority * j.gpus * j.duration * inst.slot_hours
                for j in inst.jobs if j.name in res.schedule.starts)
    batch = sum(j.gpus * j.duration for j in inst.jobs if j.name in res.schedule.starts)
    assert m.value == rounded(value) and m.batch_gpu_slots == batch
    assert m.utilization == rounded(
        (int(inst.total_demand.sum()) + batch) / (inst.num_gpus * inst.horizon))
    assert m.fgd_fragmentation is None


def test_fgd_fragmentation_by_hand() -> None:
    # n0: 2 T4 GPUs, n1: 2 V100 GPUs; inference 1 GPU in every slot.
    inst = Instance(
        "f", 4, 4, (Service("s", 1.0, (1, 1, 1, 1)),),
        (Job("a", 1, 2, gpu_milli=500, cpu_milli=4000), Job("b", 1, 2, gpu_milli=600),
         Job("c", 2, 1, gpu_models=["V100"], memory_mib=500), Job("d", 1, 1)),
        nodes=(Node("n0", 2, "T4", 8000), Node("n1", 2, "V100", None, 1000)),
    )
    m = _check(inst, {"a": 0, "b": 0}, {"a": {"n0": [0]}, "b": {"n0": [1]}})
    # Slots 0-1: n0 idle [500, 400]; inference takes a whole idle GPU of n1 -> n1 idle [1000, 0].
    # Waiting: c (2 V100 GPUs) and d (1 whole GPU), each 1/2 of the workload.
    #   n0: c cannot (model) 900, d cannot (no whole GPU) 900; n1: c cannot (1 whole GPU) 1000,
    #   d can, no partly idle GPU: 0. Sum 2800 / (1000 * 2) = 1.4 per slot.
    # Slots 2-3: all idle; inference takes from the later node of equal room: n1 [1000, 0].
    #   n0: c 2000 (model), d 0; n1: c 1000, d 0. Sum 3000 / 2000 = 1.5 per slot.
    assert m.fgd_fragmentation == pytest.approx(1.4 + 1.4 + 1.5 + 1.5, abs=1e-12)
    assert m.fragmentation == 0  # the version 2 measure counts whole GPUs only
    # no job waits: nothing is fragmented
    empty = Instance("e", 4, 1, (), (Job("d", 1, 1),), nodes=(Node("n0", 4, "T4"),))
    assert instances.evaluate(empty, Schedule("e", {"d": 0}, {"d": {"n0": [0]}})).fgd_fragmentation == 0.0


def test_fgd_counts_a_cpu_starved_node_as_fragmented() -> None:
    inst = Instance(
        "f", 2, 2, (),
        (Job("hog", 1, 2, cpu_milli=900), Job("wait", 1, 1, gpu_milli=100, cpu_milli=200),
         Job("light", 1, 1, gpu_milli=100)),
        nodes=(Node("n0", 2, "T4", 1000),),
    )
    # hog holds GPU 0 and 900 of the 1000 CPU at slots 0 and 1. GPU 1 is idle (1000): all of
    # it fragmented for wait (200 CPU does not fit in 100), none for light: 1000 / 2 per slot.
    m = _check(inst, {"hog": 0}, {"hog": {"n0": [0]}})
    assert m.fgd_fragmentation == pytest.approx(0.5 + 0.5)
    # light on GPU 1 at slot 0: only wait waits; 900 idle at slot 0, 1000 at slot 1, all fragmented
    m = _check(inst, {"hog": 0, "light": 0}, {"hog": {"n0": [0]}, "light": {"n0": [1]}})
    assert m.fgd_fragmentation == pytest.approx(0.9 + 1.0)


def test_stranded_gpus_reads_index_placements() -> None:
    inst = _inst()
    s = Schedule("v3", {"s5": 0, "s3": 0}, {"s5": {"n0": [0]}, "s3": {"n0": [0]}})
    assert len(instances.stranded_gpus(inst, s)) == inst.horizon
    assert math.isfinite(instances.evaluate(inst, s).fgd_fragmentation)
