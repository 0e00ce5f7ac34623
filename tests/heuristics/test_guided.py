"""Section 17: the ``guided`` rule on hand-built packings whose answer is worked out here, its
compiled loop held to the rule run through the plain loop, every placement through the
checker, its registration, the command line and the rule in time."""

from __future__ import annotations

import json

import numpy as np
import paths
import pytest
from packing_cases import node, pod, random_packing

import gpusched
import instances
from gpusched.cli import main
from heuristics.guided import GUIDED, Guided, guided_workload
from heuristics.packing import check_policy, place
from heuristics.packing.custom import run_plain
from heuristics.placement_rules import PLACEMENT_RULES, resolve_placement
from instances.packing import Packing, evaluate_placement, openb_packing, save_packing

BASE_PACKING = paths.DATA / "broken" / "packing-base" / "packing.json"


def _nodes(run) -> list[str]:
    return [run.placement.assign[p][0] if p in run.placement.assign else "-"
            for p in sorted(run.placement.assign)]


def test_a_cpu_only_pod_goes_where_it_strands_no_gpu():
    """n0: 2 GPUs and 16 cores, n1: 1 GPU and 64 cores; a CPU-only pod of 8 cores, then three
    1-GPU pods of 8 cores. The workload's CPU per GPU milli is r = 32000 / 3000 = 10.67.
    The CPU-only pod on n0 would strand 2000 - 8000 / r = 1250 milli where 500 were
    (score -750); on n1 it strands none before or after (score 0); FGD's fragmentation is
    unchanged on both (the 1-GPU shape still fits, the CPU-only shape counts all idle milli
    either way). So it goes to n1, the 1-GPU pods fill n0 (8 + 8 cores) and n1, and all
    3 GPUs are allocated. FGD scores both nodes 50 and takes n0, whose 8 cores left hold
    one 1-GPU pod: it allocates 2 GPUs."""
    p = Packing("cpu", (node("n0", 2, cpu=16000), node("n1", 1, cpu=64000)),
                (pod("c0", 0, cpu=8000), pod("p1", cpu=8000), pod("p2", cpu=8000),
                 pod("p3", cpu=8000)))
    run = place(p, "guided")
    assert run.placement.assign["c0"][0] == "n1"
    assert {run.placement.assign[q][0] for q in ("p1", "p2")} == {"n0"}
    assert run.placement.assign["p3"] == ("n1", (0,))
    assert run.metrics.allocated_milli == 3000
    assert place(p, "fgd").metrics.allocated_milli == 2000


def test_a_one_gpu_pod_keeps_the_node_a_two_gpu_pod_needs():
    """Two 2-GPU nodes; pods 1-GPU, 1-GPU, 2-GPU. The first goes to n0 (the nodes tie). The
    second: on n0, F drops by 1000 / 3 (the 2-GPU shape, a third of the pods, could not use
    n0's last GPU) and nothing scarce is lost: +333; on n1, F grows by 333 and n1 can no
    longer host the 2-GPU shape, whose expected demand is 1/3 x 3000 / 1333 = 0.75 pods for
    A = 1 such node: L = 0.75 x 2000, times 0.3: -333 - 450. So n0, and the 2-GPU pod has n1."""
    p = Packing("res", (node("n0", 2), node("n1", 2)),
                (pod("a"), pod("b"), pod("c", gpus=2)))
    run = place(p, "guided")
    assert run.placement.assign == {"a": ("n0", (0,)), "b": ("n0", (1,)), "c": ("n1", (0, 1))}
    st = GUIDED.for_packing(p)
    w = st.workload
    assert w is not None and w.gpus.tolist() == [2] and w.freq.tolist() == pytest.approx([1 / 3])
    assert w.mean_request == pytest.approx(4000 / 3)


def test_a_share_takes_the_gpu_that_leaves_a_useful_gap():
    """One node of 2 GPUs; three shares of 500 (the whole workload). The first takes GPU 0
    (both GPUs are free: equal scores, the first wins). The second: on GPU 0 it closes it
    and leaves GPU 1 whole, on GPU 1 it leaves two GPUs of 500 free; a 500 fits either
    way, so F is 0 before and after both moves, X is 0 (CPU to spare) and no shape is
    reserved: equal scores, GPU 0 first. The third has GPU 1 only."""
    p = Packing("share", (node("n0", 2),), (pod("a", milli=500), pod("b", milli=500),
                                            pod("c", milli=500)))
    run = place(p, "guided")
    assert run.placement.assign["a"] == ("n0", (0,))
    assert run.placement.assign["b"] == ("n0", (0,))
    assert run.placement.assign["c"] == ("n0", (1,))


@pytest.mark.parametrize("seed", range(6))
def test_the_compiled_loop_matches_the_rule_through_the_plain_loop(seed):
    p = random_packing(seed, nodes=8, pods=60)
    run = place(p, "guided")
    rule = GUIDED.for_packing(p)
    entry = resolve_placement(rule)
    models = tuple(tuple(q.gpu_models) for q in p.pods)
    node_of, gpus = run_plain(entry, p.arrays, tuple(q.name for q in p.pods), models,
                              np.arange(len(p.pods)))
    assert node_of.tolist() == run.node_of.tolist()
    for j, q in enumerate(p.pods):
        if node_of[j] >= 0:
            assert run.placement.assign[q.name][1] == tuple(gpus[j])


def test_on_openb_every_placement_is_checked_and_beats_fgd():
    full = openb_packing(0)
    p = Packing("openb-small", full.nodes[::16], full.pods[:700])
    g, f = place(p, "guided"), place(p, "fgd")
    assert evaluate_placement(p, g.placement).allocated_milli == g.metrics.allocated_milli
    assert g.metrics.allocated_milli >= f.metrics.allocated_milli


def test_the_workload_reads_shape_frequencies_only():
    p = random_packing(3, nodes=6, pods=50)
    q = Packing(p.name, p.nodes, tuple(reversed(p.pods)))
    a, b = guided_workload(p), guided_workload(q)
    for x, y in ((a.gpus, b.gpus), (a.milli, b.milli), (a.cpu, b.cpu), (a.freq, b.freq)):
        assert np.array_equal(x, y)
    assert a.cpu_per_milli == b.cpu_per_milli and a.mean_request == b.mean_request


def test_registered_as_a_builtin_of_the_one_table():
    assert PLACEMENT_RULES["guided"].rule is GUIDED
    assert resolve_placement("guided").name == "guided"
    assert check_policy("guided").name == "guided"
    assert place(random_packing(0), "guided").policy == "guided"
    assert isinstance(Guided(w_res=0.0).for_packing(random_packing(0)), Guided)


def test_the_command_line(tmp_path, capsys):
    out = tmp_path / "pl.json"
    assert main(["pack", str(BASE_PACKING), "--policy", "guided", "--no-bound", "--json",
                 "-o", str(out)]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["policy"] == "guided"
    assert main(["check-pack", str(BASE_PACKING), str(out)]) == 0
    small = tmp_path / "small.json"
    save_packing(random_packing(1), small)
    assert main(["pack", str(small), "--policy", "guided", "--no-bound"]) == 0


def test_in_time_on_version_3_instances():
    inst = instances.generate("openb-shares", seed=0)
    for method in ("list", "parallel"):
        res = gpusched.solve(inst, method, placement="guided")
        assert res.params["placement"] == "guided"
        instances.evaluate(inst, res.schedule)  # the checker: raises on an infeasible schedule


def test_in_time_it_follows_the_instances_own_shapes():
    from heuristics.guided import instance_workload
    from heuristics.placement_rules import PLACEMENT_RULES

    inst = instances.generate("openb-shares", seed=0)
    bound = PLACEMENT_RULES["guided"].for_instance(inst)
    assert bound.rule.workload is instance_workload(inst)  # built once per instance
    gpus = sorted({int(j.gpus) for j in inst.jobs if j.gpus >= 2})
    assert sorted(set(bound.rule.workload.gpus.tolist()) & set(gpus)) == sorted(
        set(bound.rule.workload.gpus.tolist()))  # only shapes the instance has
    flat = instances.generate("small", seed=0)
    assert PLACEMENT_RULES["guided"].for_instance(flat).rule is PLACEMENT_RULES["guided"].rule
