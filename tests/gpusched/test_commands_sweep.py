"""gpusched.commands.sweep: `gpusched bench` and `gpusched table` on the command line."""

from __future__ import annotations

import inspect
import io

import pandas as pd
import pytest

import heuristics
from gpusched.cli import build_parser, main
from gpusched.commands import sweep as commands
from gpusched.dispatch import EXACT_METHODS


def test_cli_bench_and_bad_input(tmp_path, capsys):
    out = tmp_path / "o"
    argv = ["bench", "--families", "small", "--seeds", "2", "--methods", "fifo,fifo-curve",
            "-o", str(out), "--workers", "1", "--no-progress"]
    assert main(argv) == 0
    assert "4 cells run (0 errors), 0 already done" in capsys.readouterr().out
    assert main(argv) == 0
    assert "0 cells run (0 errors), 4 already done" in capsys.readouterr().out
    for bad, msg in (
        (["--methods", "nope"], "unknown method 'nope'"),
        (["--families", "nope"], "unknown family 'nope'"),
        (["--seeds", "3-1"], "seeds"),
        (["--workers", "0"], "--workers"),
        (["--time-limit", "-1"], "--time-limit"),
        (["--methods", "list", "-p", "list.rul=value"], "list.rul: not a parameter"),
    ):
        args = dict(zip(argv[1::2], argv[2::2]))
        args.pop("--no-progress", None)
        args.update(dict(zip(bad[::2], bad[1::2])))
        cmd = ["bench", *[x for kv in args.items() for x in kv], "--no-progress"]
        assert main(cmd) == 2
        err = capsys.readouterr().err
        assert msg in err and "Traceback" not in err
    # A table measured from a baseline the results do not hold is refused, not printed.
    assert main(["table", str(out), "--baseline", "nope"]) == 2
    err = capsys.readouterr().err
    assert "--baseline" in err and "nope" in err and "fifo-curve" in err


def test_cli_config_and_table(tmp_path, capsys):
    cfg = tmp_path / "sweep.toml"
    cfg.write_text('families = ["small"]\nseeds = 2\nmethods = ["fifo", "fifo-curve"]\n')
    out = tmp_path / "o"
    assert main(["bench", "--config", str(cfg), "-o", str(out), "--workers", "1",
                 "--no-progress"]) == 0
    assert "4 cells run" in capsys.readouterr().out
    assert main(["bench", "--config", str(cfg), "--methods", "fifo", "-o", str(out)]) == 2
    assert "either as a file or as flags" in capsys.readouterr().err
    assert main(["table", str(out)]) == 0
    md = capsys.readouterr().out
    assert "| small" in md and "fifo-curve" in md
    assert main(["table", str(out), "--format", "latex", "-o", str(tmp_path / "t.tex")]) == 0
    assert "\\toprule" in (tmp_path / "t.tex").read_text()
    assert main(["table", str(out / "results.csv"), "--format", "csv",
                 "--methods", "fifo-curve"]) == 0
    csv = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert list(csv["method"]) == ["fifo-curve"] and csv["n"].tolist() == [2]
    assert main(["table", str(out), "--view", "seed"]) == 2  # no seed family in these rows
    assert "nothing to show" in capsys.readouterr().err
    assert main(["table", str(tmp_path / "empty")]) == 2
    assert main(["table", str(out), "--methods", "fifo", "--view", "ablation"]) == 2
    assert "only the summary view" in capsys.readouterr().err


def test_table_format_takes_the_file_suffixes(tmp_path, capsys):
    """`--format md` and `--format tex` (what the README suggested) are markdown and latex."""
    out = tmp_path / "o"
    assert main(["bench", "--families", "small", "--methods", "fifo,list", "-o", str(out),
                 "--workers", "1", "--no-progress"]) == 0
    capsys.readouterr()
    for alias, name in (("md", "markdown"), ("tex", "latex")):
        assert main(["table", str(out), "--format", alias]) == 0
        got = capsys.readouterr().out
        assert main(["table", str(out), "--format", name]) == 0
        assert got == capsys.readouterr().out
    assert main(["table", str(out), "--format", "html"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def _help(option: str) -> str:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    bench = sub.choices["bench"]
    return " ".join(next(a for a in bench._actions if option in a.option_strings).help.split())


def test_time_limit_help_names_every_method_it_sets():
    """--time-limit reaches every method that takes a time limit (exact methods and the
    heuristics with a budget, such as best); its help names exactly those."""
    text = _help("--time-limit")
    budgeted = [m for m, fn in heuristics.METHODS.items()
                if "time_limit" in inspect.signature(fn).parameters]
    assert "best" in budgeted and commands.budgeted_heuristics() == budgeted
    named = text.split("heuristics with a budget (")[1].split(")")[0].split(", ")
    assert named == budgeted
    for m in EXACT_METHODS:
        assert m in text.split("exact methods (")[1].split(";")[0]
    for m in set(heuristics.METHODS) - set(budgeted):  # the others are not claimed
        assert m not in named


def _probe(inst, time_limit=None):
    raise RuntimeError(f"time_limit={time_limit}")


def _no_budget(inst):
    raise RuntimeError("ran without a time limit")


def test_time_limit_reaches_the_heuristics_that_take_one(tmp_path, monkeypatch, capsys):
    """What the help says, measured through the command line: the flag is passed to a
    heuristic that takes ``time_limit`` and not to one that does not."""
    monkeypatch.setitem(heuristics.METHODS, "probe", _probe)
    monkeypatch.setitem(heuristics.METHODS, "nobudget", _no_budget)
    out = tmp_path / "o"
    assert main(["bench", "--families", "small", "--methods", "probe,nobudget",
                 "--time-limit", "0.5", "-o", str(out), "--workers", "1", "--no-progress"]) == 0
    from gpusched import sweep

    msgs = sweep.load_rows(out).set_index("method")["message"]
    assert msgs["probe"] == "RuntimeError: time_limit=0.5"
    assert msgs["nobudget"] == "RuntimeError: ran without a time limit"


@pytest.mark.parametrize("name", ["bench", "table", "plot", "reproduce"])
def test_subcommands_are_registered(name):
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert name in sub.choices
