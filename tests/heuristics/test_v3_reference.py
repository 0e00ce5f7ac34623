"""The compiled version 3 fit (heuristics.shares) held to the plain reference (tests/oracles/reference_v3.py).

FIFO (peak and curve) and the serial decoder under each placement rule give the
same starts, nodes and GPU indices as the reference, on random tiny instances
(tests/oracles/brute_v3.py) and small ``openb-shares`` instances.
"""

from __future__ import annotations

import numpy as np
import pytest
from brute_v3 import tiny_v3_instance
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_v3 import decode_ref, fifo_ref

import heuristics
import instances
from heuristics.engine import new_profile
from heuristics.placement import new_place, place_width
from heuristics.rules import order_by
from instances import Instance

SHAPES = [(2, 2), (2, 1, 1), (3, 2), (4,), (2, 2, 2), (4, 2, 1)]


def _where(inst: Instance, start: np.ndarray, place: np.ndarray
           ) -> dict[int, tuple[int, list[int], list[int]]]:
    span = place_width(inst)[0]
    out = {}
    for j in np.flatnonzero(start >= 0).tolist():
        ks = [int(k) for k in place[j, :span] if k >= 0]
        gs = [int(g) for g in place[j, span:] if g >= 0] if len(ks) == 1 else []
        out[j] = (int(start[j]), ks, gs)
    return out


def _ref_where(start: list[int], where: dict) -> dict[int, tuple[int, list[int], list[int]]]:
    return {j: (s, list(where[j][0]), list(where[j][1]) if len(where[j][0]) == 1 else [])
            for j, s in enumerate(start) if s >= 0}


def _case(seed: int, shape: tuple[int, ...], n: int = 8, T: int = 6) -> Instance:
    for k in range(100):  # a draw with every field at its default is version 2: draw again
        inst = tiny_v3_instance(seed + 1000 * k, n=n, shape=shape, T=T)
        if inst.jobs_use_resources:
            return inst
    raise AssertionError(f"seed {seed}: no version 3 field in 100 draws")


def _openb(seed: int) -> Instance:
    return instances.generate("openb-shares", seed=seed, num_gpus=8, horizon=8, num_jobs=14)


def _check_fifo(inst: Instance, reservation: str) -> None:
    place = new_place(inst)
    start = heuristics.fifo.fifo_starts(inst, reservation, place=place)
    ref = fifo_ref(inst, reservation)
    assert _where(inst, start, place) == _ref_where(*ref)
    res = heuristics.fifo.fifo(inst, reservation=reservation)  # the checker passes it
    assert res.metrics is not None and res.metrics.jobs_run == int((start >= 0).sum())


def _check_list(inst: Instance, order: np.ndarray, rule: str, reservation: str) -> None:
    place = new_place(inst)
    start = heuristics.listsched.list_starts(inst, order, reservation, placement=rule, place=place)
    ref = decode_ref(inst, [int(j) for j in order], reservation, rule)
    assert _where(inst, start, place) == _ref_where(*ref)


@given(st.integers(0, 10_000), st.sampled_from(SHAPES), st.sampled_from(["peak", "curve"]))
@settings(max_examples=60, deadline=None)
def test_fifo_equals_the_reference(seed: int, shape: tuple, reservation: str) -> None:
    _check_fifo(_case(seed, shape), reservation)


@given(st.integers(0, 10_000), st.sampled_from(SHAPES),
       st.sampled_from(["first-fit", "best-fit", "frag"]), st.booleans())
@settings(max_examples=90, deadline=None)
def test_the_serial_decoder_equals_the_reference(seed: int, shape: tuple, rule: str,
                                                 shuffled: bool) -> None:
    inst = _case(seed, shape)
    order = (np.random.default_rng(seed).permutation(inst.num_jobs) if shuffled
             else order_by(inst, "priority"))
    _check_list(inst, order, rule, "curve")


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("rule", ["first-fit", "best-fit", "frag"])
def test_openb_shares_equal_the_reference(seed: int, rule: str) -> None:
    inst = _openb(seed)
    assert inst.shares_gpus
    _check_fifo(inst, "peak")
    _check_fifo(inst, "curve")
    for r in ("value", "area"):
        _check_list(inst, order_by(inst, r), rule, "curve")
        _check_list(inst, order_by(inst, r), rule, "peak")


def test_a_chunked_decode_equals_one_call() -> None:
    """The jobs still to place travel with the state, so decoding in pieces changes nothing."""
    inst = instances.generate("openb-shares", seed=3, num_gpus=16, horizon=12, num_jobs=40)
    order = order_by(inst, "value")
    whole = heuristics.listsched.list_starts(inst, order, placement="frag")
    prof = new_profile(inst, "curve", "frag")
    start = np.full(inst.num_jobs, -1, dtype=np.int64)
    jobs = heuristics.decoder.job_arrays(inst)
    for a in range(0, inst.num_jobs, 7):
        heuristics.decoder.serial_starts(prof, order[a : a + 7], jobs, start)
    assert start.tolist() == whole.tolist()
