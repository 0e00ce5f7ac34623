"""The independent checker on the cases where a checker is most likely to lie.

Every instance here is tiny and written by hand, so each verdict can be checked
by eye: blocks touching at a slot boundary, one GPU too many for a single slot,
a start one slot early, an end one slot late, duplicate starts, services that
fill the pool. A property test then holds the checker to a plain numpy
reference on random tiny schedules.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import instances
from gpusched.cli import main
from instances import InfeasibleScheduleError, Instance, Job, Schedule, Service, evaluate


def _inst(jobs, *, G=4, T=8, demand=None, name="adv"):
    services = () if demand is None else (Service("svc", 1.0, tuple(demand)),)
    return Instance(name, G, T, services, tuple(jobs))


def _sched(inst, **starts):
    return Schedule(inst.name, starts)


# ------------------------------------------------------------------ boundaries
def test_blocks_touching_at_a_slot_boundary_are_legal():
    """a holds all 4 GPUs in slots 0-2, b all 4 from slot 3: they touch, never overlap."""
    inst = _inst([Job("a", 4, 3), Job("b", 4, 5)], T=8)
    m = evaluate(inst, _sched(inst, a=0, b=3))
    assert m.utilization == 1.0 and m.batch_gpu_slots == 32 and m.jobs_run == 2


def test_overlap_by_one_slot_is_caught():
    inst = _inst([Job("a", 4, 3), Job("b", 4, 5)], T=8)
    with pytest.raises(InfeasibleScheduleError) as err:
        evaluate(inst, _sched(inst, a=0, b=2))
    assert (err.value.slot, err.value.amount, err.value.job) == (2, 4, "b")


def test_one_gpu_over_capacity_for_a_single_slot():
    """2 + 3 GPUs on a pool of 4, only in slot 2: over by exactly 1 GPU in exactly 1 slot."""
    inst = _inst([Job("a", 2, 3), Job("b", 3, 1)])
    with pytest.raises(InfeasibleScheduleError) as err:
        evaluate(inst, _sched(inst, a=0, b=2))
    assert (err.value.slot, err.value.amount, err.value.job) == (2, 1, "b")
    assert "slot 2" in str(err.value)
    # One slot later b is alone with nothing: feasible.
    assert evaluate(inst, _sched(inst, a=0, b=3)).jobs_run == 2


def test_inference_demand_counts_against_the_pool():
    """A demand spike of 1 GPU in slot 5 alone makes a full-width job infeasible there."""
    demand = [0, 0, 0, 0, 0, 1, 0, 0]
    inst = _inst([Job("a", 4, 2)], demand=demand)
    assert evaluate(inst, _sched(inst, a=3)).value == 8.0  # slots 3-4, before the spike
    assert evaluate(inst, _sched(inst, a=6)).value == 8.0  # slots 6-7, after it
    with pytest.raises(InfeasibleScheduleError) as err:
        evaluate(inst, _sched(inst, a=4))
    assert (err.value.slot, err.value.amount) == (5, 1)


def test_start_exactly_at_release_is_legal_one_before_is_not():
    inst = _inst([Job("a", 1, 2, release=3)])
    assert evaluate(inst, _sched(inst, a=3)).weighted_mean_wait == 0.0
    with pytest.raises(InfeasibleScheduleError, match="before its release") as err:
        evaluate(inst, _sched(inst, a=2))
    assert (err.value.job, err.value.amount) == ("a", 1)


def test_end_exactly_at_deadline_is_legal_one_after_is_not():
    inst = _inst([Job("a", 1, 2, deadline=5)])
    assert evaluate(inst, _sched(inst, a=3)).jobs_run == 1  # ends at 5
    with pytest.raises(InfeasibleScheduleError, match="deadline") as err:
        evaluate(inst, _sched(inst, a=4))
    assert (err.value.slot, err.value.amount) == (6, 1)


def test_end_exactly_at_horizon_is_legal_one_after_is_not():
    inst = _inst([Job("a", 2, 3)], T=8)
    assert evaluate(inst, _sched(inst, a=5)).batch_gpu_slots == 6  # slots 5, 6, 7
    with pytest.raises(InfeasibleScheduleError, match="horizon") as err:
        evaluate(inst, _sched(inst, a=6))
    assert (err.value.slot, err.value.amount) == (9, 1)


def test_job_longer_than_the_horizon_can_never_run():
    inst = _inst([Job("long", 1, 9)], T=8)
    for s in range(8):
        with pytest.raises(InfeasibleScheduleError):
            evaluate(inst, _sched(inst, long=s))
    assert evaluate(inst, _sched(inst)).jobs_rejected == 1


def test_start_far_beyond_the_horizon_is_refused_without_overflow():
    inst = _inst([Job("a", 1, 1)])
    with pytest.raises(InfeasibleScheduleError, match="horizon"):
        evaluate(inst, _sched(inst, a=999_999))
    with pytest.raises(ValueError, match=r'starts\["a"\]'):
        _sched(inst, a=10**30)
    with pytest.raises(ValueError, match=r'starts\["a"\]'):
        _sched(inst, a=-1)  # -1 means "not run" in arrays; never a start


# ------------------------------------------------------------- duplicate starts
def test_duplicate_starts_in_a_file_are_refused(tmp_path):
    """JSON parsers keep the last of two equal keys; the loader refuses both, even equal."""
    for text in ('{"a": 0, "a": 3}', '{"a": 0, "a": 0}'):
        path = tmp_path / "dup.json"
        path.write_text(f'{{"format": "gpusched-schedule/1", "instance": "adv", "starts": {text}}}')
        with pytest.raises(ValueError, match=r'starts: duplicate key "a"'):
            instances.load_schedule(path)


def test_a_schedule_is_a_mapping_not_a_list_of_pairs():
    with pytest.raises(ValueError, match="starts"):
        Schedule("adv", [("a", 0), ("a", 1)])  # type: ignore[arg-type]


# --------------------------------------------------------- services at capacity
def test_services_at_full_capacity_leave_room_for_nothing():
    demand = [4] * 8
    inst = _inst([Job("a", 1, 1)], demand=demand)
    for s in range(8):
        with pytest.raises(InfeasibleScheduleError):
            evaluate(inst, _sched(inst, a=s))
    m = evaluate(inst, _sched(inst))
    assert m.utilization == 1.0 and m.value == 0.0 and m.reserved_idle == 0
    assert math.isnan(m.weighted_mean_wait)


def test_services_at_full_capacity_in_one_slot_only():
    demand = [1, 1, 4, 1, 1, 1, 1, 1]
    inst = _inst([Job("a", 3, 2)], demand=demand)
    assert evaluate(inst, _sched(inst, a=0)).jobs_run == 1  # slots 0-1
    assert evaluate(inst, _sched(inst, a=3)).jobs_run == 1  # slots 3-4
    with pytest.raises(InfeasibleScheduleError) as err:
        evaluate(inst, _sched(inst, a=1))
    assert (err.value.slot, err.value.amount) == (2, 3)


def test_summed_services_over_the_pool_is_an_invalid_instance():
    with pytest.raises(ValueError, match="summed demand at slot 3"):
        Instance("x", 4, 5, (Service("a", 1.0, (2, 2, 2, 3, 2)), Service("b", 1.0, (2, 2, 2, 2, 2))))


def test_peak_reservation_enforced():
    """Feasible in the pool, infeasible within what the peak reservation leaves."""
    demand = [0, 0, 0, 3, 0, 0, 0, 0]  # peak 3: the peak reservation leaves 1 GPU
    inst = _inst([Job("a", 2, 2)], demand=demand)
    sched = _sched(inst, a=0)
    assert evaluate(inst, sched, "curve", enforce_reservation=True).jobs_run == 1
    assert evaluate(inst, sched, "peak").reserved_idle == 3 * 8 - 3
    with pytest.raises(InfeasibleScheduleError, match="peak-reserved") as err:
        evaluate(inst, sched, "peak", enforce_reservation=True)
    assert (err.value.slot, err.value.amount) == (0, 1)


def test_unknown_job_and_unknown_reservation():
    inst = _inst([Job("a", 1, 1)])
    with pytest.raises(InfeasibleScheduleError, match=r'starts\["ghost"\]'):
        evaluate(inst, _sched(inst, ghost=0))
    with pytest.raises(ValueError, match="reservation"):
        evaluate(inst, _sched(inst), "elastic")  # type: ignore[arg-type]


# ------------------------------------------------------------ the command line
def test_check_exit_codes(tmp_path, capsys):
    inst = _inst([Job("a", 2, 3), Job("b", 3, 1)])
    ipath = tmp_path / "i.json"
    instances.save(inst, ipath)
    ok, bad = tmp_path / "ok.json", tmp_path / "bad.json"
    instances.save_schedule(_sched(inst, a=0, b=3), ok)
    instances.save_schedule(_sched(inst, a=0, b=2), bad)
    assert main(["check", str(ipath), str(ok)]) == 0
    capsys.readouterr()
    assert main(["check", str(ipath), str(bad), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["feasible"] is False and (out["slot"], out["amount"], out["job"]) == (2, 1, "b")


# ------------------------------------------------- the checker against a reference
def _reference_feasible(inst: Instance, starts: dict[str, int]) -> bool:
    """Feasibility by array arithmetic, written apart from the checker's loops."""
    use = inst.total_demand.astype(np.int64).copy()
    for name, s in starts.items():
        j = inst.jobs[inst.job_index[name]]
        end_by = inst.horizon if j.deadline is None else j.deadline
        if s < j.release or s + j.duration > end_by:
            return False
        use[s : s + j.duration] += j.gpus
    return bool((use <= inst.num_gpus).all())


@st.composite
def tiny_case(draw):
    G = draw(st.integers(1, 4))
    T = draw(st.integers(1, 6))
    demand = draw(st.lists(st.integers(0, G), min_size=T, max_size=T))
    jobs = []
    for i in range(draw(st.integers(0, 4))):
        p = draw(st.integers(1, T + 1))
        r = draw(st.integers(0, T - 1))
        dl = draw(st.one_of(st.none(), st.integers(r + p, max(r + p, T)))) if r + p <= T else None
        jobs.append(Job(f"j{i}", draw(st.integers(1, G)), p, priority=draw(st.sampled_from([0.5, 1.0, 3.0])),
                        release=r, deadline=dl))
    inst = Instance("ref", G, T, (Service("s", 1.0, tuple(demand)),), tuple(jobs))
    run = draw(st.lists(st.sampled_from([j.name for j in jobs]), unique=True)) if jobs else []
    starts = {name: draw(st.integers(0, T)) for name in run}
    return inst, starts


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(case=tiny_case())
def test_checker_agrees_with_reference(case):
    inst, starts = case
    expected = _reference_feasible(inst, starts)
    try:
        m = evaluate(inst, Schedule(inst.name, starts))
    except InfeasibleScheduleError:
        assert not expected
        return
    assert expected
    run = [inst.jobs[inst.job_index[n]] for n in starts]
    assert m.value == pytest.approx(sum(j.priority * j.gpus * j.duration for j in run))
    busy = int(inst.total_demand.sum()) + sum(j.gpus * j.duration for j in run)
    assert m.utilization == pytest.approx(busy / (inst.num_gpus * inst.horizon))
    assert 0.0 <= m.utilization <= 1.0
