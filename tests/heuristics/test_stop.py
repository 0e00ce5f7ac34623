"""heuristics.stop: the stopping criteria the LNS and ``best`` share, and how the LNS obeys them."""

from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest

import heuristics
import instances
from heuristics.stop import (
    MaxIterations,
    MaxRuntime,
    MultipleCriteria,
    NoImprovement,
    StopFlag,
    StoppingCriterion,
    budget,
    time_share,
)
from matheuristics.search import ROUND_MARGIN_S, lns_improve


def test_max_iterations_lets_exactly_that_many_through() -> None:
    stop = MaxIterations(3)
    assert [stop(0.0) for _ in range(5)] == [False, False, False, True, True]
    assert MaxIterations(0)(0.0) and stop.time_left() == math.inf


def test_no_improvement_counts_the_calls_since_the_best_rose() -> None:
    stop = NoImprovement(2)
    said = [stop(v) for v in (1.0, 1.0, 2.0, 2.0, 1.5, 1.5)]
    assert said == [False, False, False, False, True, True]
    assert NoImprovement(0)(5.0)  # zero calls allowed without improvement


def test_max_runtime_counts_from_its_creation() -> None:
    stop = MaxRuntime(0.2)
    assert not stop(0.0) and 0.0 < stop.time_left() <= 0.2
    time.sleep(0.25)
    assert stop(0.0) and stop.time_left() == 0.0
    unlimited = MaxRuntime(None)
    assert not unlimited(0.0) and unlimited.time_left() == math.inf


@pytest.mark.parametrize("bad", [-1.0, "5", float("nan")])
def test_bad_budgets_are_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="seconds"):
        MaxRuntime(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="iterations"):
        MaxIterations(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="iterations"):
        NoImprovement(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="criteria"):
        MultipleCriteria([])


def test_multiple_criteria_ask_every_member_and_take_the_least_time() -> None:
    count, clock = MaxIterations(2), MaxRuntime(30.0)
    flag = threading.Event()
    stop = MultipleCriteria([clock, count, StopFlag(flag.is_set)])
    assert not stop(0.0) and count.calls == 1
    flag.set()
    assert stop(0.0) and count.calls == 2  # the counter was asked although the flag stops
    assert 29.0 < stop.time_left() <= 30.0
    for crit in (count, clock, stop, StopFlag(flag.is_set), NoImprovement(1)):
        assert isinstance(crit, StoppingCriterion)


def test_budget_and_time_share() -> None:
    assert time_share(budget(None, 5), 0.5) is None  # not a clock: no limit for the phase
    share = time_share(budget(10.0), 0.25)
    assert share is not None and 2.4 < share <= 2.5
    stop = budget(None, 2)
    assert [stop(0.0) for _ in range(3)] == [False, False, True]


def test_the_lns_asks_its_criterion_before_every_round() -> None:
    inst = instances.generate("medium", seed=2)
    start = heuristics.solve(inst, "fifo-curve").schedule.to_array(inst)
    seen: list[float] = []

    class Spy:
        def __call__(self, best: float) -> bool:
            seen.append(best)
            return len(seen) > 3

        def time_left(self) -> float:
            return math.inf

    out, place, rounds, _ = lns_improve(inst, start, stop=Spy())
    assert rounds == 3 and len(seen) == 4 and place is None
    assert seen[0] == pytest.approx(float(inst.job_values[start >= 0].sum()))
    assert seen == sorted(seen)  # the best value never falls
    assert seen[-1] == pytest.approx(float(inst.job_values[out >= 0].sum()))


def test_the_lns_starts_no_round_without_time_for_it() -> None:
    inst = instances.generate("medium", seed=2)
    start = heuristics.solve(inst, "fifo-curve").schedule.to_array(inst)
    t0 = time.perf_counter()
    out, _, rounds, _ = lns_improve(inst, start, stop=MaxRuntime(ROUND_MARGIN_S - 0.05))
    assert rounds == 0 and np.array_equal(out, start)
    assert time.perf_counter() - t0 < 1.0
    flag = threading.Event()
    flag.set()
    assert lns_improve(inst, start, stop=StopFlag(flag.is_set)).rounds == 0
