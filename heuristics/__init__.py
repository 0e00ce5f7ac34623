"""Fast scheduling policies, one registry: ``solve(inst, name, **params)``.

Every method is a function ``(instance, **params) -> Result`` registered in
:data:`METHODS`; every schedule it returns has passed :func:`instances.evaluate`
with the reservation the method used enforced.

- ``fifo``, ``fifo-curve``: the baseline (the specification (docs/model.md)), peak / curve reservation;
- ``easy-peak``, ``easy-curve``, ``conservative-peak``, ``conservative-curve``:
  backfilling on the FIFO queue (:mod:`heuristics.backfill`);
- ``list``, ``list-peak``: serial list scheduling with ``rule=`` one of :data:`RULES`;
- ``parallel``: the parallel (time-stepping) scheme, ``rule=``;
- ``sampling``: biased random sampling of lists (``passes``, ``time_limit``, ``seed``);
- ``local-search``: insert and swap moves on the list (``iterations``, ``time_limit``, ``seed``).

Methods of other packages join the registry as plugins: each entry point of
the group ``gpusched.methods`` (:data:`ENTRY_POINT_GROUP`) names a
:class:`MethodSpec`, loaded the first time a name the registry does not hold
is asked for, or the whole list is. The project's own ``matheuristics``
package registers ``lns`` (windows re-solved by the MILP) and ``best`` (all
of the above in one budget) so; this package imports nothing from the MILP.

The search methods are deterministic for a given ``seed`` while their count
budgets, not the clock, end them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from importlib.metadata import entry_points
from pathlib import Path as _Path
from typing import Any, NamedTuple

import instances as _instances
from instances import (
    InfeasibleScheduleError,
    Instance,
    Result,
    compile_clock,
    evaluate,
    kernel_cache,
    tolerance,
)

# the submodules stay reachable by their names; the methods through the registry
from . import backfill, decoder, fifo, listsched, placement, profile, rules, search
from .placement_rules import PLACEMENT_RULES, register_placement, resolve_placement
from .registry import Registry
from .results import finish, start_value
from .rules import RULES, register_rule

kernel_cache.guard(_Path(__file__).parent, _Path(_instances.__file__).parent)  # its kernels call instances'
compile_clock.install()  # runtimes leave out kernel compiling and cache loading

__all__ = [
    "DESCRIPTIONS", "ENTRY_POINT_GROUP", "METHODS", "PLACEMENT_RULES", "RULES",
    "USER_PLACEMENT_METHODS", "MethodSpec", "backfill", "decoder", "fifo", "finish", "listsched",
    "load_plugins", "placement", "profile", "refuse_user_placement", "register",
    "register_placement", "register_rule",
    "resolve_placement", "rules", "search", "solve", "start_value",
]

logger = logging.getLogger(__name__)

Method = Callable[..., Result]

ENTRY_POINT_GROUP = "gpusched.methods"
"""Entry-point group of the methods other packages add (each names a :class:`MethodSpec`)."""


class MethodSpec(NamedTuple):
    """A method a plugin adds: the function and its one-line description."""

    fn: Method
    description: str


def _check(name: str, spec: object) -> None:
    if not isinstance(spec, MethodSpec):
        raise TypeError(f"entry point {name} ({ENTRY_POINT_GROUP}): must name a "
                        f"heuristics.MethodSpec, got {type(spec).__name__}")


def _enter(name: str, spec: Any) -> None:
    register(name, spec.fn, spec.description)


METHODS: Registry[Method] = Registry(ENTRY_POINT_GROUP, _enter, _check)
"""Method name -> ``(instance, **params) -> Result`` (the plugins' too)."""

DESCRIPTIONS: dict[str, str] = {}
"""Method name -> one-line description."""


def register(name: str, fn: Method, description: str) -> None:
    """Add a method to the registry under ``name``."""
    if METHODS.holds(name):
        raise ValueError(f"method: {name!r} is already registered")
    METHODS[name] = fn
    DESCRIPTIONS[name] = description


def load_plugins() -> list[str]:
    """Register the methods of the ``gpusched.methods`` entry points (once per process).

    Returns
    -------
    list of str
        The names registered by this call (empty once loaded).

    Raises
    ------
    TypeError
        If an entry point does not name a :class:`MethodSpec`.
    """
    return METHODS.load()


USER_PLACEMENT_METHODS: tuple[str, ...] = ("list", "list-peak", "parallel", "sampling")
"""The methods in time that take a user's placement rule (section 14 of the specification)."""


def refuse_user_placement(method: str, placement: Any) -> None:
    """A :class:`ValueError` when ``method`` is given a user's placement rule it cannot run."""
    if placement is None or method in USER_PLACEMENT_METHODS:
        return
    entry = resolve_placement(placement)
    if not entry.builtin:
        raise ValueError(
            f"placement: {entry.name!r} is a user's rule; in time it runs in "
            f"{', '.join(USER_PLACEMENT_METHODS)} (and in the packing experiment), "
            f"not yet in {method!r}")


def solve(inst: Instance, method: str, **params: Any) -> Result:
    """Run a heuristic by name.

    Parameters
    ----------
    inst
        The instance.
    method
        A key of :data:`METHODS`.
    **params
        The method's parameters (``rule=``, ``seed=``, ``passes=`` ...).

    Raises
    ------
    ValueError
        For an unknown method or parameter, or a parameter of the wrong type.
    """
    refuse_user_placement(method, params.get("placement"))
    fn = METHODS.get(method)
    if fn is None:
        hint = "" if entry_points(group=ENTRY_POINT_GROUP) else (
            f" (no {ENTRY_POINT_GROUP} plugins are installed: `pip install -e .` "
            "registers lns and best)")
        raise ValueError(
            f"method: unknown heuristic {method!r}; known: {', '.join(METHODS)}{hint}")
    try:
        result = fn(inst, **params)
    except TypeError as e:
        if "unexpected keyword argument" in str(e):
            raise ValueError(f"params: {e}") from None
        if params:  # a parameter of the wrong type, e.g. passes="many"
            raise ValueError(
                f"params: {method} rejected {sorted(params)} ({e})"
            ) from e
        raise
    if not _toolkits(fn):
        _recheck(inst, method, result)
    logger.debug("%s", result.summary())
    return result


def _toolkits(fn: Any) -> bool:
    """Whether a method is the toolkit's own (its results pass :func:`finish`'s checker)."""
    module = getattr(getattr(fn, "func", fn), "__module__", "") or ""
    return module.split(".")[0] in ("heuristics", "matheuristics")


def _recheck(inst: Instance, method: str, result: Any) -> None:
    """A registered method's result through the independent checker: its schedule feasible
    under its reservation and its value the checker's, or a ValueError naming the method."""
    if not isinstance(result, Result):
        raise ValueError(f"method: {method!r} returned {type(result).__name__}, not a Result")
    try:
        m = evaluate(inst, result.schedule, result.reservation,  # type: ignore[arg-type]
                     enforce_reservation=True)
    except InfeasibleScheduleError as e:
        raise ValueError(f"method: {method!r} returned an infeasible schedule: {e}") from None
    if abs(m.value - result.value) > tolerance(m.value):
        raise ValueError(f"method: {method!r} reports value {result.value!r}, the checker "
                         f"{m.value!r}")


register("fifo", partial(fifo.fifo, reservation="peak"), "FIFO in arrival order under peak reservation (the baseline)")
register("fifo-curve", partial(fifo.fifo, reservation="curve"), "FIFO in arrival order under curve reservation (ablation)")
for _kind, _fn in (("easy", backfill.easy), ("conservative", backfill.conservative)):
    for _res in ("peak", "curve"):
        register(f"{_kind}-{_res}", partial(_fn, reservation=_res),
                 f"{'EASY' if _kind == 'easy' else _kind} backfilling, FIFO queue, {_res} reservation")
del _kind, _fn, _res
register("list", partial(listsched.list_schedule, reservation="curve"),
         "serial list scheduling, earliest fit, curve reservation (rule=priority|value|area|...)")
register("list-peak", partial(listsched.list_schedule, reservation="peak"),
         "serial list scheduling, earliest fit, peak reservation (rule=...)")
register("parallel", listsched.parallel_schedule, "parallel (time-stepping) list scheduling (rule=...)")
register("sampling", search.sampling, "multi-pass biased random sampling of lists (passes=, time_limit=, seed=)")
register(
    "local-search", search.local_search,
    "insert/swap local search over the list, serial decoder (iterations=, time_limit=, seed=)",
)
