"""milp.cpsat's solution callback: every solution CP-SAT finds, as arrays, feasible, flat and on nodes."""

from __future__ import annotations

import numpy as np
import pytest
from brute import brute_force, tiny_instance
from brute_nodes import brute_force_nodes, tiny_node_instance

import instances
import milp
from milp.cpsat import solve_cpsat


def _solve(inst: instances.Instance) -> tuple[list, milp.RawSolve]:
    form = milp.build(inst)
    seen: list = []
    raw = solve_cpsat(form, time_limit=10, mip_gap=0, threads=1, warm_start=None, progress=None,
                      on_solution=seen.append)
    return seen, raw


@pytest.mark.parametrize("seed", [1, 2])
def test_each_solution_of_the_callback_is_a_feasible_schedule_the_last_the_answer(seed: int) -> None:
    inst = tiny_instance(seed, n=6, G=4, T=10)
    opt, _ = brute_force(inst)
    seen, raw = _solve(inst)
    assert seen and raw.status == "optimal"
    values = []
    for start, place in seen:
        assert place is None  # a flat instance: start arrays alone
        values.append(instances.evaluate(inst, instances.Schedule.from_array(inst, start)).value)
    assert values == sorted(values)  # improving solutions, in order
    assert values[-1] == pytest.approx(opt)
    assert raw.start is not None and np.array_equal(seen[-1][0], raw.start)


def test_the_callback_on_nodes_gives_placed_schedules() -> None:
    inst = tiny_node_instance(3, n=4, shape=(2, 2))
    opt, _ = brute_force_nodes(inst)
    seen, raw = _solve(inst)
    assert seen and raw.status == "optimal"
    for start, place in seen:
        assert place is not None and place.shape == (inst.num_jobs, inst.max_span)
        instances.evaluate(inst, instances.Schedule.from_array(inst, start, place))
    last = instances.Schedule.from_array(inst, *seen[-1])
    assert instances.evaluate(inst, last).value == pytest.approx(opt)
