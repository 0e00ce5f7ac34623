"""best, lns and solve_milp on instances with nodes: placements, brute force, the fast path."""

from __future__ import annotations

import numpy as np
import pytest
from brute_nodes import brute_force_nodes, tiny_node_instance

import heuristics
import instances
import milp
from heuristics import start_value
from heuristics.placement import PLACEMENTS, new_place
from heuristics.stop import budget
from instances import Instance, Job, Node, Schedule
from matheuristics import best as best_module
from matheuristics import solve_milp, subsolve
from matheuristics.params import LNSParams
from matheuristics.search import lns_improve
from matheuristics.windows import node_window

SHAPES = [(2, 2), (2, 1, 1), (3, 2), (2, 2, 2), (3, 1)]


def _medium(seed: int) -> Instance:
    return instances.with_nodes(instances.generate("medium", seed=seed), 8)


def _placed(inst: Instance, res: instances.Result) -> None:
    """The result passes the checker again, and every started job has a placement."""
    again = instances.evaluate(inst, res.schedule, enforce_reservation=True)
    assert again.value == pytest.approx(res.value)
    assert set(res.schedule.placement) == set(res.schedule.starts)


# ----------------------------------------------------------------------------- best
@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.slow
def test_best_on_nodes_is_placed_and_beats_list_first_fit(seed: int) -> None:
    inst = _medium(seed)
    res = heuristics.solve(inst, "best", time_limit=4, lns_rounds=4)
    _placed(inst, res)
    base = heuristics.solve(inst, "list", placement="first-fit")
    assert res.value >= base.value - 1e-9
    for rule in PLACEMENTS:  # every list member on each rule is among the candidates
        assert res.value >= heuristics.solve(inst, "list", placement=rule).value - 1e-9
    assert res.params["placement"] is None


def test_best_members_on_nodes_run_each_placement_rule() -> None:
    inst = _medium(1)
    names = [(m, p.get("placement")) for m, p in best_module.members(inst)]
    flat = best_module.members(instances.generate("medium", seed=1))
    assert flat == list(best_module.CONSTRUCTIVE_MEMBERS)
    for method in best_module.PLACED_MEMBERS:
        assert {r for m, r in names if m == method} == set(PLACEMENTS)
    assert ("fifo", None) in names
    only = best_module.members(inst, "frag")
    assert {p.get("placement") for m, p in only if m in best_module.PLACED_MEMBERS} == {"frag"}


def test_best_with_one_placement_rule_and_bad_rule() -> None:
    inst = _medium(2)
    res = heuristics.solve(inst, "best", time_limit=2, lns_rounds=0, placement="best-fit")
    _placed(inst, res)
    assert res.params["placement"] == "best-fit"
    assert res.value >= heuristics.solve(inst, "list", placement="best-fit").value - 1e-9
    with pytest.raises(ValueError, match="placement"):
        heuristics.solve(inst, "best", time_limit=1, placement="worst-fit")


def test_best_on_a_flat_instance_is_unchanged_by_the_node_code() -> None:
    inst = instances.generate("medium", seed=3)
    a = heuristics.solve(inst, "best", time_limit=None, passes=20, iterations=50, lns_rounds=0)
    b = heuristics.solve(inst, "best", time_limit=None, passes=20, iterations=50, lns_rounds=0,
                         placement="frag")
    assert a.schedule.starts == b.schedule.starts and not a.schedule.placement
    assert "placement" not in a.params


@pytest.mark.parametrize("seed", range(6))
def test_best_and_lns_reach_the_brute_force_optimum_on_tiny_node_instances(seed: int) -> None:
    """A tiny instance (at most ``max_jobs`` jobs) is first re-solved whole by the node
    model: both reach the brute-force optimum."""
    inst = tiny_node_instance(seed, n=5, shape=SHAPES[seed % len(SHAPES)])
    opt, _ = brute_force_nodes(inst)
    for method in ("best", "lns"):
        res = heuristics.solve(inst, method, time_limit=None, passes=5, iterations=20)
        _placed(inst, res)
        assert res.value == pytest.approx(opt, abs=1e-6), method


@pytest.mark.parametrize(("method", "kw"), [
    # best's own LNS windows stop at 1 s of the clock, which a loaded machine can reach (then
    # flat and node differ by the load, not the model): its LNS is the lns case's, given 20 s
    ("lns", {"rounds": 4, "sub_time_limit": 20.0}), ("best", {"lns_rounds": 0}),
])
@pytest.mark.parametrize("seed", [1, 2])
def test_a_flat_instance_and_the_same_on_one_node_give_the_same_schedule(
        method: str, kw: dict[str, float], seed: int) -> None:
    """One node of G GPUs is the flat pool: the same decisions, the same value."""
    inst = instances.generate("hc-mixed", seed=seed)
    one = instances.with_nodes(inst, inst.num_gpus)
    assert one.num_nodes == 1
    flat = heuristics.solve(inst, method, time_limit=None, passes=10, iterations=20, **kw)
    node = heuristics.solve(one, method, time_limit=None, passes=10, iterations=20, **kw)
    assert node.value == pytest.approx(flat.value)
    assert node.schedule.starts == flat.schedule.starts
    _placed(one, node)


# ------------------------------------------------------------------------------ lns
def test_node_window_withholds_the_fixed_jobs_nodes() -> None:
    """Nodes 2+2+4; ``big`` (4 GPUs, whole of node 2, slots 0-1) and ``one`` (1 GPU on
    node 0, slots 1-2) stay fixed; ``free`` moves."""
    nodes = (Node("a", 2), Node("b", 2), Node("c", 4))
    jobs = (Job("big", 4, 2), Job("one", 1, 2), Job("free", 2, 1), Job("idle", 2, 1))
    inst = Instance("win", 8, 4, (), jobs, nodes=nodes)
    start = np.array([0, 1, 3, -1], dtype=np.int64)
    place = np.array([[2], [0], [1], [-1]], dtype=np.int64)
    sub, warm, warm_place, reserved = node_window(inst, start, place, 1, 4, np.array([2, 3]))
    assert sub.nodes == inst.nodes and sub.horizon == 3
    assert reserved.tolist() == [[1, 1, 0], [0, 0, 0], [4, 0, 0]]
    assert sub.batch_capacity("curve").tolist() == [3, 7, 8]  # the pool less big and one
    assert warm.tolist() == [2, -1] and warm_place.tolist() == [[1], [-1]]


@pytest.mark.parametrize("seed", [1, 2])
def test_lns_on_nodes_never_loses_value_and_keeps_a_valid_placement(seed: int) -> None:
    inst = _medium(seed)
    place = new_place(inst)
    start = heuristics.fifo.fifo_starts(inst, "curve", place=place)
    before = start_value(inst, start)
    given = place.copy()
    out, out_place, rounds, _ = lns_improve(inst, start, place, stop=budget(None, 6),
                                            params=LNSParams(seed=seed, sub_time_limit=0.5))
    assert rounds == 6 and np.array_equal(place, given)  # the arrays given are not changed
    assert start_value(inst, out) >= before - 1e-9
    assert out_place is not None
    metrics = instances.evaluate(inst, Schedule.from_array(inst, out, out_place))
    assert metrics.value == pytest.approx(start_value(inst, out))


def test_lns_on_nodes_needs_the_placement() -> None:
    inst = _medium(2)
    start = np.full(inst.num_jobs, -1, dtype=np.int64)
    with pytest.raises(ValueError, match="place"):
        lns_improve(inst, start, stop=budget(None, 1))
    with pytest.raises(ValueError, match="place: expected shape"):
        lns_improve(inst, start, np.full((1, 1), -1), stop=budget(None, 1))


def test_lns_on_nodes_trades_placed_schedules_through_the_exchange() -> None:
    """The exchange sees the search's start and placement arrays, and what it hands back,
    a better placed schedule, is what the search goes on from."""
    inst = _medium(2)
    place = new_place(inst)
    weak = heuristics.fifo.fifo_starts(inst, "curve", place=place)
    strong = heuristics.solve(inst, "best", time_limit=None, passes=10, iterations=20,
                              lns_rounds=0)
    assert strong.value > start_value(inst, weak)
    seen: list[float] = []

    def exchange(start: np.ndarray, where: np.ndarray | None,
                 value: float) -> tuple[np.ndarray, np.ndarray | None] | None:
        assert where is not None and where.shape == (inst.num_jobs, inst.max_span)
        instances.evaluate(inst, Schedule.from_array(inst, start, where))  # a placed schedule
        seen.append(value)
        if len(seen) == 1:
            return strong.schedule.to_array(inst), strong.schedule.to_placement_array(inst)
        return None

    out, out_place, rounds, _ = lns_improve(inst, weak, place, stop=budget(None, 3),
                                            exchange=exchange)
    assert rounds == 3 and len(seen) == 3
    assert seen[0] == pytest.approx(start_value(inst, weak))
    assert seen[1] >= strong.value - 1e-9  # the second round starts from the strong one
    assert out_place is not None
    again = instances.evaluate(inst, Schedule.from_array(inst, out, out_place))
    assert again.value >= strong.value - 1e-9


def test_lns_method_on_nodes_is_placed_and_beats_its_start() -> None:
    inst = _medium(1)
    res = heuristics.solve(inst, "lns", time_limit=None, rounds=4, passes=5, iterations=20)
    _placed(inst, res)
    assert res.params["placement"] is None and "placement" in res.message
    assert res.value >= heuristics.solve(inst, "list", placement="first-fit").value - 1e-9


def _count_checks(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Count runs of the checker (each builds one ``Metrics``) and of ``Schedule.from_array``."""
    import instances.checker as checker

    counts = {"evaluate": 0, "from_array": 0}
    real_metrics, real_from_array = checker.Metrics, instances.Schedule.from_array.__func__

    def metrics(*args: object, **kwargs: object) -> object:
        counts["evaluate"] += 1
        return real_metrics(*args, **kwargs)

    def from_array(cls: type, inst: Instance, start: np.ndarray, *args: object) -> Schedule:
        counts["from_array"] += 1
        return real_from_array(cls, inst, start, *args)

    monkeypatch.setattr(checker, "Metrics", metrics)
    monkeypatch.setattr(instances.Schedule, "from_array", classmethod(from_array))
    return counts


def test_node_windows_stay_on_arrays_and_the_result_is_checked_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    inst = _medium(2)
    place = new_place(inst)
    start = heuristics.fifo.fifo_starts(inst, "curve", place=place)
    windows: list[str] = []
    real = milp.solve_arrays

    def solve(form: milp.Formulation, **kw: object) -> milp.RawSolve:
        ws = kw["warm_start"]
        if form.instance.has_nodes:
            assert isinstance(ws, tuple) and all(isinstance(a, np.ndarray) for a in ws)
            windows.append("nodes")
        else:
            assert isinstance(ws, np.ndarray)  # a start array, not a Schedule
            windows.append("flat")
        return real(form, **kw)  # type: ignore[arg-type]

    def no_solve(*args: object, **kwargs: object) -> None:
        raise AssertionError("the node LNS must not call a Schedule-level solve per window")

    monkeypatch.setattr(milp, "solve_arrays", solve)
    monkeypatch.setattr(milp, "solve", no_solve)
    counts = _count_checks(monkeypatch)
    out, _, rounds, _ = lns_improve(inst, start, place, stop=budget(None, 5),
                                    params=LNSParams(seed=2, sub_time_limit=0.5))
    assert rounds == 5 and windows.count("flat") >= 4
    assert counts == {"evaluate": 0, "from_array": 0}
    res = heuristics.solve(inst, "lns", time_limit=None, rounds=3, passes=5, iterations=10)
    assert counts == {"evaluate": 1, "from_array": 1}  # at the boundary, once
    monkeypatch.undo()
    _placed(inst, res)
    assert start_value(inst, out) >= start_value(inst, start) - 1e-9


def test_a_node_window_answer_outside_its_model_is_never_taken(
        monkeypatch: pytest.MonkeyPatch) -> None:
    inst = _medium(2)
    place = new_place(inst)
    start = heuristics.fifo.fifo_starts(inst, "curve", place=place)
    kept = place.copy()

    def overload(form: milp.Formulation, **kw: object) -> milp.RawSolve:
        n = form.instance.num_jobs
        first = np.full(n, -1, dtype=np.int64)
        where = np.full((n, form.instance.max_span), -1, dtype=np.int64)
        for j in range(n):  # every job at its first column: over capacity
            cols = np.flatnonzero(form.col_job == j)
            if cols.size:
                first[j] = form.col_start[cols[0]]
                where[j] = form.place_nodes[form.col_place[cols[0]]][: where.shape[1]]
        assert not form.feasible(first, where)
        return milp.RawSolve(instances.Status.OPTIMAL, first, 1e9, place=where)

    def overload_flat(form: milp.Formulation, **kw: object) -> milp.RawSolve:
        every = np.array([int(s[0]) if s.size else -1 for s in
                          (form.col_start[form.col_group == k] for k in range(len(form.groups)))])
        bad = np.full(form.instance.num_jobs, -1, dtype=np.int64)
        for k, members in enumerate(form.groups):
            bad[members] = every[k]
        assert not form.feasible(bad)
        return milp.RawSolve(instances.Status.OPTIMAL, start=bad, dual_bound=1e9)

    monkeypatch.setattr(milp, "solve_arrays", lambda form, **kw: (
        overload(form, **kw) if form.instance.has_nodes else overload_flat(form, **kw)))
    out, out_place, rounds, improved = lns_improve(inst, start, place, stop=budget(None, 4),
                                                   params=LNSParams(seed=1))
    assert (rounds, improved) == (4, 0)
    assert np.array_equal(out, start) and np.array_equal(out_place, kept)


# ------------------------------------------------------------------------ solve_milp
@pytest.mark.slow
def test_solve_milp_on_nodes_warm_starts_from_best(monkeypatch: pytest.MonkeyPatch) -> None:
    inst = _medium(3)
    calls: list[float | None] = []
    real = best_module.best

    def spy(inst_: Instance, **kw: object) -> instances.Result:
        calls.append(kw.get("time_limit"))  # type: ignore[arg-type]
        return real(inst_, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr("matheuristics.exact.best", spy)
    res = solve_milp(inst, time_limit=10, threads=1)
    assert calls == [pytest.approx(1.0)]  # 10% of the limit, as on a flat instance
    assert res.params["warm_start"] == "best" and "LNS helper" not in res.message
    _placed(inst, res)
    assert res.upper_bound is not None and res.upper_bound >= res.value - 1e-6


def test_solve_milp_on_nodes_runs_the_lns_helper_on_two_threads() -> None:
    inst = _medium(3)
    res = solve_milp(inst, time_limit=6, threads=2)
    assert "LNS helper" in res.message and res.params["threads"] == 2
    _placed(inst, res)
    assert res.upper_bound is not None and res.upper_bound >= res.value - 1e-6


def test_place_window_places_a_flat_answer_or_says_it_cannot() -> None:
    """Nodes 2+2+4, node 2 withheld in slot 0. Two 2-GPU jobs and one 4-GPU job."""
    nodes = (Node("a", 2), Node("b", 2), Node("c", 4))
    jobs = (Job("x", 2, 1), Job("y", 2, 1), Job("big", 4, 1), Job("whole", 8, 1))
    inst = Instance("pw", 8, 2, (), jobs, nodes=nodes)
    reserved = np.array([[0, 0], [0, 0], [4, 0]])
    # slot 0: x and y on the two 2-GPU nodes; slot 1: big on node 2 (best fit), x kept
    place = subsolve.place_window(inst, reserved, np.array([0, 0, 1, -1]))
    assert place is not None and place[:, 0].tolist() == [0, 1, 2, -1]
    # big at slot 0 finds node 2 withheld: no room (the pool alone would have it)
    assert subsolve.place_window(inst, reserved, np.array([-1, -1, 0, -1])) is None
    # the 8-GPU job takes every node, which must be wholly free over its run
    assert subsolve.place_window(inst, reserved, np.array([-1, -1, -1, 0])) is None
    whole = subsolve.place_window(inst, reserved, np.array([-1, -1, -1, 1]))
    assert whole is not None and whole[3].tolist() == [0, 1, 2]
    # a kept row wins over best fit when it still has room
    keep_arr = np.full((4, inst.max_span), -1, dtype=np.int64)
    keep_arr[0, 0] = 1
    kept = subsolve.place_window(inst, reserved, np.array([0, -1, -1, -1]), keep_arr)
    assert kept is not None and kept[0, 0] == 1


def test_a_window_the_flat_model_cannot_place_goes_to_the_node_model(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Nodes 2+2+4, two 4-GPU jobs for the whole horizon: flat, both run; on the nodes only
    the one worth more (on node 2). The flat answer cannot be placed, the node model runs."""
    jobs = (Job("a", 4, 2, 1.0), Job("b", 4, 2, 2.0))
    nodes = (Node("s0", 2), Node("s1", 2), Node("big", 4))
    inst = Instance("two-big", 8, 2, (), jobs, nodes=nodes)
    calls: list[int] = []
    real = milp.solve_arrays

    def spy(form: milp.Formulation, **kw: object) -> milp.RawSolve:
        if form.instance.has_nodes:
            calls.append(form.num_x)
        return real(form, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(milp, "solve_arrays", spy)
    start = np.full(2, -1, dtype=np.int64)
    out, place, _, improved = lns_improve(inst, start, new_place(inst), stop=budget(None, 1))
    assert calls and improved == 1
    assert out.tolist() == [-1, 0] and place is not None and place[1].tolist() == [2]
