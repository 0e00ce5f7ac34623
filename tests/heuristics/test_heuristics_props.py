"""Property tests of the heuristics over small random instances (hypothesis)."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import (
    capacity_ref,
    earliest_fit_ref,
    easy_starts_ref,
    fifo_queue_ref,
    list_starts_ref,
    parallel_starts_ref,
)
from strategies import random_instances

import heuristics
from heuristics.backfill import conservative_starts, easy_starts
from heuristics.decoder import job_arrays, serial_starts
from heuristics.engine import new_profile
from heuristics.listsched import list_starts, parallel_starts
from heuristics.profile import earliest_fit
from heuristics.rules import RULES, order_by
from instances import Instance, evaluate
from matheuristics.best import CONSTRUCTIVE_MEMBERS

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SEARCH_SETTINGS = settings(SETTINGS, max_examples=40)  # these run MILP windows: fewer examples
SEARCH = ("sampling", "local-search", "lns", "best")
SMALL_BUDGET = {
    "sampling": {"passes": 30, "time_limit": None},
    "local-search": {"iterations": 60, "time_limit": None},
    "lns": {"passes": 10, "iterations": 20, "rounds": 2, "time_limit": None},
    "best": {"passes": 30, "iterations": 60, "lns_rounds": 2, "time_limit": None},
}


instances_ = random_instances


@given(
    free=st.lists(st.integers(0, 5), min_size=1, max_size=30),
    g=st.integers(1, 5), p=st.integers(1, 8), lo=st.integers(0, 30), hi=st.integers(0, 30),
)
@settings(max_examples=300, deadline=None)
def test_earliest_fit_matches_reference(free: list[int], g: int, p: int, lo: int, hi: int) -> None:
    hi = min(hi, len(free))
    assert earliest_fit(np.array(free, dtype=np.int64), g, p, lo, hi) == earliest_fit_ref(
        free, g, p, lo, hi
    )


@given(inst=instances_(max_jobs=12), seed=st.integers(0, 2**16), rule=st.sampled_from(list(RULES)))
@SETTINGS
def test_decoders_match_references(inst: Instance, seed: int, rule: str) -> None:
    rng = np.random.default_rng(seed)
    for order in (order_by(inst, rule), rng.permutation(inst.num_jobs)):
        for res in ("curve", "peak"):
            assert list_starts(inst, order, res).tolist() == list_starts_ref(inst, order, res)
        assert parallel_starts(inst, order).tolist() == parallel_starts_ref(inst, order)
    for res in ("curve", "peak"):
        assert easy_starts(inst, res).tolist() == easy_starts_ref(inst, res)
    # decode a prefix, then the rest on the same profile, and compare with one pass
    jobs = job_arrays(inst)
    order = rng.permutation(inst.num_jobs)
    prof = new_profile(inst, "curve")
    k = inst.num_jobs // 2
    start = serial_starts(prof, order[:k], jobs)
    serial_starts(prof, order[k:], jobs, start)
    assert start.tolist() == list_starts_ref(inst, order)


@given(inst=instances_())
@SEARCH_SETTINGS
def test_every_method_returns_a_checked_schedule(inst: Instance) -> None:
    for m in heuristics.METHODS:
        res = heuristics.solve(inst, m, **SMALL_BUDGET.get(m, {}))
        # independently re-checked, under the reservation the method claims
        metrics = evaluate(inst, res.schedule, res.reservation, enforce_reservation=True)
        assert res.value == metrics.value
        for name, s in res.schedule.starts.items():
            job = inst.jobs[inst.job_index[name]]
            assert job.release <= s


@given(inst=instances_(), seed=st.integers(0, 1000))
@SEARCH_SETTINGS
def test_search_is_deterministic_under_a_seed(inst: Instance, seed: int) -> None:
    for m in SEARCH:
        a = heuristics.solve(inst, m, seed=seed, **SMALL_BUDGET[m])
        b = heuristics.solve(inst, m, seed=seed, **SMALL_BUDGET[m])
        assert a.schedule == b.schedule


@given(inst=instances_(), seed=st.integers(0, 1000))
@SEARCH_SETTINGS
def test_best_is_at_least_every_member(inst: Instance, seed: int) -> None:
    best = heuristics.solve(inst, "best", seed=seed, **SMALL_BUDGET["best"])
    for m, params in CONSTRUCTIVE_MEMBERS:
        assert best.value >= heuristics.solve(inst, m, **params).value - 1e-9, (m, params)
    samp = heuristics.solve(inst, "sampling", seed=seed, **SMALL_BUDGET["sampling"])
    assert best.value >= samp.value - 1e-9
    ls = heuristics.solve(inst, "local-search", seed=seed, passes=30, iterations=60,
                          time_limit=None)
    assert best.value >= ls.value - 1e-9


@given(inst=instances_())
@SETTINGS
def test_easy_head_keeps_its_reservation(inst: Instance) -> None:
    for res in ("peak", "curve"):
        log: list[tuple[int, int, int]] = []
        start = easy_starts(inst, res, log)
        first: dict[int, int] = {}
        for _, head, r in log:
            first.setdefault(head, r)
            assert r == first[head]  # never moved by a backfilled job
        for head, r in first.items():
            assert start[head] == r


@given(inst=instances_())
@SETTINGS
def test_conservative_delays_no_earlier_job(inst: Instance) -> None:
    # each job's start is its earliest fit among the jobs ahead of it in the
    # FIFO queue only: no job behind it moved it
    for res in ("peak", "curve"):
        start = conservative_starts(inst, res).tolist()
        free = capacity_ref(inst, res)
        for j in fifo_queue_ref(inst):
            job = inst.jobs[j]
            end_by = inst.horizon if job.deadline is None else job.deadline
            assert start[j] == earliest_fit_ref(free, job.gpus, job.duration, job.release, end_by)
            if start[j] >= 0:
                for t in range(start[j], start[j] + job.duration):
                    free[t] -= job.gpus


def _optimum(inst: Instance) -> float:
    """Best value over every choice of start (or not run) per job: brute force."""
    options = []
    for job in inst.jobs:
        end_by = inst.horizon if job.deadline is None else job.deadline
        options.append([-1, *range(job.release, end_by - job.duration + 1)])
    cap = np.asarray(capacity_ref(inst, "curve"))
    best = 0.0
    for combo in itertools.product(*options):
        use = np.zeros(inst.horizon, dtype=np.int64)
        value = 0.0
        for job, s in zip(inst.jobs, combo):
            if s >= 0:
                use[s : s + job.duration] += job.gpus
                value += job.priority * job.gpus * job.duration * inst.slot_hours
        if value > best and (use <= cap).all():
            best = value
    return best


@given(inst=instances_(max_jobs=4, max_horizon=6))
@settings(max_examples=40, deadline=None)
def test_no_method_beats_the_brute_force_optimum(inst: Instance) -> None:
    opt = _optimum(inst)
    best = heuristics.solve(inst, "best", **SMALL_BUDGET["best"])
    assert best.value <= opt + 1e-9
    # on instances this small, sampling and local search reach the optimum
    assert best.value >= opt - 1e-9
