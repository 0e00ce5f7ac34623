"""Section 14: a user's placement and priority rules, held to their built-in twins, the
checker, and one-line errors naming the rule and the job."""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest
from numba import njit
from packing_cases import node, pod, random_packing
from user_bestfit import bestfit, bestfit_compiled

import heuristics
import instances
from heuristics.listsched import list_schedule, parallel_schedule
from heuristics.packing import place
from heuristics.placement_rules import PLACEMENT_RULES, register_placement, resolve_placement
from heuristics.rules import RULES, order_by, register_rule
from instances.packing import Packing


def first_node(view, job):
    return -np.arange(view.fits.size, dtype=float)


@njit(cache=True)
def first_node_compiled(view, job):  # pragma: no cover (compiled)
    return -np.arange(view.gpus.shape[0]) * 1.0


class FirstFit:
    """first-fit as an object: the first node, the lowest-indexed GPU with room."""

    def score(self, view, job):
        return -np.arange(view.fits.size, dtype=float)

    def gpus(self, view, job, node):
        free = view.gpu_free_milli[node]
        if job.gpus == 1 and job.gpu_milli < 1000:
            return [int(np.flatnonzero(free >= job.gpu_milli)[0])]
        return np.flatnonzero(free >= 1000)[: job.gpus].tolist()


def least_room(view, job):
    """The toolkit's best-fit on version 2: the fewest whole GPUs free over the run."""
    return -(view.gpu_free_milli >= 1000).sum(axis=1).astype(float)


# ------------------------------------------------------------------ packing
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("rule", [bestfit, bestfit_compiled])
def test_bestfit_through_the_view_places_as_the_builtin(seed, rule):
    p = random_packing(seed)
    a, b = place(p, "bestfit"), place(p, rule)
    assert b.placement.assign == a.placement.assign
    assert b.metrics.allocated_milli == a.metrics.allocated_milli
    fn = getattr(rule, "py_func", rule)  # a compiled rule: its Python function's names
    assert b.policy == f"{fn.__module__}:{fn.__name__}" == f"user_bestfit:{fn.__name__}"


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("rule", [first_node, first_node_compiled])
def test_first_node_rule_places_as_first_fit_on_whole_gpus(seed, rule):
    # the default GPU choice of a share is the least room (section 14), first-fit's the lowest
    # index: on whole-GPU pods the two agree
    p = random_packing(seed)
    p = Packing(p.name, p.nodes, tuple(x for x in p.pods if x.gpu_milli in (0, 1000)))
    assert place(p, rule).placement.assign == place(p, "first-fit").placement.assign


def test_a_worked_packing_case():
    # two nodes of 2 GPUs; pods of 1 GPU: "worst" (most free GPUs) spreads them, ties to node a
    p = Packing("w", (node("a", 2), node("b", 2)), tuple(pod(f"p{i}") for i in range(3)))

    def worst(view, job):
        return (view.gpu_free_milli >= 1000).sum(axis=1).astype(float)

    run = place(p, worst)
    assert run.placement.assign == {"p0": ("a", (0,)), "p1": ("b", (0,)), "p2": ("a", (1,))}


def test_minus_inf_and_nan_rule_nodes_out_and_the_pod_fails():
    p = Packing("w", (node("a", 1), node("b", 1)), (pod("x"), pod("y"), pod("z")))

    def only_b(view, job):
        return np.array([np.nan, 1.0])

    run = place(p, only_b)
    assert run.placement.assign == {"x": ("b", (0,))}
    assert run.metrics.allocated_milli == 1000


BAD_RULES = [
    (lambda v, j: np.zeros(v.fits.size + 1), "shape"),
    (lambda v, j: "high", "not numbers"),
    (lambda v, j: 1 / 0, "ZeroDivisionError"),
]


@pytest.mark.parametrize(("rule", "what"), BAD_RULES)
def test_a_bad_rule_is_one_error_naming_it_and_the_pod(rule, what):
    p = random_packing(1)
    with pytest.raises(ValueError, match=what) as e:
        place(p, rule)
    msg = str(e.value)
    assert "\n" not in msg and "<lambda>" in msg and f"job {p.pods[0].name!r}" in msg


def test_a_compiled_rule_of_the_wrong_length_names_the_pod():
    @njit
    def short(view, job):  # pragma: no cover (compiled)
        return np.zeros(view.gpus.shape[0] - 1)

    p = random_packing(2)
    with pytest.raises(ValueError, match="wrong length") as e:
        place(p, short)
    assert p.pods[0].name in str(e.value)


def test_a_compiled_rule_that_raises_names_the_pod():
    @njit
    def picky(view, job):  # pragma: no cover (compiled)
        if job.gpus == 0:
            raise ValueError("no CPU-only pods")
        return np.zeros(view.gpus.shape[0])

    p = random_packing(2)
    cpu_only = next(q for q in p.pods if q.gpus == 0)
    with pytest.raises(ValueError, match="no CPU-only pods") as e:
        place(p, picky)
    assert f"job {cpu_only.name!r}" in str(e.value) and "\n" not in str(e.value)


def test_a_rule_gpus_that_names_a_busy_gpu_is_refused():
    class Bad:
        def score(self, view, job):
            return np.zeros(view.fits.size)

        def gpus(self, view, job, node):
            return [0]

    p = Packing("w", (node("a", 2),), (pod("x"), pod("y")))
    with pytest.raises(ValueError, match="gpus\\(\\) returned \\[0\\]") as e:
        place(p, Bad())
    assert "'y'" in str(e.value)


# ------------------------------------------------------------------ names and tables
def test_module_name_and_registration(tmp_path, monkeypatch):
    (tmp_path / "mine_rules.py").write_text(textwrap.dedent("""
        import numpy as np
        def worst(view, job):
            return (view.gpu_free_milli >= 1000).sum(axis=1).astype(float)
        def shortest(inst):
            return inst.durations
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    p = random_packing(3)
    run = place(p, "mine_rules:worst")
    assert run.policy == "mine_rules:worst"
    inst = instances.generate("hc-mixed", seed=0, node_gpus=8)
    res = heuristics.solve(inst, "list", placement="mine_rules:worst", rule="mine_rules:shortest")
    assert res.params == {"rule": "mine_rules:shortest", "placement": "mine_rules:worst"}
    instances.evaluate(inst, res.schedule)
    monkeypatch.delitem(sys.modules, "mine_rules")
    for spec, match in (("nosuchmodule:x", "cannot import"), ("mine_rules:nothere", "no 'nothere'"),
                        ("fdg", "unknown placement rule")):
        with pytest.raises(ValueError, match=match):
            resolve_placement(spec)


def test_register_placement_and_rule(monkeypatch):
    monkeypatch.setattr(PLACEMENT_RULES, "_data", dict(PLACEMENT_RULES._data))
    monkeypatch.setattr(RULES, "_data", dict(RULES._data))
    register_placement("my-bestfit", bestfit, "BestFit via the view")
    register_rule("by-gpus", lambda inst: -inst.gpus, "widest first")
    with pytest.raises(ValueError, match="already registered"):
        register_placement("fgd", bestfit)
    with pytest.raises(ValueError, match="already registered"):
        register_rule("priority", lambda inst: inst.gpus)
    p = random_packing(4)
    assert place(p, "my-bestfit").placement.assign == place(p, "bestfit").placement.assign
    assert place(p, "my-bestfit").policy == "my-bestfit"
    inst = instances.generate("openb-shares", seed=0)
    res = heuristics.solve(inst, "list", placement="my-bestfit", rule="by-gpus")
    assert res.params["placement"] == "my-bestfit" and res.params["rule"] == "by-gpus"


def test_one_spelling_firstfit_is_first_fit():
    p = random_packing(5)
    with pytest.warns(DeprecationWarning):
        old = place(p, "firstfit")
    assert old.policy == "first-fit"
    assert old.placement.assign == place(p, "first-fit").placement.assign


# ------------------------------------------------------------------ in time
V2 = [instances.generate("hc-mixed", seed=s, node_gpus=8) for s in range(3)]
V3 = [instances.generate("openb-shares", seed=s) for s in range(2)]


@pytest.mark.parametrize("inst", V2, ids=lambda i: i.name)
@pytest.mark.parametrize(("builtin", "mine"), [("first-fit", first_node), ("best-fit", least_room)])
@pytest.mark.parametrize("method", [list_schedule, parallel_schedule])
def test_a_user_rule_in_time_matches_its_builtin_twin_v2(inst, builtin, mine, method):
    for reservation in ("curve", "peak"):
        a = method(inst, placement=builtin, reservation=reservation)
        b = method(inst, placement=mine, reservation=reservation)
        assert b.schedule.starts == a.schedule.starts
        assert b.schedule.placement == a.schedule.placement


@pytest.mark.parametrize("inst", V3, ids=lambda i: i.name)
@pytest.mark.parametrize(("builtin", "mine"), [("first-fit", FirstFit()), ("bestfit", bestfit)])
def test_a_user_rule_in_time_matches_its_builtin_twin_v3(inst, builtin, mine):
    for reservation in ("curve", "peak"):
        a = list_schedule(inst, placement=builtin, reservation=reservation)
        b = list_schedule(inst, placement=mine, reservation=reservation)
        assert b.schedule.starts == a.schedule.starts
        assert b.schedule.placement == a.schedule.placement


def test_every_schedule_of_an_odd_rule_passes_the_checker():
    rng = np.random.default_rng(0)

    def noisy(view, job):
        s = rng.random(view.fits.size)
        s[rng.random(view.fits.size) < 0.3] = -np.inf
        return s

    for inst in (*V2, *V3):
        for m in ("list", "list-peak", "parallel", "sampling"):
            res = heuristics.solve(inst, m, placement=noisy, **({"passes": 5} if m == "sampling" else {}))
            reservation = "peak" if m == "list-peak" else "curve"
            assert instances.evaluate(inst, res.schedule, reservation).value == res.value


def test_a_job_waits_while_the_rule_rules_every_node_out():
    inst = V2[0]

    def not_before_10(view, job):
        return np.where(view.start >= 10, 0.0, -np.inf) * np.ones(view.fits.size)

    res = list_schedule(inst, placement=not_before_10)
    assert min(res.schedule.starts.values()) >= 10


def test_methods_without_user_rules_refuse_them_plainly():
    with pytest.raises(ValueError, match="not yet in 'local-search'"):
        heuristics.solve(V2[0], "local-search", placement=first_node)


def test_a_bad_rule_in_time_names_the_job():
    with pytest.raises(ValueError, match=r"on job '[^']+' \(index \d+\): returned scores of shape"):
        list_schedule(V2[0], placement=lambda v, j: np.zeros(3))


# ------------------------------------------------------------------ priority rules
def test_a_priority_key_orders_ascending_ties_by_job_order():
    inst = V2[0]
    key = np.zeros(inst.num_jobs)
    key[3] = -1.0
    order = order_by(inst, lambda i: key)
    assert order[0] == 3 and list(order[1:]) == [j for j in range(inst.num_jobs) if j != 3]


@pytest.mark.parametrize(("key", "match"), [
    (lambda inst: np.zeros(2), "shape"), (lambda inst: 1 / 0, "ZeroDivisionError"),
    (lambda inst: np.full(inst.num_jobs, np.nan), "NaN"),
])
def test_a_bad_priority_key_names_the_rule(key, match):
    with pytest.raises(ValueError, match=match) as e:
        list_schedule(V2[0], rule=key)
    assert "<lambda>" in str(e.value)


def test_the_exact_methods_refuse_a_user_rule_too():
    import gpusched

    with pytest.raises(ValueError, match="not yet in 'milp'"):
        gpusched.solve(V2[0], "milp", placement=first_node, time_limit=5)


def test_a_plugin_that_does_not_load_is_one_line_naming_it(monkeypatch):
    class Broken:
        name, value = "mine", "nowhere:rule"

        def load(self):
            raise ImportError("No module named 'nowhere'")

    monkeypatch.setattr(PLACEMENT_RULES, "_data", dict(PLACEMENT_RULES._data))
    monkeypatch.setattr(PLACEMENT_RULES, "_loaded", False)
    monkeypatch.setattr(heuristics.registry, "entry_points", lambda group: [Broken()])
    with pytest.raises(ValueError, match=r"gpusched.placements: entry point 'mine' = "
                                         r"'nowhere:rule' does not load \(ImportError") as e:
        resolve_placement("mine")
    assert "\n" not in str(e.value)


def test_a_rule_object_reads_the_instance_once_through_for_instance():
    inst = instances.generate("hc-mixed", seed=0).replace(nodes=None)
    inst = instances.with_nodes(inst, 8) if hasattr(instances, "with_nodes") else inst
    seen = []

    class Bound:
        def __init__(self, n: int) -> None:
            self.n = n

        def score(self, view, job):
            return -np.arange(view.gpus.shape[0], dtype=float) * self.n

    class Rule(Bound):
        def for_instance(self, i):
            seen.append(i.name)
            return Bound(i.num_jobs)

    res = heuristics.solve(inst, "list", placement=Rule(0))
    instances.evaluate(inst, res.schedule)
    assert seen == [inst.name]  # once per decode, before any job


def test_a_registered_methods_result_is_checked_again():
    import dataclasses

    inst = instances.generate("small", seed=0)

    def honest(i, **kw):
        return heuristics.solve(i, "fifo-curve")

    def inflated(i, **kw):
        res = heuristics.solve(i, "fifo-curve")
        return dataclasses.replace(res, value=res.value + 1.0)

    def overloaded(i, **kw):
        res = heuristics.solve(i, "fifo-curve")
        starts = {j.name: 0 for j in i.jobs}  # every job at slot 0: over capacity
        return dataclasses.replace(res, schedule=instances.Schedule(i.name, starts))

    for name, fn in (("t-honest", honest), ("t-inflated", inflated), ("t-overloaded", overloaded)):
        heuristics.register(name, fn, "test")
    try:
        assert heuristics.solve(inst, "t-honest").value > 0
        with pytest.raises(ValueError, match=r"t-inflated.*reports value"):
            heuristics.solve(inst, "t-inflated")
        with pytest.raises(ValueError, match=r"t-overloaded.*infeasible schedule"):
            heuristics.solve(inst, "t-overloaded")
    finally:
        for name in ("t-honest", "t-inflated", "t-overloaded"):
            heuristics.METHODS._data.pop(name, None)
            heuristics.DESCRIPTIONS.pop(name, None)
