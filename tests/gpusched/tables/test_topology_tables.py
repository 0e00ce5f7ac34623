"""The topology view: flat twins paired with node rows, the price of topology, fragmentation.

Figures worked out by hand in the comments; then a small real sweep through the CLI.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest
from table_rows import row

from gpusched import tables
from gpusched.cli import main


def _r(instance, method, value, *, shape="", seed=0, ub=None, status="feasible", frag=0):
    out = row(instance, method, value, 0.5, ub=ub, status=status, seed=seed)
    out.update(node_gpus=shape, fragmentation=frag)
    return out


def hand_rows() -> pd.DataFrame:
    # A (seed 0): flat fifo 10, alloc 20, milp 22 proven; on nodes fifo 8 (5 GPU-slots
    # stranded of 100), alloc 18, no node bound: the node optimum is in [18, 22].
    # B (seed 1): flat fifo 10, alloc 20, milp 21 proven; on nodes fifo 9, alloc 18, a node
    # milp 19 proven: price exactly 2.
    return pd.DataFrame([
        _r("A", "fifo", 10.0), _r("A", "alloc", 20.0),
        _r("A", "milp", 22.0, ub=22.0, status="optimal"),
        _r("A-node_gpus8", "fifo", 8.0, shape="8", frag=5), _r("A-node_gpus8", "alloc", 18.0, shape="8"),
        _r("B", "fifo", 10.0, seed=1), _r("B", "alloc", 20.0, seed=1),
        _r("B", "milp", 21.0, ub=21.0, status="optimal", seed=1),
        _r("B-node_gpus8", "fifo", 9.0, shape="8", seed=1),
        _r("B-node_gpus8", "alloc", 18.0, shape="8", seed=1, frag=1),
        _r("B-node_gpus8", "milp", 19.0, ub=19.0, status="optimal", shape="8", seed=1),
    ])


def test_topology_frame_by_hand() -> None:
    per = tables.topology_frame(hand_rows(), allocator="alloc").set_index("instance")
    a, b = per.loc["A-node_gpus8"], per.loc["B-node_gpus8"]
    assert a["gain_flat_pct"] == pytest.approx(100.0) and a["gain_nodes_pct"] == pytest.approx(125.0)
    assert a["gain_flat"] == 10.0 and a["gain_nodes"] == 10.0
    # A: flat optimum 22 (proven); node optimum in [18, 22] (the flat bound): price in [0, 4]
    assert (a["flat_low"], a["flat_high"], a["nodes_low"], a["nodes_high"]) == (22, 22, 18, 22)
    assert (a["price_low"], a["price_high"]) == (0.0, 4.0) and not a["exact"]
    assert a["price_high_pct"] == pytest.approx(100 * 4 / 22)
    assert a["frag_base_pct"] == 5.0 and a["frag_alloc_pct"] == 0.0
    assert a["gap_nodes_pct"] == pytest.approx(100 * 4 / 22)
    # B: 21 - 19 = 2, both proven
    assert (b["price_low"], b["price_high"]) == (2.0, 2.0) and b["exact"]
    assert b["price_low_pct"] == pytest.approx(100 * 2 / 21)
    assert b["gap_nodes_pct"] == pytest.approx(100 * 1 / 19) and b["frag_alloc_pct"] == 1.0


def test_topology_view_by_hand() -> None:
    v = tables.view(hand_rows(), "topology", allocator="alloc")
    (rec,) = v.frame.to_dict("records")
    assert rec["n"] == 2 and rec["exact"] == 1
    assert rec["gain_nodes_pct_mean"] == pytest.approx((125.0 + 100.0) / 2)
    assert rec["kept_pct"] == pytest.approx(100 * (10 + 9) / 2 / 10)
    assert rec["price_low_pct_mean"] == pytest.approx(100 * 2 / 21 / 2)
    assert rec["price_high_pct_mean"] == pytest.approx((100 * 4 / 22 + 100 * 2 / 21) / 2)
    text = v.render("markdown")
    assert "Price of topology" in text and " to " in text and "1/2" in text
    assert "Caution" in text  # two seeds
    assert v.render("latex").count("\\\\") >= 2


def test_allocator_stand_in_and_no_node_rows() -> None:
    df = hand_rows()
    v = tables.topology_view(df.assign(method=df["method"].replace("alloc", "list")))
    assert any("'list' stands in" in n for n in v.table.notes)
    flat = df[df["node_gpus"] == ""]
    with pytest.raises(ValueError, match="topology view needs runs on nodes"):
        tables.topology_view(flat, allocator="alloc")
    # rows from before the column existed are flat
    with pytest.raises(ValueError, match="no rows of 'fifo' on an instance with nodes"):
        tables.topology_view(flat.drop(columns=["node_gpus"]), allocator="alloc")


def test_node_row_without_flat_twin() -> None:
    df = hand_rows()
    per = tables.topology_frame(df[~df["instance"].isin(["B"])], allocator="alloc")
    b = per.set_index("instance").loc["B-node_gpus8"]
    assert math.isnan(b["gain_flat_pct"]) and math.isnan(b["price_low"])
    assert math.isnan(b["price_high"])  # no flat bound: the price has no upper side


@pytest.mark.slow
def test_topology_table_from_a_real_sweep(tmp_path, capsys) -> None:
    out = str(tmp_path / "r")
    common = ["--families", "hc-training-heavy", "--seeds", "2", "--workers", "1", "--no-progress",
              "-o", out]
    assert main(["bench", *common, "--methods", "fifo,list,milp", "--time-limit", "5"]) == 0
    assert main(["bench", *common, "--methods", "fifo,list",
                 "-f", "hc-training-heavy.node_gpus=[4,4]"]) == 0
    capsys.readouterr()
    assert main(["table", out, "--view", "topology", "--allocator", "list", "--format", "csv"]) == 0
    frame = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    assert frame["shape"].astype(str).tolist() == ["4,4"] and frame["n"].tolist() == [2]
    from gpusched.sweep import load_rows

    rows = load_rows(out)
    assert set(rows["node_gpus"].fillna("").astype(str)) == {"", "4,4"}
    per = tables.topology_frame(rows, allocator="list")
    assert (per["price_low"] >= 0).all() and (per["price_high"] >= per["price_low"]).all()
    assert (per["nodes_high"] >= per["nodes_low"] - 1e-9).all()


def test_reports_write_the_topology_view_only_with_node_rows(tmp_path) -> None:
    from gpusched.report import write_tables

    df = hand_rows()
    assert tables.has_node_rows(df) and not tables.has_node_rows(df[df["node_gpus"] == ""])
    flat = write_tables(df[df["node_gpus"] == ""], tmp_path / "flat", baseline="fifo",
                        allocator="alloc", views=("topology",))
    assert flat == []
    both = write_tables(df, tmp_path / "both", allocator="alloc", views=("topology",))
    assert sorted(p.name for p in both) == ["topology.csv", "topology.md", "topology.tex"]
