"""instances.lagrangian_value: a plain exact reference, brute force, the LP, bad multipliers."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from brute import brute_force, tiny_instance

import instances
import milp
from instances import Instance, Job, Service
from instances.lagrangian import check_multipliers


def exact_lagrangian(inst: Instance, lam: np.ndarray) -> Fraction:
    """L(lam) in exact rational arithmetic, loop by loop (the reading of section 7)."""
    T, G = inst.horizon, inst.num_gpus
    lam_q = [Fraction(float(x)) for x in lam]
    cap = [G - sum(s.demand[t] for s in inst.services) for t in range(T)]
    total = sum((lam_q[t] * cap[t] for t in range(T)), Fraction(0))
    h = Fraction(inst.slot_hours)
    for job in inst.jobs:
        v = Fraction(job.priority) * job.gpus * job.duration * h
        end = T if job.deadline is None else min(job.deadline, T)
        best = Fraction(0)
        for s in range(job.release, end - job.duration + 1):
            run = range(s, s + job.duration)
            if all(cap[t] >= job.gpus for t in run):
                best = max(best, v - job.gpus * sum((lam_q[t] for t in run), Fraction(0)))
        total += best
    return total


def _random_lam(rng: np.random.Generator, inst: Instance, scale: float = 1.0) -> np.ndarray:
    lam = rng.exponential(scale, size=inst.horizon)
    lam[rng.random(inst.horizon) < 0.3] = 0.0
    return lam


@pytest.mark.parametrize("seed", range(12))
def test_matches_the_exact_reference_and_never_below_it(seed: int) -> None:
    rng = np.random.default_rng(seed)
    inst = tiny_instance(seed, n=8, G=5, T=14)
    for k in range(6):
        lam = _random_lam(rng, inst, scale=[0.01, 0.3, 1.0, 3.0, 1e-9, 1e6][k])
        exact = exact_lagrangian(inst, lam)
        got = instances.lagrangian_value(inst, lam)
        assert Fraction(got) >= exact
        assert got - float(exact) <= 1e-9 * max(1.0, abs(float(exact)))


def test_rounding_is_upward_where_float_sums_round_down() -> None:
    # lam entries of very different sizes: plain float sums lose the small ones
    inst = Instance("r", 8, 6, (), (Job("a", 3, 2, 1.0), Job("b", 1, 6, 2.5)))
    lam = np.array([1e16, 1.0, 1e-3, 0.1, 0.7, 1e-17])
    exact = exact_lagrangian(inst, lam)
    got = instances.lagrangian_value(inst, lam)
    assert Fraction(got) >= exact
    naive = float(np.dot(lam, np.full(6, 8.0)))
    assert got >= naive


@pytest.mark.parametrize("seed", range(8))
def test_upper_bound_on_the_brute_force_optimum(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    inst = tiny_instance(seed, n=6, G=4, T=10)
    opt, schedule = brute_force(inst)
    assert instances.evaluate(inst, schedule).value == pytest.approx(opt)
    for _ in range(20):
        lam = _random_lam(rng, inst, scale=float(rng.choice([0.1, 1.0, 5.0])))
        assert instances.lagrangian_value(inst, lam) >= opt - 1e-9


def test_zero_multipliers_give_the_sum_of_values_that_fit() -> None:
    inst = Instance(
        "z", 4, 6, (Service("s", 1.0, (0, 0, 3, 0, 0, 0)),),
        (Job("fits", 2, 2, 1.5), Job("never", 2, 3, 4.0, release=1, deadline=5)),
    )
    # 'never' needs 3 slots inside [1, 5), each run crosses slot 2 where only 1 GPU is free
    assert instances.lagrangian_value(inst, np.zeros(6)) == pytest.approx(1.5 * 2 * 2)


@pytest.mark.parametrize("seed", [0, 3])
def test_minimum_over_lam_is_the_lp_bound(seed: int) -> None:
    """The plain LP's capacity duals give L(lam) = LP bound (strong duality)."""
    import highspy

    from milp.highs import new_highs  # the process-wide HiGHS thread pool, set up once

    inst = instances.generate("small", seed=seed)
    form = milp.build(inst, aggregate=False, rounding=())
    h = new_highs(1)
    h.setOptionValue("solve_relaxation", True)
    A = form.A
    h.passModel(form.num_cols, form.num_rows, form.nnz, int(highspy.MatrixFormat.kColwise),
                int(highspy.ObjSense.kMaximize), 0.0, form.c, form.col_lower, form.col_upper,
                form.row_lower, form.row_upper, A.indptr.astype(np.int32),
                A.indices.astype(np.int32), A.data, form.integrality.astype(np.int32))
    h.run()
    lp = h.getInfo().objective_function_value
    duals = np.asarray(h.getSolution().row_dual)
    cap_rows = form.row_kind == 1
    lam = np.zeros(inst.horizon)
    candidates = []
    for sign in (1.0, -1.0):
        lam[:] = 0.0
        lam[form.row_ref[cap_rows]] = np.maximum(0.0, sign * duals[cap_rows])
        candidates.append(instances.lagrangian_value(inst, lam))
    assert min(candidates) == pytest.approx(lp, rel=1e-6)
    assert min(candidates) >= lp - 1e-6 * lp


def test_large_instance_is_fast_and_small_in_memory() -> None:
    import tracemalloc

    inst = instances.generate("large", seed=0, num_jobs=2000, num_gpus=256)
    lam = np.random.default_rng(0).exponential(0.5, inst.horizon)
    tracemalloc.start()
    value = instances.lagrangian_value(inst, lam)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert math.isfinite(value)
    assert peak < 64 * 2**20


@pytest.mark.parametrize(
    ("lam", "fragment"),
    [
        ([0.0] * 9, "lam: must have length 10"),
        ([0.0] * 11, "lam: must have length 10"),
        ([[0.0] * 10], "lam: must have length 10"),
        ([0.0] * 4 + [-1.0] + [0.0] * 5, "lam[4]: must be >= 0"),
        ([0.0] * 3 + [math.nan] + [0.0] * 6, "lam[3]: must be finite"),
        ([math.inf] + [0.0] * 9, "lam[0]: must be finite"),
        (["a"] * 10, "lam: must be a list of numbers"),
        (None, "lam"),
    ],
)
def test_bad_multipliers_are_value_errors(lam, fragment) -> None:
    inst = tiny_instance(0)
    with pytest.raises(ValueError) as err:
        instances.lagrangian_value(inst, lam)
    assert fragment in str(err.value)


def test_negative_zero_is_accepted() -> None:
    inst = tiny_instance(1)
    assert check_multipliers(inst, [-0.0] * 10).tolist() == [0.0] * 10


def _mixed_scale_cases():
    for seed in range(40):
        inst = tiny_instance(seed, n=8, G=5, T=14)
        rng = np.random.default_rng(seed)
        for _ in range(10):
            yield inst, rng.exponential(1.0, 14) * 10.0 ** rng.integers(-3, 4, 14)


def test_the_margin_is_what_keeps_the_value_above_the_exact_one(monkeypatch) -> None:
    """Multipliers spanning seven decades: plain float sums fall below L(lam) sometimes."""
    import instances.lagrangian as mod

    cases = [(inst, lam, exact_lagrangian(inst, lam)) for inst, lam in _mixed_scale_cases()]
    assert all(Fraction(instances.lagrangian_value(i, lam)) >= ex for i, lam, ex in cases)
    monkeypatch.setattr(mod, "rounding_margin", lambda *args: 0.0)
    below = sum(Fraction(instances.lagrangian_value(i, lam)) < ex for i, lam, ex in cases)
    assert below > 0


# --------------------------------------- the ``lagrangian`` method on nodes (matheuristics)
SHAPES = [(2, 2), (2, 1, 1), (3, 2), (2, 2, 2), (3, 1)]


@pytest.mark.parametrize("seed", range(6))
def test_the_lagrangian_method_on_nodes_places_its_schedule_below_a_certified_bound(
        seed: int) -> None:
    """The flat relaxation's multipliers certify a bound on the node optimum (brute force)."""
    from brute_nodes import brute_force_nodes, tiny_node_instance

    from matheuristics.lagrangian import lagrangian

    inst = tiny_node_instance(seed, n=5, shape=SHAPES[seed % len(SHAPES)])
    opt, _ = brute_force_nodes(inst)
    res = lagrangian(inst, time_limit=1)
    again = instances.evaluate(inst, res.schedule, enforce_reservation=True)
    assert again.value == pytest.approx(res.value)
    assert set(res.schedule.placement) == set(res.schedule.starts)  # every run job is placed
    assert res.bound_method == "lagrangian" and res.upper_bound is not None
    assert res.value <= opt + 1e-9 <= res.upper_bound + 1e-9


def test_the_lagrangian_method_on_one_node_is_the_flat_one() -> None:
    """A flat instance and the same on one node of G GPUs: same multipliers, same value and
    bound; on more nodes, still below the same bound."""
    from matheuristics.lagrangian import lagrangian

    inst = instances.generate("medium", seed=2)
    b = milp.bound(inst, max_iter=300)
    flat = lagrangian(inst, bound=b)
    one = lagrangian(instances.with_nodes(inst, inst.num_gpus), bound=b)
    assert one.value == pytest.approx(flat.value) and one.upper_bound == flat.upper_bound
    assert one.schedule.placement and not flat.schedule.placement
    four = instances.with_nodes(inst, 4)
    split = lagrangian(four, bound=b)
    assert instances.evaluate(four, split.schedule).value == pytest.approx(split.value)
    assert split.value <= split.upper_bound == pytest.approx(b.value)
