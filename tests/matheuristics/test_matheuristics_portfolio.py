"""matheuristics.portfolio: the incumbent exchange between HiGHS, the LNS and CP-SAT, and the LP start.

A schedule from each source reaches the others, every returned schedule
passes the checker, and no bound is below a feasible value.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from brute import brute_force, tiny_instance
from brute_nodes import brute_force_nodes, tiny_node_instance

import heuristics
import instances
import milp
from heuristics.stop import MaxRuntime, MultipleCriteria, StopFlag
from matheuristics import cpsat_source, solve_milp
from matheuristics.cpsat_source import CPSATSource
from matheuristics.helper import LNSSource
from matheuristics.incumbents import HIGHS, WARM, Incumbents, SharedHooks
from matheuristics.lpround import LPStart, lp_schedule
from matheuristics.portfolio import (
    CUTOFF_MARGIN,
    LP_JOBS,
    Plan,
    account,
    lp_warm_start,
    named,
    plan,
    portfolio_hooks,
)


def _value(inst: instances.Instance, start: np.ndarray) -> float:
    return float(inst.job_values[start >= 0].sum())


def _checked(inst: instances.Instance, start: np.ndarray, place: np.ndarray | None = None) -> float:
    return instances.evaluate(inst, instances.Schedule.from_array(inst, start, place)).value


def _weak_and_strong(inst: instances.Instance) -> tuple[np.ndarray, np.ndarray]:
    weak = np.full(inst.num_jobs, -1, dtype=np.int64)
    strong = heuristics.solve(inst, "best", time_limit=0.5).schedule.to_array(inst)
    assert _value(inst, strong) > 0
    return weak, strong


def _instance() -> instances.Instance:
    return instances.generate("hc-mixed", seed=1)


# ------------------------------------------------------------ the shared incumbents
def test_the_pool_keeps_the_best_its_origin_and_the_smallest_bound() -> None:
    inst = _instance()
    form = milp.build(inst)
    weak, strong = _weak_and_strong(inst)
    pool = Incumbents(form, weak, ["lns", "cpsat"])
    assert (pool.origin, pool.version) == (WARM, 0)
    assert pool.put(strong, None, "cpsat") and pool.origin == "cpsat" and pool.version == 1
    assert not pool.put(strong, None, "lns")  # a tie keeps the schedule held
    back = pool.exchange(weak, None, _value(inst, weak), "lns")  # a source behind gets the best
    assert back is not None and np.array_equal(back[0], strong)
    assert pool.exchange(strong, None, _value(inst, strong), "lns") is None
    assert pool.counts == {"lns": 0, "cpsat": 1, HIGHS: 0}
    pool.prove(1e9, "cpsat")
    pool.prove(5e8, "lp")
    pool.prove(7e8, "cpsat")
    assert (pool.bound, pool.bound_origin) == (5e8, "lp")


def test_highs_gets_what_a_source_found_once_and_the_sources_get_what_highs_found() -> None:
    inst = _instance()
    form = milp.build(inst)
    weak, strong = _weak_and_strong(inst)
    hooks = SharedHooks([])
    hooks.attach(form, weak)
    assert hooks.offer() is None  # HiGHS has the warm start
    assert hooks.pool is not None and hooks.pool.put(strong, None, "cpsat")
    offered = hooks.offer()
    assert isinstance(offered, np.ndarray) and np.array_equal(offered, strong)
    assert hooks.offer() is None and hooks.counts["given"] == 1

    hooks.attach(form, weak)
    hooks.incumbent(strong)  # HiGHS's improving solution: in the pool, not offered back
    assert hooks.pool.origin == HIGHS and hooks.offer() is None
    back = hooks.pool.exchange(weak, None, _value(inst, weak), "lns")
    assert back is not None and np.array_equal(back[0], strong)


# ------------------------------------------------------------ CP-SAT as a source
def _criterion(seconds: float) -> MultipleCriteria:
    return MultipleCriteria([MaxRuntime(seconds), StopFlag(threading.Event().is_set)])


def test_cpsat_finds_schedules_for_the_others_and_proves_its_bound() -> None:
    inst = tiny_instance(4, n=7, G=4, T=10)
    opt, _ = brute_force(inst)
    form = milp.build(inst)
    hooks = SharedHooks([CPSATSource(workers=1)])
    hooks.start(form, np.full(inst.num_jobs, -1, dtype=np.int64), time_limit=10)
    deadline = time.perf_counter() + 10
    while time.perf_counter() < deadline and not hooks.done.is_set():
        time.sleep(0.05)
    hooks.stop()
    pool = hooks.pool
    assert pool is not None and pool.origin == "cpsat" and pool.proven.is_set()
    assert pool.value == pytest.approx(opt) and _checked(inst, pool.start) == pytest.approx(opt)
    assert pool.bound >= opt - 1e-9 and pool.bound_origin == "cpsat"
    offered = hooks.offer()  # what CP-SAT found reaches HiGHS
    assert offered is not None and _value(inst, offered) == pytest.approx(opt)
    back = pool.exchange(np.full(inst.num_jobs, -1, dtype=np.int64), None, 0.0, "lns")
    assert back is not None and _value(inst, back[0]) == pytest.approx(opt)  # and the LNS


def test_cpsat_is_hinted_with_the_best_known_and_restarted_from_a_better_one(monkeypatch) -> None:
    inst = _instance()
    form = milp.build(inst)
    weak, strong = _weak_and_strong(inst)
    hints: list[np.ndarray] = []

    def fake(form, *, time_limit, warm_start, stop, on_solution, **kw) -> milp.RawSolve:
        hints.append(np.array(warm_start))
        stop.wait(time_limit)  # a search that finds nothing until it is stopped
        return milp.RawSolve(instances.Status.TIME_LIMIT, dual_bound=1e9)

    monkeypatch.setattr("milp.cpsat.solve_cpsat", fake)
    monkeypatch.setattr(cpsat_source, "POLL_S", 0.02)
    pool = Incumbents(form, weak, ["cpsat", "lns"])
    source = CPSATSource(restart_stall=0.1)
    thread = threading.Thread(target=source.run, args=(pool, _criterion(1.5)))
    thread.start()
    time.sleep(0.3)
    pool.put(strong, None, "lns")  # the LNS leads: CP-SAT begins again from its schedule
    thread.join()
    assert len(hints) >= 2 and source.searches == len(hints)
    assert np.array_equal(hints[0], weak) and np.array_equal(hints[1], strong)
    assert pool.bound == 1e9 and not pool.proven.is_set()


# ------------------------------------------------------------ the LP start
def test_the_lp_start_bounds_the_optimum_and_gives_a_feasible_schedule() -> None:
    inst = instances.generate("medium", seed=3)
    lp = LPStart(inst, 30).result()
    assert lp.bound is not None and lp.start is not None and lp.value is not None
    exact = milp.solve(inst, time_limit=30, mip_gap=0)
    assert lp.bound >= exact.value - 1e-6  # the LP bounds the optimum
    assert _checked(inst, lp.start) == pytest.approx(lp.value)
    assert lp.value <= exact.value + 1e-6
    weak = heuristics.solve(inst, "fifo-curve")
    strong = solve_milp(inst, time_limit=2, threads=1)
    taken = lp_warm_start(inst, lp, weak)
    assert taken.method == ("lp" if lp.value > weak.value else weak.method)
    assert lp_warm_start(inst, lp, strong) is strong or strong.value < lp.value


def test_an_lp_start_without_time_gives_nothing() -> None:
    inst = instances.generate("medium", seed=3)
    lp = LPStart(inst, 0.0).result()
    assert lp.bound is None and lp.start is None and "not solved" in lp.summary()
    weak = heuristics.solve(inst, "fifo-curve")
    assert lp_warm_start(inst, lp, weak) is weak


def test_lp_schedules_on_nodes_are_placed_and_checked() -> None:
    inst = tiny_node_instance(5, n=5, shape=(2, 2))
    form = milp.build(inst)
    from milp.highs import lp_solution

    lp = lp_solution(form, 10)
    assert lp is not None
    start, place, _ = lp_schedule(form, lp[1])
    assert place is not None
    assert _checked(inst, start, place) <= brute_force_nodes(inst)[0] + 1e-9


# ------------------------------------------------------------ whole solves
@pytest.mark.parametrize("nodes", [False, True])
def test_a_solve_with_every_source_is_checked_bounded_and_says_who_found_what(nodes: bool) -> None:
    if nodes:
        inst = tiny_node_instance(7, n=5, shape=(2, 2))
        opt, _ = brute_force_nodes(inst)
    else:
        inst = tiny_instance(6, n=7, G=4, T=10)
        opt, _ = brute_force(inst)
    before = threading.active_count()
    res = solve_milp(inst, time_limit=4, threads=2, sources=("lns", "cpsat", "lp"))
    deadline = time.monotonic() + 5.0  # a stopped source's thread may take a moment to return
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert threading.active_count() == before  # every source's thread has ended
    assert instances.evaluate(inst, res.schedule).value == pytest.approx(res.value)
    assert res.upper_bound is not None and res.upper_bound >= opt - 1e-6
    assert res.value <= opt + 1e-9
    assert res.params["sources"] == ["lns", "cpsat"] and res.params["lp_start"] is True
    assert res.params["incumbent_from"] in ("lns", "cpsat", "lp", "highs", "best")
    assert res.params["bound_from"] and "incumbent from" in res.message
    assert "stop" not in res.params


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_rules_cutoff_probe_leaves_a_checked_schedule_and_a_valid_bound(seed: int) -> None:
    inst = tiny_instance(seed, n=7, G=4, T=10)
    opt, _ = brute_force(inst)
    warm = heuristics.solve(inst, "fifo")
    # a margin so wide that the probe would prove less than the root LP, and one that it may
    # close under: either way the schedule is checked and the bound not below the optimum
    for margin in (0.5, 0.02):
        res = solve_milp(inst, time_limit=4, threads=2, warm_start=warm,
                         sources=Plan(("lns",), cutoff=margin))
        assert res.params["cutoff"] == pytest.approx(warm.value * (1 + margin))
        assert instances.evaluate(inst, res.schedule).value == pytest.approx(res.value)
        assert res.upper_bound is not None and res.upper_bound >= opt - 1e-6
        assert res.value <= opt + 1e-9


def test_a_source_bound_below_the_value_is_left_out() -> None:
    inst = _instance()
    form = milp.build(inst)
    _, strong = _weak_and_strong(inst)
    res = solve_milp(inst, time_limit=2, threads=1)
    hooks = SharedHooks([])
    hooks.attach(form, strong)
    assert hooks.pool is not None
    hooks.pool.prove(res.value / 2, "cpsat")  # a wrong bound: below a checked value
    out = account(inst, res, hooks)
    assert out.upper_bound == res.upper_bound and "bug" in out.message
    hooks.pool.bound = res.upper_bound + 1.0  # a weaker bound changes nothing
    assert account(inst, res, hooks).upper_bound == res.upper_bound


def test_the_rule_and_its_arguments() -> None:
    small = instances.generate("hc-multi-service", seed=0)  # not of the wide class
    large = instances.generate("large", seed=0, num_jobs=LP_JOBS, num_gpus=128)
    assert plan(small, 1, 60).sources == () and plan(small, 3, 60).sources == ()
    assert "lns" in plan(small, 2, 60).sources
    assert plan(large, 2, 120).lp and not plan(small, 2, 60).lp
    # the cutoff probe below LP_JOBS jobs, beside the LNS only
    assert plan(small, 2, 60).cutoff == CUTOFF_MARGIN and plan(large, 2, 120).cutoff is None
    assert plan(small, 1, 60).cutoff is None
    assert plan(small, 2, 60).cutoff_for(100.0) == pytest.approx(100.0 * (1 + CUTOFF_MARGIN))
    assert Plan(("lns",)).cutoff_for(100.0) is None
    with pytest.raises(ValueError, match="cutoff"):
        Plan(("lns",), cutoff=-0.1)
    assert named(["lns", "lp"]) == Plan(("lns",), lp=True)
    with pytest.raises(ValueError, match="sources"):
        Plan(("nope",))
    with pytest.raises(ValueError, match="sources"):
        solve_milp(small, time_limit=1, sources=("lns",), lns_helper=True)
    with pytest.raises(ValueError, match="sources"):
        solve_milp(small, time_limit=1, sources=("cpsat",), backend="cpsat")
    hooks, halt = portfolio_hooks(Plan(("lns", "cpsat"), cpsat_workers=2))
    assert [s.name for s in hooks.sources] == ["lns", "cpsat"] and not halt.is_set()
    assert isinstance(hooks.sources[0], LNSSource)


@pytest.mark.parametrize("too_large", [False, True])
def test_the_core_highs_leaves_goes_to_a_second_lns(monkeypatch, too_large):
    """Where HiGHS is not run (its presolve would outlast the limit), the hooks start one more
    LNS, from the next seed, on the same stop rule; where it runs, one LNS runs beside it.
    Either way the schedule passes the checker and the bound is not below it."""
    from milp import highs

    if too_large:
        monkeypatch.setattr(highs, "PRESOLVE_SECONDS_PER_NONZERO", 1.0)  # every model "too large"
    seeds: list[int] = []
    run = LNSSource.run

    def spy(self, pool, stop):
        seeds.append(self.params.seed)
        return run(self, pool, stop)

    monkeypatch.setattr(LNSSource, "run", spy)
    inst = instances.generate("medium", seed=5)
    t = time.perf_counter()
    res = solve_milp(inst, time_limit=6, threads=2)
    assert time.perf_counter() - t < 6 + 3
    assert sorted(seeds) == ([0, 1] if too_large else [0])
    assert ("not run" in res.message) == too_large
    check = instances.evaluate(inst, res.schedule)
    assert check.value == pytest.approx(res.value)
    assert res.upper_bound is not None and res.upper_bound >= res.value - 1e-6
