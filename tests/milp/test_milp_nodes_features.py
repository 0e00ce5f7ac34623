"""milp on nodes has what the flat path has: one model, aggregation, cliques, fixing, hooks, PuLP,
the Lagrangian bound, the progress bar, and a CP-SAT that stops; all against brute force."""

from __future__ import annotations

import dataclasses
import io
import threading
import time
import warnings

import numpy as np
import pytest
from brute import brute_force, tiny_instance
from brute_nodes import brute_force_nodes, tiny_node_instance

import heuristics
import instances
import milp
from instances import Instance, Job, Node, Schedule
from milp.cpsat import solve_cpsat
from milp.progress import Progress

SHAPES = [(2, 2), (2, 1, 1), (3, 2), (2, 2, 2), (3, 1)]


def _checked(inst: Instance, res: instances.Result, best: float) -> None:
    """The result is the optimum, passes the checker with its placement, its bound above it."""
    assert instances.evaluate(inst, res.schedule).value == pytest.approx(res.value, abs=1e-9)
    assert set(res.schedule.placement) >= set(res.schedule.starts)
    assert res.value == pytest.approx(best, abs=1e-6), res.message
    assert res.upper_bound is not None and res.upper_bound >= res.value - 1e-6


def _with_twins(seed: int, shape: tuple[int, ...]) -> Instance:
    """A tiny node instance whose first job has an identical twin (so aggregation merges)."""
    inst = tiny_node_instance(seed, n=4, shape=shape)
    twin = dataclasses.replace(inst.jobs[0], name="twin")
    return inst.replace(jobs=(*inst.jobs, twin))


@pytest.mark.parametrize("seed", range(6))
def test_a_flat_instance_is_one_node_of_g_gpus(seed: int) -> None:
    """On one node of ``G`` GPUs the node rows never bind: the arrays are the flat ones."""
    flat = tiny_instance(seed)
    one = flat.replace(nodes=(Node("all", flat.num_gpus),))
    a, b = milp.build(flat), milp.build(one)
    assert a.stats["node_rows"] == b.stats["node_rows"] == 0
    assert (a.A != b.A).nnz == 0 and a.A.shape == b.A.shape
    for field in ("c", "row_upper", "col_upper", "col_job", "col_start", "row_kind", "row_ref"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
    best, _ = brute_force(flat)
    for inst in (flat, one):
        res = milp.solve(inst, time_limit=20, mip_gap=0)
        assert res.status == "optimal" and res.value == pytest.approx(best, abs=1e-6)
        assert bool(res.schedule.placement) == inst.has_nodes


@pytest.mark.parametrize("seed", range(6))
def test_aggregation_on_nodes_keeps_the_optimum(seed: int) -> None:
    inst = _with_twins(seed, SHAPES[seed % len(SHAPES)])
    best, _ = brute_force_nodes(inst)
    agg, plain = milp.build(inst, aggregate=True), milp.build(inst, aggregate=False)
    assert len(agg.groups) < len(plain.groups) and agg.col_upper.max() == 2
    for aggregate in (True, False):
        for backend in ("highs", "cpsat"):
            res = milp.solve(inst, time_limit=20, mip_gap=0, aggregate=aggregate, backend=backend,
                             flat_share=0)
            _checked(inst, res, best)
            assert res.status == "optimal"


@pytest.mark.parametrize("seed", range(6))
def test_cliques_fixing_and_the_lagrangian_bound_on_nodes(seed: int) -> None:
    """Clique rows per node, reduced-cost fixing by the flat relaxation's multipliers and the
    Lagrangian bound inside the solve: the node optimum stays, every bound is above it."""
    inst = tiny_node_instance(seed, n=5, shape=SHAPES[seed % len(SHAPES)])
    best, _ = brute_force_nodes(inst)
    ws = heuristics.solve(inst, "best", time_limit=1)
    res = milp.solve(inst, time_limit=20, mip_gap=0, cliques=True, fixing=True, lagrangian=True,
                     warm_start=ws, flat_share=0)
    _checked(inst, res, best)
    assert "Lagrangian bound" in res.message and "reduced-cost fixing removed" in res.message
    lagrangian = milp.bound(inst, "lagrangian")
    assert lagrangian.value >= best - 1e-6  # the flat relaxation's bound holds on nodes
    ok, _ = instances.check_bound(inst, lagrangian.certificate(inst))
    assert ok


def test_clique_rows_are_written_for_node_rows() -> None:
    """Two 3-GPU jobs on a 4-GPU node meet at every slot: a clique row on the node."""
    jobs = (Job("a", 3, 2), Job("b", 3, 2, 1.5), Job("c", 1, 2))
    inst = Instance("cl", 6, 2, (), jobs, nodes=(Node("big", 4), Node("small", 2)))
    form = milp.build(inst, cliques=True)
    T = inst.horizon
    node_cliques = form.row_ref[(form.row_kind == 2) & (form.row_ref >= T)]
    assert node_cliques.size > 0 and set((node_cliques // T - 1).tolist()) == {0}
    assert any(n.startswith("clique_big_t") for n in form.row_names())
    best, _ = brute_force_nodes(inst)
    _checked(inst, milp.solve(inst, cliques=True, time_limit=10, mip_gap=0), best)


class _Hooks:
    """Incumbent hooks that hand the solver one given solution and record what they see."""

    def __init__(self, give: tuple[np.ndarray, np.ndarray]) -> None:
        self.give, self.seen, self.started = give, [], None
        self.given = False

    def start(self, form: milp.Formulation, start: np.ndarray, time_limit: float,
              place: np.ndarray | None = None) -> None:
        self.started = (start.copy(), None if place is None else place.copy())

    def incumbent(self, start: np.ndarray, place: np.ndarray | None = None) -> None:
        self.seen.append(place)

    def offer(self) -> tuple[np.ndarray, np.ndarray] | None:
        if self.given:
            return None
        self.given = True
        return self.give

    def stop(self) -> None:
        pass

    def best(self) -> tuple[np.ndarray, np.ndarray]:
        return self.give

    def summary(self) -> str:
        return "stub hooks"


@pytest.mark.parametrize("seed", range(4))
def test_incumbent_hooks_on_nodes_trade_placements(seed: int) -> None:
    inst = tiny_node_instance(seed, n=5, shape=SHAPES[seed % len(SHAPES)])
    best, schedule = brute_force_nodes(inst)
    hooks = _Hooks((schedule.to_array(inst), schedule.to_placement_array(inst)))
    res = milp.solve(inst, time_limit=20, mip_gap=0, hooks=hooks, flat_share=0)
    _checked(inst, res, best)
    assert hooks.started is not None and hooks.started[1] is not None
    assert hooks.started[1].shape == (inst.num_jobs, inst.max_span)
    assert all(p is not None and p.shape == (inst.num_jobs, inst.max_span) for p in hooks.seen)
    assert "stub hooks" in res.message


@pytest.mark.parametrize("symmetry", ["fix", "rows"])
def test_pulp_export_and_backend_on_nodes(symmetry: str) -> None:
    inst = tiny_node_instance(2, n=5, shape=(2, 2, 2))
    best, _ = brute_force_nodes(inst)
    form = milp.build(inst, symmetry=symmetry)
    prob = form.to_pulp()
    equalities = int(np.count_nonzero(np.isfinite(form.row_lower)))
    with warnings.catch_warnings():  # PuLP 3.3 deprecates the constraints mapping
        warnings.simplefilter("ignore", DeprecationWarning)
        assert len(prob.constraints) == form.num_rows + equalities
    assert len(prob.variables()) == form.num_cols
    if symmetry == "rows":
        assert form.num_cols > form.num_x and any(n.startswith("z_") for n in form.col_names())
    res = milp.solve(inst, backend="pulp", time_limit=30, mip_gap=0, symmetry=symmetry,
                     flat_share=0)
    assert res.method == "milp-pulp"
    _checked(inst, res, best)


def test_cpsat_on_nodes_takes_a_stop_and_joins_a_portfolio() -> None:
    inst = tiny_node_instance(4, n=5, shape=(3, 2))
    best, _ = brute_force_nodes(inst)
    res = milp.solve(inst, backend="portfolio", threads=2, time_limit=20, mip_gap=0, flat_share=0)
    assert res.method == "milp" and "portfolio" in res.message
    _checked(inst, res, best)
    big = instances.generate("medium", seed=0)
    shape = [8] * (big.num_gpus // 8) + ([big.num_gpus % 8] if big.num_gpus % 8 else [])
    big = big.replace(nodes=tuple(Node(f"n{k}", m) for k, m in enumerate(shape)))
    stop = threading.Event()
    stop.set()
    t = time.perf_counter()
    raw = solve_cpsat(milp.build(big), time_limit=60, mip_gap=0, threads=1, warm_start=None,
                      progress=None, stop=stop)
    assert time.perf_counter() - t < 30 and raw.status != "optimal"


@pytest.mark.parametrize("seed", range(4))
def test_cpsat_keeps_what_is_withheld_on_the_nodes(seed: int) -> None:
    """With GPUs withheld per node and slot, CP-SAT and HiGHS reach the same optimum."""
    inst = tiny_node_instance(seed, n=5, shape=SHAPES[seed % len(SHAPES)])
    rng = np.random.default_rng(seed)
    reserved = np.minimum(rng.integers(0, 2, size=(inst.num_nodes, inst.horizon)),
                          inst.node_gpus[:, None])
    form = milp.build(inst, reserved=reserved, symmetry="none")
    hi = milp.solve_arrays(form, time_limit=20, mip_gap=0)
    cp = milp.solve_arrays(form, time_limit=20, mip_gap=0, backend="cpsat")
    assert hi.status == cp.status == "optimal"
    values = [float(inst.job_values[r.start >= 0].sum()) if r.start is not None else 0.0
              for r in (hi, cp)]
    assert values[0] == pytest.approx(values[1], abs=1e-6)
    if cp.start is not None:  # CP-SAT's answer is a point of the model, withheld GPUs kept
        assert form.feasible(cp.start, cp.place)


def test_the_progress_bar_runs_on_nodes() -> None:
    inst = tiny_node_instance(1, n=5, shape=(2, 2))
    stream = io.StringIO()
    bar = Progress(10, "milp", file=stream, interval=0)
    res = milp.solve(inst, time_limit=10, progress=bar)
    bar.close()
    text = stream.getvalue()
    assert "flat model" in text and "search" in text
    assert res.status == "optimal"


def test_a_flat_schedule_and_a_start_array_warm_start_on_nodes() -> None:
    inst = tiny_node_instance(3, n=5, shape=(2, 1, 1))
    best, schedule = brute_force_nodes(inst)
    flat_only = Schedule(inst.name, schedule.starts)  # no placement: placed on the nodes
    for ws in (flat_only, schedule.to_array(inst)):
        res = milp.solve(inst, time_limit=10, mip_gap=0, warm_start=ws, flat_share=0)
        _checked(inst, res, best)
        assert "placed on the nodes" in res.params["warm_start"]
