"""The milp method on model version 3 as users run it: gpusched.solve, the LNS helper, peak.

Against brute force on small instances, with one thread (HiGHS alone) and two (the LNS helper
beside it, trading schedules with GPU slots); under the peak reservation; with the bound named
(``bound_method``) on every path and never below the checked value. Also the window models of
the LNS (``milp.build(fixed=)``) and the portfolio backend.
"""

from __future__ import annotations

import numpy as np
import pytest
from brute_v3 import brute_force_v3, tiny_v3_instance
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpusched
import instances
import milp
from instances import Instance, Job, Node
from matheuristics import solve_milp
from milp.fixed import FixedUse
from milp.formulation import ROW_CPU, ROW_GPU
from milp.shares import gpu_twin

SHAPES = [(2, 2), (2, 1, 1), (3, 2), (2, 2, 2)]

BOUND_METHODS = {"dual", "lp", "lagrangian", "fluid", "nodes", "flat", "sum-of-values",
                 "dual+fixing", "lp+fixing"}
"""The names a version 3 bound may carry (the solver's, the certificate's, a relaxation's)."""


def check(inst: Instance, res: instances.Result, reservation: str = "curve") -> None:
    again = instances.evaluate(inst, res.schedule, reservation,  # type: ignore[arg-type]
                               enforce_reservation=True)
    assert again.value == pytest.approx(res.value, abs=1e-9)
    assert res.upper_bound is not None and res.upper_bound >= res.value - 1e-6 * max(1, res.value)
    assert res.bound_method in BOUND_METHODS, res.bound_method
    if any(j.gpu_milli < 1000 for j in inst.jobs) and res.schedule.starts:
        assert res.schedule.lists_indices


@given(st.integers(0, 100_000), st.sampled_from(SHAPES), st.integers(4, 7))
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_milp_method_equals_brute_force_on_one_and_two_threads(
        seed: int, shape: tuple, n: int) -> None:
    inst = tiny_v3_instance(seed, n=n, shape=shape, T=5, shared=0.6)
    opt, _ = brute_force_v3(inst)
    for threads in (1, 2):
        res = gpusched.solve(inst, "milp", time_limit=20, threads=threads, mip_gap=0)
        check(inst, res)
        assert res.status == "optimal", res.message
        assert res.value == pytest.approx(opt, abs=1e-6)
        assert res.upper_bound == pytest.approx(opt, rel=1e-6)
        if "not searched" in res.message:  # the warm start runs every job: nothing beside
            assert len(res.schedule.starts) == inst.num_jobs and res.params["sources"] == []
        else:
            assert res.params["sources"] == ([] if threads == 1 else ["lns"])


def test_the_lns_helper_trades_schedules_with_gpu_slots() -> None:
    """On an instance HiGHS does not close at once, the helper runs beside it, its schedules
    reach the result (checked with GPU indices), and nothing is dropped silently."""
    inst = instances.generate("openb-shares", seed=0, num_gpus=8, horizon=12, num_jobs=30)
    res = solve_milp(inst, time_limit=12, threads=2, lns_helper=True)
    check(inst, res)
    assert res.params["sources"] == ["lns"]
    assert "LNS helper:" in res.message
    assert "sources_not_run" not in res.params


def test_only_the_lns_runs_beside_highs_on_version_3() -> None:
    inst = tiny_v3_instance(2, n=5, shape=(2, 2), T=5)
    with pytest.raises(ValueError, match="only the LNS"):
        solve_milp(inst, time_limit=5, threads=2, sources=["lns", "cpsat"])
    with pytest.raises(ValueError, match="only the LNS"):
        solve_milp(inst, time_limit=5, threads=2, sources=["lns", "lp"])


@given(st.integers(0, 100_000), st.sampled_from(SHAPES))
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_peak_reservation_equals_brute_force_under_peak(seed: int, shape: tuple) -> None:
    inst = tiny_v3_instance(seed, n=6, shape=shape, T=5, shared=0.6)
    opt, _ = brute_force_v3(inst, "peak")
    res = milp.solve(inst, reservation="peak", time_limit=20, mip_gap=0)
    check(inst, res, "peak")
    assert res.reservation == "peak"
    assert res.value == pytest.approx(opt, abs=1e-6)
    assert res.upper_bound == pytest.approx(opt, rel=1e-6)
    # by name, with two threads: HiGHS alone (the sources search curve schedules), said so
    by_name = gpusched.solve(inst, "milp", reservation="peak", threads=2, time_limit=20, mip_gap=0)
    check(inst, by_name, "peak")
    assert by_name.value == pytest.approx(opt, abs=1e-6)
    assert "sources_not_run" in by_name.params


def test_peak_leaves_out_a_warm_start_that_breaks_it() -> None:
    inst = tiny_v3_instance(4, n=6, shape=(2, 2, 1), T=5, shared=0.6)
    curve = milp.solve(inst, time_limit=20, mip_gap=0)
    peak = milp.solve(inst, reservation="peak", warm_start=curve, time_limit=20, mip_gap=0)
    check(inst, peak, "peak")
    if curve.value > peak.value + 1e-9:  # the curve optimum breaks peak: left out, said so
        assert "left out" in peak.message
    with pytest.raises(ValueError, match="reservation"):
        milp.solve(inst, reservation="half")


def test_the_cli_solves_milp_under_peak(tmp_path) -> None:
    """``gpusched solve -m milp -p reservation=peak`` on a version 3 file: exit 0, the peak
    result (``--reservation`` is not an option of ``solve``: exit 2)."""
    import json
    import subprocess
    import sys

    inst = tiny_v3_instance(3, n=6, shape=(2, 2), T=5, shared=0.6)
    path = tmp_path / "v3.json"
    instances.save(inst, path)
    base = [sys.executable, "-m", "gpusched", "solve", str(path), "-m", "milp", "--time-limit", "10"]
    out = subprocess.run([*base, "-p", "reservation=peak", "--json"], capture_output=True,
                         text=True, check=False)
    assert out.returncode == 0, out.stderr
    row = json.loads(out.stdout)
    assert row["reservation"] == "peak"
    assert row["value"] == pytest.approx(brute_force_v3(inst, "peak")[0], abs=1e-6)
    bad = subprocess.run([*base, "--reservation", "peak"], capture_output=True, text=True,
                         check=False)
    assert bad.returncode == 2


@pytest.mark.parametrize("backend", ["highs", "cpsat", "portfolio"])
def test_every_backend_names_its_bound_on_version_3(backend: str) -> None:
    inst = tiny_v3_instance(2, n=6, shape=(2, 2, 1), T=5, shared=0.6)
    opt, _ = brute_force_v3(inst)
    res = milp.solve(inst, backend=backend, threads=2 if backend == "portfolio" else 1,
                     time_limit=20, mip_gap=0)
    check(inst, res)
    assert res.value == pytest.approx(opt, abs=1e-6)
    # a solve after the portfolio's still works (its HiGHS runs in the calling thread)
    after = milp.solve(gpu_twin(inst), time_limit=20)
    assert after.status == "optimal", after.message


@pytest.mark.parametrize("kw", [{"lagrangian": True}, {"relaxation": "nodes"},
                                {"relaxation": "flat"}, {"time_limit": 0}])
def test_the_bound_is_named_on_every_path(kw: dict) -> None:
    inst = tiny_v3_instance(5, n=6, shape=(2, 2), T=5, shared=0.6)
    res = milp.solve(inst, **{"time_limit": 20, **kw})
    check(inst, res)


def test_a_relaxation_bound_is_named_by_its_kind_when_it_is_the_smallest() -> None:
    """Time out the exact search at once: the fluid relaxation's bound, solved first, is held
    and named ``fluid`` when it is below the sum of values."""
    inst = instances.generate("openb-shares", seed=1, num_gpus=8, horizon=12, num_jobs=40)
    res = milp.solve(inst, time_limit=8, flat_share=0.9, root_lp=False, mip_max_nodes=0)
    check(inst, res)
    assert res.upper_bound <= float(inst.job_values.sum()) + 1e-9
    assert "fluid relaxation" in res.message


# ---------------------------------------------------------------- build(fixed=)
def _use(K: int, V: int, T: int) -> FixedUse:
    return FixedUse(np.zeros((K, V, T), dtype=np.int64), np.zeros((K, T)), np.zeros((K, T)))


def test_fixed_use_gives_shares_real_gpus_and_lowers_the_rows() -> None:
    nodes = (Node("n0", 2, "A", 4000, None),)
    jobs = (Job("s", 1, 2, 1.0, gpu_milli=500, cpu_milli=1000),)
    inst = Instance("fixed", 2, 2, (), jobs, nodes=nodes)
    use = _use(1, 2, 2)
    use.gpu_milli[0, 0] = [400, 0]  # GPU 0: a fixed share of 400 at slot 0
    use.gpu_milli[0, 1] = [1000, 1000]  # GPU 1: held whole
    use.cpu[0] = [2500, 3500]
    form = milp.build(inst, fixed=use)
    assert form.gpu_fixed
    # the share fits GPU 0 at slot 0 (600 left), not GPU 1; the CPU row is 4000 - 3500 at slot 1
    assert set(form.place_gpu[form.col_place].tolist()) == {0}
    assert form.col_start.tolist() == [0]
    cpu = form.row_upper[form.row_kind == ROW_CPU]
    assert cpu.tolist() == [500.0]  # the row of slot 0 (1000 <= 1500) cannot bind: none
    gpu_rows = form.row_upper[form.row_kind == ROW_GPU]
    assert sorted(gpu_rows.tolist()) == [0.0, 600.0]  # slot 1: free GPU; slot 0: 1000 - 400
    assert (form.col_upper[form.num_x:] == [0.0, 1.0]).all()  # slot 0 busy already
    raw = milp.solve_arrays(form, time_limit=10, mip_gap=0)
    assert raw.start is not None and raw.start[0] == -1  # 1000 CPU > 500 left at slot 1
    with pytest.raises(ValueError, match="fixed"):
        milp.build(inst, fixed=use, reserved=np.zeros((1, 2), dtype=np.int64))
    with pytest.raises(ValueError, match=r"fixed\.gpu_milli"):
        milp.build(inst, fixed=_use(1, 1, 2))


def test_without_fixed_use_the_version_2_build_is_unchanged() -> None:
    inst = gpu_twin(tiny_v3_instance(6, n=6, shape=(2, 2), T=5))
    a, b = milp.build(inst), milp.build(inst)
    assert (a.A != b.A).nnz == 0 and not a.gpu_fixed
