"""Every heuristic on tiny instances whose schedules are worked out by hand; the registry."""

from __future__ import annotations

import numpy as np
import pytest
from reference import easy_starts_ref, list_starts_ref, parallel_starts_ref

import gpusched
import heuristics
import instances
from heuristics.backfill import easy_starts
from heuristics.rules import RULES, order_by
from instances import Instance, Job, Service, evaluate
from matheuristics.best import CONSTRUCTIVE_MEMBERS


def _starts(inst: Instance, method: str, **params) -> dict[str, int]:
    return dict(heuristics.solve(inst, method, **params).schedule.starts)


# G=4, T=12, no inference; all released at 0, listed a, b, c, d.
#   a (3 GPUs x 2) starts at 0; b (3 x 2) is the head at t=0, reserved at 2.
#   c (4 x 2) waits; its conservative reservation is 4..5 (after b).
#   d (1 x 6) fits now beside a and b (1 GPU free in 0..3) without touching b's
#   reservation, so EASY backfills it at 0 -- which pushes c to 6 (d holds a GPU
#   in 4..5). Conservative refuses: d would delay c's reservation; d goes to 6.
BACKFILL = Instance("backfill", 4, 12, (), (
    Job("a", 3, 2), Job("b", 3, 2), Job("c", 4, 2), Job("d", 1, 6),
))


@pytest.mark.parametrize("res", ["peak", "curve"])
def test_easy_backfills_without_delaying_the_head(res: str) -> None:
    assert _starts(BACKFILL, f"easy-{res}") == {"a": 0, "b": 2, "c": 6, "d": 0}
    log: list[tuple[int, int, int]] = []
    start = easy_starts(BACKFILL, res, log)
    assert log[0] == (0, 1, 2)  # at t=0 the head b is reserved at slot 2 ...
    assert start[1] == 2  # ... and starts there although d was backfilled
    assert (2, 2, 6) in log  # at t=2, c becomes head, reserved at 6


@pytest.mark.parametrize("res", ["peak", "curve"])
def test_conservative_backfill_delays_no_earlier_job(res: str) -> None:
    assert _starts(BACKFILL, f"conservative-{res}") == {"a": 0, "b": 2, "c": 4, "d": 6}


def test_conservative_fills_a_hole_that_delays_nobody() -> None:
    # b (4 x 2) is reserved at 2..3 after a; e (1 x 2) fits in 0..1 beside a.
    inst = Instance("hole", 4, 8, (), (Job("a", 3, 2), Job("b", 4, 2), Job("e", 1, 2)))
    assert _starts(inst, "conservative-peak") == {"a": 0, "b": 2, "e": 0}
    assert _starts(inst, "easy-peak") == {"a": 0, "b": 2, "e": 0}
    assert _starts(inst, "fifo") == {"a": 0, "b": 2, "e": 4}  # FIFO: never before b


def test_backfilling_drops_jobs_past_their_deadline_and_respects_release() -> None:
    # x (2 x 2) must end by 3 but a holds both GPUs until 2: dropped. y released at 5.
    inst = Instance("drop", 2, 8, (), (
        Job("a", 2, 2), Job("x", 2, 2, deadline=3), Job("y", 1, 1, release=5),
    ))
    for m in ("easy-peak", "easy-curve", "conservative-peak", "conservative-curve"):
        assert _starts(inst, m) == {"a": 0, "y": 5}, m


def test_peak_and_curve_reservations_differ_for_backfilling() -> None:
    # Inference needs 2 of 2 GPUs in slot 0 only: peak leaves no batch capacity at all.
    inst = Instance("res", 2, 4, (Service("chat", 1.0, (2, 0, 0, 0)),), (Job("a", 2, 3),))
    assert _starts(inst, "easy-peak") == {}
    assert _starts(inst, "conservative-peak") == {}
    assert _starts(inst, "easy-curve") == {"a": 1}
    assert _starts(inst, "conservative-curve") == {"a": 1}
    assert _starts(inst, "list-peak") == {}
    assert _starts(inst, "list") == {"a": 1}


# G=2, T=4: x (2 x 4, w=1) is listed first; y and z (1 x 2, w=5) are worth more.
LIST = Instance("list", 2, 4, (), (
    Job("x", 2, 4, priority=1.0), Job("y", 1, 2, priority=5.0), Job("z", 1, 2, priority=5.0),
))


def test_list_rules() -> None:
    assert _starts(LIST, "fifo") == {"x": 0}
    assert _starts(LIST, "list") == {"y": 0, "z": 0}  # priority: y, z first; x no longer fits
    assert heuristics.solve(LIST, "list").value == 20.0
    assert _starts(LIST, "list", rule="value") == {"y": 0, "z": 0}  # 10, 10 > 8
    assert _starts(LIST, "list", rule="area") == {"x": 0}  # area 8 > 2
    assert _starts(LIST, "list", rule="lpt") == {"x": 0}
    assert _starts(LIST, "list", rule="spt") == {"y": 0, "z": 0}
    assert _starts(LIST, "list", rule="release") == {"y": 0, "z": 0}  # tie -> w desc


def test_rule_orders_and_ties() -> None:
    inst = Instance("rules", 8, 10, (), (
        Job("p", 1, 3, priority=1.0, release=2, deadline=9),
        Job("q", 2, 1, priority=2.0, release=0, deadline=5),
        Job("r", 1, 5, priority=2.0, release=1),
        Job("s", 1, 3, priority=1.0, release=2, deadline=9),
    ))
    names = lambda rule: [inst.jobs[j].name for j in order_by(inst, rule)]  # noqa: E731
    assert names("priority") == ["r", "q", "p", "s"]  # w tie: r (value 10) before q (4)
    assert names("value") == ["r", "q", "p", "s"]
    assert names("area") == ["r", "p", "s", "q"]
    assert names("lpt") == ["r", "p", "s", "q"]
    assert names("spt") == ["q", "p", "s", "r"]
    assert names("edd") == ["q", "p", "s", "r"]
    assert names("release") == ["q", "r", "p", "s"]
    assert names("slack") == ["r", "q", "p", "s"]  # all 4: w, then value, then index
    with pytest.raises(ValueError, match="rule"):
        order_by(inst, "nope")
    with pytest.raises(ValueError, match="rule"):
        heuristics.solve(inst, "list", rule="nope")


def test_parallel_scheme_differs_from_serial() -> None:
    # a (2 x 2, w=3) is released at 1; b (1 x 3, w=1) at 0. Serial (priority):
    # a at 1..2 first, then b finds no 3-slot window. Parallel: at t=0 only b is
    # released, so it starts, and a never fits before it would end past T=4.
    inst = Instance("par", 2, 4, (), (
        Job("a", 2, 2, priority=3.0, release=1), Job("b", 1, 3, priority=1.0),
    ))
    assert _starts(inst, "list") == {"a": 1}
    assert _starts(inst, "parallel") == {"b": 0}


# G=4, T=2, all jobs 2 slots: every rule takes a (3 GPUs, value 12) first and
# then nothing fits; the optimum runs b and c (2 GPUs each, value 6.4 + 6.4).
TRAP = Instance("trap", 4, 2, (), (
    Job("a", 3, 2, priority=2.0), Job("b", 2, 2, priority=1.6), Job("c", 2, 2, priority=1.6),
))


def test_every_rule_falls_in_the_trap_and_search_escapes_it() -> None:
    for rule in RULES:
        assert _starts(TRAP, "list", rule=rule) == {"a": 0}, rule
    for m, params in [("sampling", {"passes": 200}), ("local-search", {"iterations": 50}),
                      ("best", {"passes": 20, "iterations": 50, "lns_rounds": 0}),
                      ("lns", {"passes": 0, "iterations": 0, "rounds": 1})]:
        res = heuristics.solve(TRAP, m, seed=0, time_limit=None, **params)
        assert dict(res.schedule.starts) == {"b": 0, "c": 0}, m
        assert res.value == pytest.approx(12.8)


def test_references_agree_on_the_hand_cases() -> None:
    for inst in (BACKFILL, LIST, TRAP):
        for rule in RULES:
            order = order_by(inst, rule)
            assert np.array_equal(heuristics.listsched.list_starts(inst, order), list_starts_ref(inst, order))
            assert np.array_equal(heuristics.listsched.parallel_starts(inst, order),
                                  parallel_starts_ref(inst, order))
        assert np.array_equal(easy_starts(inst, "peak"), easy_starts_ref(inst, "peak"))


def test_registry_and_dispatch() -> None:
    expected = {"fifo", "fifo-curve", "easy-peak", "easy-curve", "conservative-peak",
                "conservative-curve", "list", "list-peak", "parallel", "sampling",
                "local-search", "lns", "best"}
    assert expected <= set(heuristics.METHODS)
    assert all(heuristics.DESCRIPTIONS[m] for m in heuristics.METHODS)
    with pytest.raises(ValueError, match="method"):
        heuristics.solve(LIST, "nope")
    with pytest.raises(ValueError, match="params"):
        heuristics.solve(LIST, "list", colour="red")
    with pytest.raises(ValueError, match="passes"):
        heuristics.solve(LIST, "sampling", passes=0)
    with pytest.raises(ValueError, match="already"):
        heuristics.register("list", heuristics.METHODS["list"], "again")
    for m, _ in CONSTRUCTIVE_MEMBERS:
        assert m in heuristics.METHODS
    # the front door passes a time budget to the methods that take one
    res = gpusched.solve(TRAP, "best", time_limit=0.5)
    assert res.params["time_limit"] == 0.5
    assert res.runtime_s < 5


def test_results_are_checked_and_labelled() -> None:
    for m in heuristics.METHODS:
        budget = {"time_limit": None} if m in ("sampling", "local-search", "lns", "best") else {}
        res = heuristics.solve(BACKFILL, m, **budget)
        assert res.method == m
        if m == "lagrangian":  # the one method that certifies a bound: L(lam) at its multipliers
            import milp

            opt = milp.solve(BACKFILL, time_limit=30, mip_gap=0).value
            assert res.bound_method == "lagrangian" and res.upper_bound >= opt - 1e-9
        else:
            assert res.upper_bound is None
        assert res.value == evaluate(BACKFILL, res.schedule).value
        evaluate(BACKFILL, res.schedule, res.reservation, enforce_reservation=True)


class _EntryPoint:
    """An entry point of the ``gpusched.methods`` group, as importlib.metadata gives it."""

    def __init__(self, name: str, obj: object) -> None:
        self.name, self.value, self.obj = name, f"plugin:{name}", obj

    def load(self) -> object:
        return self.obj


def _fresh_registry(monkeypatch: pytest.MonkeyPatch, eps: list[_EntryPoint]) -> None:
    """The built-in methods only, plugins not loaded yet, ``eps`` the installed entry points."""
    builtin = {k: v for k, v in heuristics.METHODS._data.items() if k not in ("lns", "best")}
    monkeypatch.setattr(heuristics.METHODS, "_data", dict(builtin))
    monkeypatch.setattr(heuristics, "DESCRIPTIONS", {k: heuristics.DESCRIPTIONS[k] for k in builtin})
    monkeypatch.setattr(heuristics.METHODS, "_loaded", False)
    monkeypatch.setattr(heuristics.registry, "entry_points", lambda group: eps)
    monkeypatch.setattr(heuristics, "entry_points", lambda group: eps)


def test_plugins_are_loaded_when_a_name_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    def double_fifo(inst: Instance, **params: object) -> instances.Result:
        return heuristics.solve(inst, "fifo")

    _fresh_registry(monkeypatch, [_EntryPoint("twice", heuristics.MethodSpec(double_fifo, "x"))])
    assert heuristics.METHODS.holds("list") and not heuristics.METHODS.holds("twice")
    heuristics.solve(LIST, "list")  # a built-in name loads nothing
    assert not heuristics.METHODS._loaded
    res = heuristics.solve(LIST, "twice")
    assert res.value == heuristics.solve(LIST, "fifo").value
    assert heuristics.DESCRIPTIONS["twice"] == "x" and heuristics.load_plugins() == []


def test_the_full_list_loads_the_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh_registry(monkeypatch, [_EntryPoint("p", heuristics.MethodSpec(heuristics.METHODS["fifo"],
                                                                           "p"))])
    assert list(heuristics.METHODS)[-1] == "p"


def test_a_plugin_that_is_not_a_method_spec_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh_registry(monkeypatch, [_EntryPoint("bad", lambda inst: None)])
    with pytest.raises(TypeError, match="MethodSpec"):
        heuristics.solve(LIST, "bad")
    assert not heuristics.METHODS.holds("bad") and not heuristics.METHODS._loaded


def test_without_plugins_an_unknown_name_says_how_to_get_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh_registry(monkeypatch, [])
    with pytest.raises(ValueError, match=r"no gpusched\.methods plugins are installed"):
        heuristics.solve(LIST, "best")
