"""matheuristics.helper: the LNS beside HiGHS, the incumbents it trades, and solves that use it."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import heuristics
import instances
import milp
from heuristics.placement import new_place
from heuristics.stop import MaxIterations, MultipleCriteria, StopFlag, budget
from matheuristics import LNSHelper, solve_milp
from matheuristics import helper as helper_module
from matheuristics.search import lns_improve


def _value(inst: instances.Instance, start: np.ndarray) -> float:
    return float(inst.job_values[start >= 0].sum())


def _two_schedules(inst: instances.Instance) -> tuple[np.ndarray, np.ndarray]:
    """A weak and a strong feasible start array of ``inst``."""
    weak = heuristics.solve(inst, "fifo-curve").schedule.to_array(inst)
    strong = heuristics.solve(inst, "best", time_limit=1).schedule.to_array(inst)
    assert _value(inst, strong) > _value(inst, weak)
    return weak, strong


def test_the_helper_keeps_the_best_and_passes_it_on() -> None:
    inst = instances.generate("medium", seed=2)
    form = milp.build(inst)
    weak, strong = _two_schedules(inst)
    helper = LNSHelper()
    helper.attach(form, weak)
    assert helper.value == pytest.approx(_value(inst, weak))

    # an improvement from the LNS is kept and offered to HiGHS, once
    assert helper.from_lns(strong, None, _value(inst, strong)) is None
    assert helper.value == pytest.approx(_value(inst, strong))
    offered = helper.offer()  # the flat model's solutions are bare start arrays
    assert isinstance(offered, np.ndarray) and np.array_equal(offered, strong)
    assert helper.offer() is None

    # an LNS that is behind gets the best schedule back; one level with it gets nothing
    back = helper.from_lns(weak, None, _value(inst, weak))
    assert back is not None and np.array_equal(back[0], strong) and back[1] is None
    assert helper.from_lns(strong, None, _value(inst, strong)) is None

    # HiGHS's worse incumbent changes nothing; the best is what the solve will check
    helper.incumbent(weak)
    assert helper.value == pytest.approx(_value(inst, strong))
    assert helper.counts == {"lns": 1, "highs": 0, "given": 1}
    best = helper.best()
    assert best is not None and np.array_equal(best, strong)


def test_the_helper_takes_a_better_incumbent_from_highs() -> None:
    inst = instances.generate("medium", seed=2)
    form = milp.build(inst)
    weak, strong = _two_schedules(inst)
    helper = LNSHelper()
    helper.attach(form, weak)
    helper.from_lns(weak, None, _value(inst, weak))
    helper.incumbent(strong)
    assert helper.counts["highs"] == 1
    assert helper.offer() is None  # HiGHS has it already
    back = helper.from_lns(weak, None, _value(inst, weak))
    assert back is not None and np.array_equal(back[0], strong)


# --------------------------------------------------- on nodes: placed schedules, pairs
def _node_instance() -> instances.Instance:
    return instances.with_nodes(instances.generate("hc-mixed", seed=1), 4)


def _placed_schedules(inst: instances.Instance) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """A weak and a strong feasible schedule of ``inst`` as ``(start, place)`` pairs."""
    where = new_place(inst)
    weak = heuristics.fifo.fifo_starts(inst, "curve", place=where)
    strong = heuristics.solve(inst, "best", time_limit=None, passes=10, iterations=20,
                              lns_rounds=4).schedule
    pair = (strong.to_array(inst), strong.to_placement_array(inst))
    assert _value(inst, pair[0]) > _value(inst, weak)
    return (weak, where), pair


def test_the_helper_trades_placed_schedules_with_the_node_model() -> None:
    inst = _node_instance()
    form = milp.build(inst, aggregate=False)
    weak, strong = _placed_schedules(inst)
    helper = LNSHelper()
    helper.attach(form, weak)  # the solver speaks in pairs: so does the helper
    assert helper.from_lns(*strong, _value(inst, strong[0])) is None
    offered = helper.offer()
    assert isinstance(offered, tuple) and helper.offer() is None
    start, place = offered
    form.encode(start, place)  # in the model's columns (relabelled to its canonical form)
    again = instances.evaluate(inst, instances.Schedule.from_array(inst, start, place))
    assert again.value == pytest.approx(_value(inst, strong[0]))
    back = helper.from_lns(*weak, _value(inst, weak[0]))
    assert back is not None and np.array_equal(back[0], strong[0])
    assert back[1] is not None and np.array_equal(back[1], strong[1])
    helper.incumbent(weak)  # a worse incumbent changes nothing
    best = helper.best()
    assert isinstance(best, tuple) and np.array_equal(best[0], strong[0])
    assert helper.counts == {"lns": 1, "highs": 0, "given": 1}


def test_the_helper_runs_the_lns_on_nodes_in_its_thread() -> None:
    inst = _node_instance()
    form = milp.build(inst, aggregate=False)
    weak, _ = _placed_schedules(inst)
    before = threading.active_count()
    helper = LNSHelper(seed=1)
    helper.start(form, weak, time_limit=1.8)
    time.sleep(1.6)
    helper.stop()
    assert threading.active_count() == before
    best = helper.best()
    assert isinstance(best, tuple)
    again = instances.evaluate(inst, instances.Schedule.from_array(inst, *best))
    assert again.value == pytest.approx(_value(inst, best[0]))
    assert again.value > _value(inst, weak[0]) and helper.counts["lns"] >= 1
    assert helper.offer() is not None  # the improvement waits for HiGHS, in its columns


def test_the_helper_is_milp_incumbent_hooks() -> None:
    hooks: milp.IncumbentHooks = LNSHelper()  # checked by mypy; the methods exist at run time
    for name in ("start", "incumbent", "offer", "stop", "best", "summary"):
        assert callable(getattr(hooks, name))


def test_lns_continues_from_what_the_exchange_hands_it() -> None:
    inst = instances.generate("medium", seed=2)
    weak, strong = _two_schedules(inst)
    seen: list[float] = []

    def exchange(start: np.ndarray, place: np.ndarray | None,
                 value: float) -> tuple[np.ndarray, None] | None:
        assert place is None  # a flat instance: its one internal node carries no placement
        seen.append(value)
        return (strong, None) if len(seen) == 1 else None

    out, _, rounds, _ = lns_improve(inst, weak, stop=budget(None, 3), exchange=exchange)
    assert rounds == 3 and len(seen) == 3
    assert seen[0] == pytest.approx(_value(inst, weak))
    assert seen[1] >= _value(inst, strong) - 1e-9  # the second round starts from the strong one
    assert _value(inst, out) >= _value(inst, strong) - 1e-9
    instances.evaluate(inst, instances.Schedule.from_array(inst, out), enforce_reservation=True)


def test_lns_stops_when_asked() -> None:
    inst = instances.generate("medium", seed=2)
    weak, _ = _two_schedules(inst)
    done = threading.Event()
    done.set()
    stop = MultipleCriteria([MaxIterations(50), StopFlag(done.is_set)])
    out, _, rounds, improved = lns_improve(inst, weak, stop=stop)
    assert (rounds, improved) == (0, 0)
    assert np.array_equal(out, weak)


class _Recorder:
    """Incumbent hooks that record what HiGHS calls, and offer one schedule once."""

    def __init__(self, offer: np.ndarray | None = None) -> None:
        self.calls: list[str] = []
        self.to_offer = offer
        self.seen: list[np.ndarray] = []

    def start(self, form: milp.Formulation, start: np.ndarray, time_limit: float) -> None:
        self.calls.append("start")
        self.first = start.copy()

    def incumbent(self, start: np.ndarray) -> None:
        self.seen.append(start)

    def offer(self) -> np.ndarray | None:
        out, self.to_offer = self.to_offer, None
        return out

    def stop(self) -> None:
        self.calls.append("stop")

    def best(self) -> np.ndarray | None:
        return self.first

    def summary(self) -> str:
        return "recorder"


def test_milp_solve_calls_the_hooks_it_is_given() -> None:
    inst = instances.generate("hc-mixed", seed=1)
    weak = heuristics.solve(inst, "fifo-curve")
    hooks = _Recorder()
    res = milp.solve(inst, time_limit=5, warm_start=weak, hooks=hooks)
    assert hooks.calls == ["start", "stop"]
    assert np.array_equal(hooks.first, weak.schedule.to_array(inst))
    assert "recorder" in res.message
    for start in hooks.seen:  # every incumbent HiGHS reported is a feasible schedule
        instances.evaluate(inst, instances.Schedule.from_array(inst, start))
    with pytest.raises(ValueError, match="hooks"):
        milp.solve(inst, time_limit=1, backend="cpsat", hooks=_Recorder())


def test_an_offered_schedule_reaches_the_result() -> None:
    inst = instances.generate("hc-mixed", seed=1)
    strong = heuristics.solve(inst, "best", time_limit=1)
    # HiGHS on no time at all: its only good schedule is the one the hooks hold
    res = milp.solve(inst, time_limit=0.05, hooks=_Recorder(), warm_start=strong, root_lp=False)
    assert res.value >= strong.value - 1e-9


@pytest.mark.parametrize("seed", [2, 3])
@pytest.mark.slow
def test_solve_with_the_helper_is_checked_and_bounded(seed: int) -> None:
    inst = instances.generate("medium", seed=seed)
    alone = solve_milp(inst, time_limit=3, threads=1)
    before = threading.active_count()
    res = solve_milp(inst, time_limit=3, threads=2, lns_helper=True)
    assert threading.active_count() == before  # the helper thread has ended
    again = instances.evaluate(inst, res.schedule)
    assert again.value == pytest.approx(res.value)
    assert res.upper_bound is not None and alone.upper_bound is not None
    # each bound holds the other run's schedule too, and neither is above the LP bound
    assert res.upper_bound >= alone.value - 1e-6 * alone.value
    assert alone.upper_bound >= res.value - 1e-6 * res.value
    assert res.lp_bound is not None and res.upper_bound <= res.lp_bound + 1e-6 * res.lp_bound
    assert "LNS helper" in res.message
    assert res.params["lns_helper"] is True and res.params["threads"] == 2


def test_helper_needs_a_warm_start_and_is_skipped_without_one() -> None:
    inst = instances.generate("small", seed=3)
    res = solve_milp(inst, time_limit=5, warm_start=None, threads=2, lns_helper=True)
    assert res.status == "optimal"
    assert "LNS helper" not in res.message


@pytest.mark.slow
def test_a_failing_helper_leaves_highs_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("helper failure")

    monkeypatch.setattr(helper_module, "lns_improve", boom)
    inst = instances.generate("hc-mixed", seed=0)
    res = solve_milp(inst, time_limit=5, threads=2, lns_helper=True)
    assert res.status in ("optimal", "time_limit")
    assert "LNS helper: 0 improvements" in res.message
    other = heuristics.solve(inst, "local-search", passes=50, seed=3)  # an independent schedule
    assert res.upper_bound is not None and res.lp_bound is not None
    assert other.value - 1e-6 <= res.upper_bound <= res.lp_bound + 1e-6


@pytest.mark.parametrize(("threads", "flag", "on"), [
    (1, None, False), (2, None, True), (3, None, False), (2, False, False), (1, True, True),
])
def test_helper_is_on_by_default_on_two_threads_only(threads: int, flag: bool | None,
                                                      on: bool) -> None:
    inst = instances.generate("hc-multi-service", seed=0)  # not of the wide class
    kw = {} if flag is None else {"lns_helper": flag}
    res = solve_milp(inst, time_limit=1, threads=threads, **kw)
    assert ("LNS helper" in res.message) is on
    assert res.upper_bound is not None and res.lp_bound is not None
    assert res.value <= res.upper_bound <= res.lp_bound + 1e-6
