"""The packing experiment's figure and tables (``gpusched.plots_packing``,
``gpusched.tables.packing``): every policy visible, one x axis, the bound as a line over
the loads it covers; seed counts named, the bound's note only beside a bound row."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from packing_cases import OPENB_NODES_CSV, OPENB_PODS_CSV

from gpusched.plots_packing import POLICY_LINES, bound_line, plot_packing, plot_unallocated
from gpusched.tables.packing import (
    avoidable_view,
    fig9a_view,
    order_view,
    pack_frame,
    seeds_text,
)

CAPACITY = 100_000
LEVELS = (100, 120)


def _curve(offset: float) -> dict[str, list[float]]:
    """Allocated % follows arrived % up to 90 - offset, then stays flat."""
    arrived = np.arange(0, 131, dtype=float)
    alloc = np.minimum(arrived, 90.0 - offset)
    return {"arrived_pct": arrived.tolist(), "allocated_pct": alloc.tolist(),
            "unallocated_pct": (100.0 - alloc).tolist(),
            "fragmentation_pct": (10.0 + offset + 0 * arrived).tolist()}


def _rows(*, bound: bool = True, orders: bool = True, seeds=(0, 1)) -> list[dict]:
    """Hand-made rows of ``pack.csv``: clustering and packing on the very same curve (one
    hides the other unless styled apart); a bound and offline orders for seed 0 only."""
    offsets = {"random": 6.0, "clustering": 2.0, "packing": 2.0, "fgd": 0.0}
    rows = []
    for s in seeds:
        for pol, off in offsets.items():
            off += 0.5 * s
            at = {str(lv): {"allocated_milli": int((90.0 - off) * CAPACITY / 100)} for lv in LEVELS}
            rows.append({"cell": f"{pol}-{s}", "policy": pol, "seed": s, "order": "arrival",
                         "capacity_milli": CAPACITY, "curve": _curve(off), "at_levels": at})
            if orders and s == 0:
                rows.append({"cell": f"{pol}-{s}-gpus", "policy": pol, "seed": s, "order": "gpus",
                             "capacity_milli": CAPACITY, "at_levels": {
                                 str(lv): {"allocated_milli": 94_000} for lv in LEVELS}})
    if bound:
        rows.append({"cell": "bound-0", "policy": "bound", "seed": 0, "order": "arrival",
                     "capacity_milli": CAPACITY, "at_levels": {
                         "100": {"bound_milli": 96_000, "best_milli": 95_500},
                         "120": {"bound_milli": 99_000, "best_milli": 97_000}}})
    return rows


# ---------------------------------------------------------------- the figure
def test_every_policy_is_visible_even_on_the_same_curve() -> None:
    df = pack_frame(_rows())
    fig = plot_packing(df)
    left, right = fig.axes[:2]
    for ax in (left, right):
        lines = {ln.get_label(): ln for ln in ax.get_lines() if not ln.get_label().startswith("_")}
        assert {"random", "clustering", "packing", "fgd"} <= set(lines)
        clustering, packing = lines["clustering"], lines["packing"]
        np.testing.assert_array_equal(clustering.get_ydata(), packing.get_ydata())  # one curve
        styles = {(str(ln.get_linestyle()), ln.get_marker()) for p, ln in lines.items() if p in POLICY_LINES}
        assert len(styles) == len([p for p in lines if p in POLICY_LINES])  # each its own style
        lower, upper = sorted((clustering, packing), key=lambda ln: ln.get_zorder())
        assert lower.get_linewidth() > upper.get_linewidth()  # the lower one shows at the edges
        assert clustering.get_color() != packing.get_color()
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert {"random", "clustering", "packing", "fgd"} <= set(legend)
    assert any(t.startswith("bound") for t in legend)
    plt.close(fig)


def test_both_panels_share_one_x_range() -> None:
    df = pack_frame(_rows())
    fig = plot_packing(df)
    left, right = fig.axes[:2]
    assert left.get_shared_x_axes().joined(left, right)
    assert left.get_xlim() == right.get_xlim() == (60, 130)
    for ax in (left, right):  # no line starts left of the shared range
        assert min(min(ln.get_xdata()) for ln in ax.get_lines()) >= 60
    plt.close(fig)
    fig = plot_packing(df, start=0)
    assert fig.axes[0].get_xlim() == fig.axes[1].get_xlim() == (0, 130)
    plt.close(fig)


def test_the_bound_is_a_line_over_the_loads_it_covers() -> None:
    df = pack_frame(_rows())
    xs, ys, levels = bound_line(df[df["arrived_pct"] >= 60], 60)
    assert list(levels.index) == [100, 120]
    # 60..100 at 100 - bound(100) = 4, 100..120 at 100 - bound(120) = 1
    assert list(zip(xs, ys)) == [(60, 4.0), (100, 4.0), (100, 1.0), (120, 1.0)]
    ax = plot_unallocated(df)
    line = next(ln for ln in ax.get_lines() if ln.get_label().startswith("bound"))
    assert min(line.get_xdata()) == 60 and max(line.get_xdata()) == 120
    assert "computed at 100, 120%" in line.get_label()
    assert ax.collections  # the region below the bound is shaded
    # every policy's curve lies on or above the bound wherever the bound is drawn
    for ln in ax.get_lines():
        if ln.get_label() in ("random", "clustering", "packing", "fgd"):
            x, y = np.asarray(ln.get_xdata()), np.asarray(ln.get_ydata())
            for a, b, lv in ((60, 100, 4.0), (100.5, 120, 1.0)):
                sel = (x >= a) & (x <= b)
                assert (y[sel] >= lv - 1e-9).all()
    plt.close(ax.figure)


def test_no_bound_no_bound_line() -> None:
    df = pack_frame(_rows(bound=False))
    fig = plot_packing(df)
    assert not any(ln.get_label().startswith("bound") for ln in fig.axes[0].get_lines())
    assert not fig.axes[0].collections
    assert not any(t.get_text().startswith("bound") for t in fig.legends[0].get_texts())
    plt.close(fig)


# ---------------------------------------------------------------- the tables
def test_fig9a_names_the_seeds_and_writes_the_bound_note_only_with_a_bound_row() -> None:
    rows = _rows()
    md = fig9a_view(pack_frame(rows), rows).render("markdown")
    assert "100% arrived, ours (2 seeds)" in md and "100% arrived, paper (10 seeds)" in md
    assert "bound (least unallocated any placement leaves; seed 0)" in md
    assert "The bound row" in md and "Best offline packing" in md
    plain = _rows(bound=False)
    view = fig9a_view(pack_frame(plain), plain)
    for text in (view.render("markdown"), view.render("latex")):
        assert "bound" not in text.lower()  # no row, no note
        assert "10 seeds" in text and "2 seeds" in text
    one = _rows(bound=False, seeds=(4,))
    assert "ours (1 seed)" in fig9a_view(pack_frame(one), one).render("markdown")


def test_avoidable_says_its_seeds_differ_from_all_seeds() -> None:
    rows = _rows()
    md = avoidable_view(rows, LEVELS).render("markdown")
    assert "over 1 seed (seed 0)" in md
    assert "not over all 2 seeds run (seeds 0, 1)" in md
    # with a bound on every seed run there is nothing to warn about
    both = [*rows, {**rows[-1], "cell": "bound-1", "seed": 1}]
    md = avoidable_view(both, LEVELS).render("markdown")
    assert "over 2 seeds (seeds 0, 1)" in md and "not over all" not in md


def test_order_table_has_one_load_column_and_one_column_per_order() -> None:
    rows = _rows()
    view = order_view(rows, LEVELS)
    cols = [c.replace("\n", " ") for c in view.table.columns]
    assert cols == ["policy", "load arrived", "arrival order (online)", "gpus order (offline)"]
    assert all(r[1] in ("100%", "120%") for r in view.table.rows)
    md = view.render("markdown")
    assert "over 1 seed (seed 0)" in md


@pytest.mark.parametrize(("seeds", "text"), [([3], "seed 3"), ([0, 1], "seeds 0, 1"),
                                             ([2, 0, 1], "seeds 0-2"), ([0, 2, 5], "seeds 0, 2, 5"),
                                             ([], "no seed")])
def test_seeds_text(seeds, text) -> None:
    assert seeds_text(seeds) == text


def test_pack_writes_no_bound_note_without_bound(tmp_path) -> None:
    """``gpusched pack openb`` without ``--bound``: table.md has no bound row and no note on it."""
    from gpusched.cli import main

    (tmp_path / "nodes.csv").write_text(OPENB_NODES_CSV)
    (tmp_path / "pods.csv").write_text(OPENB_PODS_CSV)
    out = tmp_path / "res"
    assert main(["pack", "openb", "--pods", str(tmp_path / "pods.csv"), "--nodes",
                 str(tmp_path / "nodes.csv"), "--seeds", "0-1", "--policies", "fgd,packing",
                 "-o", str(out), "--workers", "1", "--no-progress"]) == 0
    table = (out / "table.md").read_text()
    assert "| fgd" in table and "bound" not in table.lower()
    assert (out / "pack.png").stat().st_size > 5000
