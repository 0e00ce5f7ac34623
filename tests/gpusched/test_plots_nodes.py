"""The node Gantt chart (``gpusched.plots_nodes``): one lane per GPU of each node drawn,
shared jobs stacked in their GPU's lane with their share, drawn for a MILP schedule."""

from __future__ import annotations

from itertools import pairwise

import matplotlib

matplotlib.use("Agg")

import pytest
from matplotlib.patches import Rectangle

import instances
import milp
from gpusched import plots_nodes
from gpusched.plots import save_figure
from gpusched.plots_nodes import LANE_HEIGHT
from instances import Instance, Job, Node, Service


def _shares_instance() -> Instance:
    """Two nodes (4 GPUs of model A, 2 of model B), inference on 2 GPUs in every slot: six jobs of
    half a GPU fit the pool only two to a GPU; a whole 2-GPU job asks model B."""
    nodes = (Node("na", 4, "A", 16000, 64000), Node("nb", 2, "B", 8000, 32000))
    jobs = (
        *(Job(f"s{i}", 1, 4, 1.0, gpu_milli=500, cpu_milli=1000) for i in range(6)),
        Job("w", 2, 2, 1.0, release=2, gpu_models=("B",), cpu_milli=2000),
        Job("q", 1, 3, 1.0, release=1, gpu_milli=300),
    )
    return Instance("gantt-v3", 6, 6, (Service("chat", 1.0, (2,) * 6),), jobs, nodes=nodes)


@pytest.fixture(scope="module")
def solved():
    inst = _shares_instance()
    res = milp.solve(inst, time_limit=10)
    assert res.schedule.indices, "the MILP gives a version 3 schedule with GPU indices"
    instances.evaluate(inst, res.schedule)  # the schedule drawn is feasible
    return inst, res.schedule


def _shared_bars(ax) -> list[Rectangle]:
    return [p for p in ax.patches if isinstance(p, Rectangle) and p.get_height() < LANE_HEIGHT - 1e-9]


def test_lanes_one_per_gpu_in_node_order() -> None:
    inst = _shares_instance()
    lanes = plots_nodes.node_lanes(inst, ["nb", "na"])
    assert [(ln.node, ln.gpu) for ln in lanes] == [("na", 0), ("na", 1), ("na", 2), ("na", 3),
                                                  ("nb", 0), ("nb", 1)]
    assert sorted(ln.row for ln in lanes) == list(range(6)) and lanes[0].row == 5
    with pytest.raises(ValueError, match=r"nodes: .* no node 'nx'"):
        plots_nodes.node_lanes(inst, ["nx"])


def test_gantt_of_a_milp_schedule(tmp_path, solved) -> None:
    inst, sched = solved
    ax = plots_nodes.plot_node_gantt(inst, sched, nodes=["na", "nb"], merge_idle=False)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["GPU 0", "GPU 1", "GPU 2", "GPU 3", "GPU 0", "GPU 1"]  # six lanes
    assert ax.get_ylim() == (0, 6)
    bars = _shared_bars(ax)
    shared = [j.name for j in inst.jobs if j.gpu_milli < 1000 and j.name in sched.starts]
    assert len(shared) == 7
    heights = sorted(round(b.get_height() / LANE_HEIGHT * 1000) for b in bars)
    assert heights.count(500) >= 6 and 300 in heights  # each share's band is its share of the lane
    # some GPU carries two shares at once: their bands are stacked, not overlaid
    stacked = [(a, b) for a in bars for b in bars if a is not b
               and int(a.get_y()) == int(b.get_y())
               and a.get_x() < b.get_x() + b.get_width() and b.get_x() < a.get_x() + a.get_width()]
    assert stacked
    for a, b in stacked:
        assert a.get_y() + a.get_height() <= b.get_y() + 1e-9 or b.get_y() + b.get_height() <= a.get_y() + 1e-9
    files = save_figure(ax, tmp_path / "node-gantt")
    assert [f.suffix for f in files] == [".png", ".pdf"]
    assert all(f.stat().st_size > 1000 for f in files)


def test_default_nodes_are_the_used_ones(solved) -> None:
    inst, sched = solved
    used = {k for on in sched.indices.values() for k in on}
    ax = plots_nodes.plot_node_gantt(inst, sched, merge_idle=False)
    assert len(ax.get_yticklabels()) == sum(n.gpus for n in inst.nodes if n.name in used)
    assert "nodes that hold jobs" in plots_nodes.plot_node_gantt(inst, sched).get_title()


def test_count_placements_get_lowest_free_indices() -> None:
    nodes = (Node("n0", 4), Node("n1", 2))
    inst = Instance("v2", 6, 4, (), (Job("a", 2, 2, 1.0), Job("b", 2, 2, 1.0), Job("c", 2, 4, 1.0)),
                    nodes=nodes)
    sched = instances.Schedule("v2", {"a": 0, "b": 0, "c": 0},
                               placement={"a": {"n0": 2}, "b": {"n0": 2}, "c": {"n1": 2}})
    got = plots_nodes.gpu_indices(inst, sched)
    assert got == {"a": {"n0": (0, 1)}, "b": {"n0": (2, 3)}, "c": {"n1": (0, 1)}}
    ax = plots_nodes.plot_node_gantt(inst, sched)
    assert len(ax.get_yticklabels()) == 6 and not _shared_bars(ax)


def test_share_bands_keep_one_band_or_stack_by_slot() -> None:
    got = plots_nodes.share_bands([("a", 0, 4, 500), ("b", 0, 2, 500), ("c", 2, 4, 300)])
    assert got == [("b", 0, 2, 0, 500), ("a", 0, 4, 500, 1000), ("c", 2, 4, 0, 300)]
    # b keeps [300, 700): at slot 3 the free room is [0, 300) and [700, 1000), no band of 500
    # for d although the load is 900; so the GPU is stacked slot range by slot range
    jobs = [("a", 0, 2, 300), ("b", 0, 4, 400), ("c", 1, 3, 300), ("d", 3, 4, 500)]
    got = plots_nodes.share_bands(jobs)
    assert ("d", 3, 4, 400, 900) in got and ("b", 3, 4, 0, 400) in got
    for t in range(4):
        on = sorted((lo, hi) for _, s, e, lo, hi in got if s <= t < e)
        assert all(h1 <= l2 for (_, h1), (l2, _) in pairwise(on))
        assert max(hi for _, hi in on) <= 1000


def test_flat_instance_refused() -> None:
    inst = Instance("flat", 2, 2, (), (Job("a", 1, 1, 1.0),))
    with pytest.raises(ValueError, match=r"inst: .*nodes"):
        plots_nodes.plot_node_gantt(inst, instances.Schedule("flat", {"a": 0}))


def test_utilization_counts_amounts_and_idle_shares(solved) -> None:
    from gpusched import plots

    inst, sched = solved
    ax = plots.plot_utilization(inst, sched)
    layers = {c.get_label(): [b.get_height() for b in c] for c in ax.containers}
    assert set(layers) == {"inference", "batch", "idle share of shared GPUs", "idle"}
    amount = [0.0] * inst.horizon
    busy = [set() for _ in range(inst.horizon)]
    for name, s in sched.starts.items():
        job = inst.jobs[inst.job_index[name]]
        for t in range(s, s + job.duration):
            amount[t] += job.gpus * job.gpu_milli / 1000
            if job.gpu_milli < 1000:
                busy[t] |= {(k, g) for k, idx in sched.indices[name].items() for g in idx}
    assert layers["batch"] == pytest.approx(amount)
    shares = [sum(job.gpu_milli / 1000 for n, s0 in sched.starts.items()
                  for job in [inst.jobs[inst.job_index[n]]]
                  if job.gpu_milli < 1000 and s0 <= t < s0 + job.duration) for t in range(inst.horizon)]
    assert layers["idle share of shared GPUs"] == pytest.approx([len(b) - a for b, a in zip(busy, shares, strict=True)])
    total = [sum(v[t] for v in layers.values()) for t in range(inst.horizon)]
    assert total == pytest.approx([inst.num_gpus] * inst.horizon)
    util = sum(layers["inference"]) + sum(layers["batch"])
    assert util / (inst.num_gpus * inst.horizon) == pytest.approx(instances.evaluate(inst, sched).utilization)


def test_cli_plot_draws_a_version_3_schedule(tmp_path, capsys, solved) -> None:
    from gpusched.cli import main

    inst, sched = solved
    (tmp_path / "i.json").write_text(instances.dumps(inst))
    instances.save_schedule(sched, tmp_path / "s.json")
    assert main(["plot", str(tmp_path / "i.json"), str(tmp_path / "s.json"), "-o", str(tmp_path / "x")]) == 0
    names = sorted(p.name for p in tmp_path.glob("x-*"))
    assert names == ["x-gantt.pdf", "x-gantt.png", "x-utilization.pdf", "x-utilization.png"]
    assert all((tmp_path / n).stat().st_size > 1000 for n in names)
    ax = plots_nodes.plot_schedule_gantt(inst, sched)
    assert [t.get_text() for t in ax.get_yticklabels()][:1] == ["GPU 0"]  # the node chart, by GPU index


def _bars_of_lanes(ax) -> list[Rectangle]:
    """Job bars: not the node bands' shading (zorder 0) nor the idle lanes' hatching."""
    return [p for p in ax.patches if isinstance(p, Rectangle) and p.get_facecolor()[3] > 0
            and p.get_zorder() > 0]


def _busy_one_node() -> tuple[Instance, instances.Schedule]:
    """Node n0 (4 GPUs): a whole GPU job on GPU 0 for two slots, two shares on GPU 2;
    GPUs 1 and 3 hold nothing. Node n1 (2 GPUs) holds nothing."""
    nodes = (Node("n0", 4, "A"), Node("n1", 2, "A"))
    jobs = (Job("train-1", 1, 2, 1.0), Job("pod-7", 1, 3, 1.0, gpu_milli=600),
            Job("pod-12", 1, 1, 1.0, gpu_milli=400, release=1))
    inst = Instance("one-node", 6, 4, (), jobs, nodes=nodes)
    sched = instances.Schedule("one-node", {"train-1": 0, "pod-7": 0, "pod-12": 1},
                               indices={"train-1": {"n0": (0,)}, "pod-7": {"n0": (2,)},
                                        "pod-12": {"n0": (2,)}})
    instances.evaluate(inst, sched)
    return inst, sched


def test_bars_stay_inside_their_lane(solved) -> None:
    # whole-GPU bars and shares keep clear of the lines between lanes (and of the node
    # lines): each lies inside [row + pad, row + 1 - pad] of one lane
    for inst, sched in (solved, _busy_one_node()):
        ax = plots_nodes.plot_node_gantt(inst, sched)
        bars = _bars_of_lanes(ax)
        assert bars
        for b in bars:
            lane = int(b.get_y())
            assert b.get_y() >= lane + plots_nodes.LANE_PAD - 1e-9
            assert b.get_y() + b.get_height() <= lane + 1 - plots_nodes.LANE_PAD + 1e-9
        whole = [b for b in bars if abs(b.get_height() - LANE_HEIGHT) < 1e-9]
        assert whole  # the whole-GPU bars: the lane's full room, no taller


def test_idle_gpus_share_one_lane_and_the_title_says_so() -> None:
    inst, sched = _busy_one_node()
    ax = plots_nodes.plot_node_gantt(inst, sched)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["GPU 0", "GPU 2", "GPU 1, 3 idle"]  # n1 holds nothing: not drawn
    assert ax.get_ylim() == (0, 3)
    title = ax.get_title()
    assert "the 1 nodes that hold jobs" in title and "2 of their 4 GPUs idle" in title
    assert "GPUs idle all along" in [t.get_text() for t in ax.get_legend().get_texts()]
    ax = plots_nodes.plot_node_gantt(inst, sched, nodes=["n0", "n1"])
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["GPU 0", "GPU 2", "GPU 1, 3 idle", "GPU 0-1 idle"]
    assert "2 node(s), 1 of them holding jobs" in ax.get_title()
    assert plots_nodes.Lane("n", 6, 0, (6, 7)).label == "GPU 6-7 idle"
    assert plots_nodes.Lane("n", 1, 0, (1,)).label == "GPU 1 idle"


def test_every_job_that_fits_a_label_has_one() -> None:
    # shares carry the job's short name beside the share (``7: 0.6``), or the name alone
    import matplotlib.pyplot as plt

    from gpusched.plots_text import FittedLabel

    inst, sched = _busy_one_node()
    ax = plots_nodes.plot_node_gantt(inst, sched)
    ax.figure.canvas.draw()
    shown = {t.get_text() for t in ax.texts if isinstance(t, FittedLabel) and t.shown}
    assert "train-1" in shown or "1" in shown
    assert {"7: 0.6", "12: 0.4"} <= shown or {"7", "12"} <= shown
    assert min(t.get_fontsize() for t in ax.texts if isinstance(t, FittedLabel)) >= 8
    plt.close(ax.figure)
