"""A flat instance and the same instance on one node of G GPUs are the same problem.

A flat pool is the one capacity model's case of one node of ``G`` GPUs
(docs/architecture.md), so every method of :func:`gpusched.solve` must give
the same value on both: the heuristics the very same starts, the exact
methods the same optimum when both are proven optimal. The decoders are held
here, too, to the general path: on one node the compiled decoder and
:func:`heuristics.profile.fit` read the pool row alone, while
:func:`heuristics.profile.node_fit` tests every node row.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import list_starts_ref
from reference_nodes import list_starts_nodes_ref
from strategies import random_instances

import gpusched
import heuristics
from gpusched.dispatch import EXACT_METHODS
from heuristics.decoder import job_arrays, serial_starts
from heuristics.engine import new_profile
from heuristics.placement import PLACEMENTS, new_place
from heuristics.profile import fits_now, node_fit, node_fits_now, occupy
from instances import Instance, Status, with_nodes

QUICK = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
EXACT = settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))

BUDGETS: dict[str, dict[str, object]] = {
    "sampling": {"passes": 12, "time_limit": None},
    "local-search": {"iterations": 40, "passes": 4, "time_limit": None},
    "best": {"passes": 12, "iterations": 40, "lns_rounds": 2, "time_limit": None},
    "lns": {"passes": 8, "iterations": 20, "rounds": 2, "time_limit": None},
    "lagrangian": {"time_limit": 2.0},
}
REFUSE_NODES: dict[str, str] = {}
"""Methods that refuse node instances (none: every method takes nodes)."""


def _on_one_node(inst: Instance) -> Instance:
    return with_nodes(inst, [inst.num_gpus])


@pytest.mark.parametrize("method", [m for m in heuristics.METHODS if m not in REFUSE_NODES])
@given(inst=random_instances(max_jobs=7, max_horizon=10))
@QUICK
def test_every_heuristic_gives_the_same_schedule_on_one_node(method: str, inst: Instance) -> None:
    params = BUDGETS.get(method, {})
    flat = gpusched.solve(inst, method, **params)
    one = gpusched.solve(_on_one_node(inst), method, **params)
    assert one.value == pytest.approx(flat.value, abs=1e-9)
    if method not in ("lns", "best", "lagrangian"):  # their MILP windows may break ties apart
        assert one.schedule.starts == flat.schedule.starts
    assert not flat.schedule.placement
    assert {name: dict(p) for name, p in one.schedule.placement.items()} == {
        name: {"node-0": int(inst.gpus[inst.job_index[name]])} for name in one.schedule.starts}


@pytest.mark.parametrize("method", [m for m in EXACT_METHODS if m not in REFUSE_NODES])
@given(inst=random_instances(max_gpus=4, max_jobs=5, max_horizon=8))
@EXACT
def test_every_exact_method_finds_the_same_optimum_on_one_node(method: str, inst: Instance) -> None:
    flat = gpusched.solve(inst, method, time_limit=10.0)
    one = gpusched.solve(_on_one_node(inst), method, time_limit=10.0)
    assert flat.upper_bound is not None and one.upper_bound is not None
    assert one.value <= flat.upper_bound + 1e-6 and flat.value <= one.upper_bound + 1e-6
    if flat.status == Status.OPTIMAL and one.status == Status.OPTIMAL:
        assert one.value == pytest.approx(flat.value, abs=1e-6)


@given(inst=random_instances(max_gpus=8, max_jobs=12, max_horizon=16), seed=st.integers(0, 2**16),
       reservation=st.sampled_from(["peak", "curve"]), rule=st.sampled_from(PLACEMENTS))
@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_one_node_decoders_are_the_general_path(inst: Instance, seed: int, reservation: str,
                                                    rule: str) -> None:
    """The compiled decoder (one node specialised) against the general numpy fit on one node."""
    one = _on_one_node(inst)
    order = np.random.default_rng(seed).permutation(inst.num_jobs)
    expect = list_starts_ref(inst, order, reservation)
    ref_start, ref_place = list_starts_nodes_ref(one, order, reservation, rule)
    assert ref_start == expect and all(p == [0] for p, s in zip(ref_place, ref_start) if s >= 0)
    g, p, r, d = (c.tolist() for c in job_arrays(one))
    general = new_profile(one, reservation, rule)
    start = np.full(inst.num_jobs, -1, dtype=np.int64)
    for j in order.tolist():
        s, ks = node_fit(general, g[j], p[j], r[j], d[j])
        if s >= 0:
            occupy(general, g[j], s, p[j], ks)
            start[j] = s
    assert start.tolist() == expect
    for which in (inst, one):
        prof = new_profile(which, reservation, rule)
        place = new_place(which)
        assert serial_starts(prof, order, job_arrays(which), None, place).tolist() == expect
        assert prof.rows.tolist() == general.rows.tolist()  # the same pool and node rows
        assert place[start >= 0, 0].tolist() == [0] * int((start >= 0).sum())


@given(inst=random_instances(max_gpus=8, max_jobs=12, max_horizon=16), seed=st.integers(0, 2**16),
       t=st.integers(0, 15))
@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
def test_fits_now_on_one_node_is_the_general_test(inst: Instance, seed: int, t: int) -> None:
    one = _on_one_node(inst)
    prof = new_profile(one, "curve")
    rng = np.random.default_rng(seed)
    for j in rng.permutation(inst.num_jobs)[: inst.num_jobs // 2].tolist():  # some load first
        s, ks = node_fit(prof, int(inst.gpus[j]), int(inst.durations[j]), int(inst.releases[j]),
                         int(inst.deadlines[j]))
        if s >= 0:
            occupy(prof, int(inst.gpus[j]), s, int(inst.durations[j]), ks)
    t = min(t, inst.horizon - 1)
    cand = np.flatnonzero(inst.durations + t <= inst.deadlines)
    cand = rng.permutation(cand).astype(np.int64)
    assert fits_now(prof, t, cand, inst.gpus, inst.durations) == node_fits_now(
        prof, t, cand, inst.gpus, inst.durations)
