"""Every method under the ``flow`` objective (section 15): the figure it reports is the checker's
``F`` (recomputed here from its definition), never below the optimum that brute force finds, and
every bound it reports is a lower bound; the Lagrangian certificate under flow; ``wspt`` and
``sjf``; the objective on the command line.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from brute import brute_force, flow_of, tiny_instance
from brute_nodes import brute_force_nodes, tiny_node_instance

import gpusched
import heuristics
import instances
import milp
from heuristics.rules import order_by
from instances import Instance, Job

TIMED = {"best", "lns", "sampling", "local-search", "lagrangian"}
EXACT = ("milp", "cpsat", "milp-pulp")


def cases() -> list[tuple[Instance, float]]:
    out = []
    for seed in range(3):
        inst = tiny_instance(seed, n=6).replace(objective="flow")
        out.append((inst, brute_force(inst)[0]))
        inst = tiny_node_instance(seed, n=5, shape=(2, 2)).replace(objective="flow")
        out.append((inst, brute_force_nodes(inst)[0]))
    return out


CASES = cases()


@pytest.mark.parametrize("method", sorted(heuristics.METHODS) + list(EXACT))
def test_every_method_reports_the_checkers_flow(method: str) -> None:
    for inst, best in CASES:
        kw = {"time_limit": 2.0} if method in TIMED or method in EXACT else {}
        res = gpusched.solve(inst, method, **kw)
        assert res.objective == "flow"
        m = instances.evaluate(inst, res.schedule)
        assert m.value == pytest.approx(res.value, rel=1e-12)
        assert res.value == pytest.approx(flow_of(inst, dict(res.schedule.starts)), rel=1e-9)
        assert res.value >= best - 1e-9 * best  # no schedule has less flow than the optimum
        if res.bound is not None:
            assert res.bound <= best + 1e-9 * best, (method, inst.name, res.bound, best)
        if method in EXACT:
            assert res.value == pytest.approx(best, rel=1e-6), (method, inst.name)


def test_under_value_the_same_schedules_are_judged_by_value() -> None:
    # a wrong objective fails: the same instance and method report V under value, F under flow
    inst = tiny_instance(5, n=6)
    v = gpusched.solve(inst, "list")
    f = gpusched.solve(inst.replace(objective="flow"), "list")
    assert v.objective == "value" and v.value == pytest.approx(v.metrics.batch_value)
    assert f.value == pytest.approx(f.metrics.flow_hours) != pytest.approx(f.metrics.batch_value)
    assert v.metrics.flow_hours == pytest.approx(flow_of(inst, dict(v.schedule.starts)))


@pytest.mark.parametrize("k", range(len(CASES)))
def test_the_lagrangian_lower_bound_and_its_certificate(k: int) -> None:
    inst, best = CASES[k]
    b = milp.bound(inst, "lagrangian", time_limit=2.0)
    low = b.reported(inst)
    assert low <= best + 1e-9 * best  # a lower bound: never above a feasible (optimal) flow
    cert = b.certificate(inst)
    assert cert.value == low
    ok, recomputed = instances.check_bound(inst, cert)
    assert ok and recomputed <= best + 1e-9 * best
    # a stated lower bound above the flow of a feasible schedule is refused
    _, schedule = brute_force(inst) if not inst.has_nodes else brute_force_nodes(inst)
    bad = instances.BoundCertificate(cert.instance, cert.method, best * 1.5 + 1.0,
                                     cert.multipliers, {})
    with pytest.raises(ValueError, match=r"above the value .* cannot be a lower bound"):
        instances.check_bound(inst, bad, schedule)
    assert not instances.check_bound(inst, bad)[0]


def test_wspt_and_sjf_orders() -> None:
    inst = Instance("r", 4, 10, (), (
        Job("a", 1, 4, 1.0), Job("b", 1, 2, 1.0), Job("c", 1, 4, 3.0), Job("d", 1, 1, 0.5)))
    # w / p: a 0.25, b 0.5, c 0.75, d 0.5 (b before d: the built-ins break ties by w)
    assert order_by(inst, "wspt").tolist() == [2, 1, 3, 0]
    assert order_by(inst, "sjf").tolist() == order_by(inst, "spt").tolist() == [3, 1, 2, 0]
    res = heuristics.solve(inst, "list", rule="sjf")
    assert res.params["rule"] == "sjf"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpusched", *args], capture_output=True,
                          text=True, check=False)


def test_the_command_line_under_flow(tmp_path) -> None:
    inst, best = CASES[0]
    path = tmp_path / "flow.json"
    instances.save(inst, path)
    out = run("solve", str(path), "--method", "milp", "--time-limit", "5", "--json")
    assert out.returncode == 0, out.stderr
    row = json.loads(out.stdout)
    assert row["objective"] == "flow" and row["upper_bound"] is None
    assert row["value"] == pytest.approx(best) and row["bound"] <= row["value"] + 1e-9
    assert row["mean_jct_hours"] > 0 and row["jobs_censored"] >= 0
    text = run("solve", str(path), "--method", "list")
    assert text.returncode == 0 and "flow " in text.stdout and "mean JCT" in text.stdout
    cert = tmp_path / "b.json"
    assert run("bound", str(path), "-o", str(cert)).returncode == 0
    check = run("check-bound", str(path), str(cert))
    assert check.returncode == 0 and "lower bound" in check.stdout
    data = json.loads(path.read_text())
    data["objective"] = "jct"
    path.write_text(json.dumps(data))
    bad = run("solve", str(path), "--method", "list")
    assert bad.returncode == 2 and "objective" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.stderr


def test_a_job_not_run_is_censored_in_the_mean_jct() -> None:
    inst, _ = CASES[0]
    res = heuristics.solve(inst, "fifo")
    starts = res.schedule.to_array(inst)
    end = np.where(starts >= 0, starts, inst.horizon) + inst.durations
    assert res.metrics.mean_jct_hours == pytest.approx(
        float(np.mean(end - inst.releases)) * inst.slot_hours)
    assert res.metrics.jobs_censored == int((starts < 0).sum())
