"""milp.build(reserved=): GPUs withheld per node and slot, against brute force."""

from __future__ import annotations

import numpy as np
import pytest
from brute_nodes import brute_force_nodes, tiny_node_instance

import instances
import milp
from instances import Instance, Job, Node, Schedule, Service
from matheuristics.windows import node_window

SHAPES = [(2, 2), (2, 1, 1), (3, 2), (2, 2, 2), (3, 1)]


def _optimum(form: milp.Formulation) -> tuple[float, np.ndarray, np.ndarray]:
    raw = milp.solve_arrays(form, time_limit=20, mip_gap=0, threads=1)
    assert raw.status == "optimal", raw.message
    if raw.start is None or raw.place is None:
        n = form.instance.num_jobs
        return 0.0, np.full(n, -1), np.full((n, form.instance.max_span), -1)
    return float(form.instance.job_values[raw.start >= 0].sum()), raw.start, raw.place


@pytest.mark.parametrize("seed", range(10))
def test_fixing_part_of_an_optimum_leaves_the_rest_of_it(seed: int) -> None:
    """With some jobs of a brute-force optimum fixed (their GPUs withheld on their nodes),
    the node model of the other jobs reaches exactly the optimum less the fixed value;
    put back together, the schedule passes the checker."""
    inst = tiny_node_instance(seed, n=5, shape=SHAPES[seed % len(SHAPES)])
    best, schedule = brute_force_nodes(inst)
    start, place = schedule.to_array(inst), schedule.to_placement_array(inst)
    rng = np.random.default_rng(seed)
    run = np.flatnonzero(start >= 0)
    fixed = run[rng.random(run.size) < 0.5]
    freed = np.setdiff1d(np.arange(inst.num_jobs), fixed)
    sub, _, _, reserved = node_window(inst, start, place, 0, inst.horizon, freed)
    assert reserved.shape == (inst.num_nodes, inst.horizon)
    form = milp.build(sub, reserved=reserved)
    value, s_start, s_place = _optimum(form)
    fixed_value = float(inst.job_values[fixed].sum())
    assert value == pytest.approx(best - fixed_value, abs=1e-6)
    out, out_place = start.copy(), place.copy()
    out[freed] = s_start
    out_place[freed] = -1
    out_place[freed, : s_place.shape[1]] = s_place
    metrics = instances.evaluate(inst, Schedule.from_array(inst, out, out_place))
    assert metrics.value == pytest.approx(best, abs=1e-6)


def test_reserved_capacity_is_withheld_per_node_and_slot() -> None:
    """Two 2-GPU nodes; node 0 withholds 2 GPUs in slot 0, node 1 one GPU in slot 1.

    A 2-GPU job of 2 slots fits on neither node over slots 0-1, on node 0 over
    slots 1-2 only (node 1 has 1 free at slot 1); a 4-GPU (whole-node) job
    fits only at slot 2, where nothing is withheld. Both need node 0 at slot 2.
    """
    nodes = (Node("a", 2), Node("b", 2))
    jobs = (Job("two", 2, 2), Job("four", 4, 1, 2.0))
    inst = Instance("res", 4, 3, (), jobs, nodes=nodes)
    reserved = np.array([[2, 0, 0], [0, 1, 0]])
    form = milp.build(inst, reserved=reserved)
    cols = {(int(j), int(s), tuple(int(k) for k in form.placements[p]))
            for j, s, p in zip(form.col_job, form.col_start, form.col_place, strict=True)}
    assert cols == {(0, 1, (0,)), (1, 2, (0, 1))}
    assert form.stats["columns_dropped_reserved"] > 0
    value, start, _ = _optimum(form)
    assert value == pytest.approx(8.0)  # they meet on node 0 at slot 2: the one worth 8 runs
    assert start.tolist() == [-1, 2]


def test_nodes_differ_for_the_symmetry_handling_when_their_withheld_rows_differ() -> None:
    nodes = tuple(Node(f"n{k}", 2) for k in range(3))
    inst = Instance("sym", 6, 2, (), (Job("a", 2, 1), Job("b", 2, 1)), nodes=nodes)
    assert [c.tolist() for c in milp.build(inst).classes] == [[0, 1, 2]]
    reserved = np.array([[0, 0], [1, 0], [0, 0]])
    form = milp.build(inst, reserved=reserved, aggregate=False)
    assert [c.tolist() for c in form.classes] == [[0, 2], [1]]
    # job a may use node 0 (rank 0 of its class) or node 1 (its own class), never node 2
    on = {tuple(form.placements[p]) for j, p in zip(form.col_job, form.col_place, strict=True)
          if j == 0}
    assert on == {(0,), (1,)}


@pytest.mark.parametrize("bad, match", [
    (np.zeros((2, 2), dtype=np.int64), "shape"),
    (np.zeros((2, 3)), "integers"),
    (np.array([[0, 3, 0], [0, 0, 0]]), "node 0 slot 1"),
    (np.array([[0, 0, 0], [0, -1, 0]]), "node 1 slot 1"),
])
def test_bad_reserved_is_refused(bad: np.ndarray, match: str) -> None:
    inst = Instance("bad", 4, 3, (Service("s", 1.0, (0, 1, 0)),), (Job("a", 1, 1),),
                    nodes=(Node("a", 2), Node("b", 2)))
    with pytest.raises(ValueError, match=f"reserved.*{match}"):
        milp.build(inst, reserved=bad)


def test_no_reserved_builds_the_same_model() -> None:
    inst = tiny_node_instance(3, n=5, shape=(2, 2, 2))
    plain = milp.build(inst)
    zero = milp.build(inst, reserved=np.zeros((3, inst.horizon), dtype=np.int64))
    assert plain.num_x == zero.num_x and plain.num_rows == zero.num_rows
    assert np.array_equal(plain.col_job, zero.col_job)
    assert (plain.A != zero.A).nnz == 0
