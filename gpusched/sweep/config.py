"""A sweep's configuration: families x seeds x methods, from flags or a TOML file.

:func:`make_config` builds a :class:`BenchConfig` from plain values (the
command line's flags); :func:`load_config` reads a TOML sweep file, checks it
with pydantic models (every table ``extra="forbid"`` except a method's own
parameters) and then goes through :func:`make_config`. An exact method's
parameters are checked as the :class:`milp.MILPParams` they make
(:func:`milp_params`), a bad value named ``params.<method>.<field>``.
"""

from __future__ import annotations

import inspect
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

import heuristics
import instances
import milp
from instances.model import check_size_params

from ..dispatch import EXACT_METHODS, method_names
from .scenarios import ScenarioConfig, pydantic_message, scenario_config_from_tables
from .seeds import parse_seeds

__all__ = [
    "BenchConfig",
    "MethodSpec",
    "load_config",
    "make_config",
    "milp_params",
]


@dataclass(frozen=True)
class MethodSpec:
    """A method to run under a label (the rows' ``method`` column): two labels may run one
    method with different parameters; ``time_limit`` ``None`` is the method's default.
    """

    label: str
    method: str
    params: Mapping[str, Any] = field(default_factory=dict)
    time_limit: float | None = None


@dataclass(frozen=True)
class BenchConfig:
    """A sweep: the cross product of families, seeds and methods.

    ``family_params`` holds per-family generator parameters
    (``{"large": {"num_jobs": 500}}``), ``instance_files`` instance files added to
    the families' instances; with ``scenarios`` (:mod:`.scenarios`) every cell
    replays its method against a day instead of running it offline.
    """

    families: tuple[str, ...]
    seeds: tuple[int, ...]
    methods: tuple[MethodSpec, ...]
    family_params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    instance_files: tuple[str, ...] = ()
    scenarios: ScenarioConfig | None = None


def _split(items: str | Sequence[str]) -> tuple[str, ...]:
    if isinstance(items, str):
        items = items.split(",")
    return tuple(x.strip() for x in items if x.strip())


def method_parameters(method: str) -> tuple[str, ...] | None:
    """Keyword parameters a heuristic accepts (``None``: any, or an exact method, whose
    unknown keywords are solver options).
    """
    fn = heuristics.METHODS.get(method)
    if fn is None or method in EXACT_METHODS:
        return None
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # pragma: no cover - a builtin without a signature
        return None
    ps = list(sig.parameters.values())[1:]  # the first one is the instance
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in ps):
        return None
    return tuple(p.name for p in ps
                 if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                               inspect.Parameter.KEYWORD_ONLY))


def _not_milp_options() -> frozenset[str]:
    """The parameters of an exact method that are not :func:`milp.solve`'s options: those of
    :func:`matheuristics.solve_milp` (the warm start, the sources beside HiGHS, the progress
    bar) and :func:`milp.solve`'s inputs, none a field of :class:`milp.MILPParams`.
    """
    import matheuristics

    names: set[str] = set()
    for fn in (matheuristics.solve_milp, milp.solve):
        names |= {p.name for p in list(inspect.signature(fn).parameters.values())[1:]
                  if p.kind is not inspect.Parameter.VAR_KEYWORD}
    return frozenset(names - set(milp.MILPParams.fields()) - {"params"})


def milp_params(spec: MethodSpec) -> milp.MILPParams | None:
    """An exact method's parameters as the :class:`milp.MILPParams` they give :func:`milp.solve`.

    The spec's time limit (the method's default when it has none) and backend
    (the method's), then its parameters over them: the fields by name, every
    other name a backend option, leaving out what :func:`matheuristics.solve_milp`
    takes itself (``warm_start``, ``lns_helper``, ``sources``, ``progress``).

    Parameters
    ----------
    spec
        A method of the sweep (``[params.<method>]`` or ``[variants.<label>]`` of
        its TOML file).

    Returns
    -------
    milp.MILPParams or None
        ``None`` for a heuristic.

    Raises
    ------
    ValueError
        For a bad value, naming its field (``mip_gap: must be in [0, 1), got 1.5``).
    """
    if spec.method not in EXACT_METHODS:
        return None
    skip = _not_milp_options()
    options = {k: v for k, v in spec.params.items() if k not in skip}
    base: dict[str, Any] = {"backend": EXACT_METHODS[spec.method]}
    if spec.time_limit is not None:
        base["time_limit"] = spec.time_limit
    return milp.MILPParams.from_mapping({**base, **options})


def _check_params(spec: MethodSpec, where: str) -> None:
    if spec.method in EXACT_METHODS:  # checked here, as milp.solve will read them
        try:
            milp_params(spec)
        except ValueError as e:
            raise ValueError(f"{where}.{e}") from None
        return
    accepted = method_parameters(spec.method)
    if accepted is None:
        return
    for key in spec.params:
        if key not in accepted:
            raise ValueError(f"{where}.{key}: not a parameter of method {spec.method!r}; "
                             f"accepted: {sorted({*accepted, 'time_limit'})}")


def make_config(
    families: str | Sequence[str],
    seeds: Any,
    methods: str | Sequence[str | MethodSpec],
    *,
    time_limit: float | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    family_params: Mapping[str, Mapping[str, Any]] | None = None,
    instance_files: Sequence[str] = (),
    scenarios: ScenarioConfig | None = None,
) -> BenchConfig:
    """Build and check a :class:`BenchConfig` from plain values (the command-line flags).

    Parameters
    ----------
    time_limit
        For every method without its own: the exact methods' limit and the budget
        of the heuristics that take one.
    params
        Per-method parameters, keyed by method label.
    scenarios
        The scenario dimension; its ``trace_days`` count as instances.

    Raises
    ------
    ValueError
        For an unknown family, method or heuristic parameter, or bad seeds.
    """
    fams = _split(families) if families else ()
    for f in fams:
        if f not in instances.FAMILIES:
            raise ValueError(f"families: unknown family {f!r}; known: {', '.join(instances.FAMILIES)}")
    params = params or {}
    specs: list[MethodSpec] = []
    for m in _split(methods) if isinstance(methods, str) else methods:
        if isinstance(m, MethodSpec):
            spec = m
        else:
            spec = MethodSpec(m, m, dict(params.get(m, {})), time_limit)
        if not isinstance(spec.method, str):
            raise ValueError(f"methods: {spec.label!r}: the method must be a name, got {spec.method!r}")
        if spec.time_limit is None and time_limit is not None:
            spec = MethodSpec(spec.label, spec.method, spec.params, time_limit)
        specs.append(_with_threads(spec))
    if not specs:
        raise ValueError("methods: no method given")
    known = method_names()
    for spec in specs:
        if spec.method not in known:
            raise ValueError(f"methods: unknown method {spec.method!r}; known: {', '.join(known)}")
        _check_params(spec, spec.label)
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        raise ValueError(f"methods: a label appears twice in {labels}")
    traces = scenarios is not None and bool(scenarios.trace_days)
    if not fams and not instance_files and not traces:
        raise ValueError("families: no family and no instance file given")
    return BenchConfig(
        families=fams,
        seeds=parse_seeds(seeds) if fams or traces else (),
        methods=tuple(specs),
        family_params={k: dict(v) for k, v in (family_params or {}).items()},
        instance_files=tuple(str(p) for p in instance_files),
        scenarios=scenarios,
    )


def _with_threads(spec: MethodSpec) -> MethodSpec:
    """A spec with its ``time_limit`` parameter as its time limit, and exact methods
    single-threaded unless its parameters say otherwise.
    """
    params = dict(spec.params)
    tl = params.pop("time_limit", spec.time_limit)
    if tl is not None and (isinstance(tl, bool) or not isinstance(tl, (int, float)) or not tl >= 0):
        raise ValueError(f"{spec.label}.time_limit: must be a number >= 0, got {tl!r}")
    if spec.method in EXACT_METHODS and "threads" not in params:
        params["threads"] = 1
    return MethodSpec(spec.label, spec.method, params, None if tl is None else float(tl))


# ---------------------------------------------------------------- the TOML file
Seconds = Annotated[float, Field(ge=0)]
"""A time limit: a number >= 0 (``inf`` allowed, NaN refused)."""


class _MethodTable(BaseModel):
    """``[params.<method>]``: the method's parameters; ``time_limit`` is typed."""

    model_config = ConfigDict(extra="allow", strict=True)
    time_limit: Seconds | None = None


class _Variant(_MethodTable):
    """``[variants.<label>]``: a ``method`` and its parameters."""

    method: str


class SweepFile(BaseModel):
    """The keys of a sweep file (see :func:`load_config`)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    families: list[str] = []
    seeds: Any = 1
    methods: list[str] = []
    time_limit: Seconds | None = None
    instances: list[str] = []
    params: dict[str, _MethodTable] = {}
    variants: dict[str, _Variant] = {}
    family_params: dict[str, dict[str, Any]] = {}
    scenarios: dict[str, Any] | None = None
    policy: dict[str, Any] | None = None

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, v: Any) -> Any:
        parse_seeds(v)  # refused here, with its path; make_config parses it again
        return v


def config_from_dict(data: Mapping[str, Any]) -> BenchConfig:
    """A :class:`BenchConfig` from the content of a sweep file."""
    try:
        doc = SweepFile.model_validate(data)
    except ValidationError as e:
        raise ValueError(pydantic_message(e, list(SweepFile.model_fields))) from None
    for fam, fp in doc.family_params.items():
        try:
            check_size_params(fp)  # before a horizon of 10^9 is drawn
        except ValueError as e:
            raise ValueError(f"family_params.{fam}.{e}") from None
    for name in doc.params:
        if name not in doc.methods:
            raise ValueError(f"params.{name}: no method {name!r} in methods {doc.methods} "
                             "(a variant takes its parameters in [variants.<label>])")
    specs: list[MethodSpec] = []
    for name in doc.methods:
        table = doc.params.get(name)
        p = dict(table.model_extra or {}) if table is not None else {}
        tl = table.time_limit if table is not None and table.time_limit is not None else doc.time_limit
        specs.append(MethodSpec(name, name, p, tl))
        _check_params(specs[-1], f"params.{name}")
    for label, v in doc.variants.items():
        tl = v.time_limit if v.time_limit is not None else doc.time_limit
        specs.append(MethodSpec(label, v.method, dict(v.model_extra or {}), tl))
        _check_params(specs[-1], f"variants.{label}")
    return make_config(
        doc.families,
        doc.seeds,
        specs,
        time_limit=doc.time_limit,
        family_params=doc.family_params,
        instance_files=doc.instances,
        scenarios=scenario_config_from_tables(doc.scenarios, doc.policy),
    )


def load_config(path: str | os.PathLike[str]) -> BenchConfig:
    """Read a sweep from a TOML file.

    The keys: ``families``, ``seeds`` (N, ``"A-B"`` or a list), ``methods``,
    optional ``time_limit``, ``instances`` (instance files), ``[params.<method>]``
    (a ``time_limit`` there overrides the global one), ``[variants.<label>]`` (a
    ``method`` and its parameters), ``[family_params.<family>]``; ``[scenarios]``
    and ``[policy]`` make it a sweep of replays (docs/simulation.md). Example::

        families = ["seed-training-heavy", "hc-mixed"]
        seeds = "0-4"
        methods = ["fifo", "fifo-curve", "best", "milp"]
        time_limit = 30

        [params.milp]
        threads = 2

        [variants.list-value]
        method = "list"
        rule = "value"

    Raises
    ------
    ValueError
        ``<file>: <key>: <problem>``; an unknown or misspelled key is named.
    """
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: malformed TOML: {e}") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a UTF-8 text file") from None
    try:
        return config_from_dict(data)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
