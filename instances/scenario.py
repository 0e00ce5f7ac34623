"""Scenarios: the inference demand a day actually brings, beside the forecast.

An instance's service ``demand`` is the forecast; a :class:`Scenario` holds the
actual demand of each service, in the file format ``gpusched-scenario/1``
(``{"format": ..., "instance": NAME, "actual": {"chat": [...]}}``), checked
against its instance by :meth:`Scenario.validate`. :func:`scenario` draws one
from a model (``lognormal`` or ``trace``); :func:`trace_scenario` builds a
forecast instance and its actual day from the ServeGen series. The models are
stated in docs/simulation.md.
"""

from __future__ import annotations

import inspect
import json
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from . import families
from .io import atomic_write_text, check_format, check_keys, load_json
from .model import Instance, Service, check_total, int_curve, is_int
from .servegen import servegen_hourly_rps

__all__ = [
    "SCENARIO_FORMAT",
    "SCENARIO_MODELS",
    "Scenario",
    "actual_instance",
    "load_scenario",
    "save_scenario",
    "scenario",
    "scenario_from_dict",
    "trace_forecast_error",
    "trace_scenario",
]

SCENARIO_FORMAT = "gpusched-scenario/1"

SCENARIO_MODELS: tuple[str, ...] = ("lognormal", "trace")
"""Models :func:`scenario` draws from."""


@dataclass(frozen=True)
class Scenario:
    """The actual demand (integers >= 0 per slot) of one instance's services.

    ``meta`` holds the provenance (model, seed, parameters), ignored by equality.
    Whether the scenario fits its instance is :meth:`validate`'s job.

    Raises
    ------
    ValueError
        For a value that is not a non-negative integer, naming the field (``actual.chat[3]``).
    """

    instance: str
    actual: Mapping[str, tuple[int, ...]]
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.instance, str) or not self.instance:
            raise ValueError(f"instance: must be a non-empty string, got {self.instance!r}")
        if not isinstance(self.actual, Mapping):
            raise ValueError(f"actual: must map service names to lists, got {self.actual!r}")
        if not isinstance(self.meta, Mapping):
            raise ValueError(f"meta: must be a mapping, got {self.meta!r}")
        clean: dict[str, tuple[int, ...]] = {}
        for name, values in self.actual.items():
            if not isinstance(name, str) or not name:
                raise ValueError(f"actual: service names must be non-empty strings, got {name!r}")
            clean[name] = int_curve(f"actual[{json.dumps(name)}]", values)
        object.__setattr__(self, "actual", MappingProxyType(clean))

    def __hash__(self) -> int:
        return hash((self.instance, tuple(sorted(self.actual.items()))))

    def __reduce__(self) -> tuple[Any, ...]:
        # the read-only views do not pickle: rebuild from plain dicts (worker processes)
        return (Scenario, (self.instance, dict(self.actual), dict(self.meta)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Scenario):
            return NotImplemented
        return self.instance == other.instance and dict(self.actual) == dict(other.actual)

    def validate(self, inst: Instance) -> None:
        """Check that the scenario fits ``inst``: its name, every service and no other,
        length ``T``, values ``<= G``, and the summed actual inference ``<= G`` in every slot.

        Raises
        ------
        ValueError
            Naming the field (``instance``, ``actual``, ``actual["chat"][5]``, ...).
        """
        if self.instance != inst.name:
            raise ValueError(
                f"instance: the scenario is for instance {self.instance!r}, not {inst.name!r}"
            )
        names = [s.name for s in inst.services]
        for name in names:
            if name not in self.actual:
                raise ValueError(f"actual: missing service {name!r} of instance {inst.name!r}")
        for name in self.actual:
            if name not in names:
                raise ValueError(
                    f"actual[{json.dumps(name)}]: no service of that name in instance "
                    f"{inst.name!r} (services: {names})"
                )
        G, T = inst.num_gpus, inst.horizon
        for name in names:
            values = self.actual[name]
            where = f"actual[{json.dumps(name)}]"
            if len(values) != T:
                raise ValueError(f"{where}: length must equal horizon ({T}), got {len(values)}")
            over = [t for t, a in enumerate(values) if a > G]
            if over:
                raise ValueError(
                    f"{where}[{over[0]}]: must be <= num_gpus ({G}), got {values[over[0]]}"
                )
        if names:
            check_total("actual", "actual inference", self.total(inst), G)

    def demand(self, inst: Instance) -> np.ndarray:
        """Actual demand, shape ``(num_services, horizon)`` in the instance's service order."""
        if not inst.services:
            return np.zeros((0, inst.horizon), dtype=np.int64)
        return np.array([self.actual[s.name] for s in inst.services], dtype=np.int64)

    def total(self, inst: Instance) -> np.ndarray:
        """Summed actual inference per slot, shape ``(horizon,)``."""
        return self.demand(inst).sum(axis=0).astype(np.int64)

    def to_dict(self) -> dict[str, Any]:
        """The ``gpusched-scenario/1`` JSON object."""
        out: dict[str, Any] = {
            "format": SCENARIO_FORMAT,
            "instance": self.instance,
            "actual": {k: list(v) for k, v in self.actual.items()},
        }
        if self.meta:
            out["meta"] = dict(self.meta)
        return out


def actual_instance(inst: Instance, sc: Scenario) -> Instance:
    """The instance with each service's demand replaced by its actual demand (the same
    name, so schedules of ``inst`` check against it): the clairvoyant bound's instance.

    Raises
    ------
    ValueError
        If the scenario does not fit the instance.
    """
    sc.validate(inst)
    services = tuple(Service(s.name, s.priority, sc.actual[s.name]) for s in inst.services)
    return inst.replace(services=services)


# --------------------------------------------------------------------- files
def scenario_from_dict(data: Any, inst: Instance | None = None) -> Scenario:
    """Build a :class:`Scenario` from a ``gpusched-scenario/1`` object, validated against
    ``inst`` when it is given.

    Raises
    ------
    ValueError
        Naming the field (``format``, ``instance``, ``actual["chat"][3]``).
    """
    check_format(data, SCENARIO_FORMAT)
    check_keys(data, ("format", "instance", "actual"), ("meta",))
    if not isinstance(data["actual"], dict):
        raise ValueError(
            f"actual: must be an object mapping service names to lists, got {data['actual']!r}"
        )
    sc = Scenario(data["instance"], data["actual"], meta=data.get("meta", {}))
    if inst is not None:
        sc.validate(inst)
    return sc


def load_scenario(path: str | os.PathLike[str], inst: Instance | None = None) -> Scenario:
    """Load a scenario file, validated against ``inst`` when it is given.

    Raises
    ------
    ValueError
        ``<file>: <field>: <what is wrong>``.
    """
    return load_json(path, lambda data: scenario_from_dict(data, inst))


def save_scenario(sc: Scenario, path: str | os.PathLike[str]) -> None:
    """Write a scenario file (one service per line, atomic)."""
    d = sc.to_dict()
    lines = ["{", f'  "format": {json.dumps(d["format"])},', f'  "instance": {json.dumps(d["instance"])},']
    if "meta" in d:
        lines.append(f'  "meta": {json.dumps(d["meta"], sort_keys=True)},')
    items = list(d["actual"].items())
    lines.append('  "actual": {' + ("" if items else "}"))
    for i, (k, v) in enumerate(items):
        lines.append(f"    {json.dumps(k)}: {json.dumps(v)}{',' if i < len(items) - 1 else ''}")
    if items:
        lines.append("  }")
    lines.append("}")
    atomic_write_text(path, "\n".join(lines) + "\n")


# -------------------------------------------------------------------- models
def _fit_pool(actual: np.ndarray, num_gpus: int) -> np.ndarray:
    """Clip every value to ``[0, G]``, then cap the total at ``G`` slot by slot, lowering
    the services from the last in the list to the first.
    """
    a = np.clip(actual, 0, num_gpus).astype(np.int64)
    excess = a.sum(axis=0) - num_gpus
    for k in range(a.shape[0] - 1, -1, -1):
        if not (excess > 0).any():
            break
        cut = np.minimum(a[k], np.maximum(excess, 0))
        a[k] -= cut
        excess -= cut
    return a


def _check_real(name: str, x: Any, lo: float, hi: float | None = None, *, lo_open: bool = False) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name}: must be a number, got {x!r}")
    x = float(x)
    bad = not math.isfinite(x) or x < lo or (lo_open and x == lo) or (hi is not None and x > hi)
    if bad:
        rng = f"{'(' if lo_open else '['}{lo:g}, {'inf)' if hi is None else f'{hi:g}]'}"
        raise ValueError(f"{name}: must be a number in {rng}, got {x!r}")
    return x


def _lognormal(
    inst: Instance, rng: np.random.Generator, *, sigma: float = 0.2, rho: float = 0.5,
    mean_one: bool = True,
) -> tuple[np.ndarray, dict[str, Any]]:
    sigma = _check_real("sigma", sigma, 0.0)
    rho = _check_real("rho", rho, -1.0, 1.0)
    if not isinstance(mean_one, bool):
        raise ValueError(f"mean_one: must be true or false, got {mean_one!r}")
    S, T = inst.demand.shape
    eps = np.empty((S, T))
    z = rng.standard_normal((S, T))
    innov = sigma * math.sqrt(max(0.0, 1.0 - rho * rho))
    eps[:, 0] = sigma * z[:, 0]
    for t in range(1, T):
        eps[:, t] = rho * eps[:, t - 1] + innov * z[:, t]
    shift = 0.5 * sigma * sigma if mean_one else 0.0
    actual = np.rint(inst.demand * np.exp(eps - shift))
    return actual, {"sigma": sigma, "rho": rho, "mean_one": mean_one}


def _series_days() -> np.ndarray:
    rps = servegen_hourly_rps()
    return rps.reshape(-1, 24)


def trace_forecast_error(day: int, days: int = 1, history: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Forecast and actual request rates (req/s, hourly) of the shipped ServeGen series:
    the forecast of an hour of day ``d`` is the mean of that hour over the previous days
    (or the last ``history``), the actual is day ``d``; ``days`` days from ``day``.

    Raises
    ------
    ValueError
        ``day: ...`` without a previous day or past the 14-day series,
        ``history: ...`` when it is not a positive integer.
    """
    series = _series_days()
    n = series.shape[0]
    if not is_int(days) or days < 1:
        raise ValueError(f"days: must be a positive integer, got {days!r}")
    if not is_int(day) or not 1 <= day <= n - days:
        raise ValueError(
            f"day: must be an integer in [1, {n - days}] (a previous day is needed and "
            f"{days} day(s) must fit in the {n}-day series), got {day!r}"
        )
    if history is not None and (not is_int(history) or history < 1):
        raise ValueError(f"history: must be a positive integer or None, got {history!r}")
    fc, ac = [], []
    for d in range(day, day + days):
        lo = 0 if history is None else max(0, d - history)
        fc.append(series[lo:d].mean(axis=0))
        ac.append(series[d])
    return np.concatenate(fc), np.concatenate(ac)


def _trace(
    inst: Instance, rng: np.random.Generator, *, day: int = 7, history: int | None = None,
) -> tuple[np.ndarray, dict[str, Any]]:
    del rng  # the trace model draws nothing
    hours = np.floor(np.arange(inst.horizon) * inst.slot_hours + 1e-9).astype(np.int64)
    days = int(hours[-1]) // 24 + 1
    forecast, actual = trace_forecast_error(day, days, history)
    ratio = actual[hours] / forecast[hours]
    return np.rint(inst.demand * ratio), {"day": int(day), "history": history}


_MODELS: dict[str, Callable[..., tuple[np.ndarray, dict[str, Any]]]] = {
    "lognormal": _lognormal,
    "trace": _trace,
}


def scenario(inst: Instance, model: str = "lognormal", seed: int = 0, **params: Any) -> Scenario:
    """Draw the actual demand of a day from a model of forecast error.

    Each model gives a real value per service and slot, rounded (halves to even),
    clipped to ``[0, G]``, the total then capped at ``G`` (last service lowered
    first), so inference alone always fits. ``lognormal`` (``sigma=0.2``,
    ``rho=0.5``, ``mean_one=True``) multiplies the forecast by ``exp`` of a
    stationary Gaussian AR(1) (less ``sigma^2 / 2`` with ``mean_one``: the forecast
    is then the mean); ``trace`` (``day=7``, ``history=None``) applies the real
    forecast error of the shipped ServeGen series (:func:`trace_forecast_error`)
    and draws nothing. The formulas are in docs/simulation.md.

    Parameters
    ----------
    model
        One of :data:`SCENARIO_MODELS`.
    seed
        The same instance, model, seed and parameters give the same scenario.
    **params
        The model's parameters.

    Raises
    ------
    ValueError
        For an unknown model or parameter, or a parameter out of range.
    """
    fn = _MODELS.get(model)
    if fn is None:
        raise ValueError(f"model: unknown scenario model {model!r}; known: {', '.join(_MODELS)}")
    if not is_int(seed) or seed < 0:
        raise ValueError(f"seed: must be a non-negative integer, got {seed!r}")
    accepted = set(inspect.signature(fn).parameters) - {"inst", "rng"}
    unknown = sorted(set(params) - accepted)
    if unknown:
        raise ValueError(
            f"{unknown[0]}: not a parameter of scenario model {model!r}; accepted: {sorted(accepted)}"
        )
    key = int.from_bytes(model.encode(), "little") % (2**63)
    rng = np.random.default_rng([int(seed), key])
    x, used = fn(inst, rng, **params)
    actual = _fit_pool(np.asarray(x), inst.num_gpus)
    meta = {"model": model, "seed": int(seed), "params": used}
    return Scenario(
        inst.name, {s.name: tuple(int(v) for v in actual[k]) for k, s in enumerate(inst.services)},
        meta=meta,
    )


def trace_scenario(
    day: int = 7, seed: int = 0, *, history: int | None = None, num_gpus: int = 16,
    throughput_rps: float = families.TRACE_GPU_THROUGHPUT_RPS, **params: Any,
) -> tuple[Instance, Scenario]:
    """A forecast instance and its actual day, both from the ServeGen series.

    The batch jobs are family ``trace-servegen``'s for one day (``start_day=day``,
    ``seed``; ``params`` go to the family); the service's demand becomes the
    forecast ``ceil(forecast[h] / throughput_rps)`` (instance named
    ``<family instance>-forecast``), the scenario's actual the day itself.

    Raises
    ------
    ValueError
        For a day without a previous day or past the series, a bad family
        parameter, or ``days`` / ``start_day`` (set here).
    """
    for key in ("days", "start_day"):
        if key in params:
            raise ValueError(f"{key}: set by trace_scenario (one day, start_day=day), not a parameter here")
    forecast, actual = trace_forecast_error(day, 1, history)
    base = families.generate(
        "trace-servegen", seed=seed, num_gpus=num_gpus, throughput_rps=throughput_rps,
        days=1, start_day=day, **params,
    )
    fc = np.minimum(np.ceil(forecast / throughput_rps), num_gpus).astype(np.int64)
    ac = np.minimum(np.ceil(actual / throughput_rps), num_gpus).astype(np.int64)
    svc = base.services[0]
    name = f"{base.name}-forecast"
    meta = {**base.meta, "forecast": {"day": int(day), "history": history}}
    inst = base.replace(
        name=name, services=(Service(svc.name, svc.priority, tuple(int(x) for x in fc)),), meta=meta,
    )
    sc = Scenario(
        name, {svc.name: tuple(int(x) for x in ac)},
        meta={"model": "trace-day", "seed": int(seed),
              "params": {"day": int(day), "history": history, "throughput_rps": throughput_rps}},
    )
    sc.validate(inst)
    return inst, sc
