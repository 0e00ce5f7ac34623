"""A sweep's scenario dimension: forecast error, and the online policies replayed against it.

A sweep file with a ``[scenarios]`` table replays its methods against actual
days (the scenarios of every instance, and ``trace_days`` of the ServeGen
series) under every policy of its ``[policy]`` table, with one clairvoyant
bound per day. This module checks that configuration before any cell is built;
:mod:`.simulation` builds and runs the cells. The file's keys, with an example,
are in docs/simulation.md.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

import instances
from instances import Instance, Job, Scenario, Service
from instances.scenario import SCENARIO_MODELS, trace_forecast_error

from ..simulate.replay import check_policy
from .seeds import parse_seeds

__all__ = [
    "POLICY_KEYS",
    "SCENARIO_KEYS",
    "ScenarioConfig",
    "SimSpec",
    "policy_label",
    "pydantic_message",
    "scenario_config",
    "scenario_config_from_tables",
    "scenario_hash",
]

SCENARIO_KEYS: tuple[str, ...] = (
    "model", "seeds", "trace_days", "trace_params", "history", "bound", "bound_time_limit",
)
"""The keys of ``[scenarios]`` that are not parameters of the model."""

POLICY_KEYS: tuple[str, ...] = ("replan", "headroom", "preempt")
"""The keys of ``[policy]``."""


@dataclass(frozen=True)
class ScenarioConfig:
    """The scenario dimension of a sweep and the policies replayed on it.

    Attributes
    ----------
    model
        Model of :func:`instances.scenario` for the sweep's instances (``None``:
        only ``trace_days`` run).
    params
        The model's parameters, each with its values (a cross product).
    trace_days, trace_params, history
        Days of the ServeGen series (1-13), each with every seed of the sweep, and
        the arguments of :func:`instances.trace_scenario`.
    replan, headroom, preempt
        The policies: every combination is replayed.
    bound_time_limit
        Seconds of each clairvoyant bound's MILP; ``None``: no bound.
    """

    model: str | None = "lognormal"
    params: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    seeds: tuple[int, ...] = (0,)
    trace_days: tuple[int, ...] = ()
    trace_params: Mapping[str, Any] = field(default_factory=dict)
    history: int | None = None
    replan: tuple[int | None, ...] = (None,)
    headroom: tuple[float, ...] = (0.0,)
    preempt: tuple[bool, ...] = (True,)
    bound_time_limit: float | None = 60.0

    def param_grid(self) -> list[dict[str, Any]]:
        """Every combination of the model's parameter values (one empty dict without any)."""
        keys = sorted(self.params)
        return [dict(zip(keys, combo)) for combo in itertools.product(*(self.params[k] for k in keys))]

    def policies(self) -> list[tuple[int | None, float, bool]]:
        """Every ``(replan, headroom, preempt)`` of the sweep, in a fixed order."""
        return list(itertools.product(self.replan, self.headroom, self.preempt))


@dataclass(frozen=True)
class SimSpec:
    """What turns a cell into a replay: the day's actual demand and the policy.

    ``label`` names the scenario in the rows (``lognormal rho=0.5 sigma=0.2``,
    ``trace-day``); ``bound_key`` is the key of the day's bound cell (``None``: no bound).
    """

    scenario: Scenario
    label: str
    replan: int | None
    headroom: float
    preempt: bool
    bound_key: str | None = None

    def ident(self) -> dict[str, Any]:
        """What the cell's key hashes besides the instance and the method."""
        meta = self.scenario.meta
        return {
            "scenario": scenario_hash(self.scenario),
            "scenario_model": meta.get("model"),
            "scenario_seed": meta.get("seed"),
            "scenario_params": dict(meta.get("params", {})),
            "replan": self.replan,
            "headroom": self.headroom,
            "preempt": self.preempt,
            "bound": self.bound_key,
        }


def scenario_hash(sc: Scenario) -> str:
    """SHA-256 of the scenario's instance name and actual demand."""
    data = json.dumps({"instance": sc.instance, "actual": {k: list(v) for k, v in sc.actual.items()}},
                      sort_keys=True)
    return hashlib.sha256(data.encode()).hexdigest()


def policy_label(replan: int | None, headroom: float, preempt: bool) -> str:
    """``one plan, H 0`` / ``replan 1, H 0.2, no preempt``: a policy's name in the tables."""
    text = "one plan" if replan is None else f"replan {replan}"
    text += f", H {headroom:g}"
    return text if preempt else text + ", no preempt"


# ---------------------------------------------------------------- checks
def _values(key: str, v: Any) -> tuple[Any, ...]:
    if isinstance(v, (list, tuple)):
        if not v:
            raise ValueError(f"{key}: the list is empty")
        return tuple(dict.fromkeys(v))
    return (v,)


def _policy(key: str, v: Any) -> Any:
    """One value of ``[policy]``, by the simulator's rule (:func:`gpusched.simulate.check_policy`;
    ``"none"``: one plan)."""
    if key == "replan" and isinstance(v, str) and v.strip().lower() == "none":
        v = None
    policy = {"replan": None, "headroom": 0.0, "preempt": True, key: v}
    try:
        return check_policy(**policy)[list(policy).index(key)]
    except ValueError as e:
        raise ValueError(f"policy.{e}") from None


_PROBE = Instance("probe", 4, 48, (Service("s", 1.0, (2,) * 48),), (Job("j", 1, 1),))
"""A two-day instance on which each combination of model parameters is drawn once (checked)."""


def scenario_config(
    model: str | None = "lognormal",
    params: Mapping[str, Any] | None = None,
    seeds: Any = 1,
    *,
    trace_days: Sequence[int] = (),
    trace_params: Mapping[str, Any] | None = None,
    history: int | None = None,
    replan: Any = None,
    headroom: Any = 0.0,
    preempt: Any = True,
    bound_time_limit: float | None = 60.0,
) -> ScenarioConfig:
    """Build and check a :class:`ScenarioConfig` from plain values.

    ``params`` values, ``replan``, ``headroom`` and ``preempt`` may each be one
    value or a list; ``seeds`` as the sweep's (``N``, ``"A-B"``, a list).

    Raises
    ------
    ValueError
        ``scenarios.<key>: ...`` or ``policy.<key>: ...``: an unknown model or
        parameter, a value out of range (each combination is drawn once), a trace
        day outside the series, a bad policy.
    """
    if model is not None and model not in SCENARIO_MODELS:
        raise ValueError(f"scenarios.model: unknown scenario model {model!r}; known: "
                         f"{', '.join(SCENARIO_MODELS)}")
    grid = {str(k): _values(f"scenarios.{k}", v) for k, v in (params or {}).items()}
    if model is None and grid:
        raise ValueError(f"scenarios.{sorted(grid)[0]}: a model parameter, but no model is given")
    try:
        seed_list = parse_seeds(seeds)
    except ValueError as e:
        raise ValueError(f"scenarios.{e}") from None
    cfg = ScenarioConfig(
        model=model, params=grid, seeds=seed_list,
        trace_days=tuple(dict.fromkeys(trace_days)), trace_params=dict(trace_params or {}),
        history=history,
        replan=tuple(_policy("replan", v) for v in _values("policy.replan", replan)),
        headroom=tuple(_policy("headroom", v) for v in _values("policy.headroom", headroom)),
        preempt=tuple(_policy("preempt", v) for v in _values("policy.preempt", preempt)),
        bound_time_limit=None if bound_time_limit is None else float(bound_time_limit),
    )
    if cfg.bound_time_limit is not None and not cfg.bound_time_limit >= 0:
        raise ValueError(f"scenarios.bound_time_limit: must be a number >= 0, got {bound_time_limit!r}")
    if model is not None:
        for combo in cfg.param_grid():
            try:
                instances.scenario(_PROBE, model, seed=0, **combo)
            except ValueError as e:
                raise ValueError(f"scenarios.{e}") from None
    for day in cfg.trace_days:
        try:
            trace_forecast_error(day, 1, history)
        except ValueError as e:
            raise ValueError(f"scenarios.trace_days: {e}") from None
    if not cfg.trace_days and (cfg.trace_params or history is not None):
        key = "history" if history is not None else "trace_params"
        raise ValueError(f"scenarios.{key}: only with trace_days")
    if model is None and not cfg.trace_days:
        raise ValueError("scenarios: no model and no trace_days: nothing to replay")
    return cfg


# ---------------------------------------------------------------- the TOML tables
class _ScenarioTable(BaseModel):
    """``[scenarios]``: the keys of :data:`SCENARIO_KEYS`; any other key is a model parameter."""

    model_config = ConfigDict(extra="allow", strict=True)
    model: str | None = "lognormal"
    seeds: Any = 1
    trace_days: list[int] = []
    trace_params: dict[str, Any] = {}
    history: int | None = Field(default=None, ge=1)
    bound: bool = True
    bound_time_limit: float = Field(default=60.0, ge=0)


class _PolicyTable(BaseModel):
    """``[policy]``: ``replan``, ``headroom`` and ``preempt``, each a value or a list."""

    model_config = ConfigDict(extra="forbid", strict=True)
    replan: Any = "none"
    headroom: Any = 0.0
    preempt: Any = True


PROBLEMS: dict[str, str] = {
    "dict_type": "must be a table", "model_type": "must be a table",
    "list_type": "must be a list", "string_type": "must be a string",
    "float_type": "must be a number", "int_type": "must be an integer",
}
"""Pydantic error type -> the problem in the file's (TOML's) terms."""


def pydantic_message(e: ValidationError, allowed: Sequence[str], table: str = "") -> str:
    """The first error of ``e`` as ``<key path>: <problem>`` (an unknown key names the
    ``allowed`` ones), and how many more there are."""
    err = e.errors()[0]
    loc = ".".join(str(x) for x in ((table,) if table else ()) + tuple(err["loc"]))
    kind = err["type"]
    if kind == "extra_forbidden":
        text = f"{loc}: unknown key; allowed: {sorted(allowed)}"
    elif kind == "missing":
        text = f"{loc}: missing"
    elif kind == "value_error":
        inner = str(err["ctx"]["error"])
        text = inner if inner.startswith(f"{loc}: ") else f"{loc}: {inner}"
    elif kind == "greater_than_equal":
        text = f"{loc}: must be a number >= {err['ctx']['ge']:g}, got {err['input']!r}"
    else:
        msg = PROBLEMS.get(kind) or err["msg"][:1].lower() + err["msg"][1:]
        text = f"{loc}: {msg}, got {err['input']!r}"
    more = len(e.errors()) - 1
    return text + (f" (and {more} more error{'s' * (more > 1)})" if more else "")


def scenario_config_from_tables(
    scenarios: Mapping[str, Any] | None, policy: Mapping[str, Any] | None
) -> ScenarioConfig | None:
    """The :class:`ScenarioConfig` of a sweep file's ``[scenarios]`` and ``[policy]`` tables
    (``None`` without either: an offline sweep).

    Raises
    ------
    ValueError
        ``scenarios.<key>: ...`` / ``policy.<key>: ...``; a ``[policy]`` table
        without ``[scenarios]``.
    """
    if scenarios is None:
        if policy is not None:
            raise ValueError("policy: a [policy] table needs a [scenarios] table (the days to replay)")
        return None
    try:
        s = _ScenarioTable.model_validate(dict(scenarios))
    except ValidationError as e:
        raise ValueError(pydantic_message(e, SCENARIO_KEYS, "scenarios")) from None
    try:
        p = _PolicyTable.model_validate(dict(policy or {}))
    except ValidationError as e:
        raise ValueError(pydantic_message(e, POLICY_KEYS, "policy")) from None
    model = None if s.model in (None, "none") else s.model
    return scenario_config(
        model, dict(s.model_extra or {}), s.seeds, trace_days=s.trace_days,
        trace_params=s.trace_params, history=s.history, replan=p.replan, headroom=p.headroom,
        preempt=p.preempt, bound_time_limit=s.bound_time_limit if s.bound else None,
    )
