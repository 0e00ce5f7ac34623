"""milp.solve failure modes: never a crash, never a bound below a feasible value."""

from __future__ import annotations

import numpy as np
import pytest

import heuristics
import instances
import milp
import milp.solver as milp_solve
from instances import Instance, Job, Service, Status
from milp import RawSolve

BACKENDS = ["highs", "pulp", "cpsat"]


def contended() -> Instance:
    return instances.generate("hc-mixed", seed=0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_instance_without_jobs(backend: str) -> None:
    inst = Instance("empty", 4, 5, (Service("s", 1.0, (1, 2, 3, 2, 1)),), ())
    res = milp.solve(inst, backend=backend)
    assert res.status == "optimal"
    assert res.value == 0 and res.upper_bound == 0 and len(res.schedule) == 0
    assert res.method == milp.METHOD_NAMES[backend]


@pytest.mark.parametrize("backend", BACKENDS)
def test_job_that_fits_nowhere_is_not_run(backend: str) -> None:
    # the service leaves 2 GPUs at most; "big" needs 3 for 2 slots
    svc = Service("s", 1.0, (2, 2, 3, 2, 2, 3))
    inst = Instance("nowhere", 4, 6, (svc,), (Job("big", 3, 2, 5.0), Job("ok", 1, 2, 1.0)))
    form = milp.build(inst)
    assert set(form.col_job.tolist()) == {1}
    res = milp.solve(inst, backend=backend, time_limit=10)
    assert res.status == "optimal"
    assert dict(res.schedule.starts).keys() == {"ok"}
    assert res.upper_bound == pytest.approx(res.value)


def test_no_job_fits_at_all() -> None:
    inst = Instance("none", 2, 3, (Service("s", 1.0, (1, 1, 1)),), (Job("a", 2, 1),))
    res = milp.solve(inst)
    assert res.status == "optimal" and res.value == 0 and res.upper_bound == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_time_limit_zero(backend: str) -> None:
    inst = contended()
    res = milp.solve(inst, backend=backend, time_limit=0)
    assert res.status == "time_limit"
    assert res.value == 0 and len(res.schedule) == 0
    # the bound is the value of every job that has a usable start, above any schedule
    assert res.upper_bound == pytest.approx(milp.build(inst).trivial_bound)
    assert res.upper_bound >= heuristics.solve(inst, "list").value
    assert "before the solver started" in res.message


def test_no_incumbent_returns_the_warm_start_or_the_empty_schedule(monkeypatch) -> None:
    inst = contended()
    fake = RawSolve(Status.TIME_LIMIT, None, dual_bound=1e9, lp_bound=None, nodes=0)
    monkeypatch.setitem(milp_solve.BACKENDS, "highs", lambda form, **kw: fake)
    ws = heuristics.solve(inst, "fifo-curve")
    res = milp.solve(inst, warm_start=ws, time_limit=5)
    assert res.status == "time_limit"
    assert res.schedule == ws.schedule and res.value == pytest.approx(ws.value)
    assert res.upper_bound == pytest.approx(milp.build(inst).trivial_bound)  # tighter than 1e9
    res = milp.solve(inst, warm_start=None, time_limit=5)
    assert res.status == "time_limit" and len(res.schedule) == 0 and res.value == 0
    assert "no incumbent" in res.message


@pytest.mark.parametrize("backend", ["highs", "pulp"])
def test_solver_exception_gives_status_error(monkeypatch, backend: str) -> None:
    import highspy

    def boom(self):
        raise RuntimeError("injected solver failure")

    monkeypatch.setattr(highspy.Highs, "run", boom)
    inst = contended()
    ws = heuristics.solve(inst, "list")
    res = milp.solve(inst, backend=backend, warm_start=ws, time_limit=5)
    assert res.status == "error"
    assert "injected solver failure" in res.message
    assert res.value == pytest.approx(ws.value)  # the warm start survives
    assert res.upper_bound >= res.value


def test_cpsat_exception_gives_status_error(monkeypatch) -> None:
    from ortools.sat.python import cp_model

    def boom(self, *args, **kwargs):
        raise RuntimeError("injected CP-SAT failure")

    monkeypatch.setattr(cp_model.CpSolver, "solve", boom)
    res = milp.solve(contended(), backend="cpsat", time_limit=5, warm_start=None)
    assert res.status == "error" and "injected CP-SAT failure" in res.message


def test_portfolio_survives_one_failing_solver(monkeypatch) -> None:
    from ortools.sat.python import cp_model

    def boom(self, *args, **kwargs):
        raise RuntimeError("injected CP-SAT failure")

    monkeypatch.setattr(cp_model.CpSolver, "solve", boom)
    inst = instances.generate("small", seed=0)
    res = milp.solve(inst, backend="portfolio", threads=2, time_limit=10, mip_gap=0)
    assert res.status == "optimal"
    assert "injected CP-SAT failure" in res.message
    assert res.value == pytest.approx(milp.solve(inst, mip_gap=0).value)


def test_bound_below_a_feasible_value_is_flagged(monkeypatch) -> None:
    inst = contended()
    ws = heuristics.solve(inst, "list")
    lying = RawSolve(Status.OPTIMAL, None, dual_bound=ws.value / 2, lp_bound=None, nodes=1)
    monkeypatch.setitem(milp_solve.BACKENDS, "highs", lambda form, **kw: lying)
    res = milp.solve(inst, warm_start=ws, time_limit=5)
    assert res.status == "error"
    assert res.upper_bound is None
    assert "below the checked value" in res.message


def test_infeasible_incumbent_from_a_solver_is_rejected(monkeypatch) -> None:
    inst = contended()
    everything = np.array(inst.releases)  # every job at its release: over capacity
    with pytest.raises(instances.InfeasibleScheduleError):
        instances.evaluate(inst, instances.Schedule.from_array(inst, everything))
    bad = RawSolve(Status.OPTIMAL, everything, dual_bound=1e9, lp_bound=None, nodes=1)
    monkeypatch.setitem(milp_solve.BACKENDS, "highs", lambda form, **kw: bad)
    res = milp.solve(inst, warm_start=None, time_limit=5)
    assert res.status == "error" and "rejected by the checker" in res.message
    instances.evaluate(inst, res.schedule)


def test_model_over_max_columns_is_refused_before_building() -> None:
    jobs = tuple(Job(f"j{k}", 1, 1, 1.0 + k) for k in range(60))  # distinct: no aggregation
    inst = Instance("wide", 8, 100_000, (), jobs)
    with pytest.raises(ValueError, match="max_columns"):
        milp.build(inst)  # 6,000,000 candidate columns over the default
    small = Instance("w", 8, 1000, (), tuple(Job(f"j{k}", 1, 1, 1.0 + k) for k in range(60)))
    with pytest.raises(ValueError, match="max_columns=59999"):
        milp.solve(small, max_columns=59_999)
    assert milp.build(small, max_columns=60_000).num_cols == 60_000


@pytest.mark.parametrize(
    "kwargs,field",
    [({"backend": "gurobi"}, "backend"), ({"time_limit": -1}, "time_limit"),
     ({"mip_gap": 1.5}, "mip_gap"), ({"threads": 0}, "threads"),
     ({"warm_start": "fifo"}, "warm_start"), ({"warm_start": 3}, "warm_start"),
     ({"no_such_option": 1}, "params"), ({"backend": "cpsat", "root_lp": False}, "params")],
)
def test_bad_arguments_name_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        milp.solve(instances.generate("small", seed=0), **{"time_limit": 2, **kwargs})


def test_infeasible_warm_start_is_refused() -> None:
    inst = contended()
    bad = instances.Schedule(inst.name, {j.name: j.release for j in inst.jobs})
    with pytest.raises(ValueError, match="warm_start"):
        milp.solve(inst, warm_start=bad, time_limit=2)


def test_thread_count_can_change_between_solves() -> None:
    inst = instances.generate("small", seed=2)
    a = milp.solve(inst, threads=2, time_limit=10)
    b = milp.solve(inst, threads=1, time_limit=10)
    assert a.status == b.status == "optimal", (a.message, b.message)
    assert a.value == pytest.approx(b.value)


@pytest.mark.parametrize("backend", ["highs", "pulp"])
@pytest.mark.slow
def test_solving_prints_nothing_on_stdout(backend: str) -> None:
    """HiGHS's start-up banner would break the command line's one-line JSON."""
    import subprocess
    import sys

    code = (
        "import instances, milp; "
        f"milp.solve(instances.generate('small', seed=0), backend={backend!r}, time_limit=5)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == ""
