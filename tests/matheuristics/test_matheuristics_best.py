"""matheuristics.best: its members, its budget, one check at the boundary."""

from __future__ import annotations

import numpy as np
import pytest

import heuristics
import instances
from instances import Instance, Job
from matheuristics.best import CONSTRUCTIVE_MEMBERS, best


@pytest.mark.slow
def test_best_keeps_to_its_time_budget() -> None:
    # Unbounded, these count budgets take far longer than 1 s on a medium
    # instance (200 passes, 1000 moves, 100 MILP windows); the clock must end them.
    inst = instances.generate("medium", seed=0)
    res = heuristics.solve(inst, "best", time_limit=1.0)
    assert res.runtime_s < 5.0
    assert res.value >= heuristics.solve(inst, "list").value
    assert res.value >= heuristics.solve(inst, "fifo").value


def test_best_through_the_registry_is_best() -> None:
    inst = instances.generate("hc-deadlines", seed=0)
    kw = {"passes": 20, "iterations": 40, "lns_rounds": 3, "time_limit": None, "seed": 1}
    a, b = heuristics.solve(inst, "best", **kw), best(inst, **kw)
    assert a.method == b.method == "best"
    assert a.schedule == b.schedule  # deterministic for a seed under count budgets


def test_every_constructive_member_is_a_registered_method() -> None:
    assert {m for m, _ in CONSTRUCTIVE_MEMBERS} <= set(heuristics.METHODS)


def test_best_checks_its_schedule_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import instances.checker as checker

    calls: list[int] = []
    real = checker.Metrics

    def metrics(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(checker, "Metrics", metrics)
    inst = instances.generate("medium", seed=3)
    res = best(inst, passes=10, iterations=20, lns_rounds=4, time_limit=None)
    assert len(calls) == 1  # members, sampling, local search and the LNS stay on arrays
    monkeypatch.undo()
    assert instances.evaluate(inst, res.schedule).value == pytest.approx(res.value)


def test_best_escapes_the_trap_of_every_rule() -> None:
    # G=4, T=2: every rule runs a (3 GPUs, value 12); the optimum runs b and c (12.8)
    trap = Instance("trap", 4, 2, (), (
        Job("a", 3, 2, priority=2.0), Job("b", 2, 2, priority=1.6), Job("c", 2, 2, priority=1.6),
    ))
    res = best(trap, time_limit=None, passes=5, iterations=5, lns_rounds=1)
    assert res.value == pytest.approx(12.8)
    assert np.array_equal(res.schedule.to_array(trap), [-1, 0, 0])
