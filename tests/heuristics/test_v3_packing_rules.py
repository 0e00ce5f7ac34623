"""FGD's six packing policies as placement rules of the version 3 list heuristics.

Each rule's node (and GPU) choice on a hand-built case whose answer is worked
out here, with another rule giving another answer; every schedule passes the
checker with GPU indices and stays at or below the brute-force optimum; on a
one-slot instance every rule makes the choices of :func:`heuristics.packing.place`
on the equivalent packing (the same score, the same draws).
"""

from __future__ import annotations

import numpy as np
import pytest
from brute_v3 import brute_force_v3, tiny_v3_instance

import gpusched
import heuristics
import instances
from heuristics.packing import FGD_POLICIES, place
from heuristics.shares_rules import rule_code
from instances import Instance, Job, Node
from instances.packing import Packing, PackNode, Pod

Where = dict[str, tuple[int, dict[str, list[int]]]]


def _inst(nodes: list[Node], jobs: list[Job], T: int = 6) -> Instance:
    return Instance("hand-v3", sum(n.gpus for n in nodes), T, (), tuple(jobs),
                    nodes=tuple(nodes))


def _run(inst: Instance, rule: str) -> Where:
    """The jobs in list order under ``rule``: (start, {node: GPU indices}); checked."""
    place = heuristics.placement.new_place(inst)
    start = heuristics.listsched.list_starts(inst, np.arange(inst.num_jobs), placement=rule,
                                             place=place)
    res = heuristics.results.finish(inst, "list", start, reservation="curve", started_at=0.0,
                                    place=place)
    instances.evaluate(inst, res.schedule)
    s = res.schedule
    return {j: (t, {n: list(v) for n, v in s.indices[j].items()}) for j, t in s.starts.items()}


def _node_of(where: Where, job: str) -> str:
    return next(iter(where[job][1]))


def test_dotprod_weighs_free_resources_by_the_request() -> None:
    # x asks 1 GPU and 1 milli of CPU. n0: 4 GPUs, CPU 1000; n1: 2 GPUs, CPU 128000.
    # DotProd: n0 1 - (1000 * 1 / 128000^2 + 4000 * 1000 / 8000^2) / 2 = 0.96875 -> 96,
    # n1 1 - (128000 / 128000^2 + 2000 * 1000 / 8000^2) / 2 = 0.98437 -> 98: n1.
    # BestFit: n0 1 - (999 / 128000 + 3000 / 8000) / 2 = 0.8086 -> 80, n1 1 - (127999 /
    # 128000 + 1000 / 8000) / 2 = 0.4375 -> 43: n0 (and first-fit n0).
    inst = _inst([Node("n0", 4, cpu_milli=1000), Node("n1", 2, cpu_milli=128000)],
                 [Job("x", 1, 2, cpu_milli=1)])
    assert _run(inst, "dotprod") == {"x": (0, {"n1": [0]})}
    assert _run(inst, "bestfit") == {"x": (0, {"n0": [0]})}
    assert _run(inst, "first-fit") == {"x": (0, {"n0": [0]})}


def test_bestfit_counts_cpu_where_best_fit_counts_gpus_only() -> None:
    # x: 1 GPU, 1000 CPU. n0: 2 GPUs, CPU 64000; n1: 4 GPUs, CPU 2000. BestFit (FGD's):
    # n0 1 - (63000 / 128000 + 1000 / 8000) / 2 = 0.6914 -> 69, n1 1 - (1000 / 128000 +
    # 3000 / 8000) / 2 = 0.8086 -> 80: n1. The toolkit's best-fit (GPU milli left): n0.
    inst = _inst([Node("n0", 2, cpu_milli=64000), Node("n1", 4, cpu_milli=2000)],
                 [Job("x", 1, 2, cpu_milli=1000)])
    assert _run(inst, "bestfit") == {"x": (0, {"n1": [0]})}
    assert _run(inst, "best-fit") == {"x": (0, {"n0": [0]})}


def test_a_score_reads_what_the_node_has_free_throughout_the_run() -> None:
    # w holds GPUs 0-2 of n0 at slot 2 only. x (1 GPU, slots 0-2): over its run n0 has
    # GPU 3 free throughout and GPUs 0-2 at 0, so 1000 milli, 0 after x; n1 2000, 1000
    # after: BestFit scores n0 1 - (0 + 0) / 2 -> 100, n1 1 - (0 + 1000/8000)/2 -> 93:
    # n0, GPU 3. Read at x's first slot alone, n0 would have 4000 free and n1 win.
    inst = _inst([Node("n0", 4, model="A", cpu_milli=0), Node("n1", 2, model="A", cpu_milli=0)],
                 [Job("w", 3, 1, release=2, gpu_models=("A",)), Job("x", 1, 3)])
    got = _run(inst, "bestfit")
    assert got["x"] == (0, {"n0": [3]})
    assert got["w"] == (2, {"n0": [0, 1, 2]})
    # the wrong reading, n0 at slot 0 (4000 free): BestFit's score there is lower than n1's
    from heuristics.packing.scores import bestfit_score
    assert bestfit_score(0, 4000, 0, 1000) < bestfit_score(0, 2000, 0, 1000)


def test_clustering_keeps_a_class_together_while_its_jobs_run() -> None:
    # n0, n1: 4 GPUs. a (1 whole GPU) goes to n0 (both empty: 25 (8000 - 4000) // 8000 +
    # 25 = 37 each; the earliest). b (a share, 500): n0 holds only the 1-GPU class, not
    # b's: 25 * 5000 // 8000 + 0 = 15; n1 empty: 12 + 25 = 37: n1. c (1 whole GPU): n0
    # holds only its class: 15 + 75 = 90; n1 (3500 free) 14 + 0: n0. BestFit puts b on n0
    # (the fuller node).
    jobs = [Job("a", 1, 3, cpu_milli=1), Job("b", 1, 3, gpu_milli=500), Job("c", 1, 3)]
    inst = _inst([Node("n0", 4), Node("n1", 4)], jobs)
    got = _run(inst, "clustering")
    assert got == {"a": (0, {"n0": [0]}), "b": (0, {"n1": [0]}), "c": (0, {"n0": [1]})}
    assert _node_of(_run(inst, "bestfit"), "b") == "n0"
    # a job that ended before the run is not held: a on slot 0 only, b from slot 1 finds
    # both nodes empty over its run (37 each) and takes the earliest, n0
    jobs = [Job("a", 1, 1, cpu_milli=1), Job("b", 1, 3, release=1, gpu_milli=500)]
    assert _run(_inst([Node("n0", 4), Node("n1", 4)], jobs), "clustering")["b"] == (
        1, {"n0": [0]})


def test_packing_puts_a_share_on_a_partly_used_gpu() -> None:
    # a (500, model X only) runs on n0's GPU 0. s (400): on n0 a share on a partly used GPU
    # with 50% free: max(100 - 50 // 10, 50) = 95; n1 (1 GPU, empty): max(33 - 1, 1) = 32:
    # n0, GPU 0. BestFit: n0 1 - (8000 / 128000 + 7100 / 8000) / 2 -> 52, n1 1 - (8000 /
    # 128000 + 600 / 8000) / 2 -> 93: n1.
    inst = _inst([Node("n0", 8, model="X", cpu_milli=8000),
                  Node("n1", 1, model="Y", cpu_milli=8000)],
                 [Job("a", 1, 3, gpu_milli=500, gpu_models=("X",)),
                  Job("s", 1, 2, gpu_milli=400)])
    assert _run(inst, "packing")["s"] == (0, {"n0": [0]})
    assert _run(inst, "bestfit")["s"] == (0, {"n1": [0]})


def test_fgd_measures_against_the_whole_workload_where_frag_counts_the_jobs_left() -> None:
    # y, z (2 GPUs, slot 0) fill n0 (2 GPUs) and half of n1 (4 GPUs); x (1 GPU) comes at
    # slot 1, with every GPU free again. FGD's workload (fixed): 1/3 1-GPU, 2/3 2-GPU
    # shapes. x on n0 leaves 1 GPU the 2-GPU shape cannot use: fragmentation +666.7,
    # 100 sigmoid(-0.667) -> 33; on n1 it leaves 3 GPUs either shape can use: 50: n1.
    # The toolkit's frag counts only the jobs still to place, none after x: no change
    # anywhere, ties by best-fit: n0.
    jobs = [Job("y", 2, 1), Job("z", 2, 1), Job("x", 1, 1, release=1, cpu_milli=1)]
    inst = _inst([Node("n0", 2), Node("n1", 4)], jobs)
    fgd = _run(inst, "fgd")
    assert fgd == {"y": (0, {"n0": [0, 1]}), "z": (0, {"n1": [0, 1]}), "x": (1, {"n1": [0]})}
    assert _run(inst, "frag")["x"] == (1, {"n0": [0]})


def test_fgd_takes_the_share_gpu_that_fragments_least() -> None:
    # w (whole) holds GPU 0 at slot 0, s1 (500) runs on GPU 1 over 0-2, y (1 GPU) comes at
    # slot 4. x (400) from slot 1: GPU 0 (free throughout) or GPU 1 (500 left). Workload:
    # 1/2 one whole GPU, 1/4 each share (500, 400). Before: 0.5 x 500 (GPU 1 short for a
    # whole GPU) = 250. x on GPU 0 ([600, 500]): no whole GPU left, 0.5 x 1100 = 550:
    # 100 sigmoid(-0.3) -> 42. On GPU 1 ([1000, 100]): 100 milli short for every shape:
    # 100, 100 sigmoid(0.15) -> 53: GPU 1. First-fit takes GPU 0.
    inst = _inst([Node("n0", 2)], [Job("w", 1, 1), Job("s1", 1, 3, gpu_milli=500),
                                   Job("x", 1, 2, release=1, gpu_milli=400),
                                   Job("y", 1, 1, release=4)])
    assert _run(inst, "fgd")["x"] == (1, {"n0": [1]})
    assert _run(inst, "first-fit")["x"] == (1, {"n0": [0]})


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_draws_node_and_gpu_as_the_packing_policy_does(seed: int) -> None:
    # three equal nodes of 4 GPUs; x (a share) takes node int(u_node * 3), GPU
    # int(u_gpu * 4), with the draws of heuristics.packing.place for this seed
    rng = np.random.default_rng(seed)
    u_node, u_gpu = rng.random(1), rng.random(1)
    inst = _inst([Node(f"n{k}", 4) for k in range(3)], [Job("x", 1, 2, gpu_milli=300)])
    expected = {"x": (0, {f"n{int(u_node[0] * 3)}": [int(u_gpu[0] * 4)]})}
    assert _run(inst, f"random:{seed}") == expected
    assert _run(inst, "random") == {"x": (0, {f"n{int(np.random.default_rng(0).random() * 3)}":
                                              [int(np.random.default_rng(0).random(2)[1] * 4)]})}


def test_unknown_rules_and_the_parallel_scheme_refuse() -> None:
    with pytest.raises(ValueError, match="placement"):
        rule_code("dotprod:1")
    with pytest.raises(ValueError, match="placement"):
        rule_code("random:x")
    with pytest.raises(ValueError, match="placement"):
        rule_code("nope")
    assert rule_code("random:7") == (3, 7) and rule_code("frag") == (2, 0)
    inst = tiny_v3_instance(0)
    with pytest.raises(ValueError, match="serial decoder"):
        heuristics.listsched.parallel_schedule(inst, placement="fgd")


RULES = [*FGD_POLICIES, "random:5"]


@pytest.mark.parametrize("seed", range(8))
def test_every_rule_is_checker_valid_and_never_above_brute_force(seed: int) -> None:
    inst = tiny_v3_instance(seed, n=5, shape=(2, 2) if seed % 2 else (1, 2, 4), T=6)
    best, _ = brute_force_v3(inst)
    for rule in RULES:
        res = gpusched.solve(inst, "list", placement=rule)
        m = instances.evaluate(inst, res.schedule)
        assert res.schedule.indices and all(res.schedule.indices.values())
        assert m.value == pytest.approx(res.metrics.value)
        assert m.value <= best + 1e-9, rule


@pytest.mark.parametrize("rule", ["clustering", "fgd", "random:2"])
def test_the_public_earliest_and_take_equal_the_decoder(rule: str) -> None:
    inst = tiny_v3_instance(3, n=8, shape=(2, 4), T=8)
    order = np.arange(inst.num_jobs)
    place = heuristics.placement.new_place(inst)
    start = heuristics.listsched.list_starts(inst, order, placement=rule, place=place)
    prof = heuristics.engine.new_profile(inst, "curve", rule)
    for j in order.tolist():
        g, p = int(inst.gpus[j]), int(inst.durations[j])
        s, where = prof.earliest(j, g, p, inst.jobs[j].release, int(inst.deadlines[j]))
        assert s == start[j]
        if s >= 0:
            assert where.nodes.tolist() == [k for k in place[j, : prof.span].tolist() if k >= 0]
            prof.take(j, g, p, s, where)


def _one_slot(packing: Packing) -> Instance:
    """The packing as a version 3 instance of one slot: every pod a job of one slot."""
    nodes = tuple(Node(n.name, n.gpus, n.model, n.cpu_milli, n.memory_mib)
                  for n in packing.nodes)
    jobs = tuple(Job(p.name, p.gpus, 1, gpu_milli=p.gpu_milli, gpu_models=p.gpu_models or None,
                     cpu_milli=p.cpu_milli, memory_mib=p.memory_mib) for p in packing.pods)
    return Instance("one-slot", sum(n.gpus for n in nodes), 1, (), jobs, nodes=nodes)


def _packing(seed: int, n_nodes: int = 6, n_pods: int = 40) -> Packing:
    """A random packing of GPU pods each of which fits some node alone (a valid instance)."""
    rng = np.random.default_rng(seed)
    nodes = tuple(PackNode(f"n{i}", int(rng.choice([1, 2, 4, 8])), str(rng.choice(["A", "B"])),
                           int(rng.choice([4000, 16000, 64000])), int(rng.choice([8192, 65536])))
                  for i in range(n_nodes))
    pods = []
    while len(pods) < n_pods:
        models = ("A",) if rng.random() < 0.2 else ()
        cpu, mem = int(rng.choice([0, 1000, 4000, 8000])), int(rng.choice([0, 4096, 16384]))
        if rng.random() < 0.5:
            g, milli = 1, int(rng.choice([100, 250, 500, 700]))
        else:
            g, milli = int(rng.choice([1, 1, 2, 4, 8])), 1000
        if any(n.gpus >= g and n.cpu_milli >= cpu and n.memory_mib >= mem
               and (not models or n.model in models) for n in nodes):
            pods.append(Pod(f"p{len(pods)}", g, milli, cpu, mem, models))
    return Packing(f"rand-{seed}", nodes, tuple(pods))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("policy", FGD_POLICIES)
def test_on_one_slot_every_rule_chooses_as_the_packing_policy(policy: str, seed: int) -> None:
    packing = _packing(seed)
    run = place(packing, policy, seed=seed)
    got = _run(_one_slot(packing), f"random:{seed}" if policy == "random" else policy)
    expected = {name: (0, {node: list(gpus)}) for name, (node, gpus)
                in run.placement.assign.items()}
    assert got == expected


@pytest.mark.parametrize("rule", ["clustering", "fgd", "random:4", "packing"])
def test_a_decode_in_pieces_equals_one_in_a_piece(rule: str) -> None:
    # the rules' own state (clustering's classes, the seed) travels with the state
    inst = instances.generate("openb-day", 15, num_gpus=16, resources="full")
    order = heuristics.rules.order_by(inst, "priority")
    jobs = heuristics.decoder.job_arrays(inst)
    whole = heuristics.engine.new_profile(inst, "curve", rule)
    one = heuristics.decoder.serial_starts(whole, order, jobs)
    prof = heuristics.engine.new_profile(inst, "curve", rule)
    half = order.size // 2
    start = heuristics.decoder.serial_starts(prof, order[:half], jobs)
    start = heuristics.decoder.serial_starts(prof.copy(), order[half:], jobs, start)
    assert np.array_equal(start, one)
    assert (one >= 0).sum() > 100


@pytest.mark.parametrize("method", ["sampling", "local-search", "list-peak"])
def test_the_methods_on_the_serial_decoder_take_the_rules(method: str) -> None:
    inst = tiny_v3_instance(5, n=6, shape=(2, 4), T=6)
    best, _ = brute_force_v3(inst)
    for rule in ("clustering", "fgd", "random:1"):
        res = gpusched.solve(inst, method, placement=rule, time_limit=0.5)
        reservation = "peak" if method == "list-peak" else "curve"
        m = instances.evaluate(inst, res.schedule, reservation)
        assert m.value == pytest.approx(res.metrics.value) and m.value <= best + 1e-9
