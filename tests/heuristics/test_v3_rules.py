"""Each rule of section 12 the heuristics apply, on a hand-built case worked out here.

Every case states its answer, checks that the heuristics give it (and that the
checker passes their schedule), and that the plain reference made wrong in that
one rule (tests/oracles/reference_v3.py, ``mutation=``) gives another answer: the
case tells the rule from a plausible wrong one.
"""

from __future__ import annotations

import numpy as np
import pytest
from reference_v3 import decode_ref, fifo_ref

import heuristics
import instances
from instances import Instance, Job, Node, Service

Where = dict[str, tuple[int, dict[str, list[int]]]]


def _inst(nodes: list[Node], jobs: list[Job], demand: tuple[int, ...] | None = None,
          T: int = 6) -> Instance:
    services = () if demand is None else (Service("svc", 1.0, demand),)
    return Instance("hand-v3", sum(n.gpus for n in nodes), T, services, tuple(jobs),
                    nodes=tuple(nodes))


def _got(res: instances.Result) -> Where:
    s = res.schedule
    return {j: (t, {n: list(v) for n, v in s.indices[j].items()}) for j, t in s.starts.items()}


def _ref(inst: Instance, out: tuple[list[int], dict]) -> Where:
    start, where = out
    nodes = inst.nodes
    assert nodes is not None
    got: Where = {}
    for j, s in enumerate(start):
        if s >= 0:
            ks, gs = where[j]
            on = {nodes[k].name: (list(gs) if len(ks) == 1 else list(range(nodes[k].gpus)))
                  for k in ks}
            got[inst.jobs[j].name] = (s, on)
    return got


def _fifo(inst: Instance, expected: Where, mutation: str, reservation: str = "peak") -> None:
    res = heuristics.fifo.fifo(inst, reservation=reservation)
    assert _got(res) == expected
    assert _ref(inst, fifo_ref(inst, reservation)) == expected
    assert _ref(inst, fifo_ref(inst, reservation, mutation)) != expected
    instances.evaluate(inst, res.schedule, reservation, enforce_reservation=True)


def _list(inst: Instance, rule: str, expected: Where, wrong: Where | None = None,
          mutation: str = "") -> None:
    order = list(range(inst.num_jobs))
    place = heuristics.placement.new_place(inst)
    start = heuristics.listsched.list_starts(inst, np.array(order), placement=rule, place=place)
    res = heuristics.results.finish(inst, "list", start, reservation="curve", started_at=0.0,
                                    place=place)
    assert _got(res) == expected
    assert _ref(inst, decode_ref(inst, order, "curve", rule)) == expected
    if mutation:
        assert _ref(inst, decode_ref(inst, order, "curve", rule, mutation=mutation)) != expected
    if wrong is not None:
        assert wrong != expected


def test_a_whole_gpu_job_takes_the_lowest_indexed_gpus_free_for_its_run() -> None:
    # one node of 4. a takes GPUs 0, 1 over slots 0-1; b GPU 2 over 0-3; c (2 GPUs)
    # finds only GPU 3 free at slot 0, waits; from slot 2 GPUs 0, 1, 3 are free: 0 and 1
    inst = _inst([Node("n0", 4)], [Job("a", 2, 2, cpu_milli=1), Job("b", 1, 4), Job("c", 2, 2)])
    _fifo(inst, {"a": (0, {"n0": [0, 1]}), "b": (0, {"n0": [2]}), "c": (2, {"n0": [0, 1]})},
          "highest-index")


def test_a_shared_job_takes_the_lowest_indexed_gpu_with_room_partly_used_or_free() -> None:
    # s1 (600) on GPU 0; s2 (400) fits beside it on GPU 0 (partly used, lowest index);
    # then w (whole) finds GPU 1 free at slot 0. Shares only on free GPUs would send s2 to
    # GPU 1 and w to slot 2.
    inst = _inst([Node("n0", 2)], [Job("s1", 1, 3, gpu_milli=600), Job("s2", 1, 2, gpu_milli=400),
                                   Job("w", 1, 3)])
    _fifo(inst, {"s1": (0, {"n0": [0]}), "s2": (0, {"n0": [0]}), "w": (0, {"n0": [1]})},
          "free-gpus-only")


def test_the_pool_counts_busy_gpus_once_however_many_shares_run_on_them() -> None:
    # 2 GPUs, inference takes 1 at every slot (curve): 1 GPU for batch work. s1 and s2
    # (500 each) share GPU 0: one busy GPU, so both run at slot 0. w (whole) finds no GPU
    # in the pool until they end at slot 2, and takes GPU 0. Counting a GPU per job would
    # push s2 to slot 2.
    inst = _inst([Node("n0", 2)], [Job("s1", 1, 2, gpu_milli=500), Job("s2", 1, 2, gpu_milli=500),
                                   Job("w", 1, 2)], demand=(1,) * 6)
    _fifo(inst, {"s1": (0, {"n0": [0]}), "s2": (0, {"n0": [0]}), "w": (2, {"n0": [0]})},
          "pool-per-job", reservation="curve")


def test_a_job_runs_only_on_a_node_of_a_model_it_accepts() -> None:
    # x asks B: n0 (A) has room first in list order but the wrong model; n2 has no model
    inst = _inst([Node("n0", 1, "A"), Node("n1", 1, "B"), Node("n2", 1)],
                 [Job("x", 1, 1, gpu_models=["B"]), Job("y", 1, 1, gpu_models=["A", "B"])])
    _fifo(inst, {"x": (0, {"n1": [0]}), "y": (0, {"n0": [0]})}, "ignore-model")


@pytest.mark.parametrize("field, mutation", [("cpu_milli", "ignore-cpu"),
                                             ("memory_mib", "ignore-memory")])
def test_cpu_and_memory_of_the_jobs_on_a_node_stay_within_the_node(field: str,
                                                                   mutation: str) -> None:
    # n0 has 2000 of it, n1 8000. a (1500) on n0; b (1000) finds a GPU on n0 but only 500
    # left there, so goes to n1; c (500) fits beside a on n0
    nodes = [Node("n0", 2, cpu_milli=2000, memory_mib=2000),
             Node("n1", 2, cpu_milli=8000, memory_mib=8000)]
    jobs = [Job("a", 1, 3, **{field: 1500}), Job("b", 1, 3, **{field: 1000}),
            Job("c", 1, 3, **{field: 500})]
    _fifo(_inst(nodes, jobs), {"a": (0, {"n0": [0]}), "b": (0, {"n1": [0]}),
                               "c": (0, {"n0": [1]})}, mutation)


def test_peak_withholds_the_last_nodes_highest_indexed_gpus() -> None:
    # peak 1: GPU 1 of n1 is withheld, n1 keeps GPU 0. a fills n0; the share s goes to n1's
    # GPU 0. Withholding the lowest index would put it on GPU 1.
    inst = _inst([Node("n0", 1), Node("n1", 2)],
                 [Job("a", 1, 2), Job("s", 1, 2, gpu_milli=300)], demand=(1, 0, 0, 0, 0, 0))
    _fifo(inst, {"a": (0, {"n0": [0]}), "s": (0, {"n1": [0]})}, "peak-lowest-index")


def test_a_job_on_whole_nodes_charges_each_in_proportion_to_its_gpus_there() -> None:
    # m (4 GPUs, CPU 4000) on two 2-GPU nodes charges each 2000: n0 (1000) cannot hold its
    # part, n1 and n2 (3000) can; charged in full (4000) no node could
    nodes = [Node("n0", 2, cpu_milli=1000), Node("n1", 2, cpu_milli=3000),
             Node("n2", 2, cpu_milli=3000)]
    inst = _inst(nodes, [Job("m", 4, 2, cpu_milli=4000), Job("b", 1, 1, cpu_milli=500)])
    # m first (list order), then b on n0, the first node with room
    _fifo(inst, {"m": (0, {"n1": [0, 1], "n2": [0, 1]}), "b": (0, {"n0": [0]})},
          "multi-full-charge")
    _fifo(inst, {"m": (0, {"n1": [0, 1], "n2": [0, 1]}), "b": (0, {"n0": [0]})}, "ignore-cpu")


def test_best_fit_takes_the_node_and_the_gpu_left_with_the_least_room() -> None:
    # the node: y (whole) on n0 (4 GPUs) leaves 3000 milli, on n1 (2 GPUs) 1000: n1;
    # first-fit takes n0, the first in list order
    inst = _inst([Node("n0", 4), Node("n1", 2)], [Job("y", 1, 2, cpu_milli=1)])
    _list(inst, "best-fit", {"y": (0, {"n1": [0]})})
    _list(inst, "first-fit", {"y": (0, {"n0": [0]})}, wrong={"y": (0, {"n1": [0]})})
    # the GPU: w holds GPU 0 at slot 0, so s1 (500) runs on GPU 1 over slots 0-2; x (400)
    # from slot 1 leaves 600 on GPU 0 or 100 on GPU 1: best-fit GPU 1, first-fit GPU 0
    inst = _inst([Node("n0", 2)], [Job("w", 1, 1), Job("s1", 1, 3, gpu_milli=500),
                                   Job("x", 1, 2, release=1, gpu_milli=400)])
    best = {"w": (0, {"n0": [0]}), "s1": (0, {"n0": [1]}), "x": (1, {"n0": [1]})}
    _list(inst, "best-fit", best)
    _list(inst, "first-fit", {**best, "x": (1, {"n0": [0]})}, wrong=best)


def test_frag_adds_the_least_fragmentation_for_the_jobs_still_to_place() -> None:
    # FGD (Weng et al., ATC'23). x (whole, 1 GPU) on n0 (2 GPUs) or n1 (4 GPUs); the jobs
    # still to place ask 2 whole GPUs (y, z). On n0 it leaves 1 GPU the 2-GPU jobs cannot
    # use (fragmentation 1000 x 2 jobs); on n1 3 GPUs they can (0): frag takes n1, where
    # best-fit takes n0 (least room). y then takes n0: on n1 it would leave 1 GPU that z
    # cannot use (+1000), on n0 nothing idle (0). z takes n1, the only room left.
    nodes = [Node("n0", 2), Node("n1", 4)]
    jobs = [Job("x", 1, 3, cpu_milli=1), Job("y", 2, 3), Job("z", 2, 3)]
    inst = _inst(nodes, jobs)
    frag = {"x": (0, {"n1": [0]}), "y": (0, {"n0": [0, 1]}), "z": (0, {"n1": [1, 2]})}
    best = {"x": (0, {"n0": [0]}), "y": (0, {"n1": [0, 1]}), "z": (0, {"n1": [2, 3]})}
    _list(inst, "frag", frag)
    _list(inst, "best-fit", best, wrong=frag)


def test_frag_takes_the_gpu_of_a_share_that_fragments_least() -> None:
    # w (whole) holds GPU 0 at slot 0, so s1 (500) runs on GPU 1 over 0-2. x (400) from
    # slot 1: GPU 0 (1000 free) or GPU 1 (500 free). The job still to place asks a whole
    # GPU: x on GPU 0 leaves no whole GPU (1100 idle milli it cannot use, from 500); on GPU 1
    # it leaves GPU 0 whole and 100 short: frag takes GPU 1, first-fit GPU 0.
    inst = _inst([Node("n0", 2)], [Job("w", 1, 1), Job("s1", 1, 3, gpu_milli=500),
                                   Job("x", 1, 2, release=1, gpu_milli=400),
                                   Job("y", 1, 1, release=4)])
    frag = {"w": (0, {"n0": [0]}), "s1": (0, {"n0": [1]}), "x": (1, {"n0": [1]}),
            "y": (4, {"n0": [0]})}
    first = {"w": (0, {"n0": [0]}), "s1": (0, {"n0": [1]}), "x": (1, {"n0": [0]}),
             "y": (4, {"n0": [0]})}
    _list(inst, "frag", frag)
    _list(inst, "first-fit", first, wrong=frag)


def test_gpus_fixed_as_jobs_are_placed_out_of_time_order_can_block_what_counts_allow() -> None:
    # a (slot 0) and b (slot 2) on GPU 0, then c (slots 0-1) on GPU 1: d (2 slots from 1)
    # finds one GPU free at slot 1 (GPU 0) and one at slot 2 (GPU 1), but neither for
    # both, so it waits for slot 2 (GPU 1). The version 2 count rule starts it at 1. FIFO places
    # in order of start, where a GPU free at the start stays free, so there the two agree.
    jobs = [Job("a", 1, 1), Job("b", 1, 1, release=2), Job("c", 1, 2), Job("d", 1, 2, release=1)]
    v2 = _inst([Node("n0", 2)], jobs, T=5)
    v3 = _inst([Node("n0", 2)], [Job(j.name, 1, j.duration, release=j.release, cpu_milli=1)
                                 for j in jobs], T=5)
    order = np.arange(4)
    assert heuristics.listsched.list_starts(v3, order).tolist() == [0, 2, 0, 2]
    assert heuristics.listsched.list_starts(v2, order).tolist() == [0, 2, 0, 1]
    assert decode_ref(v3, [0, 1, 2, 3])[0] == [0, 2, 0, 2]
    assert (heuristics.fifo.fifo_starts(v3).tolist() == heuristics.fifo.fifo_starts(v2).tolist())
