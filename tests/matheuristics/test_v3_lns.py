"""lns and best on model version 3: windows with the fixed jobs' GPUs by index, against brute force.

Every schedule passes the checker with GPU indices; its value is at most brute force's optimum
and at least the starting schedule's. The window model holds the fixed jobs' use per GPU index,
CPU and memory: the freed jobs where they are is always a point of it, and a case per rule
fails when the rule is dropped.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from brute_v3 import brute_force_v3, tiny_v3_instance
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpusched
import instances
import milp
from heuristics.stop import MaxIterations, MaxRuntime, MultipleCriteria
from instances import InfeasibleScheduleError, Instance, Job, Node, Schedule
from matheuristics import best as best_module
from matheuristics.gpus import colour_window, fixed_use, index_array, index_schedule, shared_gpu
from matheuristics.params import LNSParams
from matheuristics.resources import empty
from matheuristics.search import lns_improve, lns_improve_indices
from matheuristics.windows import make_window, window_jobs

SHAPES = [(2, 2), (2, 1, 1), (3, 2), (2, 2, 2), (4,)]


def random_schedule(inst: Instance, seed: int, tries: int = 6) -> Schedule:
    """A tiny test-only greedy: jobs in random order, each at a few random (start, node, GPUs)
    kept when the checker accepts the schedule with it."""
    rng = np.random.default_rng(seed)
    nodes = inst.nodes or ()
    starts: dict[str, int] = {}
    indices: dict[str, dict[str, tuple[int, ...]]] = {}
    for j in rng.permutation(inst.num_jobs).tolist():
        job = inst.jobs[j]
        hi = min(inst.deadlines[j], inst.horizon) - job.duration
        if hi < job.release:
            continue
        for _ in range(tries):
            s = int(rng.integers(job.release, hi + 1))
            k = int(rng.integers(len(nodes)))
            if nodes[k].gpus < job.gpus:
                continue
            gpus = tuple(sorted(rng.choice(nodes[k].gpus, size=job.gpus, replace=False).tolist()))
            trial_s, trial_i = {**starts, job.name: s}, {**indices, job.name: {nodes[k].name: gpus}}
            try:
                instances.evaluate(inst, Schedule(inst.name, trial_s, indices=trial_i))
            except InfeasibleScheduleError:
                continue
            starts, indices = trial_s, trial_i
            break
    return Schedule(inst.name, starts, indices=indices)


def arrays(inst: Instance, schedule: Schedule) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return schedule.to_array(inst), schedule.to_placement_array(inst), index_array(inst, schedule)


def stop(rounds: int) -> MultipleCriteria:
    return MultipleCriteria([MaxRuntime(30), MaxIterations(rounds)])


@given(st.integers(0, 100_000), st.sampled_from(SHAPES), st.integers(4, 8), st.booleans())
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_lns_is_checked_below_brute_force_and_above_its_start(
        seed: int, shape: tuple, n: int, from_empty: bool) -> None:
    inst = tiny_v3_instance(seed, n=n, shape=shape, T=6, shared=0.6)
    first = empty(inst).start if from_empty else None
    schedule = (Schedule(inst.name) if from_empty else random_schedule(inst, seed))
    start, place, idx = arrays(inst, schedule)
    if first is not None:
        assert np.array_equal(start, first)
    before = instances.evaluate(inst, schedule).value
    run = lns_improve_indices(inst, start, place, idx, stop=stop(12),
                              params=LNSParams(seed=seed, max_jobs=4))
    out = index_schedule(inst, run.start, run.place, run.idx)
    value = instances.evaluate(inst, out, enforce_reservation=True).value
    opt, _ = brute_force_v3(inst)
    assert before - 1e-9 <= value <= opt + 1e-9
    # the arrays it was given are not changed
    assert np.array_equal(start, arrays(inst, schedule)[0])


def _random_windows(inst: Instance, seed: int) -> Iterator[tuple[np.ndarray, np.ndarray, Any]]:
    """Up to four random windows around the brute-force optimum of ``inst``: its start array,
    the freed jobs and the window, for each window that frees a job."""
    _, schedule = brute_force_v3(inst)
    start, place, idx = arrays(inst, schedule)
    rng = np.random.default_rng(seed)
    for _ in range(4):
        a = int(rng.integers(0, 4))
        b = int(rng.integers(a + 1, 7))
        freed = window_jobs(inst, start, a, b, 3, rng)
        if freed.size:
            yield start, freed, make_window(inst, start, place, a, b, freed, idx)


@given(st.integers(0, 100_000), st.sampled_from(SHAPES))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_freed_jobs_where_they_are_satisfy_every_row_of_the_window(
        seed: int, shape: tuple) -> None:
    """The fixed use (shares by GPU index, whole GPUs, CPU, memory) leaves the current schedule
    a point of every window's model, whatever is freed."""
    inst = tiny_v3_instance(seed, n=8, shape=shape, T=6, shared=0.7)
    for _, _, w in _random_windows(inst, seed):
        form = milp.build(w.sub, aggregate=False, fixed=w.fixed)
        assert form.feasible(w.warm, w.warm_place, w.warm_gpu)
        # and the warm start's own GPUs colour back around the fixed jobs'
        got = colour_window(w.sub, w.fixed, w.warm, w.warm_place, w.warm_gpu, w.warm_idx)
        assert got is not None


def _one_gpu(jobs: tuple[Job, ...], cpu: int | None = None, T: int = 2) -> Instance:
    return Instance("one-gpu", 1, T, (), jobs, nodes=(Node("n0", 1, "A", cpu, None),))


def test_a_share_joins_a_gpu_fixed_shares_keep_busy_only_within_their_room() -> None:
    """Fixed 700 on the one GPU: a freed 300 fits beside it, a freed 400 does not (a model
    that ignored the fixed shares, or counted the GPU as free, would run it)."""
    fixed = Job("f", 1, 2, 1.0, gpu_milli=700)
    for milli, runs in ((300, True), (400, False)):
        inst = _one_gpu((fixed, Job("x", 1, 2, 5.0, gpu_milli=milli)))
        start = np.array([0, -1])
        place = np.array([[0], [-1]])
        idx = np.array([[0], [-1]])
        w = make_window(inst, start, place, 0, 2, np.array([1]), idx)
        assert w.fixed is not None and w.fixed.gpu_milli[0, 0].tolist() == [700, 700]
        assert w.sub.services[0].demand == (1, 1)  # the busy GPU leaves the pool
        form = milp.build(w.sub, aggregate=False, fixed=w.fixed)
        assert (form.num_x > 0) == runs  # the 400 has no column on the GPU
        if runs:
            raw = milp.solve_arrays(form, time_limit=10, mip_gap=0)
            assert raw.start is not None and raw.start[0] == 0
        # the search (which re-solves this tiny instance whole) runs both only when they fit
        run = lns_improve_indices(inst, start, place, idx, stop=stop(3))
        out = index_schedule(inst, run.start, run.place, run.idx)
        instances.evaluate(inst, out)
        assert bool((run.start >= 0).all()) == runs


def test_a_gpu_a_fixed_job_holds_whole_takes_no_share_and_cpu_is_lowered() -> None:
    """Two GPUs, a fixed whole-GPU job on GPU 0 using 3000 of 4000 CPU: a freed share of 500
    goes to GPU 1 (not GPU 0), and only while the CPU left allows it."""
    nodes = (Node("n0", 2, "A", 4000, None),)
    fixed = Job("f", 1, 2, 1.0, cpu_milli=3000)
    for cpu, runs in ((1000, True), (1500, False)):
        inst = Instance("cpu", 2, 2, (), (fixed, Job("x", 1, 2, 5.0, gpu_milli=500,
                                                     cpu_milli=cpu)), nodes=nodes)
        start, place = np.array([0, -1]), np.array([[0], [-1]])
        idx = np.array([[0, -1], [-1, -1]])
        w = make_window(inst, start, place, 0, 2, np.array([1]), idx)
        assert w.fixed.cpu[0].tolist() == [3000.0, 3000.0]
        assert w.fixed.gpu_milli[0, 0].tolist() == [1000, 1000]
        assert w.fixed.gpu_milli[0, 1].tolist() == [0, 0]
        form = milp.build(w.sub, aggregate=False, fixed=w.fixed)
        raw = milp.solve_arrays(form, time_limit=10, mip_gap=0)
        ran = raw.start is not None and raw.start[0] >= 0
        assert ran == runs
        if runs:
            assert raw.gpu[0] == 1  # not GPU 0, which the fixed job holds
        run = lns_improve_indices(inst, start, place, idx, stop=stop(3))
        assert bool((run.start >= 0).all()) == runs
        instances.evaluate(inst, index_schedule(inst, run.start, run.place, run.idx))


def test_whole_gpu_jobs_are_coloured_around_the_fixed_jobs_gpus() -> None:
    """Fixed jobs on GPU 0 at slot 0 and GPU 1 at slot 1 leave one GPU free at each slot, but
    no one GPU free over both: a freed 1-GPU job of 2 slots finds no indices (the count model
    says it fits; the colouring refuses). Freed with them, all three are coloured (the kept
    GPUs first fail, the colouring in order of start does not)."""
    nodes = (Node("n0", 2),)
    jobs = (Job("a", 1, 1, 1.0, cpu_milli=1), Job("b", 1, 1, 1.0, release=1, cpu_milli=1),
            Job("x", 1, 2, 9.0, cpu_milli=1))
    inst = Instance("colour", 2, 2, (), jobs, nodes=nodes)
    start, place = np.array([0, 1, -1]), np.array([[0], [0], [-1]])
    idx = np.array([[0, -1], [1, -1], [-1, -1]])
    w = make_window(inst, start, place, 0, 2, np.array([2]), idx)
    assert colour_window(w.sub, w.fixed, np.array([0]), np.array([[0]]), np.array([-1])) is None
    whole = make_window(inst, start, place, 0, 2, np.arange(3), idx)
    got = colour_window(whole.sub, whole.fixed, np.array([0, 1, 0]), np.array([[0], [0], [0]]),
                        np.full(3, -1), whole.warm_idx)
    assert got is not None and got[2, 0] != got[0, 0] and got[2, 0] != got[1, 0]
    run = lns_improve_indices(inst, start, place, idx, stop=stop(2))
    assert run.start.tolist() == [0, 1, 0]  # the first round re-solves it whole
    instances.evaluate(inst, index_schedule(inst, run.start, run.place, run.idx))


def test_fixed_use_counts_each_gpu_once_and_whole_nodes_in_full() -> None:
    nodes = (Node("n0", 2, "A"), Node("n1", 2, "A"))
    jobs = (Job("s1", 1, 2, 1.0, gpu_milli=300), Job("s2", 1, 1, 1.0, gpu_milli=200),
            Job("big", 4, 1, 1.0, release=2), Job("w", 1, 2, 1.0, cpu_milli=5))
    inst = Instance("use", 4, 4, (), jobs, nodes=nodes)
    start = np.array([0, 0, 2, 0])
    place = np.array([[0, -1], [0, -1], [0, 1], [1, -1]])
    idx = np.array([[1, -1], [1, -1], [-1, -1], [0, -1]])
    instances.evaluate(inst, index_schedule(inst, start, place, idx))
    use = fixed_use(inst, start, place, idx, np.arange(4), 0, 4)
    assert use.gpu_milli[0, 1].tolist() == [500, 300, 1000, 0]
    assert use.gpu_milli[1, 0].tolist() == [1000, 1000, 1000, 0]
    assert use.busy(inst.node_gpus).tolist() == [[1, 1, 2, 0], [1, 1, 2, 0]]
    assert use.cpu[1].tolist() == [5.0, 5.0, 0.0, 0.0]
    assert shared_gpu(inst, start, idx).tolist() == [1, 1, -1, -1]


def test_lns_improve_refuses_version_3_and_the_indexed_search_refuses_version_2() -> None:
    inst = tiny_v3_instance(1, n=4, shape=(2, 2), T=4)
    c = empty(inst)
    with pytest.raises(ValueError, match="lns_improve_indices"):
        lns_improve(inst, c.start, c.place, stop=stop(1))
    twin = milp.shares.gpu_twin(inst)
    with pytest.raises(ValueError, match="not a version 3"):
        lns_improve_indices(twin, c.start, c.place, c.idx, stop=stop(1))
    with pytest.raises(ValueError, match="idx"):
        lns_improve_indices(inst, c.start, c.place, c.idx[:, :1], stop=stop(1))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lns_and_best_by_name_are_checked_below_brute_force(seed: int) -> None:
    inst = tiny_v3_instance(seed, n=7, shape=(2, 2, 1), T=6, shared=0.6)
    opt, _ = brute_force_v3(inst)
    for method in ("lns", "best"):
        res = gpusched.solve(inst, method, time_limit=5)
        again = instances.evaluate(inst, res.schedule, enforce_reservation=True)
        assert again.value == pytest.approx(res.value)
        assert res.value <= opt + 1e-9
        if res.schedule.starts and any(j.gpu_milli < 1000 for j in inst.jobs):
            assert res.schedule.lists_indices
        assert isinstance(res.params["skipped"], list)


def test_best_runs_or_names_every_phase() -> None:
    """Every phase of best is either run or named with its reason: none is dropped silently;
    and best is at least as good as each member run by name."""
    inst = tiny_v3_instance(3, n=6, shape=(2, 2), T=5, shared=0.5)
    res = gpusched.solve(inst, "best", time_limit=5)
    rules = len(best_module.PLACEMENTS)
    expected = len(best_module.members(inst)) + rules + 1  # members, sampling per rule, local search
    assert res.params["phases_run"] + len(res.params["skipped"]) == expected
    for note in res.params["skipped"]:
        assert ": " in note  # "phase params: reason"
    for method, params in best_module.members(inst)[:6]:
        assert res.value >= gpusched.solve(inst, method, **params).value - 1e-9


def test_a_version_3_instance_without_shares_lists_indices_too() -> None:
    inst = tiny_v3_instance(5, n=6, shape=(2, 2), T=5, shared=0.0)
    res = gpusched.solve(inst, "lns", time_limit=5)
    instances.evaluate(inst, res.schedule)
    assert res.value <= brute_force_v3(inst)[0] + 1e-9


@pytest.mark.parametrize("seed", [0, 3])
def test_the_lagrangian_method_is_checked_and_certified_on_version_3(seed: int) -> None:
    """Its orders decoded with GPU indices (the placement greedy has none); its bound, the
    certificate on the fluid amounts, at least the optimum."""
    inst = tiny_v3_instance(seed, n=6, shape=(2, 2, 1), T=5, shared=0.6)
    opt, _ = brute_force_v3(inst)
    res = gpusched.solve(inst, "lagrangian", time_limit=2)
    assert instances.evaluate(inst, res.schedule).value == pytest.approx(res.value)
    assert res.value <= opt + 1e-9 <= res.upper_bound + 2e-9
    assert res.bound_method == "lagrangian"


@given(st.integers(0, 100_000), st.sampled_from([(2, 1, 1), (2, 2, 2), (1, 1, 1, 1)]))
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_windows_over_a_few_nodes_keep_the_schedule_a_point_and_the_search_checked(
        seed: int, shape: tuple) -> None:
    """With more nodes than MAX_WINDOW_NODES (here 2) a window keeps the running freed jobs'
    nodes and a few the others fit; the pool left to them counts the busy GPUs of every node.
    The current schedule stays a point of each window, and the search stays checked."""
    import matheuristics.windows as windows

    inst = tiny_v3_instance(seed, n=7, shape=shape, T=6, shared=0.6)
    old = windows.MAX_WINDOW_NODES
    windows.MAX_WINDOW_NODES = 2
    try:
        for start, freed, w in _random_windows(inst, seed):
            assert w.nodes is not None and set(w.freed[start[w.freed] >= 0]) == set(
                freed[start[freed] >= 0])
            form = milp.build(w.sub, aggregate=False, fixed=w.fixed)
            assert form.feasible(w.warm, w.warm_place, w.warm_gpu)
        weak = random_schedule(inst, seed)
        s, p, i = arrays(inst, weak)
        run = lns_improve_indices(inst, s, p, i, stop=stop(10),
                                  params=LNSParams(seed=seed, max_jobs=3))
        out = index_schedule(inst, run.start, run.place, run.idx)
        value = instances.evaluate(inst, out).value
        assert instances.evaluate(inst, weak).value - 1e-9 <= value <= brute_force_v3(inst)[0] + 1e-9
    finally:
        windows.MAX_WINDOW_NODES = old
