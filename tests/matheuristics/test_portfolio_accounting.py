"""matheuristics.portfolio.account: who found the incumbent, read from the result's fields.

The solve's ``params["incumbent"]`` (milp.solve's, or the warm start's when nothing
was searched) and ``params["warm_start"]`` decide, never the message; the accounting's
own ``params["incumbent_from"]`` and ``["bound_from"]`` keep their values.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from brute import tiny_instance

import heuristics
import milp
import milp.solver as milp_solve
from instances import Instance, Result, Status
from matheuristics import solve_milp
from matheuristics.incumbents import HIGHS, WARM
from matheuristics.portfolio import FROM_WARM_START, INCUMBENT, account
from milp.backend import RawSolve


def _solved(inst: Instance, params: dict[str, Any], message: str = "") -> Result:
    """A result as a solve returns it: a checked schedule with a bound, these params and message."""
    ws = heuristics.solve(inst, "fifo")
    return dataclasses.replace(ws, method="milp", status=Status.TIME_LIMIT,
                               upper_bound=float(inst.job_values.sum()), bound_method="dual",
                               params=params, message=message)


@pytest.mark.parametrize("params,backend,expected", [
    ({INCUMBENT: FROM_WARM_START, "warm_start": "best"}, "highs", "best"),
    ({INCUMBENT: FROM_WARM_START, "warm_start": "lp"}, "highs", "lp"),
    ({INCUMBENT: FROM_WARM_START}, "highs", WARM),
    ({INCUMBENT: "solver", "warm_start": "best"}, "highs", HIGHS),
    ({INCUMBENT: "empty schedule", "warm_start": "best"}, "highs", HIGHS),
    ({"warm_start": "best"}, "highs", HIGHS),
    ({INCUMBENT: "solver"}, "cpsat", "cpsat"),
    ({INCUMBENT: FROM_WARM_START, "warm_start": "best"}, "cpsat", "best"),
])
def test_the_incumbent_comes_from_the_field(params: dict, backend: str, expected: str) -> None:
    inst = tiny_instance(0)
    res = account(inst, _solved(inst, params), None, backend=backend)
    assert res.params["incumbent_from"] == expected
    assert res.params["bound_from"] == f"{backend}:dual"
    assert INCUMBENT not in res.params  # folded into incumbent_from
    assert res.params.get("warm_start") == params.get("warm_start")
    assert res.message.endswith(f"incumbent from {expected}, bound from {backend}:dual")


def test_the_message_is_not_read() -> None:
    inst = tiny_instance(1)
    said = "HiGHS: Time limit reached; incumbent from the warm start (best)"
    res = account(inst, _solved(inst, {INCUMBENT: "solver", "warm_start": "best"}, said), None)
    assert res.params["incumbent_from"] == HIGHS
    silent = account(inst, _solved(inst, {INCUMBENT: FROM_WARM_START, "warm_start": "best"}),
                     None)
    assert silent.params["incumbent_from"] == "best"


def test_solve_milp_says_the_warm_start_found_it_when_it_beat_highs(monkeypatch) -> None:
    inst = tiny_instance(2)
    none_run = np.full(inst.num_jobs, -1, dtype=np.int64)
    poor = RawSolve(Status.TIME_LIMIT, none_run, dual_bound=None, lp_bound=None, nodes=1)
    # milp.solve's backend alone (the warm start's LNS solves its windows with HiGHS)
    monkeypatch.setattr(milp_solve, "solve_arrays", lambda form, **kw: poor)
    res = solve_milp(inst, time_limit=5, threads=1, lagrangian=False)
    assert res.params["incumbent_from"] == "best" and res.params["warm_start"] == "best"
    assert INCUMBENT not in res.params
    ws = heuristics.solve(inst, "fifo")
    given = solve_milp(inst, time_limit=5, threads=1, warm_start=ws, lagrangian=False)
    assert given.params["incumbent_from"] == "fifo"


def test_solve_milp_says_highs_found_it_when_it_did() -> None:
    inst = tiny_instance(3)
    res = solve_milp(inst, time_limit=20, threads=1, mip_gap=0, warm_start=None)
    assert res.params["incumbent_from"] == HIGHS and res.status is Status.OPTIMAL
    assert INCUMBENT not in res.params
    assert milp.solve(inst, time_limit=20, mip_gap=0).params[INCUMBENT] == "solver"
