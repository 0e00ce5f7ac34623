"""Fuzzing: mutated instance and schedule files are either accepted or refused cleanly.

Hypothesis takes valid files and mutates them (drop a field or an item, give a
field another JSON type, perturb a number, duplicate or truncate). Whatever
comes out, loading, checking, FIFO and a short MILP solve either succeed or
raise the documented error, :class:`ValueError` (the checker's
:class:`~instances.InfeasibleScheduleError` is one). Anything else (a
``TypeError``, an ``OverflowError``, an ``IndexError``, a NaN in a result) is a
bug. Together the tests below run well over 1,000 cases.
"""

from __future__ import annotations

import copy
import json
import math
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import paths
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import heuristics
import instances
from matheuristics import solve_milp

pytestmark = pytest.mark.slow  # the whole fuzz: make test runs it, the quick loop does not

BROKEN = paths.DATA / "broken"
_TMP = Path(tempfile.mkdtemp(prefix="gpusched-fuzz-"))

BASE_INSTANCES: list[dict[str, Any]] = [
    json.loads((BROKEN / "base" / "instance.json").read_text()),
    instances.instance_to_dict(instances.generate("seed-training-heavy", seed=0)),
    instances.instance_to_dict(instances.generate("hc-deadlines", seed=1)),
]
BASE_SCHEDULES: list[dict[str, Any]] = [
    json.loads((BROKEN / "base" / "schedule.json").read_text()),
    *(
        heuristics.solve(instances.instance_from_dict(d), "fifo").schedule.to_dict()
        for d in BASE_INSTANCES[1:]
    ),
]

def fuzz_settings(n: int) -> settings:
    """``n`` examples, no per-example deadline (the first example imports the dispatch)."""
    return settings(
        max_examples=n,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )

# Values a field may be retyped to: edge numbers, NaN and infinity, every JSON type.
EDGE_VALUES: list[Any] = [
    None, True, False, 0, 1, -1, 2, 10**6, 10**6 + 1, 10**9, 2**63, 10**30, -(10**30),
    0.0, -0.0, 0.5, 1.0, 2.0, 1e308, 5e-324, math.nan, math.inf, -math.inf,
    "", "a", "2", "training", "chat", [], [1, 2], {}, {"a": 1},
]
ODD_VALUES = st.one_of(
    st.sampled_from(EDGE_VALUES),
    st.integers(min_value=-3, max_value=30),
    st.floats(),
    st.text(max_size=3),
)


def _paths(node: Any, where: tuple = ()) -> list[tuple]:
    """Every path in a JSON tree (the root included)."""
    out = [where]
    if isinstance(node, dict):
        for k, v in node.items():
            out.extend(_paths(v, (*where, k)))
    elif isinstance(node, list):
        for i, v in enumerate(node[:8]):  # long demand curves: the first slots suffice
            out.extend(_paths(v, (*where, i)))
    return out


def _get(node: Any, where: tuple) -> Any:
    for k in where:
        node = node[k]
    return node


EDGE_NUMBERS = [v for v in EDGE_VALUES if isinstance(v, (int, float)) and not isinstance(v, bool)]


def _field_paths(doc: Any) -> list[tuple]:
    """Paths grouped by what they point at, so that each group is drawn as often."""
    groups: dict[str, list[tuple]] = {}
    for p in _paths(doc):
        if len(p) <= 1:
            key = "top"
        elif p[0] in ("jobs", "services") and len(p) == 3:
            key = f"{p[0]}-field"
        elif len(p) == 4 and p[2] == "demand":
            key = "demand"
        else:
            key = "other"
        groups.setdefault(key, []).append(p)
    return [g for _, g in sorted(groups.items())]


@st.composite
def mutated(draw: st.DrawFn, bases: list[dict[str, Any]]) -> Any:
    """A valid document with one to three mutations applied."""
    doc = json.loads(json.dumps(draw(st.sampled_from(bases))))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        where = draw(st.sampled_from(draw(st.sampled_from(_field_paths(doc)))))
        if not where:
            if draw(st.booleans()):
                doc = copy.deepcopy(draw(ODD_VALUES))
            continue
        parent, key = _get(doc, where[:-1]), where[-1]
        op = draw(st.sampled_from(["drop", "retype", "retype", "edge", "edge", "perturb", "duplicate"]))
        value = parent[key]
        if op == "drop":
            del parent[key]
        elif op == "retype":
            parent[key] = copy.deepcopy(draw(ODD_VALUES))  # never share EDGE_VALUES' lists
        elif op == "edge":
            parent[key] = draw(st.sampled_from(EDGE_NUMBERS))
        elif op == "perturb" and isinstance(value, (int, float)) and not isinstance(value, bool):
            if isinstance(value, int):
                parent[key] = value + draw(st.sampled_from([-2, -1, 1, 2, 7, 10**6, 10**18]))
            else:
                parent[key] = value * draw(st.sampled_from([-1.0, 0.0, 0.5, 3.0, 1e300]))
        elif op == "duplicate" and isinstance(parent, list):
            parent.insert(key, json.loads(json.dumps(value)))
        elif op == "duplicate" and isinstance(value, (list, str)) and value:
            parent[key] = value[: len(value) // 2]
        if not isinstance(doc, (dict, list)):
            break
    return doc


def _write(doc: Any, name: str) -> Path:
    path = _TMP / name
    path.write_text(json.dumps(doc, allow_nan=True))
    return path


def _load_or_refuse(loader: Any, path: Path) -> Any:
    try:
        out = loader(path)
    except ValueError as e:
        assert str(e).startswith(f"{path}: "), e
        assert "\n" not in str(e).strip()
        event("refused")
        return None
    event("accepted")
    return out


def _check_accepted(inst: instances.Instance) -> None:
    """What every accepted instance guarantees: arrays build, values are finite, FIFO checks."""
    for name in ("gpus", "durations", "releases", "deadlines", "priorities", "demand"):
        getattr(inst, name)
    assert np.isfinite(inst.job_values).all() and math.isfinite(float(inst.job_values.sum()))
    assert (inst.total_demand <= inst.num_gpus).all()
    assert (inst.releases < inst.horizon).all() and (inst.deadlines <= inst.horizon).all()
    assert (inst.gpus >= 1).all() and (inst.gpus <= inst.num_gpus).all()
    res = heuristics.solve(inst, "fifo")
    m = instances.evaluate(inst, res.schedule, "peak", enforce_reservation=True)
    assert m.value == res.value
    assert math.isfinite(res.value) and 0 <= m.utilization <= 1


@fuzz_settings(800)
@given(doc=mutated(BASE_INSTANCES))
def test_mutated_instances(doc):
    inst = _load_or_refuse(instances.load, _write(doc, "instance.json"))
    if inst is None:
        return
    # Accepted: the round trip is exact, FIFO works and passes the checker.
    assert instances.instance_from_dict(json.loads(instances.dumps(inst))) == inst
    _check_accepted(inst)
    for sched in BASE_SCHEDULES:
        try:
            m = instances.evaluate(inst, instances.schedule_from_dict(sched))
        except ValueError:
            continue
        assert math.isfinite(m.value) and 0 <= m.utilization <= 1


@fuzz_settings(300)
@given(doc=mutated(BASE_SCHEDULES), which=st.integers(min_value=0, max_value=2))
def test_mutated_schedules(doc, which):
    inst = instances.instance_from_dict(BASE_INSTANCES[which])
    sched = _load_or_refuse(instances.load_schedule, _write(doc, "schedule.json"))
    if sched is None:
        return
    try:
        m = instances.evaluate(inst, sched)
    except instances.InfeasibleScheduleError as e:
        # the refusal names a job of the schedule, and its slot when it has one
        assert e.job in sched.starts and (repr(e.job) in str(e) or json.dumps(e.job) in str(e)), e
        assert e.slot is None or f"slot {e.slot}" in str(e), e
        return
    # Feasible: every run job lies inside its window and the value adds up.
    assert m.value == instances.rounded(sum(
        j.priority * j.gpus * j.duration * inst.slot_hours for j in inst.jobs if j.name in sched.starts
    ))


@fuzz_settings(250)
@given(
    base=st.sampled_from(BASE_INSTANCES[:2]),
    cut=st.floats(min_value=0, max_value=1),
    flips=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 255)), max_size=3),
)
def test_corrupted_bytes(base, cut, flips):
    """Truncated files and flipped bytes: accepted or refused, never a crash."""
    raw = bytearray(json.dumps(base).encode())
    for pos, byte in flips:
        raw[int(pos * (len(raw) - 1))] = byte
    raw = raw[: max(0, int(cut * len(raw) * 1.2))]  # sometimes whole, sometimes cut
    path = _TMP / "bytes.json"
    path.write_bytes(bytes(raw))
    inst = _load_or_refuse(instances.load, path)
    if inst is not None:
        _check_accepted(inst)


TINY = [
    json.loads((BROKEN / "base" / "instance.json").read_text()),
    instances.instance_to_dict(instances.generate("small", seed=0, num_jobs=6)),
]


@fuzz_settings(60)
@given(doc=mutated(TINY))
def test_mutated_instances_milp(doc):
    """A short MILP solve on accepted tiny instances: checked schedule, honest bound."""
    inst = _load_or_refuse(instances.load, _write(doc, "tiny.json"))
    if inst is None or inst.num_jobs * inst.horizon > 3000:
        return
    res = solve_milp(inst, time_limit=1.0)  # as gpusched.solve(inst, "milp") runs it
    # "error" is a documented outcome (HiGHS gives up on values near 1e300, say): it must
    # carry a message, and the schedule and the bound stay honest all the same.
    assert str(res.status) in {"optimal", "time_limit", "feasible", "error"}, res.message
    if str(res.status) == "error":
        assert res.message
    else:
        assert res.upper_bound is not None
    m = instances.evaluate(inst, res.schedule)
    assert math.isclose(m.value, res.value)
    fifo = heuristics.solve(inst, "fifo")
    if res.upper_bound is not None:
        everything = float(inst.job_values.sum())  # the bound never exceeds every job's value
        assert res.upper_bound <= everything * (1 + 1e-9) + 1e-12
        assert res.upper_bound >= fifo.value - 1e-6 * max(1.0, fifo.value)


# ------------------------------------------------------------ bench sweep files
BASE_CONFIG: dict[str, Any] = {
    "families": ["small"],
    "seeds": "0-1",
    "methods": ["fifo", "list", "milp"],
    "time_limit": 5,
    "params": {"milp": {"threads": 1, "time_limit": 3}},
    "variants": {"list-value": {"method": "list", "rule": "value"}},
    "family_params": {"small": {"num_jobs": 6, "horizon": 12}},
}


@fuzz_settings(300)
@given(doc=mutated([BASE_CONFIG]))
def test_mutated_bench_configs(doc):
    """A sweep file's content: accepted, or refused with ValueError, before any cell runs."""
    from gpusched import bench
    from gpusched.sweep.config import SweepFile

    try:
        config = bench.config_from_dict(doc) if isinstance(doc, dict) else None
    except ValueError as e:
        # the refusal starts with the field it is about: a key of the file or a method's label
        methods, variants = doc.get("methods"), doc.get("variants")
        labels = [*(methods if isinstance(methods, list) else []),
                  *(variants if isinstance(variants, dict) else [])]
        keys = [*SweepFile.model_fields, *(k for k in labels if isinstance(k, str))]
        assert str(e).startswith(tuple(f"{k}{sep}" for k in keys for sep in ".:")), e
        event("refused")
        return
    if config is None:
        return
    event("accepted")
    assert len(config.seeds) <= bench.MAX_SEEDS
    if len(config.seeds) * len(config.families) > 4:
        return
    try:
        cells = bench.make_cells(config)
    except ValueError:
        event("refused when drawn")
        return
    assert len(cells) == len(config.seeds) * len(config.families) * len(config.methods)
