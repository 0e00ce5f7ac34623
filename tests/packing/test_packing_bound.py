"""The bound: never below a feasible packing, equal to the optimum where it converges, its
certificate re-checked independently; against brute force on small packings."""

from __future__ import annotations

import pytest
from packing_brute import brute_optimum, config_optimum, mip_optimum
from packing_cases import node, pod, random_packing

from heuristics.packing import POLICIES, place
from instances.packing import (
    Packing,
    PackingCertificate,
    check_packing_bound,
    evaluate_placement,
)
from milp.packing import packing_bound


def _check(p: Packing, **kw):
    b = packing_bound(p, time_limit=30, **kw)
    if b.best_placement is not None:
        assert evaluate_placement(p, b.best_placement).allocated_milli == b.best_milli
    proven = check_packing_bound(p, b.certificate)
    assert proven <= b.bound_milli + 1 + 1e-6 * b.bound_milli
    return b, proven


def test_the_easy_bound_is_not_this_one():
    # one GPU, two 600-milli shares: a fluid model fills the GPU (1000); one share fits
    p = Packing("two-shares", (node("a", 1),), (pod("x", 1, 600), pod("y", 1, 600)))
    b, proven = _check(p)
    assert b.bound_milli == b.best_milli == 600
    assert proven == pytest.approx(600, abs=1)


def test_cpu_and_memory_and_models_bind():
    # 2 GPUs but CPU for one pod only; a model-bound pod that fits nowhere; memory for one
    nodes = (node("a", 2, cpu=3000, mem=4096, model="A"), node("b", 1, cpu=64000, mem=2048))
    pods = (pod("c1", 1, cpu=2000), pod("c2", 1, cpu=2000), pod("onlyB", 1, models=("B",)),
            pod("m1", 1, 500, cpu=100, mem=2048), pod("m2", 1, 500, cpu=100, mem=2048))
    p = Packing("binds", nodes, pods)
    b, _ = _check(p)
    # a: CPU for one 2000-CPU pod; c1 + a share m1 (2100 CPU, 3072 MiB) = 1500 beats the two
    # shares (1000, 4096 MiB) and c1 + both shares (5120 MiB) does not fit; b (one GPU,
    # 2048 MiB) takes c2 (1000): 2500 in all, onlyB nowhere
    assert b.bound_milli == b.best_milli == brute_optimum(p) == 2500


@pytest.mark.parametrize("seed", range(10))
def test_against_brute_force(seed):
    p = random_packing(200 + seed, nodes=3, pods=9)
    opt = brute_optimum(p)
    assert config_optimum(p) == mip_optimum(p) == opt
    b, proven = _check(p)
    assert b.best_milli <= opt <= b.bound_milli
    assert proven >= opt - 1e-6
    if b.status in ("optimal", "converged"):
        assert b.best_milli == opt  # a tiny model: the restricted master finds the optimum


@pytest.mark.parametrize("seed", range(6))
def test_against_the_direct_integer_program(seed):
    """8 nodes and 40 pods: the optimum of the direct integer program."""
    p = random_packing(300 + seed, nodes=8, pods=40)
    opt = mip_optimum(p)
    starts = [place(p, pol).placement for pol in POLICIES]
    b, proven = _check(p, starts=starts)
    assert b.best_milli <= opt <= b.bound_milli
    assert proven >= opt - 1e-6
    assert b.best_milli >= max(place(p, pol).metrics.allocated_milli for pol in POLICIES)


def test_a_certificate_that_claims_too_much_is_refused():
    p = random_packing(7, nodes=4, pods=20)
    b, proven = _check(p)
    d = b.certificate.to_dict()
    d["bound_milli"] = int(proven) - 100
    with pytest.raises(ValueError, match="prove only"):
        check_packing_bound(p, PackingCertificate.from_dict(d))
    d = b.certificate.to_dict()
    d["shapes"][0]["price"] = -1.0
    with pytest.raises(ValueError, match="price must be"):
        check_packing_bound(p, PackingCertificate.from_dict(d))
    with pytest.raises(ValueError, match="first"):
        check_packing_bound(p.head(3), b.certificate)
    # zero prices prove every node full: never below the optimum either
    d = b.certificate.to_dict()
    for s in d["shapes"]:
        s["price"] = 0.0
    d["bound_milli"] = p.capacity_milli
    assert check_packing_bound(p, PackingCertificate.from_dict(d)) >= mip_optimum(p)
    with pytest.raises(ValueError, match="format"):
        PackingCertificate.from_dict({**d, "format": "x"})


def test_a_pricing_stopped_before_its_search_leaves_the_bound_valid(monkeypatch):
    """The clock out before a pricing MIP searched (HiGHS not run: its dual bound reads 0, a
    placeholder): the pricing bounds by the box instead, and the bound stays above the
    optimum (it was 0 under a loaded machine's short budget)."""
    import highspy

    p = random_packing(11, nodes=6, pods=40)
    opt = mip_optimum(p)

    class Unrun(highspy.Highs):
        def run(self):  # every MIP and LP of the bound stopped before it searched
            return highspy.HighsStatus.kOk

    monkeypatch.setattr(highspy, "Highs", Unrun)
    b = packing_bound(p, time_limit=5)
    monkeypatch.undo()
    assert b.bound_milli >= opt
    assert check_packing_bound(p, b.certificate) >= opt - 1e-6


def test_a_bound_below_the_best_packing_is_refused(monkeypatch, caplog):
    """Column generation that (by a bug) proves less than a checked packing holds: the bound
    reported is that of every pod placed, with its prices, and the bug is logged."""
    import numpy as np

    import milp.packing.bound as bound_module

    p = random_packing(11, nodes=6, pods=40)
    starts = [place(p, pol).placement for pol in POLICIES]
    best = max(evaluate_placement(p, s).allocated_milli for s in starts)
    assert best > 0

    def broken(gr, m, budget_end, t0, lower):
        return 0.0, np.zeros(gr.num_shapes), np.zeros(gr.num_types), 0.0, 1, "converged"

    monkeypatch.setattr(bound_module, "_generate", broken)
    with caplog.at_level("ERROR", logger="milp.packing.bound"):
        b = packing_bound(p, time_limit=5, starts=starts)
    assert "below the best packing" in caplog.text
    every = min(sum(q.gpus * q.gpu_milli for q in p.pods), p.capacity_milli)
    assert every >= b.bound_milli >= b.best_milli >= best
    assert b.status != "optimal" or b.best_milli == b.bound_milli
    assert check_packing_bound(p, b.certificate) == pytest.approx(b.bound_milli, abs=1)
