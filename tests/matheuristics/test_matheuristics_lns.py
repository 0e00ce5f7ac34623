"""matheuristics.lns and the LNS below it: the neighbourhoods, the sub-instance, the
parameters, the LP-guided escape, the fast path."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import heuristics
import instances
import milp
from heuristics import start_value
from heuristics.stop import budget
from instances import Instance, Job
from matheuristics import windows
from matheuristics.guide import guided_instance
from matheuristics.params import LNSParams
from matheuristics.search import lns_improve
from matheuristics.windows import sub_instance, window_jobs
from milp.highs import lp_solution


def _packed() -> tuple[Instance, np.ndarray]:
    """Ten 1-GPU jobs back to back in slots 0-9 of a 1-GPU pool, and ten not run.

    The not-run jobs ``late*`` have priority 1, except ``late0`` (priority 100).
    """
    run = tuple(Job(f"run{i}", 1, 1, 1.0) for i in range(10))
    late = tuple(Job(f"late{i}", 1, 1, 100.0 if i == 0 else 1.0) for i in range(10))
    inst = Instance("packed", 1, 10, (), run + late)
    start = np.array(list(range(10)) + [-1] * 10, dtype=np.int64)
    return inst, start


def test_a_window_keeps_room_for_jobs_not_run() -> None:
    inst, start = _packed()
    rng = np.random.default_rng(0)
    for share, want_late in [(0.0, 0), (0.5, 3), (1.0, 6)]:
        freed = window_jobs(inst, start, 0, 10, 6, rng, share=share)
        assert freed.size == 6 and np.unique(freed).size == 6
        assert int((freed >= 10).sum()) == want_late
        assert np.all(start[freed[freed < 10]] >= 0)  # the others are running jobs of the window


def test_a_window_frees_only_jobs_inside_it_and_jobs_that_fit_in_it() -> None:
    inst = instances.generate("medium", seed=5)
    start = heuristics.solve(inst, "list", rule="density").schedule.to_array(inst)
    rng = np.random.default_rng(1)
    dur, rel, dl = inst.durations, inst.releases, inst.deadlines
    for a, b in [(0, 42), (60, 116), (126, 168)]:
        freed = window_jobs(inst, start, a, b, 30, rng)
        assert 0 < freed.size <= 30 and np.unique(freed).size == freed.size
        run = freed[start[freed] >= 0]
        assert np.all((start[run] >= a) & (start[run] + dur[run] <= b))
        idle = freed[start[freed] < 0]
        assert idle.size >= min(15, int(((start < 0) & (np.maximum(rel, a) + dur
                                                         <= np.minimum(dl, b))).sum()))
        assert np.all(np.maximum(rel[idle], a) + dur[idle] <= np.minimum(dl[idle], b))


def test_not_run_jobs_are_drawn_by_value_density() -> None:
    inst, start = _packed()
    rng = np.random.default_rng(2)
    picks = np.concatenate([window_jobs(inst, start, 0, 10, 2, rng, share=0.5) for _ in range(400)])
    late = picks[picks >= 10]
    assert late.size == 400
    # late0 has 100 times the density of each of the nine others: drawn ~92% of the time
    assert (late == 10).mean() > 0.8


def test_jobs_of_tiny_priority_can_still_be_drawn() -> None:
    jobs = (Job("run", 1, 1), Job("a", 1, 1, 1e300), Job("b", 1, 1, 1e-300), Job("c", 1, 1, 1e-300))
    inst = Instance("spread", 1, 2, (), jobs)
    start = np.array([0, -1, -1, -1], dtype=np.int64)
    freed = window_jobs(inst, start, 0, 2, 3, np.random.default_rng(0), share=1.0)
    assert sorted(freed.tolist()) == [1, 2, 3]


@pytest.mark.parametrize("share", [-0.1, 1.5, float("nan")])
def test_share_out_of_range_is_refused(share: float) -> None:
    inst, start = _packed()
    with pytest.raises(ValueError, match="share"):
        window_jobs(inst, start, 0, 10, 4, np.random.default_rng(0), share=share)


def test_sub_instance_keeps_the_fixed_jobs_capacity_out() -> None:
    inst = Instance("sub", 4, 6, (), (
        Job("fixed", 3, 2), Job("moving", 1, 2, release=1), Job("idle", 2, 3, deadline=6),
    ))
    start = np.array([1, 3, -1], dtype=np.int64)
    sub, warm = sub_instance(inst, start, 1, 6, np.array([1, 2]))
    assert sub.horizon == 5 and [j.name for j in sub.jobs] == ["moving", "idle"]
    # slots 1-2 hold the fixed job's 3 GPUs: 1 left there, 4 after
    assert sub.batch_capacity("curve").tolist() == [1, 1, 4, 4, 4]
    assert [j.release for j in sub.jobs] == [0, 0] and sub.jobs[1].deadline == 5
    assert warm.tolist() == [2, -1]  # a start array of the sub-instance
    assert warm.dtype == np.int64


@pytest.mark.slow
def test_lns_with_room_for_new_jobs_never_loses_value() -> None:
    inst = instances.generate("medium", seed=3)
    start = heuristics.solve(inst, "fifo-curve").schedule.to_array(inst)
    for share in (0.0, 0.5, 1.0):
        out, _, rounds, _ = lns_improve(inst, start, stop=budget(None, 6),
                                        params=LNSParams(share=share, seed=4))
        assert rounds == 6
        assert inst.job_values[out >= 0].sum() >= inst.job_values[start >= 0].sum() - 1e-9
        instances.evaluate(inst, instances.Schedule.from_array(inst, out), enforce_reservation=True)


# ------------------------------------------------------------ the LP-guided escape
def _blocked(small: float = 1.1) -> tuple[Instance, np.ndarray]:
    """A 4-GPU pool over 8 slots held by one job worth 32; eight 1-slot jobs worth ``32 small``.

    ``big`` (4 GPUs for 8 slots, priority 1) runs; ``s0``-``s7`` (4 GPUs for
    one slot, priority ``small``, 4.4 each by default) do not. Only all
    eight beat ``big``, and a window frees at most ``big`` and a few of
    them, so a window search that keeps the real values never lets ``big`` go.
    """
    jobs = (Job("big", 4, 8, 1.0), *(Job(f"s{i}", 4, 1, small) for i in range(8)))
    inst = Instance("blocked", 4, 8, (), jobs)
    start = np.array([0] + [-1] * 8, dtype=np.int64)
    return inst, start


def test_run_mass_of_a_schedule_is_one_for_the_jobs_it_runs() -> None:
    inst = instances.generate("small", seed=1)
    form = milp.build(inst)
    start = heuristics.solve(inst, "list", rule="density").schedule.to_array(inst)
    mass = form.run_mass(form.encode(start))
    assert np.array_equal(mass, (start >= 0).astype(float))
    with pytest.raises(ValueError, match="x:"):
        form.run_mass(np.zeros(form.num_cols + 1))


def test_run_mass_shares_a_group_of_identical_jobs() -> None:
    jobs = tuple(Job(f"j{i}", 1, 2, 1.0) for i in range(3))
    inst = Instance("twins", 1, 4, (), jobs)
    form = milp.build(inst, aggregate=True)
    assert len(form.groups) == 1
    x = np.zeros(form.num_cols)
    x[0] = 1.5  # one and a half runs of the group, over three jobs
    assert np.allclose(form.run_mass(x), 0.5)


def test_the_root_lp_of_the_blocked_instance_drops_the_blocking_job() -> None:
    inst, _ = _blocked()
    form = milp.build(inst)
    lp = lp_solution(form, 10)
    assert lp is not None
    bound, x = lp
    assert bound == pytest.approx(35.2)
    mass = form.run_mass(x)
    assert mass[0] == pytest.approx(0.0) and np.allclose(mass[1:], 1.0)


def test_a_guided_instance_lowers_only_running_jobs_the_lp_leaves_out() -> None:
    inst, start = _blocked()
    start = start.copy()
    start[1] = -1
    guide = np.array([0.0, 0.0] + [1.0] * 7)
    guided = guided_instance(inst, start, guide, 0.25)
    assert guided is not None
    assert guided.priorities[0] == pytest.approx(0.25)  # runs, LP mass 0
    assert np.array_equal(guided.priorities[1:], inst.priorities[1:])  # not run, or LP mass 1
    assert guided_instance(inst, start, np.ones(9)) is None  # the LP runs every job
    with pytest.raises(ValueError, match="weight"):
        guided_instance(inst, start, guide, 0.0)


def _search(guide: np.ndarray | None) -> np.ndarray:
    inst, start = _blocked()
    params = LNSParams(max_jobs=2, stall_rounds=2, escape_rounds=20, escape_weight=0.1, seed=1)
    out, _, _, _ = lns_improve(inst, start, stop=budget(None, 60), params=params, guide=guide)
    instances.evaluate(inst, instances.Schedule.from_array(inst, out), enforce_reservation=True)
    return out


@pytest.mark.slow
def test_an_escape_gets_past_a_job_the_windows_never_let_go(
        caplog: pytest.LogCaptureFixture) -> None:
    inst, _ = _blocked()
    plain = _search(None)  # widened windows free at most 6 jobs: big stays
    assert start_value(inst, plain) == pytest.approx(32.0)
    with caplog.at_level(logging.DEBUG, logger="matheuristics.search"):
        guided = _search(np.array([0.0] + [1.0] * 8))
    assert start_value(inst, guided) == pytest.approx(35.2)
    assert guided[0] == -1 and np.all(guided[1:] >= 0)
    assert any("escape at round" in r.getMessage() for r in caplog.records)


def test_an_escape_that_does_not_pay_goes_back_to_the_schedule_it_left(
        caplog: pytest.LogCaptureFixture) -> None:
    # the guide wrongly asks big (32) to give way to eight jobs worth 2 each
    inst, start = _blocked(small=0.5)
    params = LNSParams(max_jobs=2, stall_rounds=2, escape_rounds=10, escape_weight=0.05, seed=0)
    with caplog.at_level(logging.DEBUG, logger="matheuristics.search"):
        out, _, rounds, _ = lns_improve(inst, start, stop=budget(None, 40), params=params,
                                        guide=np.array([0.0] + [1.0] * 8))
    said = [r.getMessage() for r in caplog.records]
    assert any("escape at round" in m for m in said)
    ends = [m for m in said if "escape ends" in m]
    assert ends and all(m.endswith("(left 32)") and "with 32 " not in m for m in ends)
    assert rounds == 40
    assert start_value(inst, out) == pytest.approx(32.0) and out[0] == 0


def test_a_bad_guide_is_refused() -> None:
    inst, start = _blocked()
    with pytest.raises(ValueError, match="guide"):
        lns_improve(inst, start, stop=budget(None, 1), guide=np.ones(3))


@pytest.mark.parametrize(("field", "value"), [
    ("escape_rounds", 1), ("escape_weight", 2.0), ("escape_weight", 0.0), ("share", 1.5),
    ("share", float("nan")), ("max_jobs", 0), ("window", 0), ("stall_rounds", -1),
    ("sub_time_limit", 0.0), ("sub_time_limit", float("inf")), ("max_jobs", 2.5), ("seed", -1),
])
def test_a_bad_parameter_is_refused_by_name(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=f"^{field}:"):
        LNSParams(**{field: value})  # type: ignore[arg-type]


def test_the_parameters_are_one_frozen_object() -> None:
    p = LNSParams(max_jobs=np.int64(12), stall_rounds=None)  # type: ignore[arg-type]
    assert p.stall == 0 and LNSParams(stall_rounds=0).stall == 0 and LNSParams().stall == 40
    with pytest.raises(AttributeError):
        p.seed = 3  # type: ignore[misc]


def test_the_lns_method_is_lp_guided_when_its_rounds_leave_room_for_an_escape() -> None:
    inst = instances.generate("small", seed=1)
    kw = {"passes": 0, "iterations": 0, "time_limit": None}
    guided = heuristics.solve(inst, "lns", rounds=221, **kw)
    plain = heuristics.solve(inst, "lns", rounds=221, guided=False, **kw)
    short = heuristics.solve(inst, "lns", rounds=220, **kw)
    assert "LP-guided" in guided.message and guided.params["guided"] is True
    assert "LP-guided" not in plain.message and "LP-guided" not in short.message
    for res in (guided, plain, short):
        assert instances.evaluate(inst, res.schedule).value == pytest.approx(res.value)


# ------------------------------------------------------------ the fast path on arrays
def _count_checks(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Count runs of the checker (each builds one ``Metrics``) and of ``Schedule.from_array``."""
    import instances.checker as checker

    counts = {"evaluate": 0, "from_array": 0}
    real_metrics, real_from_array = checker.Metrics, instances.Schedule.from_array.__func__

    def metrics(*args: object, **kwargs: object) -> object:
        counts["evaluate"] += 1
        return real_metrics(*args, **kwargs)

    def from_array(cls: type, inst: Instance, start: np.ndarray, *args: object) -> instances.Schedule:
        counts["from_array"] += 1
        return real_from_array(cls, inst, start, *args)

    monkeypatch.setattr(checker, "Metrics", metrics)
    monkeypatch.setattr(instances.Schedule, "from_array", classmethod(from_array))
    return counts


@pytest.mark.slow
def test_the_search_stays_on_arrays_and_the_result_is_checked_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    inst = instances.generate("medium", seed=3)
    start = heuristics.solve(inst, "fifo-curve").schedule.to_array(inst)
    windows: list[int] = []
    real = milp.solve_arrays

    def solve_arrays(form: milp.Formulation, **kw: object) -> milp.RawSolve:
        assert isinstance(kw["warm_start"], np.ndarray)  # a start array, not a Schedule
        windows.append(form.num_cols)
        return real(form, **kw)

    def no_solve(*args: object, **kwargs: object) -> None:
        raise AssertionError("the LNS must not call milp.solve (Schedule + checker per window)")

    monkeypatch.setattr(milp, "solve_arrays", solve_arrays)
    monkeypatch.setattr(milp, "solve", no_solve)
    counts = _count_checks(monkeypatch)
    out, _, rounds, _ = lns_improve(inst, start, stop=budget(None, 6), params=LNSParams(seed=2))
    assert rounds == 6 and len(windows) >= 5
    assert counts == {"evaluate": 0, "from_array": 0}
    res = heuristics.solve(inst, "lns", time_limit=None, rounds=4, passes=5, iterations=10)
    assert counts == {"evaluate": 1, "from_array": 1}  # at the boundary, once
    monkeypatch.undo()
    assert instances.evaluate(inst, res.schedule).value == pytest.approx(res.value)
    assert start_value(inst, out) >= start_value(inst, start) - 1e-9


def test_a_window_answer_outside_its_model_is_never_taken(
        monkeypatch: pytest.MonkeyPatch) -> None:
    inst = instances.generate("medium", seed=3)
    start = heuristics.solve(inst, "fifo-curve").schedule.to_array(inst)

    def overload(form: milp.Formulation, **kw: object) -> milp.RawSolve:
        every = np.array([int(s[0]) if s.size else -1 for s in
                          (form.col_start[form.col_group == k] for k in range(len(form.groups)))])
        bad = np.full(form.instance.num_jobs, -1, dtype=np.int64)
        for k, members in enumerate(form.groups):
            bad[members] = every[k]  # every job at its first column: far over capacity
        assert not form.feasible(bad)
        return milp.RawSolve(instances.Status.OPTIMAL, start=bad, dual_bound=1e9)

    monkeypatch.setattr(milp, "solve_arrays", overload)
    out, _, rounds, improved = lns_improve(inst, start, stop=budget(None, 4),
                                           params=LNSParams(seed=1))
    assert (rounds, improved) == (4, 0)
    assert np.array_equal(out, start)


@pytest.mark.slow
def test_a_stalled_lns_widens_its_windows_and_stays_feasible(
        monkeypatch: pytest.MonkeyPatch) -> None:
    inst = instances.generate("medium", seed=2)
    weak = heuristics.solve(inst, "fifo-curve").schedule.to_array(inst)
    freed_sizes: list[int] = []
    limits: list[float] = []
    real_window, real_solve = windows.window_jobs, milp.solve_arrays

    def window_jobs_(inst_: Instance, start: np.ndarray, a: int, b: int, max_jobs: int,
                     rng: np.random.Generator, **kw: float) -> np.ndarray:
        freed_sizes.append(max_jobs)
        return real_window(inst_, start, a, b, max_jobs, rng, **kw)

    def solve_arrays(form: milp.Formulation, **kw: object) -> milp.RawSolve:
        limits.append(float(kw["time_limit"]))  # type: ignore[arg-type]
        return real_solve(form, **kw)

    monkeypatch.setattr(windows, "window_jobs", window_jobs_)
    monkeypatch.setattr(milp, "solve_arrays", solve_arrays)
    out, _, rounds, _ = lns_improve(inst, weak, stop=budget(None, 12), params=LNSParams(
        max_jobs=10, sub_time_limit=0.5, stall_rounds=1, seed=3))
    assert rounds == 12
    assert max(freed_sizes) > 10 and max(limits) > 0.45  # some rounds were widened
    assert max(freed_sizes) <= 30 and max(limits) <= 1.5 + 1e-9  # at most tripled
    assert start_value(inst, out) >= start_value(inst, weak) - 1e-9
    instances.evaluate(inst, instances.Schedule.from_array(inst, out), enforce_reservation=True)
