"""Packing and placement files: round trips, deterministic bytes, and the broken-file corpus
(the library names the file and the field; the command line exits 2 with one line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from packing_cases import random_packing

from gpusched.cli import main
from instances.packing import (
    dumps_packing,
    load_packing,
    load_placement,
    packing_from_dict,
    packing_to_dict,
    save_packing,
    save_placement,
)

BROKEN = Path(__file__).parents[1] / "data" / "broken"
EXPECTED: dict[str, list[str]] = json.loads((BROKEN / "packing-expected.json").read_text())
BASE_PACKING = BROKEN / "packing-base" / "packing.json"
BASE_PLACEMENT = BROKEN / "packing-base" / "placement.json"
PACKING_FILES = sorted(k for k in EXPECTED if k.startswith("packing/packing-"))
PLACEMENT_FILES = sorted(k for k in EXPECTED if k.startswith("packing/placement-"))
# an unknown pod or node is found when the placement meets its packing, not at load
LOADS = [k for k in PLACEMENT_FILES if "unknown" not in k]


def test_round_trip_and_deterministic_bytes(tmp_path):
    p = random_packing(5)
    save_packing(p, tmp_path / "a.json")
    assert load_packing(tmp_path / "a.json") == p
    assert (tmp_path / "a.json").read_text() == dumps_packing(p)
    assert packing_from_dict(json.loads(dumps_packing(p))) == p
    assert packing_from_dict(packing_to_dict(p)) == p
    for pod, d in zip(p.pods, packing_to_dict(p)["pods"]):
        assert ("gpu_models" in d) == bool(pod.gpu_models)  # absent means any


def test_every_corpus_file_has_an_expectation():
    on_disk = {f"packing/{p.name}" for p in (BROKEN / "packing").iterdir()}
    assert on_disk == set(EXPECTED)
    assert all(EXPECTED.values())


def test_base_files_are_valid(capsys):
    assert main(["check-pack", str(BASE_PACKING), str(BASE_PLACEMENT)]) == 0
    assert "allocated 2500" in capsys.readouterr().out


def _names(message: str, path: Path, fragments: list[str]) -> None:
    assert str(path) in message, message
    for f in fragments:
        assert f in message, f"{f!r} not in {message!r}"


def _one_line(code: int, err: str, path: Path, fragments: list[str]) -> None:
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("gpusched: error: ")
    _names(lines[0], path, fragments)


@pytest.mark.parametrize("name", PACKING_FILES)
def test_broken_packing_library(name):
    path = BROKEN / name
    with pytest.raises(ValueError) as e:
        load_packing(path)
    assert str(e.value).startswith(f"{path}: ")
    _names(str(e.value), path, EXPECTED[name])


@pytest.mark.parametrize("name", PACKING_FILES)
def test_broken_packing_cli(name, capsys):
    path = BROKEN / name
    _one_line(main(["check-pack", str(path), str(BASE_PLACEMENT)]), capsys.readouterr().err,
              path, EXPECTED[name])
    _one_line(main(["pack", str(path), "--policy", "fgd", "--no-bound"]),
              capsys.readouterr().err, path, EXPECTED[name])


@pytest.mark.parametrize("name", LOADS)
def test_broken_placement_library(name):
    path = BROKEN / name
    with pytest.raises(ValueError) as e:
        load_placement(path)
    assert str(e.value).startswith(f"{path}: ")
    _names(str(e.value), path, EXPECTED[name])


@pytest.mark.parametrize("name", PLACEMENT_FILES)
def test_broken_placement_cli(name, capsys):
    path = BROKEN / name
    _one_line(main(["check-pack", str(BASE_PACKING), str(path)]), capsys.readouterr().err, path,
              EXPECTED[name])


def test_pack_file_writes_a_checked_placement(tmp_path, capsys):
    out = tmp_path / "pl.json"
    assert main(["pack", str(BASE_PACKING), "--policy", "bestfit", "-o", str(out), "--json",
                 "--no-bound"]) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["allocated_milli"] == 2500 and line["failed"] == 0 and line["bound_milli"] is None
    assert main(["check-pack", str(BASE_PACKING), str(out)]) == 0
    save_placement(load_placement(out), tmp_path / "again.json")
    assert load_placement(tmp_path / "again.json") == load_placement(out)


def test_pack_usage_errors(capsys):
    assert main(["pack", str(BASE_PACKING)]) == 2
    assert "--policy" in capsys.readouterr().err
    assert main(["pack", str(BASE_PACKING), "--policy", "fdg", "--no-bound"]) == 2
    assert "unknown policy 'fdg'" in capsys.readouterr().err
    assert main(["pack", "openb", "--seeds", "0"]) == 2
    assert "-o/--output" in capsys.readouterr().err
    assert main(["pack", "openb", "-o", "x", "--policies", "fgd,nope"]) == 2
    assert "--policies: unknown policy 'nope'" in capsys.readouterr().err


def test_pack_file_json_is_one_line_with_the_bound(tmp_path, capfd):
    """The bound's MIPs print nothing to the C-level standard output: one JSON line."""
    save_packing(random_packing(11, nodes=6, pods=40), tmp_path / "p.json")
    assert main(["pack", str(tmp_path / "p.json"), "--policy", "fgd", "--json",
                 "--bound-time", "10"]) == 0
    out = capfd.readouterr().out.strip().splitlines()
    assert len(out) == 1
    line = json.loads(out[0])
    assert line["allocated_milli"] <= line["best_milli"] <= line["bound_milli"]
