"""The compiled serial decoder against the numpy decoder and the per-slot reference.

``serial_starts`` runs the numba decoder when numba is importable; the numpy
decoder (``serial_starts_numpy``) is what runs without it. Both are held to
``reference.list_starts_ref`` here, the numpy one also with the compiled
decoder switched off, so the fallback stays tested where numba is installed.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import list_starts_ref
from strategies import random_instances

import heuristics
from heuristics import _core
from heuristics._core import job_arrays, serial_starts, serial_starts_numpy
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
    monkeypatch.setattr(_core, "_COMPILED", [None])


def instances_(max_jobs: int = 14, max_horizon: int = 24) -> st.SearchStrategy[Instance]:
    """Larger random instances than the default: the decoder is cheap."""
    return random_instances(max_gpus=8, max_jobs=max_jobs, max_horizon=max_horizon)


def _three(compiled, inst: Instance, order: np.ndarray, reservation: str) -> tuple[list, list, list]:
    """Starts by the compiled kernel, the numpy decoder and the reference."""
    jobs = job_arrays(inst)
    n = inst.num_jobs
    fast = compiled(
        inst.batch_capacity(reservation), np.asarray(order, dtype=np.int64),
        *(np.asarray(c, dtype=np.int64) for c in jobs), np.full(n, -1, dtype=np.int64),
    )
    vec = serial_starts_numpy(inst.batch_capacity(reservation), order, jobs)
    return fast.tolist(), vec.tolist(), list_starts_ref(inst, order, reservation)


@given(inst=instances_(), seed=st.integers(0, 2**16), reservation=st.sampled_from(["peak", "curve"]))
@SETTINGS
def test_compiled_equals_numpy_and_reference(compiled, inst: Instance, seed: int, reservation: str) -> None:
    rng = np.random.default_rng(seed)
    for order in (order_by(inst, "priority"), rng.permutation(inst.num_jobs), rng.permutation(inst.num_jobs)[: inst.num_jobs // 2]):
        fast, vec, ref = _three(compiled, inst, order, reservation)
        assert fast == ref
        assert vec == ref
        assert serial_starts(inst.batch_capacity(reservation), order, job_arrays(inst)).tolist() == ref


@given(inst=instances_(), seed=st.integers(0, 2**16))
@SETTINGS
def test_dispatch_prefix_then_rest_on_one_profile(compiled, inst: Instance, seed: int) -> None:
    """Conservative backfilling decodes slices of an order on one profile, filling one start array."""
    order = np.random.default_rng(seed).permutation(inst.num_jobs)
    jobs = job_arrays(inst)
    k = inst.num_jobs // 3
    free = inst.batch_capacity("curve")
    start = serial_starts(free, order[:k], jobs)
    out = serial_starts(free, order[k:], jobs, start)
    assert out is start
    assert start.tolist() == list_starts_ref(inst, order)
    # the profile left is the capacity minus what the placed jobs take
    expect = inst.batch_capacity("curve")
    for j, s in enumerate(start.tolist()):
        if s >= 0:
            expect[s : s + int(inst.durations[j])] -= int(inst.gpus[j])
    assert free.tolist() == expect.tolist()
    assert free.min(initial=0) >= 0


@given(inst=instances_(), seed=st.integers(0, 2**16), reservation=st.sampled_from(["peak", "curve"]))
@SETTINGS
def test_numpy_fallback_matches_reference(numpy_only, inst: Instance, seed: int, reservation: str) -> None:
    assert _core._compiled_decoder() is None
    order = np.random.default_rng(seed).permutation(inst.num_jobs)
    start = serial_starts(inst.batch_capacity(reservation), order, job_arrays(inst))
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
    monkeypatch.setattr(_core, "_COMPILED", [None])
    for m, kw in params.items():
        assert heuristics.solve(inst, m, **kw).schedule.to_array(inst).tolist() == with_numba[m], m


def test_dispatch_falls_back_for_other_dtypes_and_plain_tuples(compiled) -> None:
    inst = generate("hc-mixed", seed=0)
    order = order_by(inst, "priority")
    ref = list_starts_ref(inst, order, "curve")
    plain = tuple(c.tolist() for c in (inst.gpus, inst.durations, inst.releases, inst.deadlines))
    assert not hasattr(plain, "arrays")
    assert serial_starts(inst.batch_capacity("curve"), order, plain).tolist() == ref  # type: ignore[arg-type]
    free32 = inst.batch_capacity("curve").astype(np.int32)
    assert serial_starts(free32, order, job_arrays(inst)).tolist() == ref
    assert serial_starts(inst.batch_capacity("curve"), list(order), job_arrays(inst)).tolist() == ref


@pytest.mark.parametrize("which", ["past-the-end", "below-minus-n"])
def test_out_of_range_order_raises_on_both_paths(compiled, monkeypatch: pytest.MonkeyPatch, which: str) -> None:
    inst = generate("hc-mixed", seed=0)
    n = inst.num_jobs
    bad = np.array([0, n] if which == "past-the-end" else [-n - 1])
    with pytest.raises(IndexError):
        serial_starts(inst.batch_capacity("curve"), bad, job_arrays(inst))
    monkeypatch.setattr(_core, "_COMPILED", [None])
    with pytest.raises(IndexError):
        serial_starts(inst.batch_capacity("curve"), bad, job_arrays(inst))
