"""The broken corpus on nodes: instance files are in ``tests/data/broken/instance/`` (run by
``test_broken_files.py``); schedules for an instance with nodes are here.

``tests/data/broken/schedule-nodes/`` holds schedules for ``base/nodes-instance.json`` (or,
where an entry names it, another base instance: ``base/v3-instance.json`` for model version 3);
``nodes-expected.json`` gives, for each, the exit code of ``gpusched check`` (2: malformed
input, a ``ValueError`` naming the field; 1: well formed but infeasible, the job and the
reason named) and the fragments its message must contain.
"""

from __future__ import annotations

import json
from pathlib import Path

import paths
import pytest

import instances
from gpusched.cli import main

BROKEN = paths.DATA / "broken"
BASE = BROKEN / "base" / "nodes-instance.json"
BASE_SCHEDULE = BROKEN / "base" / "nodes-schedule.json"
EXPECTED: dict[str, dict] = json.loads((BROKEN / "nodes-expected.json").read_text())


def _base(name: str) -> Path:
    return BROKEN / EXPECTED[name].get("instance", "base/nodes-instance.json")


def test_every_node_schedule_has_an_expectation() -> None:
    assert {p.name for p in (BROKEN / "schedule-nodes").iterdir()} == set(EXPECTED)


def test_base_files_are_valid(capsys) -> None:
    inst = instances.load(BASE)
    assert inst.num_nodes == 3
    assert instances.evaluate(inst, instances.load_schedule(BASE_SCHEDULE)).jobs_run == 2
    assert main(["check", str(BASE), str(BASE_SCHEDULE)]) == 0
    assert main(["check", str(BASE), str(BROKEN / "base" / "schedule.json")]) == 1  # no placement
    assert "has no placement" in capsys.readouterr().out
    v3 = instances.load(BROKEN / "base" / "v3-instance.json")
    m = instances.evaluate(v3, instances.load_schedule(BROKEN / "base" / "v3-schedule.json"))
    assert m.jobs_run == 4 and m.fgd_fragmentation is not None
    assert main(["check", str(BROKEN / "base" / "v3-instance.json"),
                 str(BROKEN / "base" / "v3-schedule.json")]) == 0
    assert {_base(n).name for n in EXPECTED} == {"nodes-instance.json", "v3-instance.json"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_node_schedule_library(name: str) -> None:
    path = BROKEN / "schedule-nodes" / name
    inst = instances.load(_base(name))
    with pytest.raises(ValueError) as err:
        schedule = instances.load_schedule(path)
        schedule.to_array(inst)
        instances.evaluate(inst, schedule)
    if EXPECTED[name]["exit"] == 1:
        assert isinstance(err.value, instances.InfeasibleScheduleError)
    for frag in EXPECTED[name]["fragments"]:
        assert frag in str(err.value), str(err.value)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_node_schedule_cli(name: str, capsys) -> None:
    path = BROKEN / "schedule-nodes" / name
    code = main(["check", str(_base(name)), str(path)])
    out, err = capsys.readouterr()
    assert code == EXPECTED[name]["exit"], (out, err)
    text = out if code == 1 else err
    assert "Traceback" not in err
    assert len(text.strip().splitlines()) == 1, text
    if code == 2:
        assert text.startswith("gpusched: error: ") and str(path) in text
    else:
        assert text.startswith("infeasible: ")
    for frag in EXPECTED[name]["fragments"]:
        assert frag in text, text


def test_json_check_names_the_job() -> None:
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["check", str(BASE), str(BROKEN / "schedule-nodes" / "placement-split.json"), "--json"])
    assert code == 1
    d = json.loads(buf.getvalue())
    assert d["feasible"] is False and d["job"] == "a"
