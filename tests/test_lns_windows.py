"""The LNS's neighbourhoods: which jobs a window frees, and the sub-instance it solves."""

from __future__ import annotations

import numpy as np
import pytest

import heuristics
import instances
from heuristics.lns import lns_improve, sub_instance, window_jobs
from instances import Instance, Job


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
    assert warm.starts == {"moving": 2}


def test_lns_with_room_for_new_jobs_never_loses_value() -> None:
    inst = instances.generate("medium", seed=3)
    start = heuristics.solve(inst, "fifo-curve").schedule.to_array(inst)
    for share in (0.0, 0.5, 1.0):
        out, rounds, _ = lns_improve(inst, start, time_limit=None, rounds=6, share=share, seed=4)
        assert rounds == 6
        assert inst.job_values[out >= 0].sum() >= inst.job_values[start >= 0].sum() - 1e-9
        instances.evaluate(inst, instances.Schedule.from_array(inst, out), enforce_reservation=True)
