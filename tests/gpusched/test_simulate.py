"""The online replay (gpusched.simulate): the specification (docs/model.md)'s rules, case by case.

Hand-worked tiny days for every rule (preemption order, a planned start that
does not fit, restart from scratch, unserved inference), the exact-forecast
identity (realized = offline, nothing preempted) over methods and
instances, realized never above the clairvoyant bound over a sweep of
scenarios (and that bound against brute force), and a plain per-slot
reference of the rules for one plan that the simulator is held to.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from brute import brute_force, tiny_instance

import gpusched
import instances
from gpusched.cli import main
from gpusched.simulate import (
    RUNNING_SERVICE,
    ClairvoyantBound,
    SimResult,
    clairvoyant_bound,
    headroom_sweep,
    peak_headroom,
    plan_instance,
    scaled_forecast,
)
from instances import Instance, Job, Scenario, Service


def _day(G: int, forecast, actual, jobs, name: str = "day") -> tuple[Instance, Scenario]:
    inst = Instance(name, G, len(forecast), (Service("chat", 2.0, tuple(forecast)),), tuple(jobs))
    return inst, Scenario(name, {"chat": tuple(actual)})


def _exact(inst: Instance) -> Scenario:
    return Scenario(inst.name, {s.name: s.demand for s in inst.services})


# ------------------------------------------------------------------ hand-worked
def test_preempts_lowest_priority_first():
    # A (w=2) and B (w=1), 2 GPUs each for 4 slots, both planned at 0; at slot 2
    # inference needs 2 of the 4 GPUs: B goes (2 GPUs x 2 slots of work lost).
    jobs = [Job("A", 2, 4, priority=2.0), Job("B", 2, 4, priority=1.0)]
    inst, sc = _day(4, [0] * 6, [0, 0, 2, 0, 0, 0], jobs)
    r = gpusched.simulate(inst, sc, "list", clairvoyant=False)
    assert r.events == ((2, "B"),)
    assert (r.preemptions, r.lost_gpu_slots, r.jobs_preempted) == (1, 4, 1)
    assert dict(r.schedule.starts) == {"A": 0}
    assert r.realized_value == 2.0 * 2 * 4
    assert r.planned_value == 2.0 * 2 * 4 + 1.0 * 2 * 4


def test_priority_ties_preempt_the_latest_start():
    # equal priorities; A starts at 0, B (released at 1) at 1: B is preempted at 2.
    jobs = [Job("A", 2, 5), Job("B", 2, 3, release=1)]
    inst, sc = _day(4, [0] * 6, [0, 0, 2, 0, 0, 0], jobs)
    r = gpusched.simulate(inst, sc, "list", clairvoyant=False)
    assert r.events == ((2, "B"),)
    assert r.lost_gpu_slots == 2 * 1  # B ran slot 1 only
    assert dict(r.schedule.starts) == {"A": 0}


def test_start_ties_preempt_the_later_job_in_the_list():
    # equal priorities and starts: the later job of the list goes; swapping the
    # list swaps the victim
    jobs = [Job("A", 2, 4), Job("B", 2, 4)]
    inst, sc = _day(4, [0] * 6, [0, 3, 0, 0, 0, 0], jobs)
    r = gpusched.simulate(inst, sc, "list", clairvoyant=False)
    # 3 + 4 > 4: one preemption leaves 3 + 2 > 4, so both go, B first
    assert r.events == ((1, "B"), (1, "A"))
    inst, sc = _day(4, [0] * 6, [0, 1, 0, 0, 0, 0], jobs)
    assert gpusched.simulate(inst, sc, "list", clairvoyant=False).events == ((1, "B"),)
    inst2, sc2 = _day(4, [0] * 6, [0, 1, 0, 0, 0, 0], jobs[::-1])
    assert gpusched.simulate(inst2, sc2, "list", clairvoyant=False).events == ((1, "A"),)


def test_planned_start_that_does_not_fit_is_lost_without_replanning():
    # the plan starts A (2 GPUs) at 0, but slot 0 brings 3 GPUs of inference
    inst, sc = _day(4, [0] * 4, [3, 0, 0, 0], [Job("A", 2, 2)])
    r = gpusched.simulate(inst, sc, "list", clairvoyant=False)
    assert r.missed_starts == 1 and r.jobs_completed == 0 and r.realized_value == 0
    assert r.preemptions == 0
    # re-planned every slot, the plan of slot 1 starts it at 1
    r = gpusched.simulate(inst, sc, "list", replan=1, clairvoyant=False)
    assert r.missed_starts == 1
    assert dict(r.schedule.starts) == {"A": 1}
    assert r.realized_value == 1.0 * 2 * 2


def test_planned_starts_are_taken_in_job_list_order():
    # A and B (2 GPUs each) both planned at 0 on the forecast; the actual leaves
    # room for one: A, first in the list, starts, B does not
    jobs = [Job("A", 2, 2, priority=1.0), Job("B", 2, 2, priority=1.0)]
    inst, sc = _day(4, [0] * 3, [2, 0, 0], jobs)
    r = gpusched.simulate(inst, sc, "list", clairvoyant=False)
    assert dict(r.schedule.starts) == {"A": 0} and r.missed_starts == 1


def test_preempted_job_restarts_from_scratch_in_a_later_plan():
    # A (2 GPUs, 2 slots) starts at 0, is preempted at 1 by a spike, and the
    # plan of slot 2 starts it again from scratch: it runs 2..3
    inst, sc = _day(2, [0] * 4, [0, 1, 0, 0], [Job("A", 2, 2)])
    r = gpusched.simulate(inst, sc, "list", replan=1, clairvoyant=False)
    assert r.events == ((1, "A"),)
    assert r.lost_gpu_slots == 2
    assert dict(r.schedule.starts) == {"A": 2}
    assert r.realized_value == 4.0
    assert r.timeline["batch"].tolist() == [2, 0, 2, 2]
    # without replanning it is never restarted
    r = gpusched.simulate(inst, sc, "list", clairvoyant=False)
    assert r.jobs_completed == 0 and r.preemptions == 1
    # a window that closes before a restart can end: not restarted
    inst, sc = _day(2, [0] * 4, [0, 1, 0, 0], [Job("A", 2, 2, deadline=3)])
    r = gpusched.simulate(inst, sc, "list", replan=1, clairvoyant=False)
    assert r.jobs_completed == 0


def test_no_preempt_counts_unserved_inference():
    # A holds 3 of 4 GPUs in slots 0..2; inference 2 at slot 1 leaves 1 GPU unserved
    inst, sc = _day(4, [0] * 4, [0, 2, 1, 0], [Job("A", 3, 3)])
    r = gpusched.simulate(inst, sc, "list", preempt=False, bound_time_limit=10)
    assert r.preemptions == 0 and r.unserved_gpu_slots == 1
    assert r.timeline["unserved"].tolist() == [0, 1, 0, 0]
    assert r.timeline["served"].tolist() == [0, 1, 1, 0]
    assert dict(r.schedule.starts) == {"A": 0}
    assert r.utilization == pytest.approx((2 + 9) / 16)
    assert not r.bound_applies  # A's value was bought with unserved inference
    # the clairvoyant schedule cannot run A (inference 2 at slot 1 is hard)
    assert r.clairvoyant_bound == pytest.approx(0.0) and r.realized_value == 9.0
    # with preemption the same day loses A
    r = gpusched.simulate(inst, sc, "list", bound_time_limit=10)
    assert r.unserved_gpu_slots == 0 and r.preemptions == 1 and r.lost_gpu_slots == 3
    assert r.bound_applies


def test_no_preempt_starts_nothing_into_an_overloaded_slot():
    # B is planned at 1, where A and the spike already overload the pool
    jobs = [Job("A", 3, 3), Job("B", 1, 1, release=1)]
    inst, sc = _day(4, [0] * 4, [0, 2, 0, 0], jobs)
    r = gpusched.simulate(inst, sc, "fifo-curve", preempt=False, clairvoyant=False)
    assert r.missed_starts == 1 and "B" not in r.schedule.starts


def test_headroom_scales_the_forecast_rounded_up_and_capped():
    inst, _ = _day(8, [0, 1, 3, 7, 8, 10 // 2], [0] * 6, [])
    assert scaled_forecast(inst, 0.1).tolist() == [[0, 2, 4, 8, 8, 6]]
    assert scaled_forecast(inst, 0.0).tolist() == [list(inst.services[0].demand)]
    inst, _ = _day(12, [10], [0], [])
    assert scaled_forecast(inst, 0.1).tolist() == [[11]]  # not 12 from float noise


def test_headroom_keeps_jobs_off_the_spike():
    # forecast 1 at slot 2, actual 2: with H = 1 the plan reserves 2 and the
    # 3-GPU job waits until slot 3 instead of being preempted
    inst, sc = _day(4, [1, 1, 1, 0, 0, 0], [1, 1, 2, 0, 0, 0], [Job("A", 3, 2)])
    r0 = gpusched.simulate(inst, sc, "list", clairvoyant=False)
    assert r0.preemptions == 0 and dict(r0.schedule.starts) == {"A": 0}
    inst, sc = _day(4, [1, 1, 1, 0, 0, 0], [1, 2, 2, 0, 0, 0], [Job("A", 3, 2)])
    r0 = gpusched.simulate(inst, sc, "list", clairvoyant=False)
    r1 = gpusched.simulate(inst, sc, "list", headroom=1.0, clairvoyant=False)
    assert r0.preemptions == 1 and r0.jobs_completed == 0
    assert r1.preemptions == 0 and dict(r1.schedule.starts) == {"A": 3}


# ------------------------------------------------------------------ plan instance
def test_plan_instance_holds_running_jobs_and_past_actual():
    jobs = [Job("A", 2, 4), Job("B", 1, 2, release=1), Job("C", 1, 3, deadline=4)]
    inst, sc = _day(4, [1, 1, 1, 1, 1, 1], [2, 0, 1, 1, 1, 1], jobs)
    plan = plan_instance(inst, sc, 2, running={"A": 0})
    assert plan.services[0].demand == (2, 0, 1, 1, 1, 1)  # actual before 2, forecast from 2
    assert plan.services[1].name == RUNNING_SERVICE
    assert plan.services[1].demand == (0, 0, 2, 2, 0, 0)
    # B waits with release 2; C can no longer end by its deadline 4
    assert [j.name for j in plan.jobs] == ["B"]
    assert plan.jobs[0].release == 2
    # the arrays handed to the methods match a freshly built instance
    fresh = Instance(plan.name, plan.num_gpus, plan.horizon, plan.services,
                     tuple(Job(j.name, j.gpus, j.duration, j.priority, j.kind, j.release, j.deadline)
                           for j in plan.jobs))
    for key in ("gpus", "durations", "releases", "deadlines", "priorities", "job_values"):
        assert np.array_equal(getattr(plan, key), getattr(fresh, key)), key
        assert not getattr(plan, key).flags.writeable


def test_plan_instance_caps_running_work_at_the_pool():
    # forecast 3 of 4 GPUs from slot 1 with a 2-GPU job running: no room, not invalid
    inst, sc = _day(4, [0, 3, 3, 3], [0, 0, 0, 0], [Job("A", 2, 3), Job("B", 1, 1)])
    plan = plan_instance(inst, sc, 1, running={"A": 0})
    assert plan.services[1].demand == (0, 1, 1, 0)
    assert (plan.batch_capacity("curve")[1:3] == 0).all()


# ------------------------------------------------------------------ exact forecast
EXACT_METHODS = [
    ("fifo", {}), ("fifo-curve", {}), ("easy-peak", {}), ("conservative-curve", {}),
    ("list", {}), ("list-peak", {"rule": "value"}), ("parallel", {}),
    ("sampling", {"passes": 20, "seed": 1}),
    ("best", {"time_limit": None, "passes": 10, "iterations": 20, "lns_rounds": 0}),
    ("milp", {"time_limit": 20}),
]
EXACT_INSTANCES = [("seed-training-heavy", 0), ("hc-deadlines", 1), ("small", 2), ("hc-multi-service", 3)]


@pytest.mark.parametrize("family,seed", EXACT_INSTANCES)
@pytest.mark.parametrize("method,params", EXACT_METHODS, ids=[m for m, _ in EXACT_METHODS])
@pytest.mark.slow
def test_exact_forecast_realizes_the_offline_value(family, seed, method, params):
    inst = instances.generate(family, seed=seed)
    if method == "milp" and inst.num_jobs > 16:
        inst = inst.replace(jobs=inst.jobs[:16])
    offline = gpusched.solve(inst, method, **params)
    r = gpusched.simulate(inst, _exact(inst), method, clairvoyant=False, **params)
    assert r.preemptions == 0 and r.missed_starts == 0 and r.lost_gpu_slots == 0
    assert r.realized_value == pytest.approx(offline.value, rel=1e-9)
    assert r.planned_value == pytest.approx(offline.value, rel=1e-9)
    assert r.utilization == pytest.approx(offline.metrics.utilization)
    if method != "milp":  # the MILP may pick another optimal schedule
        assert dict(r.schedule.starts) == dict(offline.schedule.starts)
    # re-planning on an exact forecast never preempts and never misses a start
    r1 = gpusched.simulate(inst, _exact(inst), method, replan=3, clairvoyant=False, **params)
    assert r1.preemptions == 0 and r1.missed_starts == 0
    instances.evaluate(inst, r1.schedule)


def test_exact_forecast_with_headroom_realizes_the_plan():
    inst = instances.generate("hc-mixed", seed=0)
    r = gpusched.simulate(inst, _exact(inst), "list", headroom=0.3, clairvoyant=False)
    assert r.preemptions == 0 and r.realized_value == pytest.approx(r.planned_value)


# ------------------------------------------------------------------ the bound
def _sweep_instances() -> list[Instance]:
    return [instances.generate("seed-training-heavy", seed=1), instances.generate("small", seed=4)]


@pytest.mark.parametrize("inst", _sweep_instances(), ids=lambda i: i.name)
@pytest.mark.slow
def test_realized_value_never_above_the_clairvoyant_bound(inst):
    checked = 0
    for sigma, seed in ((0.1, 0), (0.3, 1), (0.5, 2)):
        sc = instances.scenario(inst, "lognormal", seed=seed, sigma=sigma, rho=0.6)
        cb = clairvoyant_bound(inst, sc, time_limit=20)
        assert cb.status == "optimal"
        actual = instances.actual_instance(inst, sc)
        for method in ("fifo", "list", "best"):
            params = ({"time_limit": None, "passes": 5, "iterations": 10, "lns_rounds": 0}
                      if method == "best" else {})
            for replan in (None, 2):
                for headroom in (0.0, 0.25):
                    for preempt in (True, False):
                        r = gpusched.simulate(inst, sc, method, replan, headroom, preempt,
                                              clairvoyant=cb, **params)
                        if r.bound_applies:
                            assert r.realized_value <= r.clairvoyant_bound + 1e-9
                            assert r.price_of_uncertainty >= -1e-9
                            m = instances.evaluate(actual, r.schedule)
                            assert m.value == pytest.approx(r.realized_value)
                            checked += 1
                        else:
                            assert not preempt and r.unserved_gpu_slots > 0
    assert checked >= 3 * 3 * 2 * 2


@pytest.mark.parametrize("seed", range(4))
def test_clairvoyant_bound_is_the_brute_force_optimum(seed):
    inst = tiny_instance(seed, n=5, G=4, T=8)
    sc = instances.scenario(inst, "lognormal", seed=seed, sigma=0.6, rho=0.3)
    cb = clairvoyant_bound(inst, sc, time_limit=20)
    best, _ = brute_force(instances.actual_instance(inst, sc))
    assert cb.upper_bound == pytest.approx(best, abs=1e-6)
    r = gpusched.simulate(inst, sc, "list", replan=1, clairvoyant=cb)
    assert r.realized_value <= best + 1e-9


def test_a_bound_below_a_feasible_realized_value_is_refused():
    inst, sc = _day(4, [0] * 4, [0] * 4, [Job("A", 2, 2)])
    r = gpusched.simulate(inst, sc, "list", bound_time_limit=10)
    assert r.realized_value == 4.0 and r.clairvoyant_bound == pytest.approx(4.0)
    fake = ClairvoyantBound(inst.name, sc, 3.0, 3.0, "optimal", 0.0, 1.0)
    with pytest.raises(ValueError, match="clairvoyant_bound"):
        gpusched.simulate(inst, sc, "list", clairvoyant=fake)


def test_a_bound_for_another_scenario_is_refused():
    inst, sc = _day(4, [0] * 4, [0] * 4, [Job("A", 2, 2)])
    cb = clairvoyant_bound(inst, sc, time_limit=5)
    other = Scenario(inst.name, {"chat": (1, 1, 1, 1)})
    with pytest.raises(ValueError, match="clairvoyant"):
        gpusched.simulate(inst, other, "list", clairvoyant=cb)


# ------------------------------------------------------------------ reference
def _reference(inst: Instance, sc: Scenario, plan: dict[str, int], preempt: bool):
    """the specification (docs/model.md) for one plan, slot by slot, written plainly."""
    G, T = inst.num_gpus, inst.horizon
    a = [sum(sc.actual[s.name][t] for s in inst.services) for t in range(T)]
    pos = {j.name: k for k, j in enumerate(inst.jobs)}
    job = {j.name: j for j in inst.jobs}
    running: dict[str, int] = {}
    done: dict[str, int] = {}
    events, lost, unserved = [], 0, 0
    for t in range(T):
        for name, s in list(running.items()):
            if s + job[name].duration == t:
                done[name] = s
                del running[name]
        used = sum(job[n].gpus for n in running)
        if preempt:
            while a[t] + used > G:
                victim = sorted(running, key=lambda n: (job[n].priority, -running[n], -pos[n]))[0]
                lost += job[victim].gpus * (t - running[victim])
                used -= job[victim].gpus
                del running[victim]
                events.append((t, victim))
        else:
            unserved += max(0, a[t] + used - G)
        for name in sorted((n for n, s in plan.items() if s == t), key=pos.get):
            if name not in done and a[t] + used + job[name].gpus <= G:
                running[name] = t
                used += job[name].gpus
    done.update(running)
    return done, events, lost, unserved


@pytest.mark.parametrize("preempt", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_one_plan_matches_the_plain_reference(seed, preempt):
    inst = instances.generate("hc-multi-service" if seed % 2 else "hc-bursty", seed=seed)
    sc = instances.scenario(inst, "lognormal", seed=seed, sigma=0.35, rho=0.5)
    H = 0.1 * (seed % 3)
    fc = scaled_forecast(inst, H)
    planned = inst.replace(services=tuple(
        Service(s.name, s.priority, tuple(fc[k].tolist())) for k, s in enumerate(inst.services)))
    plan = dict(gpusched.solve(planned, "list").schedule.starts)
    done, events, lost, unserved = _reference(inst, sc, plan, preempt)
    r = gpusched.simulate(inst, sc, "list", headroom=H, preempt=preempt, clairvoyant=False)
    assert dict(r.schedule.starts) == done
    assert list(r.events) == events
    assert (r.lost_gpu_slots, r.unserved_gpu_slots) == (lost, unserved)


# ------------------------------------------------------------------ results
def test_result_row_and_json():
    inst = instances.generate("seed-training-heavy", seed=0)
    sc = instances.scenario(inst, "lognormal", seed=3, sigma=0.3, rho=0.5)
    r = gpusched.simulate(inst, sc, "list", replan=4, headroom=0.1, bound_time_limit=20)
    assert isinstance(r, SimResult)
    row = r.to_row()
    for key in ("realized_value", "preemptions", "lost_gpu_slots", "unserved_gpu_slots",
                "utilization", "clairvoyant_bound"):
        assert key in row
    assert all(not isinstance(v, (np.ndarray, list, tuple)) for v in row.values())
    assert row["scenario_model"] == "lognormal" and row["scenario_params"]["sigma"] == 0.3
    assert row["price_of_uncertainty"] == pytest.approx(r.clairvoyant_bound - r.realized_value)
    js = json.loads(json.dumps(r.to_json(), allow_nan=False))
    assert js["starts"] == dict(r.schedule.starts)
    assert len(js["preempted"]) == r.preemptions
    assert r.utilization == pytest.approx(r.metrics.utilization)
    again = gpusched.simulate(inst, sc, "list", replan=4, headroom=0.1, clairvoyant=False)
    keep = [k for k in row if not k.endswith("runtime_s") and "bound" not in k
            and k not in ("clairvoyant_value", "price_of_uncertainty")]
    assert {k: again.to_row()[k] for k in keep} == {k: row[k] for k in keep}


@pytest.mark.parametrize(
    "kwargs,field",
    [({"headroom": -0.1}, "headroom"), ({"headroom": math.nan}, "headroom"),
     ({"headroom": "1"}, "headroom"), ({"replan": 0}, "replan"), ({"replan": -2}, "replan"),
     ({"replan": True}, "replan"), ({"replan": 1.5}, "replan"), ({"preempt": 1}, "preempt"),
     ({"method": "nope"}, "method")],
)
def test_bad_policy_is_a_value_error_naming_the_field(kwargs, field):
    inst, sc = _day(4, [0] * 4, [0] * 4, [Job("A", 2, 2)])
    args = {"method": "list", **kwargs}
    with pytest.raises(ValueError, match=field):
        gpusched.simulate(inst, sc, clairvoyant=False, **args)


def test_scenario_for_another_instance_is_refused():
    inst, _ = _day(4, [0] * 4, [0] * 4, [Job("A", 2, 2)])
    with pytest.raises(ValueError, match="instance"):
        gpusched.simulate(inst, Scenario("other", {"chat": (0,) * 4}), "list", clairvoyant=False)


# ------------------------------------------------------------------ command line
def test_cli_scenario_then_simulate(tmp_path, capsys):
    inst_path, sc_path = tmp_path / "inst.json", tmp_path / "sc.json"
    assert main(["generate", "seed-training-heavy", "--seed", "0", "-o", str(inst_path)]) == 0
    assert main(["scenario", str(inst_path), "--model", "lognormal", "--sigma", "0.2",
                 "--rho", "0.5", "--seed", "0", "-o", str(sc_path)]) == 0
    sc = instances.load_scenario(sc_path, instances.load(inst_path))
    assert sc.meta["params"] == {"sigma": 0.2, "rho": 0.5, "mean_one": True}
    capsys.readouterr()
    assert main(["simulate", str(inst_path), "--scenario", str(sc_path), "--method", "list",
                 "--replan", "2", "--headroom", "0.1", "--json", "--bound-time-limit", "20"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1
    d = json.loads(out[0])
    r = gpusched.simulate(instances.load(inst_path), sc, "list", replan=2, headroom=0.1,
                          clairvoyant=False)
    assert d["realized_value"] == pytest.approx(r.realized_value)
    assert d["preemptions"] == r.preemptions and d["clairvoyant_bound"] is not None
    assert main(["simulate", str(inst_path), "--scenario", str(sc_path), "--method", "fifo",
                 "--no-preempt", "--no-bound"]) == 0
    assert "no preempt" in capsys.readouterr().out


@pytest.mark.parametrize(
    "extra,field",
    [(["--headroom", "-1"], "--headroom"), (["--replan", "0"], "--replan"),
     (["--method", "nope"], "method")],
)
def test_cli_bad_policy_exit_2_one_line(tmp_path, capsys, extra, field):
    inst_path, sc_path = tmp_path / "inst.json", tmp_path / "sc.json"
    main(["generate", "seed-training-heavy", "-o", str(inst_path)])
    main(["scenario", str(inst_path), "-o", str(sc_path)])
    capsys.readouterr()
    argv = ["simulate", str(inst_path), "--scenario", str(sc_path), "--method", "list", *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and field in err[0] and "Traceback" not in err[0]


# ------------------------------------------------------------------ trade-off and plots
def test_peak_headroom_reserves_the_peak():
    inst, _ = _day(8, [2, 4, 6, 0, 3], [0] * 5, [])
    H = peak_headroom(inst)
    assert abs(H - 2.0) < 1e-12
    f = scaled_forecast(inst, H)[0]
    assert (f[inst.total_demand > 0] >= 6).all()
    assert not (scaled_forecast(inst, H * 0.75)[0][inst.total_demand > 0] >= 6).all()


def test_headroom_sweep_and_plots(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from gpusched.plots_simulation import plot_day_timeline, plot_tradeoff

    inst = instances.generate("seed-training-heavy", seed=0)
    sc = instances.scenario(inst, "lognormal", seed=1, sigma=0.3, rho=0.6)
    res, base = headroom_sweep(inst, sc, "list", [0.0, 0.5, 1.0], bound_time_limit=20)
    assert [r.headroom for r in res] == [0.0, 0.5, 1.0] and base.method == "fifo"
    assert base.replan is None and base.headroom == 0.0
    assert len({r.clairvoyant_bound for r in [*res, base]}) == 1  # one bound for the sweep
    ax = plot_tradeoff(res, x="preemptions", baseline=base)
    ys = sorted(line.get_ydata()[0] for line in ax.get_lines() if len(line.get_ydata()) == 1)
    assert base.realized_value in ys
    curve = next(line for line in ax.get_lines() if len(line.get_ydata()) == 3)
    assert list(curve.get_xdata()) == [r.preemptions for r in res]
    assert list(curve.get_ydata()) == [r.realized_value for r in res]
    plot_tradeoff([r.to_row() for r in res], x="lost_gpu_slots")
    with pytest.raises(ValueError, match="x"):
        plot_tradeoff(res, x="value")
    r = res[0]
    assert r.preemptions > 0
    ax = plot_day_timeline(r, num_gpus=inst.num_gpus)
    marks = [line for line in ax.get_lines() if line.get_marker() == "x"]
    assert len(marks) == 1 and len(marks[0].get_xdata()) == int((r.timeline["preempted"] > 0).sum())
    ax.figure.savefig(tmp_path / "t.png")
    with pytest.raises(ValueError, match="day"):
        plot_day_timeline(r, day=5)
