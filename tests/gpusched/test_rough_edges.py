"""The rough edges a new user hit (issue 24): each one, shown fixed."""

from __future__ import annotations

import csv
import json
import math

import paths
import pytest
from hypothesis import given
from hypothesis import strategies as st

import instances
from gpusched.cli import main
from instances import Instance, Job, Result, Schedule, Service

# ---------------------------------------------------------------- one rounding rule


def _noisy() -> Instance:
    """Two jobs whose value sums to 1.1 + 2.2 = 3.3000000000000003 in floats."""
    return Instance(
        name="noisy", num_gpus=2, horizon=2,
        services=(Service("s", 1.0, (0, 0)),),
        jobs=(Job("a", gpus=1, duration=1, priority=1.1), Job("b", gpus=1, duration=1, priority=2.2)),
    )


def test_float_noise_is_gone_from_the_checker_and_the_row() -> None:
    assert 1.1 + 2.2 == 3.3000000000000003  # the noise the checker's sum used to keep
    inst = _noisy()
    sched = Schedule(instance="noisy", starts={"a": 0, "b": 0})
    m = instances.evaluate(inst, sched)
    assert m.value == 3.3 and m.total_value == 3.3
    r = Result(method="x", status="optimal", schedule=sched, value=m.value,
               upper_bound=3.3000000000000003, metrics=m)
    row = r.to_row()
    assert row["value"] == 3.3 and row["upper_bound"] == 3.3 and row["gap"] == 0.0


@pytest.mark.parametrize(("value", "bound", "expected"), [
    (685.7499999999999, 685.75, 0.0),          # equal but for float noise
    (685.75, 685.75 * (1 + 1e-7), 0.0),         # within the tolerance
    (685.75, 685.75 * (1 - 1e-7), 0.0),         # a bound a hair below: within it, too
    (0.0, 0.0, 0.0),
    (685.75, 685.81, 0.0000874877881629),       # a real gap stays
    (1.0, 0.0, 0.0),
    (0.0, 1e-300, 1.0),
])
def test_gap_is_zero_within_the_tolerance(value, bound, expected) -> None:
    assert instances.gap(value, bound) == pytest.approx(expected, rel=1e-9, abs=0)


def test_the_tolerance_is_the_one_the_milp_uses() -> None:
    from milp.assemble import tolerance

    inst = _noisy()
    assert tolerance(inst, 500.0) == instances.tolerance(500.0, 1.1)
    assert instances.tolerance(0.5) == instances.tolerance(1.0) == instances.rounding.RELATIVE_TOLERANCE


finite = st.floats(allow_nan=False, allow_infinity=False)


@given(finite, finite)
def test_rounding_is_monotone(x: float, y: float) -> None:
    lo, hi = min(x, y), max(x, y)
    assert instances.rounded(lo) <= instances.rounded(hi)
    assert instances.rounded(instances.rounded(x)) == instances.rounded(x)


@given(finite)
def test_rounding_moves_a_figure_by_less_than_its_twelfth_digit(x: float) -> None:
    assert abs(instances.rounded(x) - x) <= 5e-12 * abs(x)


def test_sweep_rows_and_csv_carry_no_float_noise(tmp_path) -> None:
    x, out = tmp_path / "noisy.json", tmp_path / "sweep"
    instances.save(_noisy(), x)
    assert main(["bench", "--instances", str(x), "--methods", "list,milp", "--time-limit", "5",
                 "-o", str(out), "--workers", "1", "--no-progress"]) == 0
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert {r["method"]: r["value"] for r in rows} == {"list": "3.3", "milp": "3.3"}
    milp_row = next(r for r in rows if r["method"] == "milp")
    assert float(milp_row["gap"]) == 0.0 and milp_row["upper_bound"] == "3.3"
    for cell in (out / "cells").glob("*.json"):
        row = json.loads(cell.read_text())
        assert row["value"] == 3.3 and row["total_value"] == 3.3


def test_json_and_summary_agree_with_the_row(tmp_path, capsys) -> None:
    x = tmp_path / "noisy.json"
    instances.save(_noisy(), x)
    assert main(["solve", str(x), "-m", "list", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["value"] == 3.3 and d["total_value"] == 3.3
    assert not any(isinstance(v, float) and not math.isfinite(v) for v in d.values())


# ---------------------------------------------------------------- node shapes said


@pytest.mark.parametrize(("shape", "sizes", "said"), [
    ("8", [8, 4], "12 GPUs on 1 node of 8 and a last node of the 4 left over (12 is not a multiple of 8)"),
    ("5", [5, 5, 2], "12 GPUs on 2 nodes of 5 and a last node of the 2 left over"),
    ("4", [4, 4, 4], "12 GPUs on 3 nodes of 4;"),
    ("16", [12], "12 GPUs on one node of 12 (the pool is smaller than 16)"),
    ("4,4,2,2", [4, 4, 2, 2], "12 GPUs on 4 nodes: 2 of 4, 2 of 2"),
])
def test_generate_says_how_it_split_the_pool(tmp_path, capsys, shape, sizes, said) -> None:
    x = tmp_path / "n.json"
    assert main(["generate", "hc-mixed", "--seed", "0", "--node-gpus", shape, "-o", str(x)]) == 0
    out = capsys.readouterr().out
    assert said in out + ";"
    assert [n.gpus for n in instances.load(x).nodes] == sizes


def test_describe_nodes_of_a_flat_pool() -> None:
    from instances.nodes import describe_nodes

    assert describe_nodes(_noisy()) == "2 GPUs in one pool"
    assert describe_nodes(instances.with_nodes(_noisy(), [1, 1])) == "2 GPUs on 2 nodes: 2 of 1"


# ---------------------------------------------------------------- generate says what it did


def test_generate_prints_one_summary_line_where_import_does(tmp_path, capsys) -> None:
    x = tmp_path / "x.json"
    assert main(["generate", "hc-mixed", "--seed", "0", "-o", str(x)]) == 0
    out, err = capsys.readouterr()
    assert out == f"hc-mixed seed 0: hc-mixed-s0, 26 jobs, 1 inference service, 36 slots, " \
                  f"12 GPUs in one pool; wrote {x}\n"
    assert err == ""
    assert main(["generate", "hc-mixed", "--seed", "0"]) == 0
    out, err = capsys.readouterr()
    assert instances.instance_from_dict(json.loads(out)) == instances.load(x)  # stdout: the file
    assert err.startswith("hc-mixed seed 0: hc-mixed-s0, 26 jobs") and err.count("\n") == 1


def test_a_missing_folder_is_created_and_said(tmp_path, capsys) -> None:
    x = tmp_path / "missing" / "dir" / "x.json"
    assert main(["generate", "small", "-o", str(x)]) == 0
    err = capsys.readouterr().err
    assert err == f"gpusched: created the folder {x.parent} for {x}\n" and x.is_file()
    assert main(["generate", "small", "-o", str(x)]) == 0
    assert capsys.readouterr().err == ""  # the folder is there now: nothing to say
    s = tmp_path / "other" / "s.json"
    assert main(["solve", str(x), "-m", "fifo", "-o", str(s)]) == 0
    assert f"created the folder {s.parent}" in capsys.readouterr().err and s.is_file()


# ---------------------------------------------------------------- one bound, one spelling


def test_one_bound_is_spelled_one_way(tmp_path, capsys) -> None:
    import re

    x, cert = tmp_path / "x.json", tmp_path / "c.json"
    assert main(["generate", "hc-mixed", "--seed", "0", "-o", str(x)]) == 0
    capsys.readouterr()
    assert main(["bound", str(x), "-o", str(cert)]) == 0
    said_bound = capsys.readouterr().out
    assert main(["solve", str(x), "-m", "lagrangian"]) == 0
    said_solve = capsys.readouterr().out
    assert main(["check-bound", str(x), str(cert)]) == 0
    said_check = capsys.readouterr().out
    value = instances.load_bound(cert, instances.load(x)).value
    spelled = instances.format_value(value)
    assert spelled == "701.937"
    assert f"upper bound {spelled} (lagrangian: " in said_bound
    assert f"bound {spelled} (gap " in said_solve
    assert said_check == f"bound holds: upper bound {spelled}, recomputed from the multipliers {spelled}\n"
    for text in (said_bound, said_solve):
        assert "floor" not in text
        assert re.search(r"stopped improving, even at its smallest step|converged|time limit|"
                         r"bound meets a feasible value", text), text


def test_a_bound_that_does_not_hold_says_by_how_much(tmp_path, capsys) -> None:
    x, cert = tmp_path / "x.json", tmp_path / "c.json"
    instances.save(instances.generate("small", seed=0), x)
    assert main(["bound", str(x), "-o", str(cert)]) == 0
    data = json.loads(cert.read_text())
    data["value"] *= 1 - 1e-8
    cert.write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["check-bound", str(x), str(cert)]) == 1
    out = capsys.readouterr().out
    assert "does NOT hold" in out and "by 1e-08 relative; the tolerance is 1e-09" in out


@pytest.mark.parametrize(("x", "text"), [
    (685.7499999999999, "685.75"), (701.9370567768731, "701.937"), (1234567.89, "1234568"),
    (0.000123456789, "0.000123457"), (None, "none"),
])
def test_format_value(x, text) -> None:
    assert instances.format_value(x) == text


# ---------------------------------------------------------------- optimal beside a gap


def _result(value: float, bound: float, **kw) -> Result:
    return Result(method="milp", status="optimal", schedule=Schedule("x", {}), value=value,
                  upper_bound=bound, **kw)


def test_optimal_beside_a_gap_says_within_the_gap_tolerance() -> None:
    s = _result(685.75, 685.81, params={"mip_gap": 1e-4}).summary()
    assert s.startswith("milp: optimal within the gap tolerance (0.01%), value 685.75, ")
    assert "bound 685.81 (gap 0.01%)" in s
    assert _result(685.75, 685.81).summary().startswith("milp: optimal within the gap tolerance, ")
    assert _result(685.75, 685.7500000000001).summary().startswith("milp: optimal, value 685.75, ")
    assert str(_result(685.75, 685.81).status) == "optimal"  # the row's status is unchanged


# ---------------------------------------------------------------- bars on a terminal only


@pytest.mark.parametrize(("tty", "flag", "drawn"), [
    (False, [], False), (True, [], True), (True, ["--no-progress"], False),
])
def test_bench_draws_its_bar_only_on_a_terminal(tmp_path, capsys, monkeypatch, tty, flag,
                                                drawn) -> None:
    import sys

    monkeypatch.setattr(sys.stderr, "isatty", lambda: tty)
    out = tmp_path / "sweep"
    assert main(["bench", "--families", "small", "--seeds", "1", "--methods", "fifo,list",
                 "-o", str(out), "--workers", "1", *flag]) == 0
    err = capsys.readouterr().err
    first = "gpusched bench: seed 0; --seeds 1 is a count from 0 (seed 1 alone: --seed 1); 2 cells\n"
    assert err.startswith(first)  # the run's first line says which seeds run (issue 38)
    err = err.removeprefix(first)
    assert ("\r" in err and "bench" in err) is drawn, err
    if not drawn:
        assert err == ""


def test_reproduce_draws_no_bar_into_a_file(tmp_path, capsys, monkeypatch) -> None:
    import sys

    from gpusched.commands import sweep

    seen: dict[str, object] = {}

    def spy(cells, out, **kw):
        seen.update(kw)
        raise KeyboardInterrupt  # stop before any cell runs: only the flag is under test

    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    monkeypatch.setattr("gpusched.sweep.run_bench", spy)
    assert main(["reproduce", "seed", "-o", str(tmp_path / "r"), "--seeds", "1"]) == sweep.RESUME_EXIT
    assert seen["progress"] is False


def test_readme_documents_no_progress() -> None:

    readme = (paths.ROOT / "README.md").read_text()
    assert "--no-progress" in readme


# ---------------------------------------------------------------- small ones


def test_counts_agree_with_their_nouns() -> None:
    import re

    import heuristics

    inst = instances.generate("hc-bursty", seed=0)
    for method in ("best", "lns"):
        msg = heuristics.solve(inst, method, time_limit=2).message
        assert not re.search(r"\b1 (windows|passes|moves)\b", msg), msg
        assert re.search(r"\b\d+ windows?\b", msg), msg
    assert "1 window" in heuristics.solve(inst, "lns", time_limit=2).message


def test_every_method_is_in_the_readme_table() -> None:

    import gpusched

    readme = (paths.ROOT / "README.md").read_text()
    table = readme.split("## Methods and how good they are")[1].split("\n\n")[1]
    for name in gpusched.method_names():
        prefix = name.split("-")[0]
        assert f"`{name}`" in table or f"`{prefix}-*`" in table, name


@pytest.mark.parametrize(("argv", "line"), [
    (["table"], "gpusched: error: table: the following arguments are required: results\n"),
    (["library", "get"], "gpusched: error: library get: the following arguments are required: name\n"),
    ([], "gpusched: error: the following arguments are required: command\n"),
])
def test_argparse_errors_name_the_command_once(capsys, argv, line) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err == line


def test_simulate_says_which_plan_it_compares_with() -> None:
    import gpusched

    inst = instances.generate("seed-training-heavy", seed=0)
    sc = instances.scenario(inst, "lognormal", seed=0)
    text = gpusched.simulate(inst, sc, "list", clairvoyant=False).summary()
    assert "first plan, on the forecast at slot 0:" in text and "(planned " not in text


# ---------------------------------------------------------------- notebook 06, small setting


def _cell(name: str, needle: str) -> str:

    import nbformat

    path = paths.ROOT / "notebooks" / name
    nb = nbformat.read(path, as_version=4)
    return next(c.source for c in nb.cells if c.cell_type == "code" and needle in c.source)


def test_notebook_06_shows_no_t_interval_from_two_seeds() -> None:
    src = _cell("06-topology.ipynb", "topology_view")
    full, small = src.split("else:", 1)
    assert "if FULL:" in full and "view.table" in full  # 10 seeds: Student's t intervals
    assert "view.table.to_markdown" not in small and "min()" in small and "max()" in small


def test_notebook_06_draws_tying_rules_as_one_bar_beside_fifo() -> None:
    src = _cell("06-topology.ipynb", "plot.bar")
    assert "RULES_TIE" in src and '"fifo"' in src and "bar_label" in src
    assert "set_ylim(0," in src  # a bar chart from zero, not from just below the bars
