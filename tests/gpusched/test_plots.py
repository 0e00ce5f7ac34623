"""Plots: a valid GPU assignment for the Gantt chart, non-empty image files, profile math."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from matplotlib.patches import Rectangle

import gpusched
import instances
from gpusched import bench, plots
from gpusched.cli import main
from instances import Instance, Job, Schedule, Service

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _check_assignment(inst: Instance, sched: Schedule) -> None:
    gpus = plots.assign_gpus(inst, sched)
    assert set(gpus) == set(sched.starts)
    busy = np.zeros((inst.num_gpus, inst.horizon), dtype=np.int64)
    for name, s in sched.starts.items():
        job = inst.jobs[inst.job_index[name]]
        assert len(gpus[name]) == job.gpus == len(set(gpus[name]))
        assert all(0 <= g < inst.num_gpus for g in gpus[name])
        busy[list(gpus[name]), s : s + job.duration] += 1
    assert busy.max(initial=0) <= 1  # no GPU holds two jobs in a slot
    # inference fits on the GPUs left free in every slot
    free = (busy == 0).sum(axis=0)
    assert (np.asarray(inst.total_demand) <= free).all()


@pytest.mark.parametrize("family", ["small", "seed-training-heavy", "hc-multi-service",
                                    "hc-deadlines"])
@pytest.mark.parametrize("method", ["fifo", "fifo-curve"])
def test_gantt_assignment_never_overlaps(family, method):
    for seed in range(4):
        inst = instances.generate(family, seed=seed)
        _check_assignment(inst, gpusched.solve(inst, method).schedule)


def test_assignment_keeps_a_job_on_adjacent_gpus():
    # a and e hold a GPU each for the whole horizon, b one until slot 2; d needs 2 GPUs from
    # slot 2: the lowest free GPUs at its start would be b's and the last one, not adjacent;
    # the chart puts e on the last GPU instead, so that d is one block.
    jobs = (Job("a", 1, 4), Job("b", 1, 2), Job("e", 1, 4), Job("d", 2, 2, release=2))
    inst = Instance("t", 4, 4, (), jobs)
    sched = Schedule("t", {"a": 0, "b": 0, "e": 0, "d": 2})
    _check_assignment(inst, sched)
    gpus = plots.assign_gpus(inst, sched)
    assert gpus["d"] == (1, 2) and plots.split_jobs(inst, gpus) == []
    ax = plots.plot_gantt(inst, sched)
    bars = [p for p in ax.patches if p.get_width() == 2 and p.get_x() == 2]
    assert len(bars) == 1
    assert ax.get_ylabel() == "GPU" and "pieces" not in ax.get_title()
    over = Instance("u", 2, 2, (), (Job("a", 2, 2), Job("b", 1, 1)))
    with pytest.raises(ValueError, match="needs 1 GPUs"):
        plots.assign_gpus(over, Schedule("u", {"a": 0, "b": 0}))


def _no_block_drawing() -> tuple[Instance, Schedule]:
    """4 GPUs where no drawing keeps every job on adjacent rows: g and h need the rows that
    d and i (then e and f) free, and those pairs cannot both be adjacent (see the test)."""
    spec = [("a", 2, 0, 2), ("b", 2, 1, 2), ("c", 1, 2, 2), ("d", 1, 2, 3), ("e", 1, 3, 2),
            ("f", 1, 3, 4), ("i", 1, 4, 3), ("g", 2, 5, 3), ("h", 2, 7, 1)]
    jobs = tuple(Job(n, g, p, release=s) for n, g, s, p in spec)
    return Instance("nb", 4, 8, (), jobs), Schedule("nb", {n: s for n, _, s, _ in spec})


def test_contiguous_rows_none_when_no_drawing_exists_then_jobs_in_pieces():
    # a [0,2) and b [1,3) take two blocks of two; c, d take a's rows, e, f take b's; i takes
    # c's row. g (from 5) needs d's and e's rows adjacent: d and e sit where the blocks meet;
    # then c (so i) and f are at the two ends, and h (from 7) needs i's and f's rows.
    inst, sched = _no_block_drawing()
    instances.evaluate(inst, sched)
    (_, _, n, items), = plots._band_items(inst, sched)
    assert plots.contiguous_rows(items, n) is None
    _check_assignment(inst, sched)
    gpus = plots.assign_gpus(inst, sched)
    split = plots.split_jobs(inst, gpus)
    assert len(split) == 1  # the fallback keeps every other job on adjacent rows
    ax = plots.plot_gantt(inst, sched)
    assert ax.get_ylabel().replace("\n", " ") == "GPU count (rows are not GPU identities)"
    title = ax.get_title().replace("\n", " ")
    assert "1 job(s) drawn in pieces" in title and "rows are not GPU identities" in title
    bars = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_x() == sched.starts[split[0]]
            and p.get_width() == inst.jobs[inst.job_index[split[0]]].duration]
    assert len(bars) == 2


def _brute_force_blocks(items, n) -> bool:
    """Whether some choice of one block of rows per item holds no row twice at once."""
    from itertools import product

    horizon = max(e for _, _, e, _ in items)
    for offs in product(*(range(n - c + 1) for *_, c in items)):
        grid = np.zeros((n, horizon), dtype=np.int64)
        for o, (_, s, e, c) in zip(offs, items):
            grid[o : o + c, s:e] += 1
        if grid.max() <= 1:
            return True
    return False


def test_contiguous_rows_agrees_with_brute_force():
    rng = np.random.default_rng(5)
    seen = {True: 0, False: 0}
    for _ in range(300):
        n, items, load = 4, [], np.zeros(12, dtype=np.int64)
        for k in range(int(rng.integers(3, 7))):
            s, p, c = int(rng.integers(0, 6)), int(rng.integers(1, 4)), int(rng.integers(1, 4))
            if (load[s : s + p] + c <= n).all():
                load[s : s + p] += c
                items.append((f"j{k}", s, s + p, c))
        items.sort(key=lambda it: (it[1], it[0]))
        got = plots.contiguous_rows(items, n)
        exists = _brute_force_blocks(items, n)
        assert (got is not None) == exists, items
        seen[exists] += 1
        if got is not None:
            grid = np.zeros((n, 12), dtype=np.int64)
            for rows, (_, s, e, c) in zip(got, items):
                assert len(rows) == c and list(rows) == list(range(rows[0], rows[0] + c))
                grid[list(rows), s:e] += 1
            assert grid.max() <= 1
    assert seen[True] > 0


@pytest.mark.parametrize(("family", "seed", "method"), [
    ("hc-mixed", 0, "list"), ("hc-mixed", 1, "list"), ("hc-multi-service", 0, "list"),
    ("hc-bursty", 3, "list"), ("hc-mixed", 1, "fifo"), ("medium", 0, "fifo"),
])
def test_gantt_rows_of_each_job_are_contiguous(family, seed, method):
    # schedules whose lowest-free drawing split jobs over non-adjacent rows (train-4 of
    # hc-mixed s0 on rows 0-1 and 6-7): each job is now one block of rows, one bar
    import matplotlib.pyplot as plt

    inst = instances.generate(family, seed=seed)
    sched = gpusched.solve(inst, method).schedule
    _check_assignment(inst, sched)
    gpus = plots.assign_gpus(inst, sched)
    for name, rows in gpus.items():
        assert sorted(rows) == list(range(min(rows), min(rows) + len(rows))), name
    assert plots.split_jobs(inst, gpus) == []
    ax = plots.plot_gantt(inst, sched, labels=False)
    bars = [p for p in ax.patches if isinstance(p, Rectangle) and tuple(p.get_edgecolor()) == (0, 0, 0, 1)]
    assert len(bars) == len(sched.starts)  # one bar per job
    assert ax.get_ylabel() == "GPU"
    plt.close("all")


def test_contiguous_rows_on_nodes_stay_in_each_node():
    # the flat example above on node n1 (rows 2-5) beside n0: d is one block of n1's rows;
    # big holds both whole nodes, one block on each
    nodes = (instances.Node("n0", 2), instances.Node("n1", 4))
    jobs = (Job("a", 1, 4), Job("b", 1, 2), Job("e", 1, 4), Job("d", 2, 2, release=2),
            Job("big", 6, 2, release=4))
    inst = Instance("nd", 6, 6, (), jobs, nodes=nodes)
    on_n1 = {"n1": 1}
    sched = Schedule("nd", {"a": 0, "b": 0, "e": 0, "d": 2, "big": 4},
                     {"a": on_n1, "b": on_n1, "e": on_n1, "d": {"n1": 2}, "big": {"n0": 2, "n1": 4}})
    instances.evaluate(inst, sched)
    _check_node_assignment(inst, sched)
    gpus = plots.assign_gpus(inst, sched)
    assert gpus["d"] == (3, 4) and gpus["big"] == (0, 1, 2, 3, 4, 5)
    assert plots.split_jobs(inst, gpus) == []


def _png_ok(path) -> None:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC and len(data) > 5000


@pytest.mark.slow
def test_schedule_plots_write_png_and_pdf(tmp_path):
    inst = Instance(
        "demo", 6, 12, (Service("chat", 2.0, (1, 1, 2, 3, 4, 4, 3, 2, 2, 1, 1, 1)),),
        (Job("train-1", 2, 5, kind="training"), Job("binf-1", 1, 3, kind="batch_inference"),
         Job("quant-1", 1, 2, kind="quantization", release=4)),
    )
    for method in ("fifo", "fifo-curve"):
        res = gpusched.solve(inst, method)
        for fn in (plots.plot_gantt, plots.plot_utilization):
            ax = fn(inst, res.schedule, reservation=res.reservation)
            paths = plots.save_figure(ax, tmp_path / f"{fn.__name__}-{method}")
            assert [p.suffix for p in paths] == [".png", ".pdf"]
            _png_ok(paths[0])
            assert paths[1].read_bytes()[:5] == b"%PDF-"


def test_plot_on_given_axes():
    import matplotlib.pyplot as plt

    inst = instances.generate("small", seed=1)
    sched = gpusched.solve(inst, "fifo").schedule
    fig, axes = plt.subplots(1, 2)
    assert plots.plot_gantt(inst, sched, ax=axes[0]) is axes[0]
    assert plots.plot_utilization(inst, sched, ax=axes[1]) is axes[1]
    # one bar per slot and layer (inference, batch, idle), each as tall as the data
    heights = [p.get_height() for p in axes[1].patches]
    assert len(heights) == 3 * inst.horizon
    assert sum(heights) == pytest.approx(inst.num_gpus * inst.horizon)
    plt.close(fig)


def _rows() -> pd.DataFrame:
    return pd.DataFrame([
        {"instance": "A", "method": "x", "status": "feasible", "value": 10.0, "runtime_s": 1.0},
        {"instance": "A", "method": "y", "status": "feasible", "value": 5.0, "runtime_s": 0.5},
        {"instance": "B", "method": "x", "status": "feasible", "value": 0.0, "runtime_s": 2.0},
        {"instance": "B", "method": "y", "status": "feasible", "value": 8.0, "runtime_s": 4.0},
        {"instance": "C", "method": "x", "status": "feasible", "value": 3.0, "runtime_s": 1.0},
        {"instance": "C", "method": "y", "status": "error", "value": math.nan, "runtime_s": 9.0},
    ])


def test_performance_profile_ratios_by_hand():
    r = plots.performance_profile(_rows(), "value")
    np.testing.assert_allclose(r["x"], [1.0, np.inf, 1.0])  # value 0 where 8 was possible
    np.testing.assert_allclose(r["y"], [2.0, 1.0, np.inf])  # error: never within any tau
    t = plots.performance_profile(_rows(), "runtime_s")
    np.testing.assert_allclose(t["x"], [2.0, 1.0, 1.0])
    np.testing.assert_allclose(t["y"], [1.0, 2.0, np.inf])


@pytest.mark.slow
def test_sweep_plots_and_cli(tmp_path, capsys):
    out = tmp_path / "res"
    assert main(["bench", "--families", "small,hc-bursty", "--seeds", "2",
                 "--methods", "fifo,fifo-curve", "-o", str(out), "--workers", "1",
                 "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["plot", str(out), "-o", str(tmp_path / "plots"),
                 "--methods", "fifo,fifo-curve"]) == 0
    written = capsys.readouterr().out.split()
    names = {p.split("/")[-1] for p in written}
    assert {"profile-value.png", "profile-runtime.png"} <= names
    assert sum(n.startswith("gantt-") and n.endswith(".png") for n in names) == 2
    for p in written:
        if p.endswith(".png"):
            _png_ok(tmp_path / "plots" / p.split("/")[-1])
    # one schedule from files
    df = bench.load_rows(out)
    row = df.iloc[0]
    assert main(["plot", str(out / row["instance_file"]), str(out / row["schedule_file"]),
                 "-o", str(tmp_path / "one"), "--reservation", "peak"]) == 0
    _png_ok(tmp_path / "one-gantt.png")
    _png_ok(tmp_path / "one-utilization.png")
    assert main(["plot", str(out / row["instance_file"]), "-o", str(tmp_path / "x")]) == 2


def _tied_rows() -> pd.DataFrame:
    """``best`` and ``milp`` equal on every instance; ``fifo`` behind."""
    rows = []
    for k, (v_best, v_fifo) in enumerate([(10.0, 6.0), (8.0, 8.0), (5.0, 2.0), (7.0, 5.5)]):
        for method, v in (("fifo", v_fifo), ("best", v_best), ("milp", v_best)):
            rows.append({"instance": f"I{k}", "method": method, "status": "feasible",
                         "value": v, "runtime_s": 1.0 + k})
    return pd.DataFrame(rows)


def test_profile_curves_that_coincide_stay_visible():
    import matplotlib.pyplot as plt

    ax = plots.plot_performance_profile(_tied_rows())
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    assert {"best", "milp", "fifo"} <= set(lines)
    best, milp = lines["best"], lines["milp"]
    np.testing.assert_array_equal(best.get_xydata(), milp.get_xydata())  # the same curve
    # ... drawn so that both show: another style and marker, the lower one wider
    assert (best.get_linestyle(), best.get_marker()) != (milp.get_linestyle(), milp.get_marker())
    assert best.get_color() != milp.get_color()
    lower, upper = sorted((best, milp), key=lambda ln: ln.get_zorder())
    assert lower.get_linewidth() > upper.get_linewidth()
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"best", "milp", "fifo"} <= set(legend)
    plt.close(ax.figure)


@pytest.mark.parametrize("tau_max", [1.05, 1.3, 2.0, 7.5, 40.0, 1e5])
def test_profile_log_axis_has_labelled_ticks(tau_max):
    ticks = plots.profile_ticks(tau_max)
    assert 3 <= len(ticks) <= 8
    assert ticks[0] == 1.0 and ticks[-1] <= tau_max and ticks == sorted(set(ticks))
    gaps = np.diff(np.log(ticks))
    assert gaps.min() >= np.log(tau_max) / 7 - 1e-12  # labels do not crowd


def test_profile_axis_uses_those_ticks():
    import matplotlib.pyplot as plt

    ax = plots.plot_performance_profile(_tied_rows())
    ax.figure.canvas.draw()
    lo, hi = ax.get_xlim()
    shown = [t for t in ax.get_xticks() if lo <= t <= hi]
    labels = [lab.get_text() for lab in ax.get_xticklabels() if lab.get_text()]
    assert len(shown) >= 3 and len(labels) >= 3
    assert shown == plots.profile_ticks(hi)
    assert all(lab.replace(".", "", 1).isdigit() for lab in labels)  # "1.5", not "$2^{0.58}$"
    plt.close(ax.figure)


def _texts(ax):
    yield from ax.texts
    yield from ax.get_xticklabels()
    yield from ax.get_yticklabels()
    legend = ax.get_legend()
    if legend is not None:
        yield from legend.get_texts()


def test_gantt_labels_are_readable():
    import matplotlib.pyplot as plt

    inst = instances.generate("hc-multi-service", seed=1)
    sched = gpusched.solve(inst, "list").schedule
    gantt = plots.plot_gantt(inst, sched)
    gantt.figure.canvas.draw()
    assert gantt.texts  # job labels are drawn
    sizes = [t.get_fontsize() for t in _texts(gantt) if t.get_text()]
    assert sizes and min(sizes) >= 8
    plt.close("all")


@pytest.mark.parametrize(("family", "seed"), [("small", 1), ("hc-mixed", 1)])
def test_utilization_ticks_are_whole_gpus(family, seed):
    import matplotlib.pyplot as plt

    inst = instances.generate(family, seed=seed)
    sched = gpusched.solve(inst, "list").schedule
    util = plots.plot_utilization(inst, sched, reservation="peak")
    util.figure.canvas.draw()
    ticks = [t for t in util.get_yticks() if 0 <= t <= inst.num_gpus]
    assert len(ticks) >= 3 and all(float(t).is_integer() for t in ticks), ticks
    assert min(t.get_fontsize() for t in _texts(util) if t.get_text()) >= 8
    plt.close("all")


# ---------------------------------------------------------------- nodes
def _check_node_assignment(inst: Instance, sched: Schedule) -> None:
    _check_assignment(inst, sched)
    gpus = plots.assign_gpus(inst, sched)
    rows = {name: range(first, first + n) for name, first, n in plots.node_rows(inst)}
    for name, held in gpus.items():
        want = {k: c for k, c in sched.placement[name].items() if c > 0}
        got = {k: sum(g in r for g in held) for k, r in rows.items()}
        assert {k: c for k, c in got.items() if c} == want, name


@pytest.mark.parametrize("shape", [8, "openb", [2, 2, 2, 2]])
@pytest.mark.parametrize("method", ["fifo", "fifo-curve", "list"])
def test_gantt_assignment_on_nodes_keeps_each_job_on_its_nodes(shape, method):
    for family in ("hc-training-heavy", "hc-multi-service"):
        for seed in range(3):
            try:
                inst = instances.generate(family, seed=seed, node_gpus=shape)
            except ValueError:  # [2, 2, 2, 2] is 8 GPUs: not hc-multi-service's 16
                continue
            _check_node_assignment(inst, gpusched.solve(inst, method).schedule)


def test_node_rows():
    inst = instances.generate("hc-mixed", seed=3, node_gpus=[8, 2, 2])
    assert plots.node_rows(inst) == [("node-0", 0, 8), ("node-1", 8, 2), ("node-2", 10, 2)]
    assert plots.node_rows(instances.generate("hc-mixed", seed=3)) == [("pool", 0, 12)]


def _two_nodes() -> tuple[Instance, Schedule]:
    """Nodes n0:2, n1:2; big (4 GPUs) holds both nodes in slots 0-1, a then b on n1."""
    inst = Instance("n", 4, 4, (), (Job("big", 4, 2), Job("a", 1, 2, release=2),
                                    Job("b", 2, 1, release=2)),
                    nodes=(instances.Node("n0", 2), instances.Node("n1", 2)))
    sched = Schedule("n", {"big": 0, "a": 2, "b": 3}, {"big": {"n0": 2, "n1": 2},
                                                       "a": {"n1": 1}, "b": {"n0": 2}})
    instances.evaluate(inst, sched)
    return inst, sched


def test_gantt_draws_one_band_per_node():
    inst, sched = _two_nodes()
    gpus = plots.assign_gpus(inst, sched)
    assert gpus == {"big": (0, 1, 2, 3), "a": (2,), "b": (0, 1)}
    ax = plots.plot_gantt(inst, sched)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["n0 (2)", "n1 (2)"]
    assert list(ax.get_yticks()) == [1.0, 3.0]
    lines = [ln for ln in ax.get_lines() if set(ln.get_ydata()) == {2}]
    assert len(lines) == 1  # the boundary between n0 and n1
    bars = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_x() == 0
            and p.get_width() == 2]
    assert sorted(round(p.get_y()) for p in bars) == [0, 2]  # big: a bar on each node
    with pytest.raises(ValueError, match="no valid placement"):
        plots.assign_gpus(inst, Schedule("n", sched.starts))


@pytest.mark.slow
def test_fragmentation_plot_stacks_the_checker_figures(tmp_path):
    inst = instances.generate("hc-multi-service", seed=1, node_gpus=[4, 4, 4, 4])
    sched = gpusched.solve(inst, "fifo").schedule
    ax = plots.plot_fragmentation(inst, sched)
    containers = ax.containers
    assert [c.get_label() for c in containers] == [
        "inference", "batch", "stranded (no pending job fits)", "free"]
    heights = np.array([[p.get_height() for p in c] for c in containers])
    assert (heights.sum(axis=0) == inst.num_gpus).all()
    stranded = instances.stranded_gpus(inst, sched)
    assert heights[2].tolist() == stranded and sum(stranded) > 0
    assert heights[0].tolist() == list(inst.total_demand)
    m = instances.evaluate(inst, sched)
    assert f"fragmentation {m.fragmentation} GPU-slots" in ax.get_title()
    paths = plots.save_figure(ax, tmp_path / "frag")
    _png_ok(paths[0])
    flat = instances.generate("hc-multi-service", seed=1)
    ax = plots.plot_fragmentation(flat, gpusched.solve(flat, "fifo").schedule)
    assert all(p.get_height() == 0 for p in ax.containers[2])


def test_profile_axis_labels_name_no_method():
    import matplotlib.pyplot as plt

    ax = plots.plot_performance_profile(_tied_rows())
    label = ax.get_xlabel()
    assert "best" not in label  # "best value" read as the method best
    assert label == "tau = the instance's highest value / the method's value (log scale)"
    plt.close(ax.figure)
    ax = plots.plot_performance_profile(_tied_rows(), measure="runtime_s")
    assert ax.get_xlabel() == "tau = the method's runtime_s / the instance's smallest (log scale)"
    plt.close(ax.figure)


@pytest.mark.parametrize("spread", [1.5, 30.0, 5e4])
def test_profile_right_end_shows_every_last_step(spread):
    import matplotlib.pyplot as plt

    rows = []
    for k in range(4):
        for method, t in (("fast", 1.0), ("slow", 1.0 + (spread - 1.0) * k / 3)):
            rows.append({"instance": f"I{k}", "method": method, "status": "feasible",
                         "value": 1.0, "runtime_s": t})
    ax = plots.plot_performance_profile(pd.DataFrame(rows), measure="runtime_s")
    hi = ax.get_xlim()[1]
    slow = next(ln for ln in ax.get_lines() if ln.get_label() == "slow")
    # the last step (at the largest ratio) sits well inside the axis, on the log scale
    assert np.log(spread) / np.log(hi) <= 0.91
    assert slow.get_xdata()[-1] == hi and slow.get_ydata()[-1] == 1.0
    assert not slow.get_clip_on()  # the end markers on the axes' edges are drawn whole
    plt.close(ax.figure)


@pytest.mark.parametrize("size", [(15, 5), (7, 3)])
def test_gantt_labels_fit_their_bars_on_nodes(size):
    """Node Gantt labels neither spill over their bar, overlap one another nor show cut."""
    import matplotlib.pyplot as plt

    from gpusched.plots_text import FittedLabel

    inst = instances.generate("hc-multi-service", seed=0, node_gpus="openb")
    fig, axes = plt.subplots(1, 2, figsize=size)
    for ax, method in zip(axes, ("fifo", "list")):
        plots.plot_gantt(inst, gpusched.solve(inst, method).schedule, ax=ax)
    fig.tight_layout()
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    labels = [t for ax in axes for t in ax.texts if isinstance(t, FittedLabel)]
    shown = [t for t in labels if t.shown]
    assert shown
    if size[0] < 10:
        assert len(shown) < len(labels)  # some bars are too small for any label
    assert any(t.shown != t.texts[0] for t in shown)  # a short name where the full one won't fit
    boxes = []
    for t in shown:
        ext, bar = t.get_window_extent(renderer), t.box.get_window_extent(renderer)
        assert bar.x0 <= ext.x0 and ext.x1 <= bar.x1 and bar.y0 <= ext.y0 and ext.y1 <= bar.y1
        assert t.shown in t.texts and t.get_text() == t.shown
        boxes.append(ext)
    for i, a in enumerate(boxes):
        assert not any(a.overlaps(b) for b in boxes[i + 1:])
    assert all(t.get_text() == "" for t in labels if not t.shown)
    plt.close(fig)
