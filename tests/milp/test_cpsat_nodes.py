"""milp.cpsat on nodes: the CP-SAT node model agrees with HiGHS's node model and brute force."""

from __future__ import annotations

import pytest
from brute_nodes import brute_force_nodes, tiny_node_instance
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import instances
import milp
from instances import Instance, Job, Node, Schedule, Service

SHAPES = [(2, 2), (2, 1, 1), (3, 2), (2, 2, 2), (4,), (3, 1)]


@given(st.integers(0, 100_000), st.sampled_from(SHAPES), st.integers(2, 5))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_cpsat_highs_and_brute_force_agree(seed: int, shape: tuple, n: int) -> None:
    inst = tiny_node_instance(seed, n=n, shape=shape)
    best, _ = brute_force_nodes(inst)
    cp = milp.solve(inst, backend="cpsat", time_limit=20, mip_gap=0, warm_start=None,
                    flat_share=0)
    hi = milp.solve(inst, backend="highs", time_limit=20, mip_gap=0, warm_start=None,
                    flat_share=0)
    for res in (cp, hi):
        assert instances.evaluate(inst, res.schedule).value == pytest.approx(res.value)
        assert set(res.schedule.placement) >= set(res.schedule.starts)
        assert res.status == "optimal", res.message
        assert res.value == pytest.approx(best, abs=1e-6)
        assert res.upper_bound == pytest.approx(best, rel=1e-6)
    assert cp.method == "cpsat" and hi.method == "milp"
    assert "CP-SAT" in cp.message and "HiGHS" in hi.message


@pytest.mark.parametrize("symmetry", ["none", "fix", "rows"])
def test_cpsat_on_the_reduced_columns_and_with_a_warm_start(symmetry: str) -> None:
    """CP-SAT on the columns a symmetry reduction keeps, hinted by a non-canonical schedule."""
    nodes = (Node("a", 2), Node("b", 2), Node("c", 2))
    jobs = tuple(Job(f"j{k}", 1 + k % 2, 2, 1.0 + 0.1 * k, release=k % 3) for k in range(5))
    inst = Instance("three-twos", 6, 5, (Service("s", 1.0, (1, 0, 0, 1, 0)),), jobs, nodes=nodes)
    best, _ = brute_force_nodes(inst)
    hint = Schedule(inst.name, {"j0": 0}, {"j0": {"c": 1}})  # on the last node: not canonical
    res = milp.solve(inst, backend="cpsat", time_limit=20, symmetry=symmetry, warm_start=hint,
                     flat_share=0)
    instances.evaluate(inst, res.schedule)
    assert res.status == "optimal" and res.value == pytest.approx(best)


def test_cpsat_rejects_unknown_parameters() -> None:
    inst = tiny_node_instance(0, n=3)
    with pytest.raises(ValueError, match="params"):
        milp.solve(inst, backend="cpsat", time_limit=5, warm_start=None, flat_share=0,
                   no_such_parameter=1)
