"""The online replay on version 3 instances and under both objectives (PROBLEM.md sections
10, 12 and 15).

Each job keeps the placement its plan gave it, with its GPU indices, and starts
only if it fits beside the running jobs (shares, models, CPU, memory) and the
actual inference. Held here: the exact-forecast identity (realized = offline,
same starts and GPU indices) on tiny random instances and the openb families,
under ``value`` and ``flow``; under forecast error, every replayed schedule
through the checker on the actual instance, with GPU indices; the plan instance
of a slot with a shared job running, worked by hand; a plan of whole-GPU jobs
that gives counts, its indices mapped back beside a running share; under
``flow``, the flow time and the mean JCT of a day with preemptions worked by
hand; the clairvoyant bound on the objective's side; the command line.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from brute_v3 import tiny_v3_instance

import gpusched
import instances
from gpusched.cli import main
from gpusched.simulate import clairvoyant_bound, plan_instance
from instances import Instance, Job, Node, Scenario, Service


def _exact(inst: Instance) -> Scenario:
    return Scenario(inst.name, {s.name: s.demand for s in inst.services})


def _random_day(inst: Instance, seed: int) -> Scenario:
    """An actual day far from the forecast: inference anywhere in ``0..G`` at every slot."""
    rng = np.random.default_rng(seed)
    (svc,) = inst.services
    return Scenario(inst.name, {svc.name: tuple(int(x) for x in
                                                rng.integers(0, inst.num_gpus + 1, inst.horizon))})


def _checked(inst: Instance, sc: Scenario, r: gpusched.SimResult) -> instances.Metrics:
    """The realized schedule through the checker, on the demand it was served against (the
    actual day, less what went unserved without preemption: one service here)."""
    (svc,) = inst.services
    served = np.array(sc.actual[svc.name]) - r.timeline["unserved"]
    day = inst.replace(services=(Service(svc.name, svc.priority, tuple(served.tolist())),))
    return instances.evaluate(day, r.schedule)


def _mean_jct(inst: Instance, schedule: instances.Schedule) -> float:
    """Mean of ``C_j - r_j`` over every job, a job not run ending at ``T + p_j``, in hours."""
    total = 0
    for job in inst.jobs:
        s = schedule.starts.get(job.name, inst.horizon)
        total += s + job.duration - job.release
    return total * inst.slot_hours / inst.num_jobs


# ------------------------------------------------------------------ exact forecast
TINY = [(seed, shape) for seed in range(6) for shape in ((2, 2), (2, 1, 1))]


@pytest.mark.parametrize("objective", ["value", "flow"])
@pytest.mark.parametrize("method", ["fifo", "list", "easy-curve", "milp"])
@pytest.mark.parametrize("seed,shape", TINY)
def test_exact_forecast_replays_the_plan(seed, shape, method, objective):
    inst = tiny_v3_instance(seed, n=6, shape=shape, T=8).replace(objective=objective)
    assert inst.jobs_use_resources
    offline = gpusched.solve(inst, method)
    r = gpusched.simulate(inst, _exact(inst), method, clairvoyant=False)
    assert r.schedule == offline.schedule  # the same starts and GPU indices
    assert r.realized_value == pytest.approx(offline.value) == pytest.approx(r.planned_value)
    assert (r.preemptions, r.missed_starts, r.lost_gpu_slots, r.unserved_gpu_slots) == (0, 0, 0, 0)
    assert r.objective == objective and r.metrics.objective == objective
    assert r.mean_jct_hours == pytest.approx(_mean_jct(inst, r.schedule))
    assert r.jobs_censored == inst.num_jobs - len(r.schedule)


@pytest.mark.parametrize("objective", ["value", "flow"])
@pytest.mark.parametrize("family,seed,params", [
    ("openb-shares", 0, {}),
    ("openb-day", 15, {"num_gpus": 16, "resources": "full"}),
])
def test_exact_forecast_on_the_openb_families(family, seed, params, objective):
    inst = instances.generate(family, seed, **params).replace(objective=objective)
    assert inst.shares_gpus
    for method in ("fifo", "list"):
        offline = gpusched.solve(inst, method)
        r = gpusched.simulate(inst, _exact(inst), method, clairvoyant=False)
        assert r.schedule == offline.schedule and r.schedule.lists_indices
        assert r.realized_value == pytest.approx(offline.value)
        assert r.preemptions == r.missed_starts == 0


# ------------------------------------------------------------------ forecast error
def test_every_replay_under_forecast_error_passes_the_checker():
    """Random days far from the forecast on tiny instances: preemptions, missed starts,
    unserved inference and re-planning all occur; every realized schedule lists GPU indices
    and checks on the demand it was served against."""
    seen = {"preemptions": 0, "missed": 0, "unserved": 0, "re-planned": 0, "multi-node": 0}
    for seed in range(8):
        base = tiny_v3_instance(seed, n=7, shape=(2, 2, 1), T=8)
        sc = _random_day(base, seed)
        for objective in ("value", "flow"):
            inst = base.replace(objective=objective)
            for method, replan, preempt in [("list", None, True), ("list", 1, True),
                                            ("list", 2, False), ("fifo", 3, True),
                                            ("easy-curve", 1, False)]:
                r = gpusched.simulate(inst, sc, method, replan, 0.0, preempt, clairvoyant=False)
                if len(r.schedule):
                    assert r.schedule.lists_indices
                m = _checked(inst, sc, r)
                assert m.value == pytest.approx(r.realized_value)
                assert r.mean_jct_hours == pytest.approx(m.mean_jct_hours)
                assert r.mean_jct_hours == pytest.approx(_mean_jct(inst, r.schedule))
                assert r.jobs_censored == inst.num_jobs - len(r.schedule) == m.jobs_censored
                seen["preemptions"] += r.preemptions
                seen["missed"] += r.missed_starts
                seen["unserved"] += r.unserved_gpu_slots
                seen["re-planned"] += r.plans > 1
                seen["multi-node"] += sum(len(on) > 1 for on in r.schedule.indices.values())
    assert min(seen.values()) > 0, seen


@pytest.mark.parametrize("objective", ["value", "flow"])
def test_openb_day_under_forecast_error_passes_the_checker(objective):
    inst = instances.generate("openb-day", 15, num_gpus=16, resources="full")
    inst = inst.replace(objective=objective)
    sc = instances.scenario(inst, "lognormal", seed=1, sigma=0.5, rho=0.5)
    preempted = 0
    for method, replan, preempt in [("list", None, True), ("list", 4, True), ("list", 4, False),
                                    ("fifo", None, True)]:
        r = gpusched.simulate(inst, sc, method, replan, 0.0, preempt, clairvoyant=False)
        assert r.schedule.lists_indices
        m = _checked(inst, sc, r)
        assert m.value == pytest.approx(r.realized_value)
        assert r.mean_jct_hours == pytest.approx(_mean_jct(inst, r.schedule))
        preempted += r.preemptions
    assert preempted > 0


# ------------------------------------------------------------------ the plan instance
def _shared_day() -> tuple[Instance, Scenario]:
    nodes = (Node("n0", 2, "A", 4000, 8), Node("n1", 2))
    jobs = (
        Job("s", 1, 4, 1.0, gpu_milli=300, cpu_milli=1000, memory_mib=2),
        Job("w1", 1, 2, 1.0, release=1),
        Job("w2", 1, 2, 1.0, release=1),
        Job("big", 2, 2, 1.0, release=1),
        Job("cpu", 1, 2, 1.0, release=1, gpu_models=("A",), cpu_milli=3500),
        Job("t", 1, 2, 1.0, release=1, gpu_milli=500, gpu_models=("A",)),
    )
    inst = Instance("shared", 4, 6, (Service("chat", 2.0, (0,) * 6),), jobs, nodes=nodes)
    return inst, _exact(inst)


def test_plan_instance_holds_a_running_share_by_index_with_its_cpu_and_memory():
    inst, sc = _shared_day()
    plan = plan_instance(inst, sc, 1, running={"s": 0}, placement={"s": {"n0": [1]}})
    assert plan is not None
    # n0 less GPU 1 (held by the share), its CPU and memory less the share's
    assert plan.nodes == (Node("n0", 1, "A", 3000, 6), Node("n1", 2))
    # "big" still fits n1 whole; "cpu" asks 3500 of model A, which only n0 has: dropped
    assert [j.name for j in plan.jobs] == ["w1", "w2", "big", "t"]
    with pytest.raises(ValueError, match=r"placement\['s'\]\['n0'\]: on a version 3 instance"):
        plan_instance(inst, sc, 1, running={"s": 0}, placement={"s": {"n0": 1}})
    with pytest.raises(ValueError, match=r"placement\['s'\]\['n0'\]: GPU indices"):
        plan_instance(inst, sc, 1, running={"s": 0}, placement={"s": {"n0": [2]}})


def test_a_plan_that_gives_counts_gets_indices_beside_a_running_share():
    """At slot 1 the share runs on n0's GPU 0; the jobs left set no version 3 field, so the
    plan is a version 2 instance and its methods give counts: the indices come from interval
    colouring on the plan's nodes, mapped back (plan n0's GPU 0 is GPU 1 of n0)."""
    nodes = (Node("n0", 2),)
    jobs = (Job("s", 1, 4, 2.0, gpu_milli=300), Job("w1", 1, 2, 1.0, release=1),
            Job("w2", 1, 2, 1.0, release=1))
    inst = Instance("counts", 2, 6, (Service("chat", 2.0, (0,) * 6),), jobs, nodes=nodes)
    r = gpusched.simulate(inst, _exact(inst), "list", replan=1, clairvoyant=False)
    plan = plan_instance(inst, _exact(inst), 1, running={"s": 0}, placement={"s": {"n0": [0]}})
    assert plan is not None and not plan.jobs_use_resources and plan.nodes == (Node("n0", 1),)
    assert r.schedule.indices["s"] == {"n0": (0,)}
    assert {j: dict(r.schedule.indices[j]) for j in ("w1", "w2")} == {
        "w1": {"n0": (1,)}, "w2": {"n0": (1,)}}
    assert dict(r.schedule.starts) == {"s": 0, "w1": 1, "w2": 3}
    assert _checked(inst, _exact(inst), r).jobs_run == 3


# ------------------------------------------------------------------ flow, by hand
def test_flow_and_mean_jct_of_a_day_with_preemptions_by_hand():
    """One GPU, half-hour slots. FIFO plans the shares a (w 1, 2 slots) and b (w 2, 3 slots)
    together on GPU 0 at slot 0 and the whole-GPU c (released at 1) at 3. Inference takes
    the GPU at slot 1: a is preempted first (lowest priority), then b, as the GPU stays
    busy; with one plan both are lost, censored at the horizon. c runs 3..5.

    JCT: a 6 + 2 - 0 = 8 slots, b 6 + 3 - 0 = 9, c 5 - 1 = 4: mean 7 slots = 3.5 h.
    F = (1 * 8 + 2 * 9 + 1 * 4) * 0.5 = 15. Work lost: a and b one slot at 0.5 GPU each.
    """
    jobs = (Job("a", 1, 2, 1.0, gpu_milli=500), Job("b", 1, 3, 2.0, gpu_milli=500),
            Job("c", 1, 2, 1.0, release=1))
    inst = Instance("hand", 1, 6, (Service("chat", 1.0, (0,) * 6),), jobs, 0.5,
                    nodes=(Node("n0", 1),), objective="flow")
    sc = Scenario("hand", {"chat": (0, 1, 0, 0, 0, 0)})
    r = gpusched.simulate(inst, sc, "fifo", clairvoyant=False)
    assert r.events == ((1, "a"), (1, "b"))
    assert dict(r.schedule.starts) == {"c": 3}
    assert r.lost_gpu_slots == 1 and r.preemptions == 2
    assert r.mean_jct_hours == pytest.approx(3.5)
    assert r.jobs_censored == 2
    assert r.realized_value == pytest.approx(15.0)  # F under flow
    assert r.metrics.batch_value == pytest.approx(1.0)  # V of c: 1 * 1 GPU * 2 slots * 0.5 h
    row = r.to_row()
    assert (row["objective"], row["mean_jct_hours"], row["jobs_censored"]) == ("flow", 3.5, 2)
    # re-planned every slot (FIFO-curve: FIFO-peak would reserve slot 1's actual peak, the
    # whole GPU), a and b start again at slot 2 and c finds no room to end by the horizon:
    # JCT a 4, b 5, c 6 + 2 - 1 = 7 slots; F = (1 * 4 + 2 * 5 + 1 * 7) * 0.5 = 10.5
    again = gpusched.simulate(inst, sc, "fifo-curve", replan=1, clairvoyant=False)
    assert dict(again.schedule.starts) == {"a": 2, "b": 2} and again.preemptions == 2
    assert again.schedule.indices["a"] == again.schedule.indices["b"] == {"n0": (0,)}
    assert again.mean_jct_hours == pytest.approx(16 / 3 * 0.5) and again.jobs_censored == 1
    assert again.realized_value == pytest.approx(10.5)


# ------------------------------------------------------------------ the bound
@pytest.mark.parametrize("objective", ["value", "flow"])
def test_clairvoyant_bound_is_on_the_objectives_side(objective):
    for seed in range(3):
        inst = tiny_v3_instance(seed, n=6, shape=(2, 2), T=8).replace(objective=objective)
        sc = _random_day(inst, seed)
        bound = clairvoyant_bound(inst, sc, time_limit=20)
        assert bound.objective == objective and bound.upper_bound == bound.bound
        for replan in (None, 1):
            r = gpusched.simulate(inst, sc, "list", replan, clairvoyant=bound)
            assert r.clairvoyant_bound == bound.bound
            assert r.price_of_uncertainty >= -1e-6 and r.gap_to_bound >= 0
            if objective == "flow":
                assert r.realized_value >= bound.bound - 1e-6
            else:
                assert r.realized_value <= bound.bound + 1e-6
    other = inst.replace(objective="value" if objective == "flow" else "flow")
    with pytest.raises(ValueError, match="clairvoyant: the bound was computed for another"):
        gpusched.simulate(other, sc, "list", clairvoyant=bound)


# ------------------------------------------------------------------ command line
def test_cli_simulate_on_a_version_3_instance(tmp_path, capsys):
    inst = instances.generate("openb-shares", 0).replace(objective="flow")
    inst_path, sc_path, out = tmp_path / "inst.json", tmp_path / "sc.json", tmp_path / "real.json"
    instances.save(inst, inst_path)
    assert main(["scenario", str(inst_path), "--sigma", "0.5", "--seed", "2", "-o", str(sc_path)]) == 0
    capsys.readouterr()
    assert main(["simulate", str(inst_path), "--scenario", str(sc_path), "--method", "list",
                 "--replan", "2", "--json", "--no-bound", "-o", str(out)]) == 0
    d = json.loads(capsys.readouterr().out.strip())
    loaded = instances.load(inst_path)
    sc = instances.load_scenario(sc_path, loaded)
    r = gpusched.simulate(loaded, sc, "list", replan=2, clairvoyant=False)
    assert d["objective"] == "flow"
    assert d["realized_value"] == pytest.approx(r.realized_value)
    assert d["mean_jct_hours"] == pytest.approx(r.mean_jct_hours)
    assert d["jobs_censored"] == r.jobs_censored
    assert all(isinstance(v, list) for p in d["placement"].values() for v in p.values())
    schedule = instances.load_schedule(out)
    assert schedule == r.schedule and schedule.lists_indices
    m = instances.evaluate(instances.actual_instance(loaded, sc), schedule)
    assert m.value == pytest.approx(d["realized_value"])
    assert main(["simulate", str(inst_path), "--scenario", str(sc_path), "--no-bound"]) == 0
    assert "mean JCT" in capsys.readouterr().out
