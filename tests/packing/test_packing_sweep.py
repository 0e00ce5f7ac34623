"""gpusched pack openb on a tiny pod and node list: pack.csv, the tables, resume, parallel."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from packing_cases import OPENB_NODES_CSV, OPENB_PODS_CSV

from gpusched.cli import main
from gpusched.sweep.packing import PackCell, load_pack_rows, run_pack_cells
from gpusched.tables.packing import PACK_COLUMNS

NODES, PODS = OPENB_NODES_CSV, OPENB_PODS_CSV


@pytest.fixture
def data(tmp_path):
    (tmp_path / "nodes.csv").write_text(NODES)
    (tmp_path / "pods.csv").write_text(PODS)
    return ["--pods", str(tmp_path / "pods.csv"), "--nodes", str(tmp_path / "nodes.csv")]


def test_pack_openb_writes_pack_csv_and_the_table(tmp_path, data, capsys):
    out = tmp_path / "res"
    argv = ["pack", "openb", *data, "--seeds", "0-1", "--policies", "fgd,bestfit", "-o", str(out),
            "--workers", "1", "--no-progress"]
    assert main(argv) == 0
    df = pd.read_csv(out / "pack.csv")
    assert tuple(df.columns) == PACK_COLUMNS
    assert set(df["policy"]) == {"fgd", "bestfit"} and set(df["seed"]) == {0, 1}
    assert df["arrived_pct"].between(0, 130).all()
    assert (df["unallocated_pct"] + df["allocated_pct"]).round(6).eq(100).all()
    assert df["bound_pct"].isna().all()
    table = (out / "table.md").read_text()
    assert "| fgd" in table and "4.77" in table  # the paper's column
    assert (out / "table.tex").read_text().count("\\toprule") == 1
    assert "Median unallocated GPU %" in capsys.readouterr().out
    # every placement stored is checked by check-pack against its stored packing
    for pl in sorted((out / "placements").glob("*.json")):
        seed = pl.name.split("-s")[1].split("--")[0]
        packing = out / "packings" / f"openb-pods-s{seed}.json"
        assert main(["check-pack", str(packing), str(pl)]) == 0
    # resume: nothing runs again; a lost cell runs alone
    rows = load_pack_rows(out)
    assert len(rows) == 4
    assert main(argv) == 0
    assert "0 cells run" in capsys.readouterr().err
    victim = sorted((out / "cells").glob("fgd-*.json"))[0]
    before = json.loads(victim.read_text())
    victim.unlink()
    assert main(argv) == 0
    assert "1 cells run" in capsys.readouterr().err
    after = json.loads(victim.read_text())
    assert after["curve"] == before["curve"]


def test_parallel_equals_serial_and_orders(tmp_path, data):
    kw = {"pods": data[1], "nodes": data[3]}
    cells = [PackCell(pol, s, **kw) for pol in ("dotprod", "random") for s in (0, 1)]
    cells += [PackCell("bestfit", 0, order="largest", levels=(100, 120), **kw)]
    a = run_pack_cells(cells, tmp_path / "a", workers=1, progress=False)
    b = run_pack_cells(cells, tmp_path / "b", workers=2, progress=False)
    assert a.ran == b.ran == 5 and a.errors == b.errors == 0
    ra = {r["cell"]: r for r in load_pack_rows(tmp_path / "a")}
    rb = {r["cell"]: r for r in load_pack_rows(tmp_path / "b")}
    assert ra.keys() == rb.keys()
    for k in ra:
        assert ra[k].get("curve") == rb[k].get("curve")
        def figures(r):
            return {lv: {f: v for f, v in x.items() if f != "runtime_s"}
                    for lv, x in r["at_levels"].items()}

        assert figures(ra[k]) == figures(rb[k])
    offline = next(r for r in ra.values() if r["order"] == "largest")
    assert set(offline["at_levels"]) == {"100", "120"}


def test_a_failing_cell_is_an_error_row_and_runs_again(tmp_path, data):
    cell = PackCell("nope", 0, pods=data[1], nodes=data[3])  # place() refuses the policy
    s = run_pack_cells([cell], tmp_path / "r", workers=1, progress=False)
    assert s.errors == 1
    assert load_pack_rows(tmp_path / "r") == []
    assert load_pack_rows(tmp_path / "r", errors=True)[0]["status"] == "error"


def test_bound_cells_give_bound_pct_and_the_avoidable_table(tmp_path, data):
    from instances.packing import PackingCertificate, check_packing_bound, load_packing

    out = tmp_path / "res"
    assert main(["pack", "openb", *data, "--seeds", "0-0", "--policies", "fgd,dotprod", "--bound",
                 "--levels", "100,120", "--bound-time", "20", "--orders", "largest", "-o",
                 str(out), "--workers", "1", "--no-progress"]) == 0
    df = pd.read_csv(out / "pack.csv")
    at = df[df["arrived_pct"].isin([100, 120])]
    assert at["bound_pct"].notna().all()
    # the bound is never below what a policy achieved at the same arrived point
    rows = load_pack_rows(out)
    bound = next(r for r in rows if r["policy"] == "bound")
    for r in rows:
        if r["policy"] not in ("bound",):
            for lv in ("100", "120"):
                assert r["at_levels"][lv]["allocated_milli"] <= bound["at_levels"][lv]["bound_milli"]
    for lv in ("100", "120"):
        b = bound["at_levels"][lv]
        assert b["best_milli"] <= b["bound_milli"]
        assert b["checked_bound_milli"] <= b["bound_milli"] + 1
    assert (out / "avoidable.md").is_file() and (out / "orders.md").is_file()
    assert "bound (least unallocated" in (out / "table.md").read_text()
    cert = json.loads(next((out / "bounds").glob("*-100.json")).read_text())["certificate"]
    packing = load_packing(next((out / "packings").glob("*.json")))
    head = packing.head(bound["at_levels"]["100"]["pods"])
    assert check_packing_bound(head, PackingCertificate.from_dict(cert)) <= \
        bound["at_levels"]["100"]["bound_milli"] + 1


def test_a_module_rules_cells_run_again_once_its_file_changes(tmp_path, monkeypatch) -> None:
    import sys

    from gpusched.sweep.packing import PackCell

    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine_rule_key.py").write_text(
        "def worst(view, job):\n    return view.gpus.astype(float)\n")
    before = PackCell("mine_rule_key:worst", 0).key
    assert PackCell("mine_rule_key:worst", 0).key == before  # stable while the file is
    (tmp_path / "mine_rule_key.py").write_text(
        "def worst(view, job):\n    return -view.gpus.astype(float)\n")
    sys.modules.pop("mine_rule_key", None)
    assert PackCell("mine_rule_key:worst", 0).key != before
    sys.modules.pop("mine_rule_key", None)
