"""Heuristics on nodes: FIFO exactly as specified, the decoders against the plain reference,
every method's schedule through the checker, and the three placement rules by hand."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference_nodes import fifo_nodes_ref, list_starts_nodes_ref
from strategies_nodes import node_instances

import heuristics
from heuristics.backfill import conservative_starts
from heuristics.decoder import job_arrays, serial_starts, serial_starts_numpy
from heuristics.engine import new_profile
from heuristics.fifo import fifo_starts
from heuristics.placement import PLACEMENTS, lexicographic_subset, new_place
from instances import Instance, Job, Node, Schedule, Service, evaluate

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))


def _rows(place: np.ndarray) -> list[list[int]]:
    return [[int(k) for k in row if k >= 0] for row in place]


@given(inst=node_instances(), seed=st.integers(0, 2**16),
       reservation=st.sampled_from(["peak", "curve"]), rule=st.sampled_from(PLACEMENTS))
@SETTINGS
def test_compiled_numpy_and_reference_decoders_agree(inst: Instance, seed: int, reservation: str,
                                                     rule: str) -> None:
    order = np.random.default_rng(seed).permutation(inst.num_jobs)
    expect = list_starts_nodes_ref(inst, order, reservation, rule)
    for decode in (serial_starts, serial_starts_numpy):
        place = new_place(inst)
        start = decode(new_profile(inst, reservation, rule), order, job_arrays(inst), None, place)
        assert (start.tolist(), _rows(place)) == expect
        evaluate(inst, Schedule.from_array(inst, start, place), reservation,  # type: ignore[arg-type]
                 enforce_reservation=True)


@given(inst=node_instances(), seed=st.integers(0, 2**16),
       reservation=st.sampled_from(["peak", "curve"]), rule=st.sampled_from(PLACEMENTS))
@SETTINGS
def test_numpy_then_compiled_on_one_profile_and_the_summaries_it_keeps(
    inst: Instance, seed: int, reservation: str, rule: str,
) -> None:
    """A prefix placed by the numpy decoder, the rest by the compiled one: one pass's schedule.

    The compiled decoder keeps the summary rows as it places; they must be
    those :meth:`Profile.refresh` computes from the node rows it leaves.
    """
    order = np.random.default_rng(seed).permutation(inst.num_jobs)
    k = inst.num_jobs // 2
    prof, place = new_profile(inst, reservation, rule), new_place(inst)
    start = serial_starts_numpy(prof, order[:k], job_arrays(inst), None, place)
    assert prof.stale == (inst.num_nodes > 1 and bool((start >= 0).any()))
    serial_starts(prof, order[k:], job_arrays(inst), start, place)
    assert (start.tolist(), _rows(place)) == list_starts_nodes_ref(inst, order, reservation, rule)
    kept = prof.rows.copy()
    prof.stale = True
    prof.refresh()
    assert prof.rows.tolist() == kept.tolist()


@given(inst=node_instances(), reservation=st.sampled_from(["peak", "curve"]))
@SETTINGS
def test_fifo_on_nodes_is_the_specified_rule(inst: Instance, reservation: str) -> None:
    place = new_place(inst)
    start = fifo_starts(inst, reservation, place=place)
    assert (start.tolist(), _rows(place)) == fifo_nodes_ref(inst, reservation)


@given(inst=node_instances())
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_method_schedule_passes_the_checker_on_nodes(inst: Instance) -> None:
    for method in heuristics.METHODS:
        if method in ("lns", "best", "lagrangian"):  # the matheuristics: their own node tests
            continue
        kw: dict = {"time_limit": None, "passes": 5} if method == "sampling" else {}
        if method == "local-search":
            kw = {"time_limit": None, "iterations": 20}
        rules = [None] if method.split("-")[0] in ("fifo", "easy", "conservative") else PLACEMENTS
        for rule in rules:
            res = heuristics.solve(inst, method, **kw, **({} if rule is None else {"placement": rule}))
            m = evaluate(inst, res.schedule, res.reservation, enforce_reservation=True)  # type: ignore[arg-type]
            assert m.value == res.value
            assert set(res.schedule.placement) == set(res.schedule.starts)


def test_methods_on_the_numpy_path_give_the_compiled_schedules(monkeypatch: pytest.MonkeyPatch) -> None:
    inst = _openb_like()
    params = {"list": {"placement": "frag"}, "conservative-curve": {},
              "sampling": {"passes": 6, "time_limit": None, "placement": "best-fit"},
              "local-search": {"iterations": 30, "time_limit": None}}
    fast = {m: heuristics.solve(inst, m, **kw).schedule for m, kw in params.items()}
    monkeypatch.setattr(heuristics.profile, "_COMPILED", [None])
    for m, kw in params.items():
        assert heuristics.solve(inst, m, **kw).schedule == fast[m], m


def test_conservative_on_nodes_is_the_list_decoder_in_fifo_order() -> None:
    inst = _openb_like()
    place = new_place(inst)
    start = conservative_starts(inst, "curve", place=place)
    ref_start, ref_place = list_starts_nodes_ref(inst, np.argsort(inst.releases, kind="stable"), "curve")
    assert (start.tolist(), _rows(place)) == (ref_start, ref_place)


def _openb_like() -> Instance:
    """24 GPUs on nodes of 8, 4, 4, 2, 2, 2, 1, 1: a small mixed cluster, mixed jobs."""
    sizes = [8, 4, 4, 2, 2, 2, 1, 1]
    rng = np.random.default_rng(5)
    jobs = []
    for i in range(30):
        g = int(rng.choice([1, 1, 2, 2, 3, 4, 8, 12, 16]))
        jobs.append(Job(f"j{i}", g, int(rng.integers(1, 6)), float(rng.choice([1, 2, 4])),
                        release=int(rng.integers(0, 8))))
    demand = tuple(int(x) for x in 3 + 2 * np.sin(np.arange(16) / 3))
    return Instance("mixed", 24, 16, (Service("chat", 1.0, demand),), tuple(jobs),
                    nodes=tuple(Node(f"n{k}", s) for k, s in enumerate(sizes)))


# ---------------------------------------------------------- rules by hand
def _three_nodes(jobs) -> Instance:
    return Instance("h", 16, 2, (), tuple(jobs), nodes=(Node("a", 8), Node("b", 4), Node("c", 4)))


def _place_one(inst: Instance, order: list[int], rule: str) -> list[list[int]]:
    place = new_place(inst)
    serial_starts(new_profile(inst, "curve", rule), np.array(order), job_arrays(inst), None, place)
    return _rows(place)


def test_first_fit_best_fit_and_frag_by_hand() -> None:
    """x (2 GPUs) then y (3 GPUs) on nodes a:8, b:4, c:4, both in slots 0-1.

    first-fit: x on a (the first node), y on a. best-fit: x on b (4 - 2 = 2
    left, less than a's 6), y on c (b has 2 < 3; c leaves 1, a 5). frag:
    jobs are 2, 3, 8 GPUs; F(f) = f * #{jobs that cannot use f}: for a 4-GPU
    node F(4) = 4 (the 8), F(2) = 2 * 2 (the 3 and the 8) = 4; for a, F(8) =
    0, F(6) = 6. x on b adds 0 per slot, on a 6: x goes to b. Then y: on c,
    F(4) -> F(1) = 1 * 3 = 3 adds -1; on a, F(8) -> F(5) = 5 adds 5: c.
    """
    inst = _three_nodes([Job("x", 2, 2), Job("y", 3, 2), Job("z", 8, 2, release=1)])
    assert _place_one(inst, [0, 1], "first-fit")[:2] == [[0], [0]]
    assert _place_one(inst, [0, 1], "best-fit")[:2] == [[1], [2]]
    assert _place_one(inst, [0, 1], "frag")[:2] == [[1], [2]]


def test_frag_differs_from_best_fit_by_hand() -> None:
    """Nodes a:5, b:4, c:4; x (1 GPU) first, then three 4-GPU jobs, all in slots 0-1.

    best-fit puts x on b (3 left, less than a's 4). frag: with jobs of 1 and
    4 GPUs, F_b(4) = 0 and F_b(3) = 3 * 3 (the three 4s cannot use 3) = 9, so
    x on b adds 9 per slot; F_a(5) = F_a(4) = 0, so x on a adds 0: frag puts x
    on a. Then the 4-GPU jobs: after best-fit only a and c hold one (2 start at
    slot 0); after frag a, b and c each hold one (3).
    """
    inst = Instance("h", 13, 2, (), (Job("x", 1, 2), *(Job(f"f{i}", 4, 2) for i in range(3))),
                    nodes=(Node("a", 5), Node("b", 4), Node("c", 4)))
    assert _place_one(inst, [0], "best-fit")[0] == [1]
    assert _place_one(inst, [0], "frag")[0] == [0]
    for rule, expect in (("frag", 3), ("best-fit", 2), ("first-fit", 3)):  # first-fit: a, too
        place = new_place(inst)
        start = serial_starts(new_profile(inst, "curve", rule), np.arange(4), job_arrays(inst),
                              None, place)
        assert int((start[1:] == 0).sum()) == expect, rule


def test_multi_node_jobs_take_the_lexicographically_smallest_set() -> None:
    assert lexicographic_subset([4, 2, 2, 4], 8) == [0, 1, 2]  # [0, 1, 2] < [0, 3]
    assert lexicographic_subset([2, 2, 4], 4) == [0, 1]  # [0, 1] < [2]
    assert lexicographic_subset([8, 4], 6) == []
    # nodes a:4, b:2, c:2, d:4. "six" (6 GPUs): {a, b}, {a, c}, {b, d}, {c, d} sum to 6;
    # [0, 1] is the smallest. "one" (1 GPU): the first node with room, c. "six2": at slot 0
    # only d is wholly free, so slot 1, on a and b again.
    inst = Instance("m", 12, 2, (), (Job("six", 6, 1), Job("one", 1, 1), Job("six2", 6, 1)),
                    nodes=(Node("a", 4), Node("b", 2), Node("c", 2), Node("d", 4)))
    place = new_place(inst)
    start = fifo_starts(inst, "curve", place=place)
    assert start.tolist() == [0, 0, 1]
    assert _rows(place) == [[0, 1], [2], [0, 1]]
    assert heuristics.solve(inst, "fifo-curve").schedule.placement == {
        "six": {"a": 4, "b": 2}, "one": {"c": 1}, "six2": {"a": 4, "b": 2}}


def test_peak_on_nodes_uses_only_what_is_left_on_each_node() -> None:
    """Peak 5 on nodes a:8, b:4, c:4: c withheld in full and 1 of b, so b offers 3.

    x (8 GPUs, slots 0-1) takes a. Under peak y (4 GPUs) fits on no node (b 3,
    c 0): rejected. Under curve the pool has 16 - 5 - 8 = 3 < 4 at slot 0 and
    16 - 1 - 8 = 7 at slot 1, where b has room: y on b at slot 1.
    """
    inst = Instance("p", 16, 2, (Service("s", 1.0, (5, 1)),), (Job("x", 8, 2), Job("y", 4, 1)),
                    nodes=(Node("a", 8), Node("b", 4), Node("c", 4)))
    for res, rows, starts in (("peak", [[0], []], [0, -1]), ("curve", [[0], [1]], [0, 1])):
        place = new_place(inst)
        start = fifo_starts(inst, res, place=place)
        assert (_rows(place), start.tolist()) == (rows, starts), res
    assert heuristics.solve(inst, "fifo-curve").schedule.placement == {"x": {"a": 8}, "y": {"b": 4}}


def test_placement_parameter_is_checked() -> None:
    inst = _openb_like()
    with pytest.raises(ValueError, match="placement: unknown placement rule 'worst-fit'"):
        heuristics.solve(inst, "list", placement="worst-fit")
    with pytest.raises(ValueError, match="place: required"):
        heuristics.finish(inst, "x", np.full(inst.num_jobs, -1), reservation="curve", started_at=0.0)


def test_empty_profiles_are_fresh_and_forgotten_with_their_instance() -> None:
    """new_profile memoises per live instance: each call a fresh copy; the entries go with it."""
    import gc

    from heuristics import memo as memo_module

    inst = _openb_like()
    a = new_profile(inst, "curve", "frag")
    start = serial_starts(a, np.arange(inst.num_jobs), job_arrays(inst))
    assert (start >= 0).any()
    b = new_profile(inst, "curve", "frag")
    assert b.rows.tolist() != a.rows.tolist()  # a was used; b is empty again
    assert b.rows.tolist() == new_profile(inst, "curve", "first-fit").rows.tolist()
    key = id(inst)
    assert any(k == key for k, _ in memo_module._MEMO)
    del inst, a, b
    gc.collect()
    assert not any(k == key for k, _ in memo_module._MEMO)
