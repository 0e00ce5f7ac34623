"""The command line: contract keys, exit codes, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gpusched.cli import main

CONTRACT = {"method", "status", "value", "upper_bound", "utilization", "runtime_s"}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpusched", *args], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.slow
def test_generate_solve_check_round_trip(tmp_path) -> None:
    x, y, s = tmp_path / "x.json", tmp_path / "y.json", tmp_path / "s.json"
    assert run("generate", "seed-training-heavy", "--seed", "0", "-o", str(x)).returncode == 0
    assert run("generate", "seed-training-heavy", "--seed", "0", "-o", str(y)).returncode == 0
    assert x.read_bytes() == y.read_bytes()
    out = run("solve", str(x), "--method", "fifo", "--json", "-o", str(s))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 1
    d = json.loads(lines[0])
    assert set(d) >= CONTRACT
    assert d["method"] == "fifo" and d["upper_bound"] is None
    chk = run("check", str(x), str(s), "--json")
    assert chk.returncode == 0
    c = json.loads(chk.stdout)
    assert c["feasible"] is True and c["value"] == pytest.approx(d["value"])
    assert c["utilization"] == pytest.approx(d["utilization"])


def test_check_rejects_an_infeasible_schedule_with_exit_1(tmp_path, capsys) -> None:
    inst = tmp_path / "i.json"
    inst.write_text(json.dumps({
        "format": "gpusched-instance/1", "name": "ex", "num_gpus": 2, "horizon": 3,
        "services": [{"name": "s", "priority": 1, "demand": [1, 0, 0]}],
        "jobs": [{"name": "a", "gpus": 2, "duration": 1}],
    }))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "gpusched-schedule/1", "instance": "ex", "starts": {"a": 0}}))
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"format": "gpusched-schedule/1", "instance": "ex", "starts": {"a": 1}}))
    assert main(["check", str(inst), str(good)]) == 0
    assert main(["check", str(inst), str(bad)]) == 1
    assert "slot 0" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("", "empty"),
        ("{", "malformed JSON"),
        ('{"format": "gpusched-instance/1", "name": "x", "num_gpus": 2, "horizon": 2, '
         '"jobs": [{"name": "a", "gpus": 3, "duration": 1}]}', "jobs[0].gpus"),
        ('{"format": "other/1"}', "format"),
    ],
)
@pytest.mark.slow
def test_bad_input_is_one_line_and_exit_2(tmp_path, content, needle) -> None:
    f = tmp_path / "broken.json"
    f.write_text(content)
    out = run("solve", str(f), "--method", "fifo")
    assert out.returncode == 2
    err = out.stderr.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in out.stderr
    assert str(f) in err[0] and needle in err[0]


@pytest.mark.slow
def test_usage_errors_exit_2_without_traceback() -> None:
    for args in (["solve"], ["generate", "no-such-family"], ["frobnicate"]):
        out = run(*args)
        assert out.returncode == 2
        assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_listing_commands(capsys) -> None:
    assert main(["families"]) == 0
    assert "seed-training-heavy" in capsys.readouterr().out
    assert main(["methods"]) == 0
    assert "fifo-curve" in capsys.readouterr().out


def test_written_files_follow_the_umask(tmp_path) -> None:
    import os

    import instances

    old = os.umask(0o022)
    try:
        out = tmp_path / "x.json"
        instances.save(instances.generate("small", seed=0), out)
        assert out.stat().st_mode & 0o777 == 0o644  # not the private 0o600 of a temp file
        assert not list(tmp_path.glob(".*.tmp"))
    finally:
        os.umask(old)


def test_families_prints_plain_text(capsys) -> None:
    assert main(["families"]) == 0
    out = capsys.readouterr().out
    assert "trace-servegen" in out
    assert "`" not in out and ":data:" not in out


def test_json_floats_are_rounded_to_twelve_digits() -> None:
    from gpusched.commands.core import json_line, json_ready

    assert json.loads(json_line({"value": 9.059999999999999})) == {"value": 9.06}
    d = {"a": 0.1 + 0.2, "n": 3, "b": True, "z": None, "s": "x", "big": 2**60,
         "nested": {"l": [1.0000000000001, 2, float("nan")]}, "t": (1e-300, float("inf"))}
    assert json_ready(d) == {"a": 0.3, "n": 3, "b": True, "z": None, "s": "x", "big": 2**60,
                             "nested": {"l": [1.0, 2, None]}, "t": [1e-300, None]}
    assert type(json_ready(d)["n"]) is int and json_ready(d)["big"] == 2**60
    assert json_ready(123456.789012345678) == 123456.789012


def test_solve_json_has_no_float_noise(tmp_path, capsys) -> None:
    x = tmp_path / "x.json"
    assert main(["generate", "hc-mixed", "--seed", "1", "-o", str(x)]) == 0
    capsys.readouterr()
    assert main(["solve", str(x), "--method", "list", "--json"]) == 0
    line = capsys.readouterr().out.strip()
    for key, value in json.loads(line).items():
        if isinstance(value, float):
            assert len(repr(value).lstrip("-").replace(".", "").split("e")[0].lstrip("0")) <= 12, key


@pytest.mark.parametrize(
    ("method", "tty", "as_json", "expected"),
    [
        ("milp", True, False, True),
        ("milp", True, True, False),
        ("milp", False, False, False),
        ("cpsat", True, False, True),
        ("list", True, False, None),  # heuristics take no progress parameter
    ],
)
def test_solve_shows_progress_only_on_a_terminal(tmp_path, capsys, monkeypatch, method, tty,
                                                 as_json, expected) -> None:
    from gpusched.commands import core

    seen: dict[str, object] = {}

    def spy(inst, name, **params):
        seen.update(params)
        return real(inst, name, **params)

    real = core.solve
    monkeypatch.setattr(core, "solve", spy)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: tty)
    x = tmp_path / "x.json"
    assert main(["generate", "small", "--seed", "0", "-o", str(x)]) == 0
    if method == "cpsat":
        pytest.importorskip("ortools")
    args = ["solve", str(x), "--method", method, "--time-limit", "5"] + (["--json"] if as_json else [])
    assert main(args) == 0
    assert seen.get("progress") is expected


def test_milp_draws_its_bar_on_a_terminal(tmp_path, capsys, monkeypatch) -> None:
    x = tmp_path / "x.json"
    assert main(["generate", "small", "--seed", "0", "-o", str(x)]) == 0
    capsys.readouterr()
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main(["solve", str(x), "--method", "milp", "--time-limit", "5"]) == 0
    out, err = capsys.readouterr()
    assert "milp" in err and "|" in err  # the tqdm bar went to stderr
    assert "milp" in out  # the summary went to stdout
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    assert main(["solve", str(x), "--method", "milp", "--time-limit", "5"]) == 0
    assert capsys.readouterr().err == ""
