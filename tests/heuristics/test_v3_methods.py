"""Every fast method on model version 3: checker-valid schedules with GPU indices, values by
``a_j``, never above the brute-force optimum, and the public entry points unchanged."""

from __future__ import annotations

import numpy as np
import pytest
from brute_v3 import brute_force_v3, tiny_v3_instance
from hypothesis import given, settings
from hypothesis import strategies as st

import gpusched
import heuristics
import instances
from instances import Instance

FAST = ["fifo", "fifo-curve", "easy-peak", "easy-curve", "conservative-peak",
        "conservative-curve", "list", "list-peak", "parallel", "sampling", "local-search"]
PLACED = ["list", "list-peak", "parallel", "sampling", "local-search"]
BUDGET = {"sampling": {"passes": 12, "time_limit": None},
          "local-search": {"iterations": 60, "time_limit": None}}


def _params(method: str, placement: str | None = None) -> dict:
    p = dict(BUDGET.get(method, {}))
    if placement is not None and method in PLACED:
        p["placement"] = placement
    return p


def _check(inst: Instance, res: instances.Result) -> None:
    s = res.schedule
    reservation = res.reservation or "curve"
    m = instances.evaluate(inst, s, reservation, enforce_reservation=True)  # type: ignore[arg-type]
    assert m.value == pytest.approx(res.value)
    run = np.array([inst.job_index[j] for j in s.starts], dtype=np.int64)
    assert res.value == pytest.approx(float(inst.job_values[run].sum()))  # a_j, not g_j
    assert set(s.indices) == set(s.starts)  # every run job lists its GPU indices
    for name, on in s.indices.items():
        j = inst.jobs[inst.job_index[name]]
        assert sum(len(v) for v in on.values()) == j.gpus


@given(st.integers(0, 10_000), st.sampled_from([(2, 2), (2, 1, 1), (4, 2), (2, 2, 2)]),
       st.sampled_from(["first-fit", "best-fit", "frag"]))
@settings(max_examples=25, deadline=None)
def test_every_method_is_checker_valid_on_random_v3_instances(seed: int, shape: tuple,
                                                               placement: str) -> None:
    inst = tiny_v3_instance(seed, n=10, shape=shape, T=8)
    if not inst.jobs_use_resources:
        return
    for method in FAST:
        _check(inst, heuristics.solve(inst, method, **_params(method, placement)))


@pytest.mark.parametrize("seed", range(3))
def test_every_method_is_checker_valid_on_openb_shares(seed: int) -> None:
    inst = instances.generate("openb-shares", seed=seed)
    assert inst.shares_gpus
    values = {}
    for method in FAST:
        for placement in ("first-fit", "best-fit", "frag"):
            res = heuristics.solve(inst, method, **_params(method, placement))
            _check(inst, res)
            values[method, placement] = res.value
    assert values["list", "first-fit"] >= values["fifo", "first-fit"] * 0.5  # (sanity, not a claim)


@pytest.mark.parametrize("seed", range(8))
def test_no_method_beats_the_brute_force_optimum(seed: int) -> None:
    inst = tiny_v3_instance(seed, n=6, shape=(2, 1, 1), T=5)
    best = {r: brute_force_v3(inst, r)[0] for r in ("curve", "peak")}
    for method in FAST:
        for placement in ("first-fit", "best-fit", "frag"):
            res = heuristics.solve(inst, method, **_params(method, placement))
            assert res.value <= best[res.reservation or "curve"] * (1 + 1e-9) + 1e-9


def test_the_public_entry_points_run_version_3() -> None:
    inst = instances.generate("openb-shares", seed=1)
    assert heuristics.fifo.fifo(inst).schedule.lists_indices
    res = heuristics.listsched.list_schedule(inst, rule="value", placement="frag")
    assert res.params == {"rule": "value", "placement": "frag"}
    assert gpusched.solve(inst, "list").value == pytest.approx(
        heuristics.solve(inst, "list").value)


def test_easy_logs_its_reservations_and_starts_heads_at_them() -> None:
    inst = instances.generate("openb-shares", seed=2, contention=3.0)
    log: list[tuple[int, int, int]] = []
    start = heuristics.backfill.easy_starts(inst, "peak", log)
    assert log
    for _, head, reserved in log:
        assert start[head] == reserved


def test_earliest_and_take_job_by_job_give_the_serial_decoder() -> None:
    from heuristics.engine import new_profile
    from heuristics.profile import fit
    from heuristics.rules import order_by

    inst = instances.generate("openb-shares", seed=4)
    order = order_by(inst, "area")
    for rule in ("first-fit", "best-fit"):
        prof = new_profile(inst, "curve", rule)
        with pytest.raises(TypeError, match="version 3 profile"):
            fit(prof, 1, 1, 0, 2)  # the version 2 fit refuses the version 3 state
        place = heuristics.placement.new_place(inst)
        start = np.full(inst.num_jobs, -1, dtype=np.int64)
        for j in order.tolist():
            g, p = int(inst.gpus[j]), int(inst.durations[j])
            s, where = prof.earliest(j, g, p, int(inst.releases[j]), int(inst.deadlines[j]))
            if s >= 0:
                prof.take(j, g, p, s, where, place)
                start[j] = s
        whole = heuristics.placement.new_place(inst)
        assert start.tolist() == heuristics.listsched.list_starts(
            inst, order, placement=rule, place=whole).tolist()
        assert place.tolist() == whole.tolist()


def test_the_summary_rows_follow_the_gpu_rows() -> None:
    """After a pass, each node's rows are what its GPU rows say (the kernel keeps them)."""
    inst = instances.generate("openb-shares", seed=5, num_gpus=32, horizon=24)
    for rule in ("first-fit", "best-fit", "frag"):
        prof = heuristics.engine.new_profile(inst, "peak", rule)
        heuristics.decoder.serial_starts(prof, heuristics.rules.order_by(inst, "value"),
                                         heuristics.decoder.job_arrays(inst))
        wf, mx, _, _, nf = prof.node_rows()  # type: ignore[attr-defined]
        gpu = prof.gpu_rows()  # type: ignore[attr-defined]
        off = prof.st.gpu_offset  # type: ignore[attr-defined]
        for k in range(inst.num_nodes):
            rows = gpu[off[k] : off[k + 1]]
            assert (wf[k] == (rows == 1000).sum(axis=0)).all()
            assert (nf[k] == rows.sum(axis=0)).all()
            partial = np.where(rows < 1000, rows, 0)
            assert (mx[k] == partial.max(axis=0)).all()
        # the level rows: node k's bit of level L is set where the node has L or more
        st = prof.st  # type: ignore[attr-defined]
        info, wl, ml = st.level_info, st.whole_levels, st.share_levels
        first, W = int(info[0]), int(info[3])
        bits = prof.rows[first : first + (wl.size + ml.size) * W].reshape(-1, W, inst.horizon)
        has = (bits[:, np.arange(inst.num_nodes) // 64, :] >> (np.arange(inst.num_nodes) % 64)
               [None, :, None]) & 1
        assert (has[: wl.size] == (wf[None] >= wl[:, None, None])).all()
        assert (has[wl.size :] == (mx[None] >= ml[:, None, None])).all()


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("reservation", ["peak", "curve"])
def test_fifo_with_whole_gpus_only_is_the_version_2_fifo(seed: int, reservation: str) -> None:
    """FIFO places in order of start, so fixing GPU indices loses nothing to counts: on a
    version 2 instance made version 3 by a field that binds nothing, the same starts and nodes."""
    from dataclasses import replace

    base = instances.generate("hc-mixed", seed=seed)
    for shape in (4, list(instances.openb_node_mix(base.num_gpus, seed))):
        if isinstance(shape, int) and base.num_gpus % shape:
            continue
        v2 = instances.with_nodes(base, shape)
        v3 = v2.replace(jobs=tuple(replace(j, cpu_milli=1) for j in v2.jobs))
        assert v3.jobs_use_resources and not v2.jobs_use_resources
        a = heuristics.fifo.fifo(v2, reservation=reservation).schedule
        b = heuristics.fifo.fifo(v3, reservation=reservation).schedule
        assert dict(a.starts) == dict(b.starts)
        assert {j: dict(c) for j, c in a.placement.items()} == {
            j: dict(c) for j, c in b.placement.items()}
