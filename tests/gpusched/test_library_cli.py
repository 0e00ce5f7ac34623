"""gpusched library list | get | verify | compare on the command line, exit codes included."""

from __future__ import annotations

import json

import pandas as pd
import paths
import pytest

import instances
from gpusched.cli import main
from instances.library import load_library

BROKEN = paths.DATA / "broken" / "library"
EXPECTED: dict[str, dict] = json.loads((BROKEN / "expected.json").read_text())
BASE = BROKEN / "base"


def test_list(capsys):
    assert main(["library", "list", "--library", str(BASE)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("**Best known values, library gpusched-lib/1 version 2026.12**")
    assert "| small-s0 " in out
    assert main(["library", "list", "--library", str(BASE), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == ["small-s0", "seed-training-heavy-s0"]
    assert rows[0]["provenance"] == "certificate" and rows[1]["bound_status"] == "optimal"
    assert main(["library", "list", "--library", str(BASE), "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("name,family,jobs,gpus,slots,nodes,")


def test_get(tmp_path, capsys):
    out = tmp_path / "i.json"
    sched, cert = tmp_path / "s.json", tmp_path / "c.json"
    assert main(["library", "get", "small-s0", "--library", str(BASE), "-o", str(out),
                 "--schedule", str(sched), "--bound", str(cert)]) == 0
    inst = instances.load(out)
    v = instances.evaluate(inst, instances.load_schedule(sched)).value
    assert v == pytest.approx(load_library(BASE).get("small-s0").best_value)
    assert main(["check-bound", str(out), str(cert), "--schedule", str(sched)]) == 0
    capsys.readouterr()
    assert main(["library", "get", "small-s0", "--library", str(BASE)]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "small-s0"
    assert main(["library", "get", "seed-training-heavy-s0", "--library", str(BASE),
                 "--bound", str(cert), "-o", str(out)]) == 2
    assert "no certificate" in capsys.readouterr().err
    assert main(["library", "get", "nope", "--library", str(BASE)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "nope" in err


@pytest.mark.slow
def test_verify_shipped(capsys):
    assert main(["library", "verify"]) == 0
    out = capsys.readouterr().out
    assert "entries hold" in out and "FAILED" not in out
    assert main(["library", "verify", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["ok"] and rep["entries"] == len(rep["checks"]) >= 55


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_verify_broken(case, capsys):
    path = BROKEN / case
    code = main(["library", "verify", "--library", str(path)])
    captured = capsys.readouterr()
    exp = EXPECTED[case]
    assert code == exp["exit"]
    assert "Traceback" not in captured.err
    if code == 2:
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("gpusched: error: ")
        text = lines[0]
    else:
        failed = [ln for ln in captured.out.splitlines() if ln.startswith("FAILED ")]
        assert len(failed) == 1
        text = failed[0]
    for frag in exp["fragments"]:
        assert frag in text, f"{case}: {frag!r} not in {text}"


def test_compare_on_a_sweep_run_here(tmp_path, capsys):
    """A tiny sweep over library instances (by family and seed, and one node instance by file)."""
    node = next(e for e in load_library().entries if e.name.startswith("medium-s0-n8"))
    f = tmp_path / "node.json"
    assert main(["library", "get", node.name, "-o", str(f)]) == 0
    out = tmp_path / "sweep"
    assert main(["bench", "--families", "small", "--seeds", "2", "--methods", "fifo,list",
                 "--instances", str(f), "-o", str(out), "--workers", "1", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["library", "compare", str(out)]) == 0
    md = capsys.readouterr().out
    assert "| small-s0 " in md and "| small-s1 " in md and f"| {node.name} " in md
    assert main(["library", "compare", str(out), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 6 and not any(r["flags"] for r in rows)
    for r in rows:  # no heuristic beats a best known value proven optimal or exceeds a bound
        assert r["value"] <= r["best_bound"] * (1 + 1e-9)
        assert r["gap_to_best"] >= -1e-9 and r["gap_to_bound"] >= r["gap_to_best"] - 1e-9

    # a value raised above the best known bound: flagged, exit 1
    df = pd.read_csv(out / "results.csv")
    df.loc[0, "value"] = 1e9
    bad = tmp_path / "bad.csv"
    df.to_csv(bad, index=False)
    assert main(["library", "compare", str(bad)]) == 1
    assert "exceeds best known bound" in capsys.readouterr().out


def test_compare_bad_input(tmp_path, capsys):
    assert main(["library", "compare", str(tmp_path)]) == 2
    assert "no results" in capsys.readouterr().err
    pd.DataFrame([{"instance": "x", "method": "m", "value": 1.0}]).to_csv(tmp_path / "r.csv", index=False)
    assert main(["library", "compare", str(tmp_path / "r.csv")]) == 2
    assert "no row is on a library instance" in capsys.readouterr().err
