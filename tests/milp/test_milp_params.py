"""milp.MILPParams: the options of milp.solve as one object; the keyword form; the TOML table;
and Result.params["incumbent"], where the schedule of a solve comes from."""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import numpy as np
import pytest
from brute import tiny_instance

import heuristics
import milp
import milp.solver as milp_solve
from gpusched import sweep
from gpusched.sweep.config import milp_params
from instances import Status
from milp import MILPParams
from milp.backend import RawSolve


def test_the_defaults_are_those_of_the_keyword_form() -> None:
    p = MILPParams()
    assert (p.time_limit, p.mip_gap, p.threads, p.backend) == (60.0, 1e-4, 1, "highs")
    assert (p.aggregate, p.cliques, p.rounding, p.fixing) == (True, False, (2, 4), False)
    assert (p.lagrangian, p.symmetry, p.relaxation, p.reservation) == (None, None, None, "curve")
    assert p.flat_share == milp_solve.FLAT_SHARE and p.max_columns == milp.DEFAULT_MAX_COLUMNS
    assert dict(p.backend_options) == {}
    assert hash(p) == hash(MILPParams())  # the backend options aside


def test_it_is_frozen_and_its_backend_options_read_only() -> None:
    p = MILPParams(backend_options={"seed": 3})
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.threads = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        p.backend_options["seed"] = 4  # type: ignore[index]
    assert dataclasses.replace(p, threads=2).backend_options == {"seed": 3}


def test_from_mapping_takes_fields_by_name_and_the_rest_as_backend_options() -> None:
    p = MILPParams.from_mapping({"mip_gap": 0, "rounding": [3, np.int64(5)], "presolve": "off",
                                 "seed": 2, "backend_options": {"root_lp": False}})
    assert p.mip_gap == 0 and p.rounding == (3, 5) and all(type(d) is int for d in p.rounding)
    assert dict(p.backend_options) == {"root_lp": False, "presolve": "off", "seed": 2}
    q = p.with_options(threads=2, seed=5)
    assert q.threads == 2 and q.mip_gap == 0 and q.backend_options["seed"] == 5
    assert q.backend_options["presolve"] == "off"  # the base's kept, those given over them
    assert p.with_options() is p
    assert set(MILPParams.fields()) >= {"time_limit", "reservation", "backend_options"}


@pytest.mark.parametrize("field,value", [
    ("time_limit", -1), ("time_limit", float("nan")), ("time_limit", "60"),
    ("mip_gap", 1.5), ("threads", 0), ("threads", 1.0), ("backend", "gurobi"),
    ("max_columns", -1), ("max_columns", 2.5), ("aggregate", "yes"), ("cliques", 1),
    ("fixing", None), ("rounding", (1,)), ("rounding", 2), ("lagrangian", "auto"),
    ("symmetry", "mirror"), ("flat_share", 2), ("flat_share", True), ("relaxation", "loose"),
    ("reservation", "half"), ("backend_options", [("seed", 1)]),
])
def test_a_bad_value_names_its_field(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=rf"^{field}: "):
        MILPParams(**{field: value})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=rf"^{field}: "):
        MILPParams.from_mapping({field: value})


def test_lns_helper_is_not_a_backend_option() -> None:
    with pytest.raises(ValueError, match=r"^lns_helper: .*matheuristics\.solve_milp"):
        MILPParams.from_mapping({"lns_helper": True})


def test_solve_takes_the_params_object_as_the_keywords() -> None:
    inst = tiny_instance(3)
    p = MILPParams(time_limit=20, mip_gap=0, cliques=True, rounding=(2, 3),
                   backend_options={"seed": 1})
    a = milp.solve(inst, p)
    b = milp.solve(inst, params=p)
    c = milp.solve(inst, time_limit=20, mip_gap=0, cliques=True, rounding=[2, 3], seed=1)
    for res in (a, b, c):
        assert res.status is Status.OPTIMAL
        assert res.params == a.params and res.value == pytest.approx(a.value)
    assert a.params["rounding"] == [2, 3] and a.params["seed"] == 1 and a.params["cliques"]


def test_keywords_override_the_params_object() -> None:
    inst = tiny_instance(4)
    p = MILPParams(time_limit=20, mip_gap=0.5, backend_options={"seed": 1, "root_lp": True})
    res = milp.solve(inst, p, mip_gap=0, seed=2)
    assert res.params["mip_gap"] == 0 and res.params["time_limit"] == 20
    assert res.params["seed"] == 2 and res.params["root_lp"] is True
    with pytest.raises(ValueError, match=r"^threads: "):
        milp.solve(inst, p, threads=0)


def test_a_bound_given_as_lagrangian_is_an_input_not_an_option() -> None:
    inst = tiny_instance(5)
    b = milp.bound(inst, "lagrangian", time_limit=5)
    res = milp.solve(inst, MILPParams(time_limit=20, mip_gap=0), lagrangian=b)
    assert res.params["lagrangian"] == "given" and res.status is Status.OPTIMAL


# ---------------------------------------------------------------- where the schedule comes from
def test_the_incumbent_is_the_solvers() -> None:
    res = milp.solve(tiny_instance(1), time_limit=20, mip_gap=0)
    assert res.params["incumbent"] == "solver"
    assert res.params["incumbent"] in milp_solve.INCUMBENT_SOURCES


def test_the_incumbent_is_the_warm_starts_when_the_solver_has_none() -> None:
    inst = tiny_instance(2)
    ws = heuristics.solve(inst, "fifo")
    assert ws.value > 0
    res = milp.solve(inst, time_limit=0, warm_start=ws)
    assert res.params["incumbent"] == "warm start" and res.value == pytest.approx(ws.value)
    empty = milp.solve(inst, time_limit=0)
    assert empty.params["incumbent"] == "empty schedule" and empty.value == 0


def test_the_incumbent_is_the_warm_starts_when_it_beats_the_solvers(monkeypatch) -> None:
    inst = tiny_instance(2)
    ws = heuristics.solve(inst, "fifo")
    none_run = np.full(inst.num_jobs, -1, dtype=np.int64)
    poor = RawSolve(Status.TIME_LIMIT, none_run, dual_bound=None, lp_bound=None, nodes=1)
    monkeypatch.setitem(milp_solve.BACKENDS, "highs", lambda form, **kw: poor)
    res = milp.solve(inst, time_limit=5, warm_start=ws, lagrangian=False)
    assert res.params["incumbent"] == "warm start" and res.params["warm_start"] == "fifo"
    assert res.value == pytest.approx(ws.value)
    # the solver's incumbent wins a tie with the warm start, as in milp.assemble
    same = RawSolve(Status.TIME_LIMIT, ws.schedule.to_array(inst), dual_bound=None,
                    lp_bound=None, nodes=1)
    monkeypatch.setitem(milp_solve.BACKENDS, "highs", lambda form, **kw: same)
    tie = milp.solve(inst, time_limit=5, warm_start=ws, lagrangian=False)
    assert tie.params["incumbent"] == "solver"


# ---------------------------------------------------------------- from the sweep's TOML file
def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "sweep.toml"
    p.write_text(textwrap.dedent(text))
    return p


def test_the_milp_table_of_a_sweep_file_loads_as_params(tmp_path: Path) -> None:
    cfg = sweep.load_config(_write(tmp_path, """
        families = ["small"]
        seeds = 1
        methods = ["milp", "fifo"]
        time_limit = 7

        [params.milp]
        mip_gap = 0.01
        cliques = true
        rounding = [2, 3]
        lns_helper = false
        presolve = "off"

        [variants.cp]
        method = "cpsat"
        time_limit = 3
        threads = 2
    """))
    specs = {s.label: s for s in cfg.methods}
    p = milp_params(specs["milp"])
    assert p == MILPParams(time_limit=7, mip_gap=0.01, threads=1, cliques=True, rounding=(2, 3),
                           backend_options={"presolve": "off"})
    cp = milp_params(specs["cp"])
    assert cp is not None and (cp.backend, cp.time_limit, cp.threads) == ("cpsat", 3, 2)
    assert milp_params(specs["fifo"]) is None
    # the sweep still hands the method its plain parameters
    assert dict(specs["milp"].params)["lns_helper"] is False


@pytest.mark.parametrize("table,where", [
    ("[params.milp]\nmip_gap = 1.5", r"params\.milp\.mip_gap: must be in \[0, 1\)"),
    ("[params.milp]\nsymmetry = \"mirror\"", r"params\.milp\.symmetry: must be one of"),
    ("[params.milp]\nthreads = 0", r"params\.milp\.threads: "),
    ("[params.milp]\nrounding = [1]", r"params\.milp\.rounding: "),
    ("[variants.m2]\nmethod = \"milp\"\nflat_share = 3", r"variants\.m2\.flat_share: "),
])
def test_a_bad_milp_value_in_a_sweep_file_names_its_key(tmp_path: Path, table: str,
                                                         where: str) -> None:
    path = _write(tmp_path, f'families = ["small"]\nmethods = ["milp"]\n\n{table}\n')
    with pytest.raises(ValueError, match=where):
        sweep.load_config(path)
