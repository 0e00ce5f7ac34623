"""The one capacity engine (heuristics.engine): one interface, both states, methods written once."""

from __future__ import annotations

import numpy as np
import pytest

import instances
from heuristics import engine, placement, results
from heuristics.decoder import job_arrays, serial_starts
from heuristics.listsched import list_starts
from heuristics.profile import Profile
from heuristics.rules import fifo_order, order_by
from heuristics.shares import SharesProfile

CASES = [("medium", {}), ("medium", {"node_gpus": 8}), ("hc-mixed", {"node_gpus": "openb"}),
         ("openb-day", {"resources": "full"}), ("openb-shares", {})]


def latest_first(inst: instances.Instance, reservation: str = "curve") -> instances.Result:
    """docs/extending.md's method on the engine, as a user writes it."""
    state = engine.new_profile(inst, reservation)
    place, start = placement.new_place(inst), np.full(inst.num_jobs, -1)
    for j in np.argsort(-inst.releases, kind="stable").tolist():
        g, p = int(inst.gpus[j]), int(inst.durations[j])
        s, where = state.earliest(j, g, p, int(inst.releases[j]), int(inst.deadlines[j]))
        if s >= 0:
            state.take(j, g, p, s, where, place)
            start[j] = s
    return results.finish(inst, "latest-first", start, reservation=reservation,
                          started_at=0.0, place=place)


@pytest.mark.parametrize(("family", "kw"), CASES)
def test_the_version_picks_the_state(family: str, kw: dict) -> None:
    inst = instances.generate(family, seed=2, **kw)
    state = engine.new_profile(inst, "curve")
    assert isinstance(state, SharesProfile if inst.jobs_use_resources else Profile)


@pytest.mark.parametrize(("family", "kw"), CASES)
def test_a_method_written_once_runs_on_every_version(family: str, kw: dict) -> None:
    """The user's method places job by job with earliest and take: the checker accepts its
    schedule (finish runs it), and it is the serial decoder's on the same order."""
    inst = instances.generate(family, seed=2, **kw)
    res = latest_first(inst)
    assert res.value > 0
    order = np.argsort(-inst.releases, kind="stable")
    want = list_starts(inst, order, "curve", place=placement.new_place(inst))
    got = np.array([res.schedule.starts.get(job.name, -1) for job in inst.jobs])
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize(("family", "kw"), CASES)
def test_start_now_on_a_copy_leaves_the_state(family: str, kw: dict) -> None:
    """A copy is independent; start_now counts the jobs it started, their starts set."""
    inst = instances.generate(family, seed=3, **kw)
    state = engine.new_profile(inst, "peak")
    before = state.rows.copy()
    trial = state.copy()
    start = np.full(inst.num_jobs, -1, dtype=np.int64)
    cand = np.flatnonzero(inst.releases == 0)
    started = trial.start_now(0, cand, job_arrays(inst), start)
    assert started == int((start >= 0).sum()) and started > 0
    assert np.array_equal(state.rows, before) and not np.array_equal(trial.rows, before)


@pytest.mark.parametrize(("family", "kw"), CASES)
def test_fifo_decoding_never_starts_before_the_last_start(family: str, kw: dict) -> None:
    """With ``fifo`` no job starts before the last one placed; without it, in the same order,
    some job does (backfilling into a hole), so the flag is what holds them."""
    inst = instances.generate(family, seed=2, **kw)
    order = fifo_order(inst)
    start = engine.new_profile(inst, "peak").decode(order, job_arrays(inst), fifo=True)
    ran = start[order][start[order] >= 0]
    assert ran.size and np.all(np.diff(ran) >= 0)
    free = serial_starts(engine.new_profile(inst, "peak"), order, job_arrays(inst))
    ran_free = free[order][free[order] >= 0]
    assert np.any(np.diff(ran_free) < 0)


@pytest.mark.parametrize(("family", "seed", "kw"), [
    ("medium", 0, {}), ("large", 1, {}), ("hc-bursty", 2, {}), ("hc-deadlines", 3, {}),
    ("itp", 1, {"objective": "flow"}), ("medium", 4, {"node_gpus": 9}),  # (9 GPUs: one node)
])
def test_the_compiled_parallel_scheme_on_one_node_is_the_slot_loop(family: str, seed: int,
                                                                     kw: dict) -> None:
    """On one node the count state runs the parallel scheme in one compiled call; the slot by
    slot loop over start_now gives the same starts and nodes, in several orders."""
    from heuristics.schemes import parallel_loop

    inst = instances.generate(family, seed=seed, **kw)
    jobs = job_arrays(inst)
    for rule in ("priority", "spt", "release"):
        order = order_by(inst, rule)
        states = [engine.new_profile(inst, "curve") for _ in range(2)]
        assert isinstance(states[0], Profile) and states[0].offset is not None
        places = [placement.new_place(inst) if inst.has_nodes else None for _ in range(2)]
        got = states[0].parallel(order, jobs, np.full(inst.num_jobs, -1, dtype=np.int64),
                                 places[0])
        want = parallel_loop(states[1], order, jobs, np.full(inst.num_jobs, -1, dtype=np.int64),
                             places[1])
        assert got.tolist() == want.tolist() and (got >= 0).any()
        assert np.array_equal(states[0].rows, states[1].rows)
        if inst.has_nodes:
            assert np.array_equal(places[0], places[1])
