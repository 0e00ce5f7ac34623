"""The gpusched-bound/1 file: round trip, check_bound, and every broken file refused."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import instances
from instances.bound_io import BoundCertificate, bound_from_dict, check_bound

BROKEN = Path(__file__).parent / "data" / "broken"
BOUND = BROKEN / "bound"
EXPECTED: dict[str, list[str]] = json.loads((BOUND / "expected.json").read_text())
BASE_INSTANCE = BROKEN / "base" / "instance.json"
BASE_SCHEDULE = BROKEN / "base" / "schedule.json"
NEEDS_SCHEDULE = {"below-schedule.json"}


@pytest.fixture(scope="module")
def inst() -> instances.Instance:
    return instances.load(BASE_INSTANCE)


def test_every_broken_certificate_has_an_expectation() -> None:
    on_disk = {p.name for p in BOUND.iterdir()} - {"expected.json", "valid.json"}
    assert on_disk == set(EXPECTED)


def test_the_valid_certificate_holds(inst) -> None:
    cert = instances.load_bound(BOUND / "valid.json", inst)
    ok, recomputed = check_bound(inst, cert, instances.load_schedule(BASE_SCHEDULE))
    assert ok
    # lam = 0: the value of every job that fits, 12 + 2 + 1.5
    assert recomputed == pytest.approx(15.5)


@pytest.mark.parametrize("name", sorted(set(EXPECTED) - NEEDS_SCHEDULE))
def test_broken_certificate_library(inst, name: str) -> None:
    path = BOUND / name
    with pytest.raises(ValueError) as err:
        instances.load_bound(path, inst)
    message = str(err.value)
    assert message.startswith(f"{path}: "), message
    for fragment in EXPECTED[name]:
        assert fragment in message, message


def test_bound_below_a_checked_schedule_is_refused(inst) -> None:
    cert = instances.load_bound(BOUND / "below-schedule.json", inst)
    ok, _ = check_bound(inst, cert)
    assert not ok  # well formed, and it does not hold
    with pytest.raises(ValueError) as err:
        check_bound(inst, cert, instances.load_schedule(BASE_SCHEDULE))
    for fragment in EXPECTED["below-schedule.json"]:
        assert fragment in str(err.value)


def test_round_trip_keeps_every_bit(tmp_path, inst) -> None:
    lam = np.random.default_rng(0).exponential(1.0, inst.horizon) / 3.0
    value = instances.lagrangian_value(inst, lam)
    cert = BoundCertificate(inst.name, "lagrangian", value, tuple(lam), {"iterations": 4})
    path = tmp_path / "c.json"
    instances.save_bound(cert, path)
    back = instances.load_bound(path, inst)
    assert back == cert
    assert check_bound(inst, back) == (True, value)


def test_tolerance_is_relative_1e9(inst) -> None:
    lam = np.full(inst.horizon, 0.25)
    exact = instances.lagrangian_value(inst, lam)
    just = BoundCertificate(inst.name, "x", exact * (1 - 0.5e-9), tuple(lam))
    under = BoundCertificate(inst.name, "x", exact * (1 - 2e-9), tuple(lam))
    assert check_bound(inst, just)[0]
    assert not check_bound(inst, under)[0]


def test_from_dict_names_the_field() -> None:
    good = json.loads((BOUND / "valid.json").read_text())
    with pytest.raises(ValueError, match=r"^multipliers\[1\]: must be >= 0"):
        bound_from_dict({**good, "multipliers": [0.0, -1.0]})
    with pytest.raises(ValueError, match=r"^value: must be finite"):
        BoundCertificate("x", "m", float("inf"), (0.0,))
