"""matheuristics.exact: the MILP as users run it by name (auto warm start, the LNS helper)."""

from __future__ import annotations

import pytest
from brute import brute_force, tiny_instance

import gpusched
import heuristics
import instances
import matheuristics
import milp
from matheuristics import solve_milp, warm_start_schedule


def test_the_auto_warm_start_is_best_within_a_tenth_of_the_limit_and_ten_seconds() -> None:
    inst = instances.generate("small", seed=4)
    assert warm_start_schedule(inst, 0) is None
    short = warm_start_schedule(inst, 5)
    assert short is not None and short.method == "best"
    assert short.params["time_limit"] == pytest.approx(0.5)
    long = warm_start_schedule(inst, 1000)
    assert long is not None and long.params["time_limit"] == pytest.approx(10.0)


def test_solve_milp_is_milp_solve_from_the_best_heuristic() -> None:
    inst = instances.generate("small", seed=4)
    res = solve_milp(inst, time_limit=5, mip_gap=0)
    assert res.params["warm_start"] == "best" and res.params["time_limit"] == 5
    assert res.status == "optimal"
    ws = warm_start_schedule(inst, 5)
    assert ws is not None
    direct = milp.solve(inst, time_limit=5, mip_gap=0, warm_start=ws)
    assert res.value == pytest.approx(direct.value)
    assert res.value >= ws.value - 1e-9
    assert inst.num_jobs == 6
    opt, _ = brute_force(inst)
    assert res.value == pytest.approx(opt) and res.upper_bound == pytest.approx(opt)


def test_solve_milp_takes_what_milp_solve_takes() -> None:
    inst = tiny_instance(5, n=5, G=4, T=8)
    opt, _ = brute_force(inst)
    fifo = heuristics.solve(inst, "fifo-curve")
    for ws in (None, fifo, fifo.schedule, fifo.schedule.to_array(inst)):
        res = solve_milp(inst, time_limit=10, mip_gap=0, warm_start=ws)
        assert res.status == "optimal" and res.value == pytest.approx(opt)
    with pytest.raises(ValueError, match="warm_start"):
        solve_milp(inst, time_limit=1, warm_start="fifo")


@pytest.mark.slow
def test_the_runtime_covers_the_warm_start() -> None:
    inst = instances.generate("hc-mixed", seed=1)
    res = solve_milp(inst, time_limit=4)
    assert res.params["warm_start"] == "best"
    assert 0.4 <= res.runtime_s <= 4 + 3.0  # the warm start alone may take 0.4 s


def test_lns_helper_is_for_highs_only() -> None:
    inst = instances.generate("small", seed=1)
    with pytest.raises(ValueError, match="lns_helper"):
        solve_milp(inst, time_limit=1, backend="cpsat", lns_helper=True)


def test_gpusched_runs_the_milp_through_solve_milp(monkeypatch: pytest.MonkeyPatch) -> None:
    inst = instances.generate("small", seed=2)  # not of the wide class (its rule: CP-SAT first)
    calls: list[dict[str, object]] = []
    real = matheuristics.solve_milp

    def spy(inst_: instances.Instance, **kw: object) -> instances.Result:
        calls.append(kw)
        return real(inst_, **kw)

    monkeypatch.setattr(matheuristics, "solve_milp", spy)
    res = gpusched.solve(inst, "milp", time_limit=5, threads=2)
    assert calls and calls[0]["backend"] == "highs" and calls[0]["threads"] == 2
    assert "LNS helper" in res.message  # on by default on two threads, as before
    assert res.params["warm_start"] == "best"


def _roomy() -> instances.Instance:
    """Four 1-GPU jobs that all fit at once beside a service holding 1 of the 8 GPUs."""
    jobs = tuple(instances.Job(f"j{k}", 1, 3, 1.0 + k) for k in range(4))
    return instances.Instance("roomy", 8, 6, (instances.Service("svc", 2.0, (1,) * 6),), jobs)


@pytest.mark.parametrize("backend", ["highs", "cpsat"])
def test_a_warm_start_running_every_job_is_not_searched(backend: str) -> None:
    inst = _roomy()
    res = solve_milp(inst, time_limit=30, threads=2, backend=backend)
    assert res.status == "optimal" and res.bound_method == "sum-of-values"
    assert res.value == pytest.approx(float(inst.job_values.sum()))
    assert instances.evaluate(inst, res.schedule).value == pytest.approx(res.value)
    assert res.nodes is None and "not searched" in res.message
    assert res.params["incumbent_from"] == "best" and res.params["bound_from"] == "sum-of-values"
    assert res.params["sources"] == [] and res.runtime_s < 20
    # a job too long to fit beside the others: the solver searches, and proves the optimum
    wide = inst.replace(jobs=(*inst.jobs, instances.Job("wide", 7, 6, 5.0)))
    searched = solve_milp(wide, time_limit=30, threads=2, backend=backend)
    assert "not searched" not in searched.message and searched.nodes is not None
    assert searched.value == pytest.approx(brute_force(wide)[0])


def test_the_peak_reservation_is_searched_though_every_job_runs() -> None:
    """Under peak the curve schedule of ``best`` is no warm start: no early answer."""
    res = solve_milp(_roomy(), time_limit=30, threads=1, reservation="peak")
    assert "not searched" not in res.message
