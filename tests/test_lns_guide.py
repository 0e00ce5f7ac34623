"""The LNS's LP-guided escape: run masses, guided instances, and an escape that pays."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import heuristics
import instances
import milp
from heuristics._core import start_value
from heuristics.lns import guided_instance, lns_improve
from instances import Instance, Job
from milp.highs import lp_solution


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
    out, _, _ = lns_improve(inst, start, time_limit=None, rounds=60, max_jobs=2,
                            stall_rounds=2, guide=guide, escape_rounds=20, escape_weight=0.1,
                            seed=1)
    instances.evaluate(inst, instances.Schedule.from_array(inst, out), enforce_reservation=True)
    return out


def test_an_escape_gets_past_a_job_the_windows_never_let_go(
        caplog: pytest.LogCaptureFixture) -> None:
    inst, _ = _blocked()
    plain = _search(None)  # widened windows free at most 6 jobs: big stays
    assert start_value(inst, plain) == pytest.approx(32.0)
    with caplog.at_level(logging.DEBUG, logger="heuristics.lns"):
        guided = _search(np.array([0.0] + [1.0] * 8))
    assert start_value(inst, guided) == pytest.approx(35.2)
    assert guided[0] == -1 and np.all(guided[1:] >= 0)
    assert any("escape at round" in r.getMessage() for r in caplog.records)


def test_an_escape_that_does_not_pay_goes_back_to_the_schedule_it_left(
        caplog: pytest.LogCaptureFixture) -> None:
    # the guide wrongly asks big (32) to give way to eight jobs worth 2 each
    inst, start = _blocked(small=0.5)
    with caplog.at_level(logging.DEBUG, logger="heuristics.lns"):
        out, rounds, _ = lns_improve(inst, start, time_limit=None, rounds=40, max_jobs=2,
                                     stall_rounds=2, guide=np.array([0.0] + [1.0] * 8),
                                     escape_rounds=10, escape_weight=0.05, seed=0)
    said = [r.getMessage() for r in caplog.records]
    assert any("escape at round" in m for m in said)
    ends = [m for m in said if "escape ends" in m]
    assert ends and all(m.endswith("(left 32)") and "with 32 " not in m for m in ends)
    assert rounds == 40
    assert start_value(inst, out) == pytest.approx(32.0) and out[0] == 0


def test_a_bad_guide_or_escape_setting_is_refused() -> None:
    inst, start = _blocked()
    with pytest.raises(ValueError, match="guide"):
        lns_improve(inst, start, time_limit=None, rounds=1, guide=np.ones(3))
    with pytest.raises(ValueError, match="escape_rounds"):
        lns_improve(inst, start, time_limit=None, rounds=1, guide=np.ones(9), escape_rounds=1)
    with pytest.raises(ValueError, match="escape_weight"):
        lns_improve(inst, start, time_limit=None, rounds=1, guide=np.ones(9), escape_weight=2)


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
