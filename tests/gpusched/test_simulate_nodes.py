"""The online replay on instances with nodes (gpusched.simulate, PROBLEM.md sections 8 and 10).

Each job keeps the placement its plan gave it and starts only if it fits on
its nodes beside the jobs running there as well as in the pool. Held here:
the exact-forecast identity (realized = offline, same starts and placements,
nothing preempted) for the node-aware methods and every placement rule; the
plan instance of a slot with running jobs, worked by hand; a planned start
that fits the pool but not its node; realized never above the clairvoyant
bound (the node MILP, itself held to brute force) over a small sweep, every
realized schedule through the checker on the actual instance; the command line.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from brute_nodes import brute_force_nodes, tiny_node_instance

import gpusched
import instances
from gpusched.cli import main
from gpusched.simulate import clairvoyant_bound, plan_instance
from instances import Instance, Job, Node, Scenario, Schedule, Service


def _exact(inst: Instance) -> Scenario:
    return Scenario(inst.name, {s.name: s.demand for s in inst.services})


def _placement(schedule: Schedule) -> dict[str, dict[str, int]]:
    return {j: dict(p) for j, p in schedule.placement.items()}


def _node_day(sizes, forecast, actual, jobs, name: str = "day") -> tuple[Instance, Scenario]:
    nodes = tuple(Node(f"node-{k}", g) for k, g in enumerate(sizes))
    inst = Instance(name, sum(sizes), len(forecast), (Service("chat", 2.0, tuple(forecast)),),
                    tuple(jobs), nodes=nodes)
    return inst, Scenario(name, {"chat": tuple(actual)})


# ------------------------------------------------------------------ exact forecast
NODE_INSTANCES = [
    ("small", 2, 4),                # 6 GPUs on nodes of 4 and 2
    ("hc-deadlines", 1, 4),         # 8-GPU jobs on 4-GPU nodes: multi-node jobs
    ("seed-training-heavy", 0, [4, 2, 2]),  # 6-GPU jobs on a 4 and a 2
    ("hc-multi-service", 3, 4),
]
NODE_METHODS = [
    ("fifo", {}), ("fifo-curve", {}), ("easy-curve", {}),
    ("list", {"placement": "first-fit"}), ("list", {"placement": "best-fit"}),
    ("list", {"placement": "frag"}),
]


@pytest.mark.parametrize("family,seed,shape", NODE_INSTANCES)
@pytest.mark.parametrize("method,params", NODE_METHODS,
                         ids=[f"{m}-{p.get('placement', '')}" for m, p in NODE_METHODS])
def test_exact_forecast_realizes_the_offline_schedule_on_nodes(family, seed, shape, method, params):
    inst = instances.with_nodes(instances.generate(family, seed=seed), shape)
    offline = gpusched.solve(inst, method, **params)
    r = gpusched.simulate(inst, _exact(inst), method, clairvoyant=False, **params)
    assert r.preemptions == 0 and r.missed_starts == 0 and r.lost_gpu_slots == 0
    assert r.realized_value == pytest.approx(offline.value, rel=1e-9)
    assert r.planned_value == pytest.approx(offline.value, rel=1e-9)
    assert dict(r.schedule.starts) == dict(offline.schedule.starts)
    assert _placement(r.schedule) == _placement(offline.schedule)  # placements kept
    assert r.metrics.fragmentation == offline.metrics.fragmentation
    # re-planned on an exact forecast: plans see each node less its running GPUs,
    # so no planned start ever misses and nothing is preempted
    for replan in (1, 3):
        rr = gpusched.simulate(inst, _exact(inst), method, replan=replan, clairvoyant=False, **params)
        assert rr.preemptions == 0 and rr.missed_starts == 0
        assert set(rr.schedule.placement) == set(rr.schedule.starts)
        assert instances.evaluate(inst, rr.schedule).value == pytest.approx(rr.realized_value)


def test_exact_forecast_milp_on_a_tiny_node_instance():
    inst = tiny_node_instance(3, n=5, shape=(2, 2))
    offline = gpusched.solve(inst, "milp", time_limit=20)
    r = gpusched.simulate(inst, _exact(inst), "milp", clairvoyant=False, time_limit=20)
    assert r.preemptions == 0 and r.missed_starts == 0
    assert r.realized_value == pytest.approx(offline.value, rel=1e-9)
    assert r.realized_value == pytest.approx(brute_force_nodes(inst)[0], rel=1e-9)


# ------------------------------------------------------------------ the plan instance
def _plan_of(sizes, running: dict[str, tuple[int, dict[str, int]]], jobs, forecast=None):
    T = 6
    forecast = forecast or [1] * T
    inst, sc = _node_day(sizes, forecast, forecast, jobs)
    plan = plan_instance(inst, sc, 1, running={j: s for j, (s, _) in running.items()},
                         placement={j: p for j, (_, p) in running.items()})
    return inst, plan


def test_plan_instance_holds_each_node_less_its_running_gpus():
    # nodes 4, 4, 4; R (2 GPUs on node-0) runs from 0 to 3; at slot 1 the plan has
    # node-0 with 2 GPUs, the pool 10, and the demand less R's 2 GPUs once R ends
    jobs = [Job("R", 2, 3), Job("big", 8, 2, release=1), Job("four", 4, 2, release=1)]
    _, plan = _plan_of([4, 4, 4], {"R": (0, {"node-0": 2})}, jobs)
    assert plan is not None
    assert [(n.name, n.gpus) for n in plan.nodes] == [("node-0", 2), ("node-1", 4), ("node-2", 4)]
    assert plan.num_gpus == 10
    # slot 0 is past (actual 1); from slot 3 on R's GPUs are free for inference
    assert plan.services[0].demand == (1, 1, 1, 0, 0, 0)
    # the 8-GPU job can take only the two untouched nodes (2 + 4 + 4 > 8, 2 + 4 != 8)
    assert [j.name for j in plan.jobs] == ["big", "four"]
    # the plan's pool is exact: room at slot t is G - a[t] - running(t), at most the nodes' 10
    assert plan.batch_capacity("curve").tolist()[1:] == [9, 9, 10, 10, 10]
    res = gpusched.solve(plan, "list")
    assert dict(res.schedule.placement["big"]) == {"node-1": 4, "node-2": 4}


def test_plan_instance_drops_jobs_whose_plan_placement_would_be_invalid():
    jobs = [Job("R", 2, 3), Job("S", 2, 3), Job("T", 1, 3),
            Job("big", 8, 2, release=1), Job("four", 4, 2, release=1), Job("two", 2, 2, release=1)]
    # R and S on node-0 and node-1: 2 + 2 + 4 = 8 would put the 8-GPU job on two
    # touched nodes, so it is not in the plan; the 4-GPU job fits node-2
    _, plan = _plan_of([4, 4, 4], {"R": (0, {"node-0": 2}), "S": (0, {"node-1": 2})}, jobs)
    assert [(n.name, n.gpus) for n in plan.nodes] == [("node-0", 2), ("node-1", 2), ("node-2", 4)]
    assert [j.name for j in plan.jobs] == ["T", "four", "two"]
    # one GPU held on every node: no node has 4 free, so the 4-GPU job (a one-node
    # job) would become a multi-node job of the plan: it is left out, as is the 8
    _, plan = _plan_of([4, 4, 4], {"R": (0, {"node-0": 2}), "S": (0, {"node-1": 2}),
                                   "T": (0, {"node-2": 1})}, jobs)
    assert [n.gpus for n in plan.nodes] == [2, 2, 3]
    assert [j.name for j in plan.jobs] == ["two"]
    # nodes the running jobs fill are left out; all full: no plan
    _, plan = _plan_of([2, 4], {"R": (0, {"node-0": 2})}, jobs[:1] + jobs[5:])
    assert [(n.name, n.gpus) for n in plan.nodes] == [("node-1", 4)]
    _, plan = _plan_of([2, 2], {"R": (0, {"node-0": 2}), "S": (0, {"node-1": 2})},
                       jobs[:2] + jobs[5:])
    assert plan is None


def test_plan_instance_on_nodes_refuses_a_running_job_without_placement():
    inst, sc = _node_day([2, 2], [0] * 4, [0] * 4, [Job("A", 2, 3)])
    with pytest.raises(ValueError, match="placement"):
        plan_instance(inst, sc, 1, running={"A": 0})
    with pytest.raises(ValueError, match="unknown node"):
        plan_instance(inst, sc, 1, running={"A": 0}, placement={"A": {"node-9": 2}})


def test_a_job_waits_for_a_plan_after_its_node_frees():
    # nodes 4, 2; A (2 GPUs, slots 0-3) on node-0 by first-fit; B (4 GPUs) is
    # released at 1: with one plan it starts at 4 on node-0, as offline; re-planned
    # at slot 2, node-0 is seen with 2 GPUs for the rest of the horizon, so B is
    # not in that plan, and the plan of slot 4 (after A ends) starts it
    jobs = [Job("A", 2, 4), Job("B", 4, 2, release=1)]
    inst, sc = _node_day([4, 2], [0] * 8, [0] * 8, jobs)
    one = gpusched.simulate(inst, sc, "list", clairvoyant=False)
    assert dict(one.schedule.starts) == {"A": 0, "B": 4}
    r = gpusched.simulate(inst, sc, "list", replan=2, clairvoyant=False)
    assert dict(r.schedule.starts) == {"A": 0, "B": 4}
    assert _placement(r.schedule) == {"A": {"node-0": 2}, "B": {"node-0": 4}}
    # the plan instance of slot 2 holds no job (B has no placement there), so
    # the plans made are those of slots 0 and 4
    plan = plan_instance(inst, sc, 2, running={"A": 0}, placement={"A": {"node-0": 2}})
    assert plan is not None and plan.num_jobs == 0
    assert [n.gpus for n in plan.nodes] == [2, 2]
    assert r.plans == 2


# ------------------------------------------------------------------ step 2 on nodes
def _forced_first_plan(monkeypatch, starts, placement):
    """The first plan is the given schedule (a plan a method could not make on
    the plan instance); later plans are the method's own."""
    real = gpusched.solve
    calls = {"n": 0}

    def fake(plan, method, **params):
        res = real(plan, method, **params)
        calls["n"] += 1
        if calls["n"] == 1:
            return dataclasses.replace(res, schedule=Schedule(plan.name, starts, placement))
        return res

    monkeypatch.setattr(gpusched, "solve", fake)


def test_a_start_that_fits_the_pool_but_not_its_node_is_not_started(monkeypatch):
    # nodes 2, 2, no inference; the plan puts A and B (2 GPUs each) both on node-0
    # at slot 0: the pool has room for both (4), node-0 only for A
    jobs = [Job("A", 2, 3), Job("B", 2, 3, priority=2.0)]
    inst, sc = _node_day([2, 2], [0] * 6, [0] * 6, jobs)
    forced = ({"A": 0, "B": 0}, {"A": {"node-0": 2}, "B": {"node-0": 2}})
    _forced_first_plan(monkeypatch, *forced)
    r = gpusched.simulate(inst, sc, "list", clairvoyant=False)
    assert r.missed_starts == 1 and dict(r.schedule.starts) == {"A": 0}  # job-list order
    assert _placement(r.schedule) == {"A": {"node-0": 2}}
    assert r.realized_value == 2 * 3
    # re-planned every slot: the plan of slot 1 sees node-0 full and puts B on node-1
    _forced_first_plan(monkeypatch, *forced)
    r = gpusched.simulate(inst, sc, "list", replan=1, clairvoyant=False)
    assert r.missed_starts == 1
    assert dict(r.schedule.starts) == {"A": 0, "B": 1}
    assert _placement(r.schedule) == {"A": {"node-0": 2}, "B": {"node-1": 2}}


def test_jobs_keep_the_placement_their_plan_gave_them(monkeypatch):
    # the plan puts A on node-1 though first-fit would take node-0: it runs there,
    # and B, planned on node-1 at slot 1, does not fit beside it
    jobs = [Job("A", 2, 3), Job("B", 1, 2, release=1)]
    inst, sc = _node_day([2, 2], [0] * 5, [0] * 5, jobs)
    _forced_first_plan(monkeypatch, {"A": 0, "B": 1}, {"A": {"node-1": 2}, "B": {"node-1": 1}})
    r = gpusched.simulate(inst, sc, "list", clairvoyant=False)
    assert _placement(r.schedule) == {"A": {"node-1": 2}}
    assert r.missed_starts == 1


def test_preemption_frees_the_nodes_of_the_preempted_job():
    # nodes 2, 2; A (w 2) on node-0 and B (w 1) on node-1 from slot 0; inference
    # takes 2 GPUs at slot 1: B goes (lower priority). Slot 2's plan: node-0 is
    # A's until 4, so the plan holds node-1 only: B restarts there (its value 8
    # beats C's 4). Slot 4's plan: A has ended, C takes node-0.
    jobs = [Job("A", 2, 4, priority=2.0), Job("B", 2, 4), Job("C", 2, 2, release=2)]
    inst, sc = _node_day([2, 2], [0] * 6, [0, 2, 0, 0, 0, 0], jobs)
    r = gpusched.simulate(inst, sc, "list", replan=1, clairvoyant=False)
    assert r.events == ((1, "B"),) and r.lost_gpu_slots == 2
    assert dict(r.schedule.starts) == {"A": 0, "B": 2, "C": 4}
    assert _placement(r.schedule) == {"A": {"node-0": 2}, "B": {"node-1": 2}, "C": {"node-0": 2}}
    assert r.realized_value == 2.0 * 8 + 8 + 4
    instances.evaluate(instances.actual_instance(inst, sc), r.schedule)


def test_a_method_without_placements_is_refused(monkeypatch):
    jobs = [Job("A", 2, 3)]
    inst, sc = _node_day([2, 2], [0] * 4, [0] * 4, jobs)
    _forced_first_plan(monkeypatch, {"A": 0}, {})
    with pytest.raises(RuntimeError, match="placement"):
        gpusched.simulate(inst, sc, "list", clairvoyant=False)


# ------------------------------------------------------------------ the bound
def _sweep() -> list[Instance]:
    return [
        *(tiny_node_instance(s, n=5, shape=(2, 2)) for s in range(3)),
        tiny_node_instance(7, n=5, shape=(3, 2, 1)),
        instances.with_nodes(instances.generate("small", seed=4), 2),
    ]


def _spike(inst: Instance, seed: int) -> Scenario:
    """Actual = forecast plus 0, 1 or 2 GPUs of the first service in each slot
    (capped at the pool): traffic above the forecast, so preemptions happen."""
    rng = np.random.default_rng(seed)
    first, *rest = inst.services
    room = inst.num_gpus - inst.total_demand
    extra = np.minimum(rng.integers(0, 3, size=inst.horizon), room)
    actual = {first.name: tuple((np.asarray(first.demand) + extra).tolist())}
    return Scenario(inst.name, {**actual, **{s.name: s.demand for s in rest}})


@pytest.mark.slow
def test_realized_value_never_above_the_clairvoyant_bound_on_nodes():
    seen = {"runs": 0, "preempted": 0, "missed": 0, "unserved": 0, "multi-node": 0}
    for inst in _sweep():
        for sc in (instances.scenario(inst, "lognormal", seed=0, sigma=0.6, rho=0.3),
                   _spike(inst, 1)):
            cb = clairvoyant_bound(inst, sc, time_limit=30)
            actual = instances.actual_instance(inst, sc)
            assert actual.nodes == inst.nodes
            if inst.num_jobs <= 5:  # the node MILP's bound is the brute-force optimum
                assert cb.status == "optimal"
                assert cb.upper_bound == pytest.approx(brute_force_nodes(actual)[0], abs=1e-6)
            for method, params in (("list", {}), ("list", {"placement": "frag"}),
                                   ("fifo-curve", {}), ("easy-curve", {}), ("fifo", {})):
                for replan in (None, 1, 2):
                    for headroom, preempt in ((0.0, True), (0.5, True), (0.0, False)):
                        r = gpusched.simulate(inst, sc, method, replan, headroom, preempt,
                                              clairvoyant=cb, **params)
                        if r.bound_applies:
                            assert r.realized_value <= cb.upper_bound + 1e-6
                            m = instances.evaluate(actual, r.schedule)
                            assert m.value == pytest.approx(r.realized_value)
                        assert set(r.schedule.placement) == set(r.schedule.starts)
                        seen["runs"] += 1
                        seen["preempted"] += r.preemptions > 0
                        seen["missed"] += r.missed_starts > 0
                        seen["unserved"] += r.unserved_gpu_slots > 0
                        seen["multi-node"] += any(len(p) > 1 for p in r.schedule.placement.values())
    # the sweep reaches every rule: preemptions, missed starts, unserved inference
    # (without preemption) and multi-node placements
    assert min(seen.values()) > 0, seen


# ------------------------------------------------------------------ command line
def test_cli_simulate_on_nodes(tmp_path, capsys):
    inst = instances.with_nodes(instances.generate("hc-deadlines", seed=1), 4)
    inst_path, sc_path, out = tmp_path / "inst.json", tmp_path / "sc.json", tmp_path / "real.json"
    instances.save(inst, inst_path)
    assert main(["scenario", str(inst_path), "--sigma", "0.3", "--seed", "2", "-o", str(sc_path)]) == 0
    capsys.readouterr()
    assert main(["simulate", str(inst_path), "--scenario", str(sc_path), "--method", "list",
                 "-p", "placement=best-fit", "--replan", "2", "--json",
                 "--bound-time-limit", "20", "-o", str(out)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1
    d = json.loads(lines[0])
    loaded = instances.load(inst_path)
    sc = instances.load_scenario(sc_path, loaded)
    r = gpusched.simulate(loaded, sc, "list", replan=2, clairvoyant=False, placement="best-fit")
    assert d["realized_value"] == pytest.approx(r.realized_value)
    assert d["placement"] == _placement(r.schedule) and set(d["placement"]) == set(d["starts"])
    assert d["realized_value"] <= d["clairvoyant_bound"] + 1e-6
    schedule = instances.load_schedule(out)
    assert _placement(schedule) == d["placement"]
    m = instances.evaluate(instances.actual_instance(loaded, sc), schedule)
    assert m.value == pytest.approx(d["realized_value"])
