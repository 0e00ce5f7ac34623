"""The LNS helper beside HiGHS: the exchange of incumbents, and solves that use it."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import numpy as np
import pytest

import heuristics
import instances
import milp
from heuristics.lns import lns_improve
from milp.highs import Exchange


def _value(inst: instances.Instance, start: np.ndarray) -> float:
    return float(inst.job_values[start >= 0].sum())


def _two_schedules(inst: instances.Instance) -> tuple[np.ndarray, np.ndarray]:
    """A weak and a strong feasible start array of ``inst``."""
    weak = heuristics.solve(inst, "fifo-curve").schedule.to_array(inst)
    strong = heuristics.solve(inst, "best", time_limit=1).schedule.to_array(inst)
    assert _value(inst, strong) > _value(inst, weak)
    return weak, strong


def test_exchange_keeps_the_best_and_passes_it_on() -> None:
    inst = instances.generate("medium", seed=2)
    form = milp.build(inst)
    weak, strong = _two_schedules(inst)
    ex = Exchange(form, weak)
    assert ex.value == pytest.approx(_value(inst, weak))

    # an improvement from the LNS is kept and queued for HiGHS, once
    assert ex.from_lns(strong, _value(inst, strong)) is None
    assert ex.value == pytest.approx(_value(inst, strong))
    given: list[np.ndarray] = []
    event = SimpleNamespace(data_in=SimpleNamespace(setSolution=given.append))
    ex.give_highs(event)
    ex.give_highs(event)
    assert len(given) == 1
    assert np.array_equal(form.decode(given[0]), strong)

    # an LNS that is behind gets the best schedule back; one level with it gets nothing
    back = ex.from_lns(weak, _value(inst, weak))
    assert back is not None and np.array_equal(back, strong)
    assert ex.from_lns(strong, _value(inst, strong)) is None

    # HiGHS's worse incumbent changes nothing; a better one replaces the LNS's queued one
    ex.from_highs(SimpleNamespace(data_out=SimpleNamespace(mip_solution=form.encode(weak))))
    assert ex.value == pytest.approx(_value(inst, strong))
    assert ex.counts == {"lns": 1, "highs": 0, "given": 1}


def test_exchange_takes_a_better_incumbent_from_highs() -> None:
    inst = instances.generate("medium", seed=2)
    form = milp.build(inst)
    weak, strong = _two_schedules(inst)
    ex = Exchange(form, weak)
    ex.from_lns(weak, _value(inst, weak))
    ex.from_highs(SimpleNamespace(data_out=SimpleNamespace(mip_solution=form.encode(strong))))
    assert ex.counts["highs"] == 1
    assert ex.to_highs is None  # HiGHS has it already
    back = ex.from_lns(weak, _value(inst, weak))
    assert back is not None and np.array_equal(back, strong)


def test_lns_continues_from_what_the_exchange_hands_it() -> None:
    inst = instances.generate("medium", seed=2)
    weak, strong = _two_schedules(inst)
    seen: list[float] = []

    def exchange(start: np.ndarray, value: float) -> np.ndarray | None:
        seen.append(value)
        return strong if len(seen) == 1 else None

    out, rounds, _ = lns_improve(inst, weak, time_limit=None, rounds=3, exchange=exchange)
    assert rounds == 3 and len(seen) == 3
    assert seen[0] == pytest.approx(_value(inst, weak))
    assert seen[1] >= _value(inst, strong) - 1e-9  # the second round starts from the strong one
    assert _value(inst, out) >= _value(inst, strong) - 1e-9
    instances.evaluate(inst, instances.Schedule.from_array(inst, out), enforce_reservation=True)


def test_lns_stops_when_asked() -> None:
    inst = instances.generate("medium", seed=2)
    weak, _ = _two_schedules(inst)
    out, rounds, improved = lns_improve(inst, weak, time_limit=None, rounds=50,
                                        should_stop=lambda: True)
    assert (rounds, improved) == (0, 0)
    assert np.array_equal(out, weak)


@pytest.mark.parametrize("seed", [2, 3])
def test_solve_with_the_helper_is_checked_and_bounded(seed: int) -> None:
    inst = instances.generate("medium", seed=seed)
    alone = milp.solve(inst, time_limit=3, threads=1)
    before = threading.active_count()
    res = milp.solve(inst, time_limit=3, threads=2, lns_helper=True)
    assert threading.active_count() == before  # the helper thread has ended
    again = instances.evaluate(inst, res.schedule)
    assert again.value == pytest.approx(res.value)
    assert res.upper_bound is not None
    for r in (res, alone):
        assert r.upper_bound >= max(res.value, alone.value) - 1e-6 * res.value
    assert "LNS helper" in res.message
    assert res.params["lns_helper"] is True


def test_helper_needs_a_warm_start_and_is_skipped_without_one() -> None:
    inst = instances.generate("small", seed=3)
    res = milp.solve(inst, time_limit=5, warm_start=None, threads=2, lns_helper=True)
    assert res.status == "optimal"
    assert "LNS helper" not in res.message


def test_a_failing_helper_leaves_highs_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    import heuristics.lns

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("helper failure")

    monkeypatch.setattr(heuristics.lns, "lns_improve", boom)
    inst = instances.generate("hc-mixed", seed=0)
    res = milp.solve(inst, time_limit=5, threads=2, lns_helper=True)
    assert res.status in ("optimal", "time_limit")
    assert res.upper_bound is not None and res.upper_bound >= res.value - 1e-6


def test_cpsat_options_by_name() -> None:
    pytest.importorskip("ortools")
    inst = instances.generate("small", seed=1)
    res = milp.solve(inst, backend="cpsat", time_limit=5, interleave_search=True, num_workers=2)
    assert res.status == "optimal"
    with pytest.raises(ValueError, match="params: CP-SAT has no parameter"):
        milp.solve(inst, backend="cpsat", time_limit=5, no_such_option=1)


@pytest.mark.parametrize(("threads", "flag", "on"), [
    (1, None, False), (2, None, True), (3, None, False), (2, False, False), (1, True, True),
])
def test_helper_is_on_by_default_on_two_threads_only(threads: int, flag: bool | None,
                                                      on: bool) -> None:
    inst = instances.generate("hc-mixed", seed=1)
    kw = {} if flag is None else {"lns_helper": flag}
    res = milp.solve(inst, time_limit=1, threads=threads, **kw)
    assert ("LNS helper" in res.message) is on
    assert res.upper_bound is not None and res.upper_bound >= res.value - 1e-6


def test_a_stalled_lns_widens_its_windows_and_stays_feasible(monkeypatch: pytest.MonkeyPatch) -> None:
    import heuristics.lns as lns

    inst = instances.generate("medium", seed=2)
    weak, _ = _two_schedules(inst)
    freed_sizes: list[int] = []
    limits: list[float] = []
    real_window, real_solve = lns.window_jobs, milp.solve

    def window_jobs(inst_: instances.Instance, start: np.ndarray, a: int, b: int, max_jobs: int,
                    rng: np.random.Generator, **kw: float) -> np.ndarray:
        freed_sizes.append(max_jobs)
        return real_window(inst_, start, a, b, max_jobs, rng, **kw)

    def solve(sub: instances.Instance, **kw: object) -> instances.Result:
        limits.append(float(kw["time_limit"]))  # type: ignore[arg-type]
        return real_solve(sub, **kw)

    monkeypatch.setattr(lns, "window_jobs", window_jobs)
    monkeypatch.setattr(milp, "solve", solve)
    out, rounds, _ = lns.lns_improve(inst, weak, time_limit=None, rounds=12, max_jobs=10,
                                     sub_time_limit=0.5, stall_rounds=1, seed=3)
    assert rounds == 12
    assert max(freed_sizes) > 10 and max(limits) > 0.5  # some rounds were widened
    assert max(freed_sizes) <= 30 and max(limits) <= 1.5 + 1e-9  # at most tripled
    assert _value(inst, out) >= _value(inst, weak) - 1e-9
    instances.evaluate(inst, instances.Schedule.from_array(inst, out), enforce_reservation=True)
