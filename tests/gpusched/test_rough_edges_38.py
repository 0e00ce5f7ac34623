"""The rough edges a new user hit (issue 38): each one, shown fixed."""

from __future__ import annotations

import json
import logging
import subprocess
import sys

import paths
import pytest

import instances
from gpusched.cli import build_parser, main

BASE_PACKING = paths.DATA / "broken" / "packing-base" / "packing.json"

HEAVY = ("numpy", "numba", "pandas", "matplotlib", "scipy", "jsonschema", "heuristics", "milp",
         "matheuristics", "highspy", "pulp")
"""What the command line's start must not import (the commands import it when they run)."""


def _python(code: str) -> str:
    """Run ``code`` in a fresh interpreter at the repository's root; its standard output."""
    done = subprocess.run([sys.executable, "-c", code], cwd=paths.ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _loaded(code: str) -> list[str]:
    """The heavy top-level modules loaded after running ``code`` (in a fresh interpreter)."""
    out = _python(code + "\nimport sys, json\n"
                  f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r})))")
    return json.loads(out.strip().splitlines()[-1])


def _subparsers() -> dict[str, object]:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return dict(sub.choices)  # type: ignore[attr-defined]


# ---------------------------------------------------------------- 1. a quick start


def test_importing_the_command_line_imports_nothing_heavy() -> None:
    assert _loaded("import gpusched.cli") == []


def test_building_the_parser_and_every_help_imports_nothing_heavy() -> None:
    code = ("import contextlib, io\n"
            "from gpusched.cli import build_parser\n"
            "p = build_parser()\n"
            "sub = next(a for a in p._actions if a.dest == 'command')\n"
            "texts = [p.format_help(), *(q.format_help() for q in sub.choices.values())]\n")
    assert _loaded(code) == []


def test_version_imports_nothing_heavy_and_names_the_library_edition() -> None:
    code = ("import contextlib, io\n"
            "from gpusched.cli import main\n"
            "buf = io.StringIO()\n"
            "with contextlib.redirect_stdout(buf), contextlib.suppress(SystemExit):\n"
            "    main(['--version'])\n"
            "print(buf.getvalue().strip())\n")
    out = _python(code + "import sys; print([m for m in sys.modules if m.split('.')[0] in "
                  f"{HEAVY!r} or m == 'instances'])")
    text, loaded = out.strip().splitlines()
    from instances.library import load_library

    assert text.endswith(f"benchmark library edition {load_library().version})")
    assert loaded == "[]"


def test_the_public_names_of_gpusched_stay() -> None:
    """``gpusched.solve``, ``gpusched.simulate`` (a function, though a subpackage has its
    name), ... load on first use; ``import gpusched`` alone loads nothing heavy."""
    assert _loaded("import gpusched") == []
    out = _python("import gpusched, gpusched.simulate.replay, inspect\n"
                  "print(inspect.isfunction(gpusched.simulate), inspect.isfunction(gpusched.solve),"
                  " inspect.isclass(gpusched.SimResult), sorted(gpusched.EXACT_METHODS),"
                  " 'fifo' in gpusched.method_names(), gpusched.__version__.count('.') >= 2)\n"
                  "from gpusched import simulate, solve\n"
                  "print(simulate is gpusched.simulate, solve is gpusched.solve)")
    assert out.split("\n")[:2] == ["True True True ['cpsat', 'milp', 'milp-pulp'] True True",
                                   "True True"]
    import gpusched

    assert set(gpusched.__all__) <= set(dir(gpusched))
    with pytest.raises(AttributeError):
        gpusched.no_such_name  # noqa: B018


def test_the_names_the_help_says_without_importing_them_are_the_real_ones() -> None:
    """The parser names methods and formats without importing their packages; each list is
    held here to the real one."""
    from gpusched.commands import bounds, sweep, traces
    from gpusched.dispatch import EXACT_METHODS
    from instances.traces import FORMATS
    from milp.bound import BOUND_METHODS

    assert tuple(EXACT_METHODS) == sweep.EXACT_NAMES
    assert list(sweep.BUDGETED_NAMES) == sweep.budgeted_heuristics()
    assert tuple(BOUND_METHODS) == bounds.BOUND_METHOD_NAMES
    assert tuple(FORMATS) == traces.FORMAT_NAMES


# ---------------------------------------------------------------- 2. bars on a terminal only


@pytest.mark.parametrize(("tty", "flag", "drawn"), [
    (False, [], False), (True, [], True), (True, ["--no-progress"], False),
])
def test_pack_openb_draws_its_bar_only_on_a_terminal(tmp_path, capsys, monkeypatch, tty, flag,
                                                     drawn) -> None:
    from gpusched.sweep import packing

    seen: dict[str, object] = {}

    def spy(cells, out, **kw):
        seen.update(kw)
        raise KeyboardInterrupt  # stop before any cell runs: only the flag is under test

    monkeypatch.setattr(sys.stderr, "isatty", lambda: tty)
    monkeypatch.setattr(packing, "run_pack_cells", spy)
    monkeypatch.setattr(packing, "load_pack_rows", lambda *a, **k: [])
    assert main(["pack", "openb", "--seeds", "0-1", "--policies", "fgd", "-o",
                 str(tmp_path / "p"), *flag]) == 130
    assert seen["progress"] is drawn


def test_every_command_decides_its_bar_by_one_helper() -> None:
    """A command passes ``progress=`` only through :func:`bars_wanted` (on a terminal only,
    never with ``--no-progress``)."""
    folder = paths.ROOT / "gpusched" / "commands"
    for path in sorted(folder.glob("*.py")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if "progress=" in line and "def " not in line:
                assert "bars_wanted(" in line, f"{path.name}:{n}: {line.strip()}"
    from gpusched.commands.core import bars_wanted

    assert bars_wanted() is False  # the tests' standard error is not a terminal


# ---------------------------------------------------------------- 3. seeds said plainly


def test_seeds_zero_says_how_to_ask_for_seed_zero(tmp_path, capsys) -> None:
    from gpusched.sweep import parse_seeds

    with pytest.raises(ValueError, match=r"--seed 0 or --seeds 0-0"):
        parse_seeds(0)
    for argv in (["bench", "--families", "small", "--methods", "fifo", "-o", str(tmp_path / "b")],
                 ["pack", "openb", "-o", str(tmp_path / "p")]):
        assert main([*argv, "--seeds", "0"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("gpusched: error: --seeds: 0 is a count")
        assert "--seed 0 or --seeds 0-0" in err
    assert not (tmp_path / "b").exists()


def test_bench_seed_runs_that_seed_and_says_so_first(tmp_path, capsys) -> None:
    out = tmp_path / "b"
    assert main(["bench", "--families", "small", "--methods", "fifo", "--seed", "5", "-o",
                 str(out), "--workers", "1", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert err.splitlines()[0] == "gpusched bench: seed 5; 1 cell"
    from gpusched.sweep import load_rows

    assert set(load_rows(out)["instance"]) == {"small-s5"}


def test_a_count_of_seeds_is_said_to_be_a_count(tmp_path, capsys) -> None:
    out = tmp_path / "b"
    assert main(["bench", "--families", "small", "--methods", "fifo", "--seeds", "3", "-o",
                 str(out), "--workers", "1", "--no-progress"]) == 0
    first = capsys.readouterr().err.splitlines()[0]
    assert first == ("gpusched bench: seeds 0-2 (3 seeds); --seeds 3 is a count from 0 "
                     "(seed 3 alone: --seed 3); 3 cells")
    assert main(["bench", "--families", "small", "--methods", "fifo", "--seeds", "3,7", "-o",
                 str(out), "--workers", "1", "--no-progress"]) == 0
    assert capsys.readouterr().err.splitlines()[0] == "gpusched bench: seeds 3, 7 (2 seeds); 2 cells"


@pytest.mark.parametrize("argv", [
    ["bench", "--families", "small", "--methods", "fifo", "--seed", "1", "--seeds", "2"],
    ["bench", "--families", "small", "--methods", "fifo", "--seed", "-1"],
    ["bench", "--families", "small", "--methods", "fifo", "--seed", "x"],
    ["pack", "openb", "--seed", "1", "--seeds", "2"],
    ["reproduce", "real", "--seed", "1"],
])
def test_seed_and_seeds_bad_input_is_one_line(tmp_path, capsys, argv) -> None:
    assert main([*argv, "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--seed" in err
    assert not (tmp_path / "o").exists()


def test_bench_config_refuses_seed_flags_beside_it(tmp_path, capsys) -> None:
    cfg = tmp_path / "s.toml"
    cfg.write_text('families = ["small"]\nseeds = 1\nmethods = ["fifo"]\n')
    assert main(["bench", "--config", str(cfg), "--seed", "3", "-o", str(tmp_path / "o")]) == 2
    assert "--config" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["bench", "pack", "reproduce"])
def test_the_help_says_the_forms_of_seeds(command) -> None:
    p = _subparsers()[command]
    text = " ".join(p.format_help().split())  # type: ignore[attr-defined]
    for form in ("5 = a count, seeds 0-4", "0-9 = a range", "3,7 = a list", "--seed N"):
        assert form in text, (command, form)


def test_reproduce_seed_takes_one_seed(tmp_path, capsys, monkeypatch) -> None:
    seen: dict[str, object] = {}

    def spy(cells, out, **kw):
        seen["seeds"] = {c.seed for c in cells}
        raise KeyboardInterrupt

    monkeypatch.setattr("gpusched.sweep.run_bench", spy)
    assert main(["reproduce", "seed", "-o", str(tmp_path / "r"), "--seed", "4"]) == 130
    assert seen["seeds"] == {4}
    assert capsys.readouterr().err.startswith("gpusched reproduce seed: seed 4; ")


def test_pack_openb_takes_one_seed(tmp_path, capsys, monkeypatch) -> None:
    from gpusched.sweep import packing

    seen: dict[str, object] = {}

    def spy(cells, out, **kw):
        seen["seeds"] = sorted({c.seed for c in cells})
        raise KeyboardInterrupt

    monkeypatch.setattr(packing, "run_pack_cells", spy)
    monkeypatch.setattr(packing, "load_pack_rows", lambda *a, **k: [])
    assert main(["pack", "openb", "--seed", "7", "--policies", "fgd,bestfit", "-o",
                 str(tmp_path / "p")]) == 130
    assert seen["seeds"] == [7]
    assert capsys.readouterr().err.startswith("gpusched pack: seed 7; 2 cells\n")


def test_pack_file_refuses_seeds(capsys) -> None:
    assert main(["pack", str(BASE_PACKING), "--policy", "fgd", "--seeds", "3", "--no-bound"]) == 2
    assert "--seeds" in capsys.readouterr().err


@pytest.mark.parametrize(("seeds", "said"), [
    ([5], "seed 5"), ([0, 1, 2, 3, 4], "seeds 0-4 (5 seeds)"), ([3, 7], "seeds 3, 7 (2 seeds)"),
    ([0, 1, 2, 5, 6, 9], "seeds 0-2, 5, 6, 9 (6 seeds)"), ([], "no seeds"),
])
def test_describe_seeds(seeds, said) -> None:
    from gpusched.sweep.seeds import describe_seeds

    assert describe_seeds(seeds) == said


# ---------------------------------------------------------------- 4. -v after the subcommand


def test_verbose_goes_before_or_after_the_subcommand(capsys, monkeypatch) -> None:
    p = build_parser()
    args = p.parse_args(["bench", "--methods", "fifo", "-o", "x", "-v"])
    assert args.verbose + getattr(args, "sub_verbose", 0) == 1
    args = p.parse_args(["-v", "bench", "--methods", "fifo", "-o", "x", "-v"])
    assert args.verbose + getattr(args, "sub_verbose", 0) == 2
    args = p.parse_args(["-v", "families"])
    assert args.verbose + getattr(args, "sub_verbose", 0) == 1
    args = p.parse_args(["library", "list", "-vv"])
    assert args.verbose + getattr(args, "sub_verbose", 0) == 2

    levels: list[int] = []
    monkeypatch.setattr(logging, "basicConfig", lambda **kw: levels.append(kw["level"]))
    assert main(["families", "-vv"]) == 0
    assert main(["methods", "--verbose"]) == 0
    assert main(["families"]) == 0
    assert levels == [logging.DEBUG, logging.INFO, logging.WARNING]


# ---------------------------------------------------------------- 5. scenario says what it wrote


def test_scenario_says_what_it_wrote(tmp_path, capsys) -> None:
    x, sc = tmp_path / "x.json", tmp_path / "sc.json"
    assert main(["generate", "small", "--seed", "0", "-o", str(x)]) == 0
    capsys.readouterr()
    assert main(["scenario", str(x), "--sigma", "0.3", "-o", str(sc)]) == 0
    out, err = capsys.readouterr()
    assert out == ("lognormal scenario of small-s0 (seed 0, sigma 0.3, rho 0.5, mean_one true): "
                   f"1 service over 13 slots; wrote {sc}\n")
    assert err == ""
    assert main(["scenario", str(x), "--model", "trace"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["format"] == "gpusched-scenario/1"  # standard output: the file
    assert err == "trace scenario of small-s0 (seed 0, day 7): 1 service over 13 slots\n"


# ---------------------------------------------------------------- 6. no negative zero


def test_library_list_prints_no_negative_zero(capsys) -> None:
    from gpusched.library import percent

    assert percent(-1e-12) == "0.00%" and percent(-0.0) == "0.00%"
    assert percent(0.0123) == "1.23%" and percent(-0.5) == "-50.00%"
    assert main(["library", "list"]) == 0
    out = capsys.readouterr().out
    assert "-0.00" not in out and "0.00%" in out


def test_compare_view_prints_no_negative_zero() -> None:
    import pandas as pd

    from gpusched.library import compare_view

    frame = pd.DataFrame([{"instance": "a", "method": "m", "status": "optimal", "value": -1e-9,
                           "upper_bound": 1.0, "best_known": 1.0, "best_bound": 1.0,
                           "gap_to_bound": -1e-13, "gap_to_best": -4e-5, "flags": ""}])
    text = compare_view(frame).render("markdown")
    assert "-0.00" not in text


# ---------------------------------------------------------------- 9. to_row as the README says


def test_to_row_is_the_dict_the_readme_says() -> None:
    import pandas as pd

    readme = " ".join((paths.ROOT / "README.md").read_text().split())
    assert "is one pandas row" not in readme
    assert "`result.to_row()` is a dict, a row of `pandas.DataFrame(rows)`" in readme
    import heuristics

    inst = instances.generate("small", seed=0)
    results = [heuristics.solve(inst, m) for m in ("fifo", "list")]
    rows = [r.to_row() for r in results]
    assert all(type(row) is dict for row in rows)
    frame = pd.DataFrame(rows)
    assert list(frame["method"]) == ["fifo", "list"] and len(frame) == 2


# ---------------------------------------------------------------- 10. a user's rule by name


def test_no_rule_flag_is_limited_to_the_built_in_names() -> None:
    for name, p in _subparsers().items():
        for action in p._actions:  # type: ignore[attr-defined]
            if {"--policy", "--policies", "--placement", "--rule"} & set(action.option_strings):
                assert action.choices is None, (name, action.option_strings)


def test_rules_reach_the_library_as_given(tmp_path, capsys, monkeypatch) -> None:
    import heuristics.packing as hp
    from gpusched.commands import core
    from instances.packing import load_packing

    run = hp.place(load_packing(BASE_PACKING), "fgd")  # what the spy returns
    checked: list[str] = []
    monkeypatch.setattr(hp, "check_policy", lambda p: checked.append(p) or p)
    placed: list[str] = []
    monkeypatch.setattr(hp, "place", lambda pk, pol, **kw: placed.append(pol) or run)
    assert main(["pack", str(BASE_PACKING), "--policy", "mine:worst", "--no-bound", "--json"]) == 0
    assert checked == ["mine:worst"] and placed == ["mine:worst"]
    assert json.loads(capsys.readouterr().out)["policy"] == "mine:worst"

    from gpusched.sweep import packing

    cells: list[str] = []

    def spy(cs, out, **kw):
        cells.extend(c.policy for c in cs)
        raise KeyboardInterrupt

    monkeypatch.setattr(packing, "run_pack_cells", spy)
    monkeypatch.setattr(packing, "load_pack_rows", lambda *a, **k: [])
    assert main(["pack", "openb", "--policies", "fgd,mine:worst", "--seed", "0", "-o",
                 str(tmp_path / "p")]) == 130
    assert cells == ["fgd", "mine:worst"]

    seen: dict[str, object] = {}

    def refused(inst, method, **kw):
        seen.update(kw)
        raise ValueError("placement: module 'mine' has no 'worst'\n(from 'mine:worst')")

    monkeypatch.setattr(core, "solve", refused)
    x = tmp_path / "x.json"
    assert main(["generate", "small", "-o", str(x)]) == 0
    capsys.readouterr()
    assert main(["solve", str(x), "--method", "list", "-p", "placement=mine:worst",
                 "-p", "rule=mine:shortest"]) == 2
    assert seen["placement"] == "mine:worst" and seen["rule"] == "mine:shortest"
    # the library's ValueError: exit 2 and one line
    assert capsys.readouterr().err == ("gpusched: error: placement: module 'mine' has no "
                                       "'worst' (from 'mine:worst')\n")


def test_an_unknown_rule_is_one_line_naming_it(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["pack", str(BASE_PACKING), "--policy", "nosuchmodule:worst", "--no-bound"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nosuchmodule:worst" in err
    assert main(["pack", "openb", "--policies", "fgd,nosuchmodule:worst", "-o",
                 str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("gpusched: error: --policies: ")
    assert "nosuchmodule:worst" in err and not (tmp_path / "p").exists()


def test_the_current_folder_is_on_the_path_when_the_command_line_runs(tmp_path,
                                                                       monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    assert main(["families"]) == 0
    assert sys.path[-1] == str(tmp_path)
    before = list(sys.path)
    assert main(["families"]) == 0
    assert sys.path == before  # once


def test_a_users_module_imports_from_the_current_folder_in_the_console_script(tmp_path) -> None:
    """``gpusched`` as installed (its script's folder, not the current one, first on the
    path): a ``MODULE:NAME`` of the current folder imports."""
    (tmp_path / "mine_38.py").write_text("x = 1\n")
    code = ("import os, sys\n"
            f"os.chdir({str(tmp_path)!r})\n"
            "sys.path = [p for p in sys.path if p not in ('', os.getcwd())]\n"
            "from gpusched.cli import main\n"
            "main(['families'])\n"
            "import mine_38\n"
            "print(mine_38.x)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=paths.ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "1"

