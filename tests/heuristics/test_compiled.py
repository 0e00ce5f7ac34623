"""The compiled serial decoder against the numpy decoder and the per-slot reference, flat.

``serial_starts`` runs the numba decoder when numba is importable; the numpy
decoder (``serial_starts_numpy``) is what runs without it. Both are held to
``reference.list_starts_ref`` here, the numpy one also with the compiled
decoder switched off, so the fallback stays tested where numba is installed.
On a flat instance (one node) both take their one-node specialisation;
``test_one_node.py`` holds it to the general path.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import list_starts_ref
from strategies import random_instances

import heuristics
from heuristics import _core, decoder
from heuristics.decoder import job_arrays, serial_starts, serial_starts_numpy
from heuristics.engine import new_profile
from heuristics.rules import order_by
from instances import Instance, generate

SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)


@pytest.fixture
def compiled():
    """The numba kernel. numba is a dependency: a missing one fails here, loudly."""
    from heuristics._compiled import serial_starts_compiled

    return serial_starts_compiled


@pytest.fixture
def numpy_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``serial_starts`` behave as if numba were not importable."""
    monkeypatch.setattr(heuristics.profile, "_COMPILED", [None])


def instances_(max_jobs: int = 14, max_horizon: int = 24) -> st.SearchStrategy[Instance]:
    """Larger random instances than the default: the decoder is cheap."""
    return random_instances(max_gpus=8, max_jobs=max_jobs, max_horizon=max_horizon)


def _used(inst: Instance, start: np.ndarray) -> np.ndarray:
    """GPUs the started jobs take per slot."""
    used = np.zeros(inst.horizon, dtype=np.int64)
    for j, s in enumerate(start.tolist()):
        if s >= 0:
            used[s : s + int(inst.durations[j])] += int(inst.gpus[j])
    return used


def _three(compiled, inst: Instance, order: np.ndarray, reservation: str) -> tuple[list, list, list]:
    """Starts by the compiled kernel, the numpy decoder and the reference."""
    prof = new_profile(inst, reservation)
    fast = compiled(prof.rows, prof.sizes, prof.levels, prof.frag, prof.rule,
                    np.asarray(order, dtype=np.int64),
                    job_arrays(inst), np.full(inst.num_jobs, -1, dtype=np.int64),
                    np.empty((0, 1), dtype=np.int64))
    vec = serial_starts_numpy(new_profile(inst, reservation), order, job_arrays(inst))
    return fast.tolist(), vec.tolist(), list_starts_ref(inst, order, reservation)


@given(inst=instances_(), seed=st.integers(0, 2**16), reservation=st.sampled_from(["peak", "curve"]))
@SETTINGS
def test_compiled_equals_numpy_and_reference(compiled, inst: Instance, seed: int, reservation: str) -> None:
    rng = np.random.default_rng(seed)
    for order in (order_by(inst, "priority"), rng.permutation(inst.num_jobs), rng.permutation(inst.num_jobs)[: inst.num_jobs // 2]):
        fast, vec, ref = _three(compiled, inst, order, reservation)
        assert fast == ref
        assert vec == ref
        assert serial_starts(new_profile(inst, reservation), order, job_arrays(inst)).tolist() == ref


@given(inst=instances_(), seed=st.integers(0, 2**16))
@SETTINGS
def test_dispatch_prefix_then_rest_on_one_profile(compiled, inst: Instance, seed: int) -> None:
    """Conservative backfilling decodes slices of an order on one profile, filling one start array."""
    order = np.random.default_rng(seed).permutation(inst.num_jobs)
    jobs = job_arrays(inst)
    k = inst.num_jobs // 3
    prof = new_profile(inst, "curve")
    start = serial_starts(prof, order[:k], jobs)
    out = serial_starts(prof, order[k:], jobs, start)
    assert out is start
    assert start.tolist() == list_starts_ref(inst, order)
    # the rows left are the capacity minus what the placed jobs take, in the pool and on the node
    used = _used(inst, start)
    assert prof.pool.tolist() == (inst.batch_capacity("curve") - used).tolist()
    assert prof.free.tolist() == [(inst.num_gpus - used).tolist()]
    assert prof.pool.min(initial=0) >= 0


@given(inst=instances_(), seed=st.integers(0, 2**16), reservation=st.sampled_from(["peak", "curve"]))
@SETTINGS
def test_numpy_fallback_matches_reference(numpy_only, inst: Instance, seed: int, reservation: str) -> None:
    assert decoder.compiled_decoder() is None
    order = np.random.default_rng(seed).permutation(inst.num_jobs)
    start = serial_starts(new_profile(inst, reservation), order, job_arrays(inst))
    assert start.tolist() == list_starts_ref(inst, order, reservation)


@pytest.mark.parametrize("family", ["hc-deadlines", "hc-bursty", "medium"])
def test_family_instances_all_paths_agree(compiled, family: str) -> None:
    inst = generate(family, seed=1)
    order = order_by(inst, "priority")
    for reservation in ("peak", "curve"):
        fast, vec, ref = _three(compiled, inst, order, reservation)
        assert fast == vec == ref


def test_methods_on_the_numpy_path_give_the_compiled_schedules(compiled, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every method built on the serial decoder gives the same schedule on both paths."""
    inst = generate("hc-deadlines", seed=2)
    params = {
        "list": {},
        "conservative-peak": {},
        "conservative-curve": {},
        "sampling": {"passes": 8, "time_limit": None},
        "local-search": {"iterations": 20, "time_limit": None},
        "best": {"passes": 8, "iterations": 20, "lns_rounds": 1, "time_limit": None},
    }
    with_numba = {m: heuristics.solve(inst, m, **kw).schedule.to_array(inst).tolist() for m, kw in params.items()}
    monkeypatch.setattr(heuristics.profile, "_COMPILED", [None])
    for m, kw in params.items():
        assert heuristics.solve(inst, m, **kw).schedule.to_array(inst).tolist() == with_numba[m], m


def test_dispatch_falls_back_for_plain_jobs_and_orders(compiled) -> None:
    inst = generate("hc-mixed", seed=0)
    order = order_by(inst, "priority")
    ref = list_starts_ref(inst, order, "curve")
    plain = tuple(c.tolist() for c in job_arrays(inst))
    assert serial_starts(new_profile(inst), order, plain).tolist() == ref
    assert serial_starts(new_profile(inst), list(order), job_arrays(inst)).tolist() == ref
    start32 = np.full(inst.num_jobs, -1, dtype=np.int32)  # not the kernel's dtype: the numpy path
    assert serial_starts(new_profile(inst), order, job_arrays(inst), start32).tolist() == ref


def test_the_pool_row_decoders_kept_for_outside_callers(compiled) -> None:
    """``heuristics._core`` decodes on a bare pool row, in place, as before."""
    inst = generate("hc-mixed", seed=0)
    order = order_by(inst, "priority")
    ref = list_starts_ref(inst, order, "curve")
    for decode in (_core.serial_starts, _core.serial_starts_numpy):
        free = inst.batch_capacity("curve")
        start = decode(free, order, _core.job_arrays(inst))
        assert start.tolist() == ref
        assert free.tolist() == (inst.batch_capacity("curve") - _used(inst, start)).tolist()
    kernel = _core._compiled_decoder()
    assert kernel is not None
    g, p, r, d = job_arrays(inst)
    assert kernel(inst.batch_capacity("curve"), order, g, p, r, d,
                  np.full(inst.num_jobs, -1, dtype=np.int64)).tolist() == ref


@pytest.mark.parametrize("which", ["past-the-end", "below-minus-n"])
def test_out_of_range_order_raises_on_both_paths(compiled, monkeypatch: pytest.MonkeyPatch, which: str) -> None:
    inst = generate("hc-mixed", seed=0)
    n = inst.num_jobs
    bad = np.array([0, n] if which == "past-the-end" else [-n - 1])
    with pytest.raises(IndexError):
        serial_starts(new_profile(inst), bad, job_arrays(inst))
    monkeypatch.setattr(heuristics.profile, "_COMPILED", [None])
    with pytest.raises(IndexError):
        serial_starts(new_profile(inst), bad, job_arrays(inst))
