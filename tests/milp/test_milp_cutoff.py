"""HiGHS under an objective cutoff: the bound its closed tree proves, against brute force.

``solve_highs(..., cutoff=c)`` searches only for schedules worth more than ``c``; a
tree that closes without one proves :func:`milp.highs.cutoff_bound` (``c`` and the
gap tolerance), and the plain search follows while time is left. Each test below fails
for an implementation with the cutoff's sign wrong (HiGHS then ignores it), one that
reports the cutoff as a bound when a better schedule exists, or one that calls a
closed probe optimal.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from brute import brute_force, tiny_instance

import instances
import milp
from instances import Status
from milp import highs


def _optimum(seed: int) -> tuple[instances.Instance, float]:
    inst = tiny_instance(seed, n=6, G=4, T=8)
    best, _ = brute_force(inst)
    return inst, best


def _value(inst: instances.Instance, start: np.ndarray) -> float:
    return instances.evaluate(inst, instances.Schedule.from_array(inst, start)).value


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_cutoff_far_above_the_optimum_closes_at_once(seed: int, monkeypatch) -> None:
    monkeypatch.setattr(highs, "PROBE_MIN_S", math.inf)  # the probe alone, no search after it
    inst, best = _optimum(seed)
    form = milp.build(inst)
    empty = np.full(inst.num_jobs, -1, dtype=np.int64)
    c = 2 * best
    # root_lp=False: with the root LP's bound known and below the cutoff, no probe runs
    raw = highs.solve_highs(form, time_limit=20, mip_gap=0.0, threads=1, warm_start=empty,
                            progress=None, cutoff=c, root_lp=False)
    # HiGHS, searching only above the cutoff (its sign right), finds nothing and keeps
    # the empty warm start; with the cutoff ignored it would find the optimum
    assert raw.start is not None and _value(inst, raw.start) == 0.0
    assert raw.status is Status.TIME_LIMIT  # a proof of the bound, not of an incumbent
    assert raw.dual_bound == pytest.approx(highs.cutoff_bound(form, c, 0.0))
    assert "its tree closed" in raw.message


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_cutoff_just_above_the_optimum_proves_it(seed: int) -> None:
    inst, best = _optimum(seed)
    form = milp.build(inst)
    empty = np.full(inst.num_jobs, -1, dtype=np.int64)
    c = best + 0.5
    raw = highs.solve_highs(form, time_limit=20, mip_gap=0.0, threads=1, warm_start=empty,
                            progress=None, cutoff=c, root_lp=False)
    # the probe closes (nothing above c); the plain search after it, from the best
    # schedule held, finds the optimum and proves it
    assert "after a cutoff probe" in raw.message
    assert raw.status is Status.OPTIMAL
    assert raw.start is not None and _value(inst, raw.start) == pytest.approx(best)
    assert raw.dual_bound == pytest.approx(best, rel=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_cutoff_below_the_optimum_finds_the_optimum(seed: int) -> None:
    inst, best = _optimum(seed)
    form = milp.build(inst)
    raw = highs.solve_highs(form, time_limit=20, mip_gap=0.0, threads=1, warm_start=None,
                            progress=None, cutoff=0.8 * best)
    assert raw.status is Status.OPTIMAL
    assert raw.start is not None and _value(inst, raw.start) == pytest.approx(best)
    assert raw.dual_bound == pytest.approx(best, rel=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5])
def test_a_cutoff_anywhere_leaves_a_valid_bound(seed: int) -> None:
    inst, best = _optimum(seed)
    empty = np.full(inst.num_jobs, -1, dtype=np.int64)
    for c in (1.3 * best, best, 1.01 * best):
        res = milp.solve(inst, time_limit=20, mip_gap=1e-4, warm_start=empty, cutoff=c)
        assert res.status in ("optimal", "time_limit"), res.message
        assert res.upper_bound is not None
        # never below the optimum (brute force), nor below the checked value
        assert res.upper_bound >= best * (1 - 1e-9)
        assert res.value <= best + 1e-9
        again = instances.evaluate(inst, res.schedule)
        assert again.value == pytest.approx(res.value)
        # the probe's proof or the plain search's: at most the cutoff's line
        assert res.upper_bound <= highs.cutoff_bound(milp.build(inst), max(c, best), 1e-4)


def test_a_probe_that_closes_is_followed_by_the_plain_search() -> None:
    inst = instances.generate("small", seed=1)
    plain = milp.solve(inst, time_limit=30, mip_gap=0.0, warm_start=None)
    assert plain.status == "optimal"
    opt = plain.value
    form = milp.build(inst)
    raw = highs.solve_highs(form, time_limit=30, mip_gap=1e-4, threads=1,
                            warm_start=plain.schedule.to_array(inst), progress=None,
                            cutoff=1.2 * opt, root_lp=False)
    # the probe (20% above the optimum) closes; the plain search after it, from the
    # optimum, proves it: the bound ends at the optimum, not at the cutoff's line
    assert "after a cutoff probe at" in raw.message
    assert raw.status is Status.OPTIMAL
    assert raw.dual_bound is not None
    assert opt * (1 - 1e-9) <= raw.dual_bound <= opt * (1 + 1e-4) + 1e-6


@pytest.mark.parametrize("seed", [0, 1])
def test_no_probe_when_the_root_lp_proves_the_cutoff(seed: int) -> None:
    inst, best = _optimum(seed)
    form = milp.build(inst)
    lp = highs.lp_relaxation(form, 10.0)
    assert lp is not None
    raw = highs.solve_highs(form, time_limit=20, mip_gap=0.0, threads=1, warm_start=None,
                            progress=None, cutoff=lp + 1.0)
    # the probe could prove no more than the root LP: HiGHS searches plainly
    assert "cutoff" not in raw.message
    assert raw.status is Status.OPTIMAL
    assert raw.dual_bound == pytest.approx(best, rel=1e-6)


def test_objective_bound_as_a_highs_option_is_refused() -> None:
    inst, _ = _optimum(0)
    with pytest.raises(ValueError, match="cutoff="):
        milp.solve(inst, time_limit=5, objective_bound=-10.0)
