"""The gpusched-bound/1 file: round trip, check_bound, and every broken file refused."""

from __future__ import annotations

import json

import numpy as np
import paths
import pytest

import instances
from instances.bound_io import BoundCertificate, bound_from_dict, check_bound

BROKEN = paths.DATA / "broken"
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


# ---------------------------------------------------------------- command line
def _run(argv, capsys):
    from gpusched.cli import main

    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _one_line_exit_2(code, err, path, fragments):
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("gpusched: error: ")
    assert str(path) in lines[0]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.mark.parametrize("name", sorted(set(EXPECTED) - NEEDS_SCHEDULE))
def test_broken_certificate_cli(name, capsys) -> None:
    path = BOUND / name
    code, out, err = _run(["check-bound", BASE_INSTANCE, path], capsys)
    _one_line_exit_2(code, err, path, EXPECTED[name])
    assert out == ""


def test_cli_bound_below_a_schedule(capsys) -> None:
    path = BOUND / "below-schedule.json"
    code, out, _ = _run(["check-bound", BASE_INSTANCE, path], capsys)
    assert code == 1 and "does NOT hold" in out and len(out.strip().splitlines()) == 1
    code, _, err = _run(["check-bound", BASE_INSTANCE, path, "--schedule", BASE_SCHEDULE], capsys)
    _one_line_exit_2(code, err, path, EXPECTED["below-schedule.json"])


def test_cli_bound_then_check(tmp_path, capsys) -> None:
    inst_path = tmp_path / "m.json"
    instances.save(instances.generate("medium", seed=3), inst_path)
    cert = tmp_path / "c.json"
    code, out, _ = _run(["bound", inst_path, "--time-limit", "20", "--json", "-o", cert], capsys)
    assert code == 0
    d = json.loads(out)
    assert d["method"] == "lagrangian" and d["value"] > 0 and len(out.strip().splitlines()) == 1
    code, out, _ = _run(["check-bound", inst_path, cert, "--json"], capsys)
    assert code == 0
    check = json.loads(out)
    assert check["holds"] and check["recomputed"] == d["value"]
    # a certificate for another instance of the same size: refused by name
    other = tmp_path / "o.json"
    instances.save(instances.generate("medium", seed=3).replace(name="other"), other)
    code, _, err = _run(["check-bound", other, cert], capsys)
    _one_line_exit_2(code, err, cert, ["instance", "other"])
    # a stated value nudged below the recomputed one does not hold
    data = json.loads(cert.read_text())
    data["value"] = d["value"] * (1 - 1e-6)
    cert.write_text(json.dumps(data))
    code, out, _ = _run(["check-bound", inst_path, cert], capsys)
    assert code == 1


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [(["--time-limit", "-1"], "--time-limit"), (["--method", "simplex"], "invalid choice"),
     (["--time-limit", "nan"], "--time-limit")],
)
def test_cli_bound_bad_arguments(argv, fragment, capsys) -> None:
    code, _, err = _run(["bound", BASE_INSTANCE, *argv], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and fragment in err
