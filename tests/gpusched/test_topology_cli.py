"""The command line on nodes: ``generate --node-gpus``, ``families``, ``solve --json`` placements."""

from __future__ import annotations

import json

import pytest

import instances
from gpusched.cli import main
from gpusched.commands.core import parse_node_gpus


def test_parse_node_gpus() -> None:
    assert parse_node_gpus("8") == 8
    assert parse_node_gpus(" 8,4,2,2 ") == [8, 4, 2, 2]
    assert parse_node_gpus("openb") == "openb"
    for bad in ("", "8,,4", "-8", "x", "8.5"):
        with pytest.raises(ValueError, match="--node-gpus"):
            parse_node_gpus(bad)


@pytest.mark.parametrize(("flag", "sizes"), [("8", [8, 4]), ("8,2,2", [8, 2, 2]),
                                             ("openb", None)])
def test_generate_with_a_node_shape(tmp_path, flag, sizes) -> None:
    out = tmp_path / "i.json"
    assert main(["generate", "hc-mixed", "--seed", "3", "--node-gpus", flag, "-o", str(out)]) == 0
    inst = instances.load(out)
    assert inst.nodes is not None
    got = [n.gpus for n in inst.nodes]
    assert got == (sizes if sizes is not None else instances.openb_node_mix(12, seed=3))
    assert inst == instances.generate("hc-mixed", seed=3, node_gpus=parse_node_gpus(flag))


@pytest.mark.parametrize("flag", ["0", "8,8", "foo", "5,5,2"])
def test_generate_bad_shape_exits_2(capsys, flag) -> None:
    assert main(["generate", "hc-mixed", "--seed", "3", "--node-gpus", flag]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "node-gpus" in err[0].replace("_", "-")
    assert "Traceback" not in err[0]


def test_generate_shape_given_twice(capsys) -> None:
    assert main(["generate", "small", "--node-gpus", "8", "-p", "node_gpus=4"]) == 2
    assert "given twice" in capsys.readouterr().err


def test_families_say_they_take_a_node_shape(capsys) -> None:
    assert main(["families"]) == 0
    out = capsys.readouterr().out
    assert "node shape" in out and "--node-gpus" in out and "openb" in out


def test_solve_json_carries_the_placement(tmp_path, capsys) -> None:
    path = tmp_path / "i.json"
    instances.save(instances.generate("hc-mixed", seed=3, node_gpus=8), path)
    assert main(["solve", str(path), "-m", "fifo", "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert set(obj["placement"]) == set(obj["starts"]) and obj["starts"]
    inst = instances.load(path)
    sched = instances.Schedule(inst.name, obj["starts"], obj["placement"])
    assert instances.evaluate(inst, sched).value == pytest.approx(obj["value"])
    assert "fragmentation" in obj
    flat = tmp_path / "f.json"
    instances.save(instances.generate("hc-mixed", seed=3), flat)
    assert main(["solve", str(flat), "-m", "fifo", "--json"]) == 0
    assert "placement" not in json.loads(capsys.readouterr().out)
