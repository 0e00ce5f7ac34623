"""The one table of placement rules: the built-ins and a user's, by one name each (section 14 of the specification).

A placement rule picks the node a job goes to among those where it fits.
Built-in rules run inside the toolkit's compiled loops; a user's rule is a
callable ``rule(view, job) -> scores`` or an object with ``score(view,
job)`` (and optionally ``gpus(view, job, node)``), see
:mod:`heuristics.view` and :mod:`heuristics.scoring`. It enters the table by
:func:`register_placement`, through the entry-point group
``gpusched.placements`` (each entry names the rule; its name is the entry's),
or is named ``MODULE:NAME`` wherever a rule is asked for.

The built-ins and where they run:

- ``first-fit``, ``best-fit``, ``frag``: the toolkit's rules in time, on
  every model version (:mod:`heuristics.placement`, :mod:`heuristics.shares`);
  ``first-fit`` is also a packing policy (``firstfit`` is its old spelling);
- ``random``, ``dotprod``, ``clustering``, ``packing``, ``bestfit``, ``fgd``:
  FGD's six (USENIX ATC 2023), in the packing experiment and in time on
  version 3 instances. FGD's ``bestfit`` scores the CPU and GPU left over;
  the toolkit's ``best-fit`` the least free GPU milli over a run;
- ``guided``: the toolkit's rule beyond FGD (:mod:`heuristics.guided`), an
  object with ``score`` and ``gpus`` wherever a user's rule runs.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .guided import GUIDED
from .registry import Registry, import_object

__all__ = [
    "BUILTIN_PACKING",
    "BUILTIN_TIME",
    "FGD_POLICIES",
    "PLACEMENT_GROUP",
    "PLACEMENT_RULES",
    "PlacementRule",
    "is_compiled",
    "register_placement",
    "resolve_placement",
]

PLACEMENT_GROUP = "gpusched.placements"
"""Entry-point group of the placement rules other packages add."""

FGD_POLICIES: tuple[str, ...] = ("random", "dotprod", "clustering", "packing", "bestfit", "fgd")
"""The six policies of FGD's evaluation, in the paper's order."""

BUILTIN_TIME: tuple[str, ...] = ("first-fit", "best-fit", "frag")
"""The toolkit's own placement rules in time (every model version)."""

BUILTIN_PACKING: tuple[str, ...] = (*FGD_POLICIES, "first-fit")
"""The built-in policies of the packing experiment."""

_ALIASES = {"firstfit": "first-fit"}
"""Old spellings still read (with a warning), each to its one name."""


@dataclass(frozen=True)
class PlacementRule:
    """One entry of :data:`PLACEMENT_RULES`.

    Attributes
    ----------
    name
        The rule's one name (a user's rule not registered: ``MODULE:NAME``).
    description
        One line.
    rule
        A user's rule (a callable, or an object with ``score``); ``None`` for
        a built-in, which runs in the toolkit's own kernels.
    seed
        ``random``'s seed (``"random:SEED"``).
    where
        For a built-in: ``"time"`` (every version), ``"time-v3"`` and
        ``"packing"``, the places it runs; a user's rule runs in all.
    """

    name: str
    description: str
    rule: Any = None
    seed: int = 0
    where: frozenset[str] = field(default_factory=frozenset)

    @property
    def builtin(self) -> bool:
        """Whether the rule is one of the toolkit's."""
        return self.rule is None

    @property
    def score(self) -> Callable[..., Any]:
        """The score function ``(view, job) -> scores`` of a user's rule."""
        return self.rule.score if hasattr(self.rule, "score") else self.rule  # type: ignore[no-any-return]

    @property
    def gpus(self) -> Callable[..., Any] | None:
        """A user rule's own GPU choice ``(view, job, node) -> list[int]``, if it has one."""
        return getattr(self.rule, "gpus", None) if hasattr(self.rule, "score") else None

    @property
    def compiled(self) -> bool:
        """Whether the score function is compiled by numba (it then runs inside compiled loops)."""
        return self.rule is not None and is_compiled(self.score)

    def for_instance(self, inst: Any) -> PlacementRule:
        """This entry with a rule object's ``for_instance(inst)``, if it has one: what a rule
        may read of the instance once, before any job (the time methods call it; the
        packing loop calls ``for_packing``)."""
        bind = getattr(self.rule, "for_instance", None) if self.rule is not None else None
        if bind is None:
            return self
        return dataclasses.replace(self, rule=bind(inst))


def is_compiled(fn: object) -> bool:
    """Whether ``fn`` is a numba-compiled function (a dispatcher)."""
    try:
        from numba.core.dispatcher import Dispatcher
    except ImportError:  # pragma: no cover (numba is a dependency)
        return False
    return isinstance(fn, Dispatcher)


def _check_user_rule(name: str, rule: object) -> None:
    if hasattr(rule, "score"):
        if not callable(rule.score):
            raise ValueError(f"placement: rule {name!r}: its score attribute is not callable")
        gpus = getattr(rule, "gpus", None)
        if gpus is not None and not callable(gpus):
            raise ValueError(f"placement: rule {name!r}: its gpus attribute is not callable")
    elif not callable(rule):
        raise ValueError(f"placement: rule {name!r} is neither a callable rule(view, job) "
                         f"nor an object with score(view, job); got {type(rule).__name__}")


def _enter(name: str, obj: object) -> None:
    description = getattr(obj, "description", None) or (getattr(obj, "__doc__", None) or "").strip()
    register_placement(name, obj, description.splitlines()[0] if description else "")


PLACEMENT_RULES: Registry[PlacementRule] = Registry(PLACEMENT_GROUP, _enter)
"""Rule name -> :class:`PlacementRule`: the built-ins, registered rules and installed plugins."""


def register_placement(name: str, rule: object, description: str = "") -> PlacementRule:
    """Enter a user's placement rule in :data:`PLACEMENT_RULES` under ``name``.

    Parameters
    ----------
    name
        Its one name (not a built-in's, nor containing ``:``).
    rule
        ``rule(view, job) -> scores`` (plain or numba-compiled), or an
        object with ``score(view, job)`` and optionally ``gpus(view, job, node)``.
    description
        One line for listings.

    Raises
    ------
    ValueError
        For a name already taken or a rule of the wrong kind.
    """
    if not name or ":" in name:
        raise ValueError(f"placement: name {name!r} must be non-empty and without ':'")
    if PLACEMENT_RULES.holds(name) or name in _ALIASES:
        raise ValueError(f"placement: {name!r} is already registered")
    _check_user_rule(name, rule)
    entry = PlacementRule(name, description, rule)
    PLACEMENT_RULES[name] = entry
    return entry


def _builtin(name: str, description: str, *where: str) -> None:
    PLACEMENT_RULES[name] = PlacementRule(name, description, None, 0, frozenset(where))


_builtin("first-fit", "the first node in list order with room, the lowest-indexed GPUs (FIFO's)",
         "time", "packing")
_builtin("best-fit", "the node left with the least free GPU milli over the run", "time")
_builtin("frag", "FGD's fragmentation over the run, for the jobs still to place", "time")
_builtin("random", "FGD's Random: a node drawn uniformly among those that fit (random:SEED)",
         "time-v3", "packing")
_builtin("dotprod", "FGD's DotProd: free resources least aligned with the request",
         "time-v3", "packing")
_builtin("clustering", "FGD's GpuClustering: nodes holding pods of the same class",
         "time-v3", "packing")
_builtin("packing", "FGD's GpuPacking: partly used GPUs, then used nodes, then empty ones",
         "time-v3", "packing")
_builtin("bestfit", "FGD's BestFit: the least CPU and GPU left over, half weight each",
         "time-v3", "packing")
_builtin("fgd", "FGD: the least growth of fragmentation for the target workload",
         "time-v3", "packing")
PLACEMENT_RULES["guided"] = PlacementRule("guided", GUIDED.description, GUIDED, 0,
                                          frozenset({"time", "packing"}))  # section 17


def _name_of(rule: object) -> str:
    for name in list(PLACEMENT_RULES._data):
        if PLACEMENT_RULES._data[name].rule is rule:
            return name
    fn = getattr(rule, "py_func", rule)
    module = getattr(fn, "__module__", None) or type(rule).__module__
    qual = getattr(fn, "__qualname__", None) or type(rule).__qualname__
    return f"{module}:{qual}"


def resolve_placement(spec: object) -> PlacementRule:
    """The :class:`PlacementRule` that ``spec`` names or is.

    Parameters
    ----------
    spec
        A name of :data:`PLACEMENT_RULES`, ``random:SEED``, ``MODULE:NAME``
        (a rule importable from the Python path or the current directory),
        a :class:`PlacementRule`, or a rule itself (callable or object with ``score``).

    Raises
    ------
    ValueError
        For an unknown name, a module or name that does not import, or an
        object that is not a rule; the message names the rule.
    """
    if isinstance(spec, PlacementRule):
        return spec
    if isinstance(spec, str):
        if spec in _ALIASES:
            warnings.warn(f"placement rule {spec!r} is now spelt {_ALIASES[spec]!r}",
                          DeprecationWarning, stacklevel=2)
            spec = _ALIASES[spec]
        assert isinstance(spec, str)
        if spec in PLACEMENT_RULES:
            return PLACEMENT_RULES[spec]
        head, sep, tail = spec.partition(":")
        if sep and head == "random":
            if not tail.isdigit():
                raise ValueError(f"placement: the seed of {spec!r} is not an integer >= 0")
            base = PLACEMENT_RULES["random"]
            return PlacementRule(spec, base.description, None, int(tail), base.where)
        if sep:
            rule = import_object(spec, "placement")
            if isinstance(rule, PlacementRule):
                return rule
            _check_user_rule(spec, rule)
            return PlacementRule(spec, f"{spec} (a user's rule)", rule)
        raise ValueError(f"placement: unknown placement rule {spec!r}; known: "
                         f"{', '.join(PLACEMENT_RULES)} (random:SEED; or MODULE:NAME for your own)")
    name = _name_of(spec)
    _check_user_rule(name, spec)
    return PlacementRule(name, f"{name} (a user's rule)", spec)
