"""The cells of a scenario sweep: one replay per cell, one clairvoyant bound per day.

A replay cell is a :class:`~.cells.Cell` with ``sim`` set: it runs
:func:`gpusched.simulate` and stores a row with ``status`` ``simulated``, the
realized value as ``value`` and the figures of :meth:`gpusched.SimResult.to_row`.
The day's bound is an ordinary MILP cell (label ``clairvoyant``) on the actual
demand, solved once per day; each replay names it (``bound_cell``) and
:func:`gpusched.tables.simulation_rows` joins it back. A replay stores no
schedule file: its schedule is feasible on the actual day, not on the forecast
instance the folder keeps (docs/simulation.md).
"""

from __future__ import annotations

import json
import time
from typing import Any

import instances
from instances import Instance, Scenario

from ..simulate import simulate
from .cells import Cell, failed_row, finish_row, instance_hash, result_row
from .config import BenchConfig, MethodSpec
from .scenarios import SimSpec, policy_label, scenario_hash

__all__ = ["BOUND_LABEL", "SIM_COLUMNS", "SIM_STATUS", "make_sim_cells", "run_sim_cell", "scenario_label"]

BOUND_LABEL = "clairvoyant"
"""Method label of the bound cells (the MILP on the instance with the actual demand)."""

SIM_STATUS = "simulated"
"""``status`` of a replay that ran."""

SIM_COLUMNS: tuple[str, ...] = (
    "realized_value", "planned_value", "preemptions", "lost_gpu_slots", "unserved_gpu_slots",
    "bound_applies", "jobs_completed", "jobs_preempted", "missed_starts", "plans",
    "plan_runtime_s",
)
"""The columns a replay row takes from :meth:`gpusched.SimResult.to_row` (besides
``utilization``, one of the checker's metrics)."""


def scenario_label(model: str, params: dict[str, Any]) -> str:
    """``lognormal rho=0.5 sigma=0.2``: the model and the parameters the sweep set."""
    return " ".join([model, *(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                              for k, v in sorted(params.items()))])


def _days(config: BenchConfig, insts: list[tuple[Instance, str, int]]
          ) -> list[tuple[Instance, Scenario, str, str, int]]:
    """Every (instance, scenario, label, family, seed) the sweep replays."""
    sc = config.scenarios
    assert sc is not None
    days = []
    if sc.model is not None:
        for inst, fam, seed in insts:
            for combo in sc.param_grid():
                label = scenario_label(sc.model, combo)
                for s in sc.seeds:
                    try:
                        drawn = instances.scenario(inst, sc.model, seed=s, **combo)
                    except ValueError as e:  # e.g. a trace day past the series for this horizon
                        raise ValueError(f"scenarios.{e} (instance {inst.name!r})") from None
                    days.append((inst, drawn, label, fam, seed))
    label = "trace-day" if sc.history is None else f"trace-day history={sc.history}"
    for day in sc.trace_days:
        for seed in config.seeds:
            try:
                inst, drawn = instances.trace_scenario(day, seed, history=sc.history, **sc.trace_params)
            except ValueError as e:
                raise ValueError(f"scenarios.trace_params.{e}") from None
            days.append((inst, drawn, label, "trace-servegen", seed))
    return days


def make_sim_cells(config: BenchConfig, insts: list[tuple[Instance, str, int]]) -> list[Cell]:
    """The cells of a scenario sweep over ``insts``: for every day, its bound cell (unless
    the sweep has none), then one replay cell per method and policy.

    Raises
    ------
    ValueError
        For a scenario the model refuses on an instance, or a bad trace parameter.
    """
    sc = config.scenarios
    assert sc is not None
    cells: list[Cell] = []
    for inst, drawn, label, fam, seed in _days(config, insts):
        bound_key = None
        if sc.bound_time_limit is not None:
            actual = instances.actual_instance(inst, drawn)
            spec = MethodSpec(BOUND_LABEL, "milp", {"threads": 1}, sc.bound_time_limit)
            bound = Cell(actual, fam, seed, spec, instance_hash(actual))
            cells.append(bound)
            bound_key = bound.key
        h = instance_hash(inst)
        for spec in config.methods:
            for replan, headroom, preempt in sc.policies():
                sim = SimSpec(drawn, label, replan, headroom, preempt, bound_key)
                cells.append(Cell(inst, fam, seed, spec, h, sim=sim))
    return cells


def _sim_columns(cell: Cell) -> dict[str, Any]:
    sim = cell.sim
    assert sim is not None
    meta = sim.scenario.meta
    return {
        "kind": "simulation",
        "scenario": sim.label,
        "scenario_model": meta.get("model"),
        "scenario_seed": meta.get("seed"),
        "scenario_params": json.dumps(dict(meta.get("params", {})), sort_keys=True),
        "scenario_hash": scenario_hash(sim.scenario),
        "replan": sim.replan,
        "headroom": sim.headroom,
        "preempt": sim.preempt,
        "policy": policy_label(sim.replan, sim.headroom, sim.preempt),
        "bound_cell": sim.bound_key,
    }


def run_sim_cell(cell: Cell) -> tuple[dict[str, Any], None]:
    """Replay one cell's day (each plan with the spec's parameters and ``time_limit``);
    never raises for a failing method (the row says ``error``).
    """
    spec, sim = cell.spec, cell.sim
    assert sim is not None
    started = time.perf_counter()
    params = dict(spec.params)
    if spec.time_limit is not None:
        params["time_limit"] = spec.time_limit
    try:
        r = simulate(cell.instance, sim.scenario, spec.method, sim.replan, sim.headroom,
                     sim.preempt, clairvoyant=False, **params)
    except Exception as e:  # a failed cell is recorded, the sweep goes on
        row = failed_row(cell, e, started)
        row.update(_sim_columns(cell))
        return row, None
    out = r.to_row()
    row = result_row(cell, r.metrics.to_dict(), status=SIM_STATUS, value=r.realized_value,
                     runtime_s=r.runtime_s, message="")
    row.update(_sim_columns(cell))
    row.update({k: out[k] for k in SIM_COLUMNS})
    return finish_row(row, started), None
