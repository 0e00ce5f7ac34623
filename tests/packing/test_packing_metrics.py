"""The curves after every pod and FGD's binning to integer arrived percentages."""

from __future__ import annotations

import numpy as np
import pytest
from packing_cases import node, pod

from heuristics.packing import place
from instances.packing import (
    InvalidPlacementError,
    Packing,
    Placement,
    bin_curve,
    node_frag,
    packing_curve,
    target_workload,
)


def test_curve_after_every_pod():
    p = Packing("c", (node("a", 2), node("b", 2)),
                (pod("w", 2), pod("big", 4), pod("s", 1, 500), pod("c", 0, cpu=100)))
    run = place(p, "first-fit")
    assert "big" not in run.placement.assign
    c = packing_curve(p, run.placement)
    assert c.arrived_milli.tolist() == [0, 2000, 6000, 6500, 6500]
    assert c.allocated_milli.tolist() == [0, 2000, 2000, 2500, 2500]
    assert c.capacity_milli == 4000
    w = target_workload(p)
    # after all pods: a has no GPU free (and holds c); b has [500, 1000] free, 31000 CPU milli
    a = p.arrays
    assert run.placement.assign["c"] == ("a", ())
    expect = node_frag(31000, np.array([500, 1000]), 0, w.cpu, w.milli, w.gpus, w.allowed,
                       w.freq)
    assert c.frag_milli[-1] == pytest.approx(expect)
    assert a.node_gpus.tolist() == [2, 2]


def test_curve_refuses_an_invalid_placement():
    p = Packing("c", (node("a", 1),), (pod("x"), pod("y")))
    with pytest.raises(InvalidPlacementError):
        packing_curve(p, Placement("c", {"x": ("a", (0,)), "y": ("a", (0,))}))


def test_bin_curve_rounds_half_to_even_and_falls_back_to_neighbours():
    arrived = np.array([0.0, 0.4, 0.6, 1.5, 2.5, 5.2])
    values = np.array([10.0, 20.0, 30.0, 40.0, 50.0, 60.0])
    bins = np.arange(8)
    got = bin_curve(arrived, values, bins)
    assert got[0] == pytest.approx(15.0)  # 0.0 and 0.4
    assert got[1] == pytest.approx(30.0)  # 0.6 only
    assert got[2] == pytest.approx(45.0)  # 1.5 and 2.5 both round to 2
    assert got[3] == pytest.approx(45.0)  # none: the neighbours 2 and 4 (2 only)
    assert got[4] == pytest.approx(60.0)  # none: the neighbours 3 and 5 (5 only)
    assert got[5] == pytest.approx(60.0)
    assert np.isnan(got[7])
