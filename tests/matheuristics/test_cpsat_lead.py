"""CP-SAT first on every thread, then HiGHS's parallel search (a Plan's ``lead``): the plan's
arguments, whole solves against brute force, and the lead's bound held as a source's."""

from __future__ import annotations

import pytest
from brute import brute_force, tiny_instance

import instances
from matheuristics import solve_milp
from matheuristics.lead import better_start, cpsat_lead, lead_bound
from matheuristics.portfolio import LEAD, Plan, account, is_wide, plan

SMALL_WIDE = {"num_gpus": 8, "horizon": 10, "num_jobs": 6, "peak": 4}


def test_the_plans_lead_and_its_arguments() -> None:
    assert Plan(()).lead == 0.0
    assert Plan((), lead=0.25).lead == 0.25
    with pytest.raises(ValueError, match="lead"):
        Plan((), lead=1.0)
    with pytest.raises(ValueError, match="lead"):
        Plan((), lead=-0.1)
    with pytest.raises(ValueError, match="lead"):
        Plan(("lns",), lead=0.25)  # CP-SAT first takes every thread


@pytest.mark.parametrize("make", [
    lambda s: tiny_instance(s, n=7, G=4, T=10),
    lambda s: instances.generate("wide", seed=s, **SMALL_WIDE),
], ids=["tiny", "small-wide"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_solve_with_a_lead_is_checked_and_bounded(make, seed: int) -> None:
    inst = make(seed)
    opt, _ = brute_force(inst)
    res = solve_milp(inst, time_limit=4, threads=2, sources=Plan((), lead=0.5))
    assert instances.evaluate(inst, res.schedule).value == pytest.approx(res.value)
    assert res.upper_bound is not None and res.upper_bound >= opt - 1e-6
    assert res.value <= opt + 1e-9
    assert res.params["incumbent_from"] in ("cpsat", "highs", "best")
    assert res.params["bound_from"] and res.params["sources"] == []


def test_the_lead_alone_and_the_better_start() -> None:
    inst = instances.generate("wide", seed=3, **SMALL_WIDE)
    opt, _ = brute_force(inst)
    fifo = solve_milp(inst, time_limit=0.0, threads=1)  # the warm start alone
    lead = cpsat_lead(inst, fifo, 4.0, 2, {"mip_gap": 0.0, "rounding": (2, 4)})
    assert lead is not None and lead.method == "cpsat"
    assert instances.evaluate(inst, lead.schedule).value == pytest.approx(lead.value)
    bound = lead_bound(inst, lead)
    assert bound is not None and bound >= opt - 1e-6 and lead.value <= opt + 1e-9
    assert better_start(inst, None, fifo) is fifo
    assert better_start(inst, lead, fifo) is (fifo if fifo.value > lead.value else lead)
    assert better_start(inst, lead, lead.schedule) is lead


def test_the_leads_bound_is_held_as_a_sources() -> None:
    inst = instances.generate("wide", seed=1, **SMALL_WIDE)
    res = solve_milp(inst, time_limit=0.0, threads=1)
    assert res.upper_bound is not None and res.upper_bound > res.value  # the trivial bound
    out = account(inst, res, None, more=[(res.value + 0.4, "cpsat")])
    assert out.upper_bound == res.value and out.params["bound_from"] == "cpsat"  # rounded down
    assert str(out.status) == "optimal"
    wrong = account(inst, res, None, more=[(res.value - 5.0, "cpsat")])
    assert wrong.upper_bound == res.upper_bound and "bug" in wrong.message


def test_the_rule_leads_with_cpsat_on_the_wide_class_only() -> None:
    wide = instances.generate("wide", seed=0)
    assert is_wide(wide)
    assert plan(wide, 2, 60) == Plan((), lead=LEAD, reason=plan(wide, 2, 60).reason)
    assert plan(wide, 1, 60).lead == 0.0  # one thread: HiGHS alone
    # medium seeds 8 and 10: most work in jobs two of which do not fit, but 12.4 and 12.5
    # jobs per GPU, where the LNS kept the lead
    for seed in (8, 10):
        inst = instances.generate("medium", seed=seed)
        assert not is_wide(inst) and plan(inst, 2, 60).sources == ("lns",)
    assert not is_wide(instances.generate("hc-multi-service", seed=0))  # small jobs
    assert not is_wide(wide.replace(objective="flow"))  # measured under value only
    assert not is_wide(wide.replace(jobs=()))


def test_a_lead_that_proves_the_optimum_answers_as_the_milp_method() -> None:
    inst = instances.generate("wide", seed=0, **SMALL_WIDE)
    opt, _ = brute_force(inst)
    res = solve_milp(inst, time_limit=10, threads=2, sources=Plan((), lead=0.5))
    assert res.method == "milp" and res.value == pytest.approx(opt)
    assert str(res.status) == "optimal" and res.upper_bound == pytest.approx(opt)
    assert res.params["incumbent_from"] in ("cpsat", "highs", "best")


def test_a_lead_is_named_and_refused_under_the_peak_reservation() -> None:
    assert Plan((), lead=0.25).parts() == ["CP-SAT lead"]
    assert Plan(("lns",), lp=True).parts() == ["lns", "LP start"] and Plan(()).parts() == []
    inst = instances.generate("wide", seed=0, **SMALL_WIDE)
    with pytest.raises(ValueError, match="peak reservation"):
        solve_milp(inst, time_limit=2, threads=2, reservation="peak", sources=Plan((), lead=0.5))
    # the rule's lead under peak: HiGHS alone, said so
    res = solve_milp(inst, time_limit=4, threads=2, reservation="peak")
    assert "['CP-SAT lead'] not run" in res.message
