"""milp on nodes: the exact node model against brute force, the flat model and hand-worked cases."""

from __future__ import annotations

import numpy as np
import pytest
from brute import brute_force
from brute_nodes import brute_force_nodes, placements_of, tiny_node_instance
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import instances
import milp
import milp.held
from instances import Instance, Job, Node, Schedule, Service
from instances.capacity import job_placements, place_starts

SHAPES = [(2, 2), (2, 1, 1), (3, 2), (2, 2, 2), (4,), (3, 1)]


def check(inst: Instance, res: instances.Result) -> None:
    """Properties every node result has: checked schedule with a placement, bound above it."""
    again = instances.evaluate(inst, res.schedule)
    assert again.value == pytest.approx(res.value, abs=1e-9)
    assert set(res.schedule.placement) >= set(res.schedule.starts)
    assert res.upper_bound is not None
    assert res.upper_bound >= res.value - 1e-6 * max(1.0, res.value)


def two_big_jobs() -> Instance:
    """Nodes of 2, 2 and 4 GPUs; two 4-GPU jobs for the whole horizon of 2 slots.

    Flat: both run side by side, 4*2*1 + 4*2*2 = 24. On the nodes a 4-GPU
    job fits only on the 4-GPU node (it may not be split over 2+2), so only
    one runs: the one of priority 2, value 16. Price of topology 8.
    """
    jobs = (Job("a", 4, 2, 1.0), Job("b", 4, 2, 2.0))
    nodes = (Node("small-0", 2), Node("small-1", 2), Node("big", 4))
    return Instance("two-big", 8, 2, (), jobs, nodes=nodes)


@given(st.integers(0, 100_000), st.sampled_from(SHAPES), st.integers(2, 5))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_brute_force_agrees_under_every_symmetry_mode(seed: int, shape: tuple, n: int) -> None:
    inst = tiny_node_instance(seed, n=n, shape=shape)
    best, schedule = brute_force_nodes(inst)
    assert instances.evaluate(inst, schedule).value == pytest.approx(best)
    for sym in milp.SYMMETRY:
        res = milp.solve(inst, time_limit=20, mip_gap=0, warm_start=None, symmetry=sym,
                         flat_share=0)
        check(inst, res)
        assert res.status == "optimal", (sym, res.message)
        assert res.value == pytest.approx(best, abs=1e-6), sym
        assert res.upper_bound == pytest.approx(best, rel=1e-6), sym


@pytest.mark.parametrize("seed", range(8))
def test_node_optimum_at_most_flat_optimum(seed: int) -> None:
    inst = tiny_node_instance(seed, n=5, shape=SHAPES[seed % len(SHAPES)])
    flat_best, _ = brute_force(inst.replace(nodes=None))
    node_best, _ = brute_force_nodes(inst)
    assert node_best <= flat_best + 1e-9
    res = milp.solve(inst, time_limit=20, mip_gap=0)  # the default: flat solve, placed warm start
    check(inst, res)
    assert res.value == pytest.approx(node_best, abs=1e-6)
    price = milp.price_of_topology(inst, time_limit=20, mip_gap=0)
    assert price.exact
    assert price.value == pytest.approx(flat_best - node_best, abs=1e-6)
    assert price.lower <= price.value + 1e-6 and price.value <= price.upper + 1e-6


def test_brute_force_instances_include_multi_node_jobs() -> None:
    """The random tiny instances exercise whole-node placements (and a job off every node)."""
    multi = 0
    for seed in range(12):
        inst = tiny_node_instance(seed, n=5, shape=SHAPES[seed % len(SHAPES)])
        multi += int(inst.multi_node.sum())
    assert multi > 0


def test_topology_costs_value_with_staggered_jobs() -> None:
    """Nodes of 3 and 1, three jobs over 3 slots, no inference.

    ``a``: 2 GPUs, slots 0-1, value 4; ``b``: 2 GPUs, released at 1 so slots
    1-2, value 6; ``c``: 1 GPU for all 3 slots, value 3. Flat (4 GPUs): all
    three need 5 at slot 1, so the best pair is ``a`` + ``b`` (4 at slot 1),
    10. On the nodes both 2-GPU jobs need the 3-GPU node and overlap at slot
    1, so ``a`` + ``b`` is out; ``b`` + ``c`` (9) is the best. Price 1.
    """
    jobs = (Job("a", 2, 2, 1.0), Job("b", 2, 2, 1.5, release=1), Job("c", 1, 3, 1.0))
    inst = Instance("staggered", 4, 3, (), jobs, nodes=(Node("n0", 3), Node("n1", 1)))
    assert brute_force(inst.replace(nodes=None))[0] == pytest.approx(10.0)
    assert brute_force_nodes(inst)[0] == pytest.approx(9.0)
    for backend in ("highs", "cpsat"):
        res = milp.solve(inst, time_limit=10, backend=backend)
        check(inst, res)
        assert res.value == pytest.approx(9.0) and res.status == "optimal"
    price = milp.price_of_topology(inst, time_limit=10)
    assert price.exact and price.value == pytest.approx(1.0)


def test_topology_costs_value_hand_worked() -> None:
    inst = two_big_jobs()
    assert brute_force(inst.replace(nodes=None))[0] == pytest.approx(24.0)
    assert brute_force_nodes(inst)[0] == pytest.approx(16.0)
    res = milp.solve(inst, time_limit=10)
    check(inst, res)
    assert res.status == "optimal"
    assert res.value == pytest.approx(16.0)
    assert dict(res.schedule.starts) == {"b": 0}
    assert dict(res.schedule.placement["b"]) == {"big": 4}
    price = milp.price_of_topology(inst, time_limit=10)
    assert price.exact and price.value == pytest.approx(8.0)
    assert price.flat.value == pytest.approx(24.0)
    assert "8" in price.summary()


def test_placements_listed_as_the_contract_says() -> None:
    nodes = (Node("a", 4), Node("b", 2), Node("c", 2))
    jobs = (Job("one", 2, 1), Job("four", 4, 1), Job("six", 6, 1), Job("eight", 8, 1))
    inst = Instance("shapes", 8, 3, (), jobs, nodes=nodes)
    got = job_placements(inst)
    assert got[0] == [(0,), (1,), (2,)]
    assert got[1] == [(0,)]
    assert got[2] == [(0, 1), (0, 2)]
    assert got[3] == [(0, 1, 2)]
    for j, job in enumerate(inst.jobs):  # the brute force's own enumeration agrees
        names = {tuple(inst.nodes[k].name for k in q) for q in got[j]}
        assert names == set(placements_of(inst, job))
    with pytest.raises(ValueError, match="max_placements"):
        job_placements(inst, max_placements=1)


def test_symmetry_reduction_keeps_every_canonical_schedule() -> None:
    """A schedule relabelled by :meth:`canonical` satisfies every row of the reduced model."""
    for seed in range(10):
        inst = tiny_node_instance(seed, n=5, shape=(2, 2, 2))
        _, schedule = brute_force_nodes(inst)
        start, place = schedule.to_array(inst), schedule.to_placement_array(inst)
        for sym in milp.SYMMETRY:
            form = milp.build(inst, symmetry=sym)
            canon = form.canonical(start, place)
            assert instances.evaluate(inst, Schedule.from_array(inst, start, canon)).value == (
                pytest.approx(instances.evaluate(inst, schedule).value))
            x = form.encode(start, canon)
            assert np.array_equal(x, form.encode(start, place))  # encode relabels the same way
            ax = form.A @ x
            assert np.all(ax <= form.row_upper + 1e-9) and np.all(ax >= form.row_lower - 1e-9)
            assert form.feasible(start, place)
            got_start, got_place = form.decode(x)
            assert instances.evaluate(inst, Schedule.from_array(inst, got_start, got_place)).value \
                == pytest.approx(instances.evaluate(inst, schedule).value)
            if form.num_x == sum(len(g) for g in form.groups):  # no two jobs share a column
                assert np.array_equal(got_start, start) and np.array_equal(got_place, canon)


def test_symmetry_reduction_removes_mirror_schedules() -> None:
    """Two identical nodes, one 2-GPU job: only node 0 keeps a column under fixing."""
    inst = Instance("mirror", 4, 3, (), (Job("a", 2, 1), Job("b", 2, 1)),
                    nodes=(Node("x", 2), Node("y", 2)))
    none = milp.build(inst, symmetry="none", aggregate=False)
    fix = milp.build(inst, symmetry="fix", aggregate=False)
    rows = milp.build(inst, symmetry="rows")  # its running sums are per job: no aggregation
    assert len(rows.groups) == 2 and len(milp.build(inst, symmetry="none").groups) == 1
    assert none.num_x == 2 * 2 * 3
    # job a (first in order) only on node x; job b on x or y
    assert set(fix.col_place[fix.col_job == 0].tolist()) == {0}
    assert set(fix.col_place[fix.col_job == 1].tolist()) == {0, 1}
    assert rows.stats["symmetry_rows"] > 0
    # b on y while a does not run violates the order row: (y before x) is not canonical
    start = np.array([-1, 0])
    place = np.array([[-1], [1]])
    x = rows.encode(start, place, relabel=False)  # the column exists (fixing keeps it) ...
    assert np.any(rows.A @ x > rows.row_upper + 1e-9)  # ... but an order row refuses it
    x = rows.encode(start, place)  # relabelled to canonical form: b moves to x
    assert rows.decode(x)[1][1, 0] == 0
    assert np.all(rows.A @ x <= rows.row_upper + 1e-9)
    with pytest.raises(ValueError, match="no column"):  # a on y: removed by fixing
        fix.encode(np.array([0, -1]), np.array([[1], [-1]]), relabel=False)


def test_whole_node_jobs_and_bound_from_the_flat_model() -> None:
    """A 6-GPU job on 4+2+2 takes whole nodes; the flat result passed in bounds the node one."""
    nodes = (Node("a", 4), Node("b", 2), Node("c", 2))
    jobs = (Job("six", 6, 3, 1.0), Job("two", 2, 3, 1.5), Job("four", 4, 2, 0.5, release=1))
    inst = Instance("whole", 8, 4, (Service("s", 1.0, (0, 1, 1, 0)),), jobs, nodes=nodes)
    best, _ = brute_force_nodes(inst)
    flat = milp.solve(inst.replace(nodes=None), time_limit=10)
    res = milp.solve(inst, time_limit=10, flat=flat)
    check(inst, res)
    assert res.value == pytest.approx(best)
    assert res.upper_bound <= flat.upper_bound + 1e-9
    six = res.schedule.placement.get("six")
    if six is not None:
        assert dict(six) in ({"a": 4, "b": 2}, {"a": 4, "c": 2})


def test_place_starts_gives_a_feasible_node_schedule() -> None:
    inst = two_big_jobs()
    flat = milp.solve(inst.replace(nodes=None), time_limit=10)
    start, place = place_starts(inst, flat.schedule.to_array(inst))
    schedule = Schedule.from_array(inst, start, place)
    assert instances.evaluate(inst, schedule).jobs_run == 1  # one 4-GPU job is dropped
    for seed in range(6):
        tiny = tiny_node_instance(seed, n=5, shape=(2, 1, 1))
        res = milp.solve(tiny.replace(nodes=None), time_limit=10)
        start, place = place_starts(tiny, res.schedule.to_array(tiny), fill=True)
        instances.evaluate(tiny, Schedule.from_array(tiny, start, place))


def test_warm_starts_on_nodes() -> None:
    inst = two_big_jobs()
    good = Schedule(inst.name, {"a": 0}, {"a": {"big": 4}})
    res = milp.solve(inst, time_limit=10, warm_start=good)
    check(inst, res)
    assert res.value == pytest.approx(16.0)
    # a schedule of the flat pool (no placement) is placed on the nodes
    flat = Schedule(inst.name, {"a": 0, "b": 0})
    res = milp.solve(inst, time_limit=10, warm_start=flat, flat_share=0)
    check(inst, res)
    assert res.value == pytest.approx(16.0)
    with pytest.raises(ValueError, match="warm_start"):
        milp.solve(inst, warm_start=Schedule(inst.name, {"a": 1}))  # ends after the horizon


def test_bad_arguments() -> None:
    inst = two_big_jobs()
    with pytest.raises(ValueError, match="backend"):
        milp.solve(inst, backend="gurobi")
    with pytest.raises(ValueError, match="flat"):
        milp.solve(inst.replace(nodes=None), flat=milp.solve(inst.replace(nodes=None)))
    with pytest.raises(ValueError, match="symmetry"):
        milp.solve(inst, symmetry="mirror")
    with pytest.raises(ValueError, match="flat_share"):
        milp.solve(inst, flat_share=2)
    with pytest.raises(ValueError, match="no nodes"):
        milp.price_of_topology(inst.replace(nodes=None))
    with pytest.raises(ValueError, match="params"):
        milp.solve(inst, no_such_highs_option=1)
    with pytest.raises(ValueError, match="max_columns"):
        milp.solve(inst, max_columns=1)


def test_a_bound_below_the_value_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Lagrangian place is guarded like every other bound: one below the value is a bug."""
    inst = two_big_jobs()

    def fake(value: float) -> object:
        return lambda inst, *a, **k: milp.Bound(value, "lagrangian", np.zeros(inst.horizon), 0.0)

    monkeypatch.setattr(milp.held, "bound", fake(1.0))
    res = milp.solve(inst, time_limit=10, lagrangian=True)
    assert res.status == "error" and res.upper_bound is None
    assert "lagrangian" in res.message
    monkeypatch.setattr(milp.held, "bound", fake(16.0))
    res = milp.solve(inst, time_limit=10, lagrangian=True, root_lp=False, flat_share=0)
    assert res.status == "optimal" and res.upper_bound == pytest.approx(16.0)


def test_medium_sized_model_builds_as_arrays() -> None:
    """A medium instance on 8-GPU nodes builds quickly and its heuristic start encodes."""
    inst = instances.generate("medium", seed=0)
    shape = [8] * (inst.num_gpus // 8) + ([inst.num_gpus % 8] if inst.num_gpus % 8 else [])
    ni = inst.replace(nodes=tuple(Node(f"n{k}", m) for k, m in enumerate(shape)))
    form = milp.build(ni)
    assert form.num_x > 0 and form.stats["build_s"] < 5
    start, place = place_starts(ni, np.full(ni.num_jobs, -1), fill=True)
    assert np.count_nonzero(start >= 0) > 0
    assert form.feasible(start, place)
