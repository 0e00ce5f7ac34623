"""milp on model version 3: the exact model against brute force and CP-SAT, and hand-made cases.

Shares, GPU models, CPU and memory on; every schedule the MILP reports passes the checker with
GPU indices. Each rule of the model has a case that a wrong implementation (the row dropped)
fails: the optimum then exceeds brute force's.
"""

from __future__ import annotations

import numpy as np
import pytest
from brute_v3 import brute_force_v3, tiny_v3_instance
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import instances
import milp
from instances import Instance, Job, Node, Service
from milp.formulation import ROW_CAPACITY, ROW_CPU, ROW_GPU, ROW_MEMORY
from milp.gpus import gpu_of_schedule, schedule_of

SHAPES = [(2, 2), (2, 1, 1), (3, 2), (4,), (1, 1), (2, 2, 2)]


def check(inst: Instance, res: instances.Result) -> None:
    """A version 3 result: the schedule passes the checker (indices on shares), the bound above it."""
    again = instances.evaluate(inst, res.schedule)
    assert again.value == pytest.approx(res.value, abs=1e-9)
    if any(j.gpu_milli < 1000 for j in inst.jobs) and res.schedule.starts:
        assert res.schedule.lists_indices
    assert res.upper_bound is not None and res.upper_bound >= res.value - 1e-6 * max(1.0, res.value)


@given(st.integers(0, 100_000), st.sampled_from(SHAPES), st.integers(3, 6))
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_highs_cpsat_and_brute_force_agree(seed: int, shape: tuple, n: int) -> None:
    inst = tiny_v3_instance(seed, n=n, shape=shape, T=5, shared=0.6)
    best, schedule = brute_force_v3(inst)
    assert instances.evaluate(inst, schedule).value == pytest.approx(best)
    for backend, symmetry in (("highs", "fix"), ("highs", "none"), ("cpsat", None)):
        res = milp.solve(inst, backend=backend, symmetry=symmetry, time_limit=20, mip_gap=0)
        check(inst, res)
        assert res.status == "optimal", res.message
        assert res.value == pytest.approx(best, abs=1e-6)
        assert res.upper_bound == pytest.approx(best, rel=1e-6)


@given(st.integers(0, 100_000), st.sampled_from(SHAPES))
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_brute_force_optimum_satisfies_every_row_after_relabelling(seed: int, shape: tuple) -> None:
    """The symmetry reductions (nodes, GPU slots) keep the relabelled brute-force optimum."""
    inst = tiny_v3_instance(seed, n=6, shape=shape, T=5, shared=0.8)
    best, schedule = brute_force_v3(inst)
    start, place = schedule.to_array(inst), schedule.to_placement_array(inst)
    gpu = gpu_of_schedule(inst, schedule)
    for symmetry in ("fix", "rows", "none"):
        form = milp.build(inst, symmetry=symmetry)
        assert form.feasible(start, place, gpu)
        x = form.encode(start, place, gpu)
        assert float(form.c @ x) == pytest.approx(best)
        # and the columns decode back to a schedule of the same value that passes the checker
        back = schedule_of(inst, *form.decode_all(x))
        assert instances.evaluate(inst, back).value == pytest.approx(best)


def _solve_without(inst: Instance, kinds: tuple[int, ...], *, nodes_only: bool = False) -> float:
    """The optimum of the exact model with the rows of ``kinds`` dropped (a wrong model)."""
    form = milp.build(inst, symmetry="none", rounding=())
    drop = np.isin(form.row_kind, kinds)
    if nodes_only:
        drop &= form.row_ref >= inst.horizon
    keep = np.flatnonzero(~drop)
    from dataclasses import replace

    broken = replace(form, A=form.A[keep], row_lower=form.row_lower[keep],
                     row_upper=form.row_upper[keep], row_kind=form.row_kind[keep],
                     row_ref=form.row_ref[keep])
    raw = milp.solve_arrays(broken, time_limit=20, mip_gap=0)
    assert raw.status == "optimal"
    return float(inst.job_values[raw.start >= 0].sum())


def three_sixties() -> Instance:
    """Two GPUs on one node, three shared jobs of 600 milli over the same two slots.

    Two 600s do not fit one GPU: at most two jobs run (value 1.2 each). Without
    the per-GPU row the model runs all three (the busy GPUs then say 2, which fits).
    """
    jobs = tuple(Job(f"s{k}", 1, 2, 1.0, gpu_milli=600) for k in range(3))
    return Instance("sixties", 2, 2, (), jobs, nodes=(Node("n", 2),))


def test_dropping_the_per_gpu_row_gives_more_than_brute_force() -> None:
    inst = three_sixties()
    best, _ = brute_force_v3(inst)
    assert best == pytest.approx(2 * 1.2)
    res = milp.solve(inst, time_limit=10, mip_gap=0)
    check(inst, res)
    assert res.value == pytest.approx(best)
    assert _solve_without(inst, (ROW_GPU,)) == pytest.approx(3 * 1.2)


def test_dropping_the_busy_gpus_of_the_pool_gives_more_than_brute_force() -> None:
    """Shares of 500 pack two to a GPU; the pool (one GPU left by inference) must count busy GPUs.

    Four shared jobs of 500 over the same slot on a node of 2 GPUs, inference taking 1 of the
    2: two run (one GPU busy). Without the pool row (or with it counting nothing for shares),
    all four run on both GPUs.
    """
    jobs = tuple(Job(f"h{k}", 1, 1, 1.0, gpu_milli=500) for k in range(4))
    inst = Instance("halves", 2, 1, (Service("s", 1.0, (1,)),), jobs, nodes=(Node("n", 2),))
    best, _ = brute_force_v3(inst)
    assert best == pytest.approx(2 * 0.5)
    res = milp.solve(inst, time_limit=10, mip_gap=0)
    check(inst, res)
    assert res.value == pytest.approx(best)
    form = milp.build(inst, symmetry="none", rounding=())
    assert np.any((form.row_kind == ROW_CAPACITY) & (form.row_ref < inst.horizon))
    assert _solve_without(inst, (ROW_CAPACITY,)) == pytest.approx(4 * 0.5)


def test_a_whole_gpu_job_and_shares_never_meet_on_a_gpu() -> None:
    """One GPU: a shared job and a whole-GPU job at the same slot cannot both run.

    Without the node row counting busy GPUs (the count model's link between the two), both run.
    """
    # both ask model A: only node a serves them
    jobs = (Job("w", 1, 1, 1.0, gpu_models=["A"]), Job("s", 1, 1, 1.0, gpu_milli=100,
                                                       gpu_models=["A"]))
    inst = Instance("meet", 2, 1, (), jobs, nodes=(Node("a", 1, "A"), Node("b", 1, "B")))
    best, _ = brute_force_v3(inst)
    assert best == pytest.approx(1.0)
    res = milp.solve(inst, time_limit=10, mip_gap=0)
    check(inst, res)
    assert res.value == pytest.approx(best)
    assert _solve_without(inst, (ROW_CAPACITY,), nodes_only=True) == pytest.approx(1.1)


def test_cpu_and_memory_rows_bind_per_node_and_slot() -> None:
    """Two nodes of 3 GPUs, 4000 milli CPU and 10 MiB each: one job of 3000 CPU and one of
    6 MiB per node at a time, so 4 of the 6 jobs run; without those rows all 6 do."""
    jobs = tuple(Job(f"c{k}", 1, 2, 1.0 + k, cpu_milli=3000) for k in range(3)) + tuple(
        Job(f"m{k}", 1, 2, 1.0, memory_mib=6) for k in range(3))
    nodes = (Node("x", 3, cpu_milli=4000, memory_mib=10), Node("y", 3, cpu_milli=4000,
                                                             memory_mib=10))
    inst = Instance("cpu", 6, 2, (), jobs, nodes=nodes)
    best, _ = brute_force_v3(inst)
    assert best == pytest.approx(2 * (3 + 2) + 2 * 2)
    res = milp.solve(inst, time_limit=10, mip_gap=0)
    check(inst, res)
    assert res.value == pytest.approx(best)
    form = milp.build(inst)
    assert np.any(form.row_kind == ROW_CPU) and np.any(form.row_kind == ROW_MEMORY)
    assert _solve_without(inst, (ROW_CPU,)) == pytest.approx(best + 2)
    assert _solve_without(inst, (ROW_MEMORY,)) == pytest.approx(best + 2)


def test_gpu_models_restrict_the_placements() -> None:
    """Jobs asking model V100 run only on the V100 node; the node model on fluid amounts ignores it."""
    jobs = (Job("a", 2, 2, 1.0, gpu_models=["V100"]), Job("b", 2, 2, 1.0, gpu_models=["V100"]))
    inst = Instance("models", 4, 2, (), jobs, nodes=(Node("v", 2, "V100"), Node("t", 2, "T4")))
    best, _ = brute_force_v3(inst)
    assert best == pytest.approx(4.0)
    res = milp.solve(inst, time_limit=10, mip_gap=0)
    check(inst, res)
    assert res.value == pytest.approx(best)
    assert all(on.keys() == {"v"} for on in res.schedule.placement.values())
    nodes = milp.relaxation(inst, "nodes", time_limit=10)
    assert nodes.value == pytest.approx(8.0) and nodes.upper_bound >= best


def test_counts_of_whole_gpus_beside_shares_are_exact() -> None:
    """Node of 2 GPUs: share a on [0, 1), share b on [2, 3), whole w over [0, 3).

    With a and b on different GPUs, w finds no GPU free all along; the count model
    puts a and b on one slot (or the colouring on one GPU), and all three run.
    """
    jobs = (Job("a", 1, 1, 1.0, gpu_milli=300), Job("b", 1, 1, 1.0, release=2, gpu_milli=300),
            Job("w", 1, 3, 1.0))
    inst = Instance("colour", 2, 3, (), jobs, nodes=(Node("n", 2),))
    best, _ = brute_force_v3(inst)
    assert best == pytest.approx(0.3 + 0.3 + 3.0)
    for symmetry in ("fix", "none"):
        res = milp.solve(inst, time_limit=10, mip_gap=0, symmetry=symmetry)
        check(inst, res)
        assert res.value == pytest.approx(best)
    # labels the other way round are relabelled, then coloured onto fixed GPUs
    start = np.array([0, 2, 0])
    place = np.array([[0], [0], [0]])
    s = schedule_of(inst, start, place, np.array([1, 0, -1]))
    assert instances.evaluate(inst, s).value == pytest.approx(best)
    assert s.indices["a"]["n"] == s.indices["b"]["n"] != s.indices["w"]["n"]


@given(st.integers(0, 100_000), st.sampled_from([(2, 2), (2, 1, 1), (3, 2)]))
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_peak_reservation_by_index(seed: int, shape: tuple) -> None:
    """Under peak the highest-indexed GPUs are withheld; the decoded schedule leaves them free."""
    inst = tiny_v3_instance(seed, n=5, shape=shape, T=5, shared=0.6)
    best, _ = brute_force_v3(inst, reservation="peak")
    form = milp.build(inst, reservation="peak")
    raw = milp.solve_arrays(form, time_limit=20, mip_gap=0)
    assert raw.status == "optimal"
    schedule = schedule_of(inst, raw.start, raw.place, raw.gpu, form.node_free.min(axis=1))
    m = instances.evaluate(inst, schedule, "peak", enforce_reservation=True)
    assert m.value == pytest.approx(best, abs=1e-6)


def test_warm_start_schedule_with_indices_and_refusals() -> None:
    inst = tiny_v3_instance(3, n=5, shape=(2, 2), T=5, shared=0.8)
    best, schedule = brute_force_v3(inst)
    res = milp.solve(inst, time_limit=10, mip_gap=0, warm_start=schedule)
    check(inst, res)
    assert res.value == pytest.approx(best) and res.params["warm_start"] == "given schedule"
    with pytest.raises(ValueError, match=r"reserved: instance .* has shared jobs"):
        milp.build(inst, reserved=np.zeros((2, inst.horizon), dtype=np.int64))
    # incumbent hooks are taken (they trade triples with GPU slots: test_v3_milp_method.py)
    with pytest.raises(ValueError, match=r"flat: instance .* is a version 3 instance"):
        milp.solve(inst, time_limit=1, flat=res)
    with pytest.raises(ValueError, match="relax: must be one of"):
        milp.build(inst, relax="loose")


def test_the_model_exports_with_unique_names(tmp_path) -> None:
    inst = tiny_v3_instance(5, n=5, shape=(2, 2), T=4, shared=0.8)
    form = milp.build(inst)
    assert form.num_busy > 0 and form.has_slots
    names = form.col_names()
    assert len(set(names)) == len(names) and any(n.startswith("b_") for n in names)
    rows = form.row_names()
    assert len(set(rows)) == len(rows) and any(n.startswith("gpu_") for n in rows)
    form.write_lp(str(tmp_path / "m.lp"))
    assert "b_n" in (tmp_path / "m.lp").read_text()
