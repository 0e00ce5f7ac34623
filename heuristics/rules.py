"""The one table of priority rules: each turns an instance into a job order for the list decoders.

A rule is a key ``key(inst) -> array``, one number per job; the list is in
ascending order of the key. A built-in rule breaks ties by priority ``w``
(descending), then by value ``w g p`` (descending), then by position in the
instance's job list; a user's rule (section 14 of the specification) by position. A
user's rule enters the table by :func:`register_rule`, through the
entry-point group ``gpusched.rules``, or is named ``MODULE:NAME`` wherever a
rule is asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from instances import Instance

from .registry import Registry, import_object

__all__ = [
    "ALIASES", "BUILTIN_RULES", "FLOW_RULES", "RULES", "RULE_DESCRIPTIONS", "RULE_GROUP", "check_known", "fifo_order",
    "order_by", "register_rule", "resolve_rule", "rule_name", "sort_keys", "start_rules",
]

Key = Callable[[Instance], np.ndarray]

RULE_GROUP = "gpusched.rules"
"""Entry-point group of the priority rules other packages add."""

_BUILTIN: dict[str, Key] = {
    "priority": lambda inst: -inst.priorities,
    "value": lambda inst: -inst.job_values,
    "area": lambda inst: -(inst.gpus * inst.durations),
    "lpt": lambda inst: -inst.durations,
    "spt": lambda inst: inst.durations,
    "edd": lambda inst: inst.deadlines,
    "release": lambda inst: inst.releases,
    "density": lambda inst: -inst.priorities * inst.gpus,
    "slack": lambda inst: inst.deadlines - inst.releases - inst.durations,
    "wspt": lambda inst: -inst.priorities / inst.durations,
}
"""Rule name -> sort key (ascending sorts first). ``priority``: ``w`` descending;
``value``: ``w g p`` descending; ``area``: ``g p`` descending; ``lpt``/``spt``:
longest/shortest duration first; ``edd``: earliest end-by slot first;
``release``: earliest release first; ``density``: ``w g`` descending;
``slack``: least start-time freedom ``min(D, T) - r - p`` first; ``wspt``: Smith's rule,
``w / p`` descending (section 15). ``sjf`` is the flow-time literature's name for ``spt``."""

ALIASES: dict[str, str] = {"sjf": "spt"}
"""Other names of built-in rules (the same key, reported under the name asked for)."""

FLOW_RULES: tuple[str, ...] = ("wspt",)
"""Rules written for flow time; ``best`` and the searches add them under ``flow``."""

BUILTIN_RULES: tuple[str, ...] = tuple(r for r in _BUILTIN if r not in FLOW_RULES)
"""The toolkit's own rules that ``best`` and the searches start from under ``value``."""


def start_rules(inst: Instance) -> tuple[str, ...]:
    """The rules ``best`` and the searches start from: :data:`BUILTIN_RULES`, and under
    ``flow`` also :data:`FLOW_RULES` (the figures under ``value`` stay those of before).
    """
    return BUILTIN_RULES + (FLOW_RULES if inst.objective == "flow" else ())

_USER: set[str] = set()


def _enter(name: str, obj: object) -> None:
    doc = (getattr(obj, "__doc__", None) or "").strip()
    register_rule(name, obj, doc.splitlines()[0] if doc else "")  # type: ignore[arg-type]


RULES: Registry[Key] = Registry(RULE_GROUP, _enter)
"""Rule name -> key: the built-ins, registered rules and installed plugins."""

RULE_DESCRIPTIONS: dict[str, str] = {
    "priority": "w descending", "value": "w g p descending", "area": "g p descending",
    "lpt": "longest duration first", "spt": "shortest duration first",
    "edd": "earliest end-by slot first", "release": "earliest release first",
    "density": "w g descending", "slack": "least start-time freedom first",
    "wspt": "Smith's rule: w / p descending", "sjf": "shortest job first (spt)",
}
"""Rule name -> one line."""

for _name, _key in _BUILTIN.items():
    RULES[_name] = _key
for _name, _other in ALIASES.items():
    RULES[_name] = _BUILTIN[_other]
del _name, _key, _other


def register_rule(name: str, key: Key, description: str = "") -> None:
    """Enter a user's priority rule ``key(inst) -> array`` in :data:`RULES` under ``name``.

    Raises
    ------
    ValueError
        For a name already taken, one with ``:``, or a key that is not callable.
    """
    if not name or ":" in name:
        raise ValueError(f"rule: name {name!r} must be non-empty and without ':'")
    if RULES.holds(name):
        raise ValueError(f"rule: {name!r} is already registered")
    if not callable(key):
        raise ValueError(f"rule: {name!r} is not callable as key(inst); got {type(key).__name__}")
    RULES[name] = key
    RULE_DESCRIPTIONS[name] = description
    _USER.add(name)


def rule_name(rule: Any) -> str:
    """The name a rule is reported by: its table name, else ``MODULE:NAME``."""
    if isinstance(rule, str):
        return rule
    for name in list(RULES._data):
        if RULES._data[name] is rule:
            return name
    return f"{getattr(rule, '__module__', '?')}:{getattr(rule, '__qualname__', type(rule).__name__)}"


def resolve_rule(rule: Any) -> tuple[str, Key, bool]:
    """``(name, key, builtin)`` of a rule given by name, ``MODULE:NAME`` or as a key.

    Raises
    ------
    ValueError
        For an unknown name, a spec that does not import, or a key that is not callable.
    """
    if isinstance(rule, str):
        if rule in RULES:
            return rule, RULES[rule], rule not in _USER
        if ":" in rule:
            key = import_object(rule, "rule")
            if not callable(key):
                raise ValueError(f"rule: {rule!r} is not callable as key(inst)")
            return rule, key, False  # type: ignore[return-value]
        check_known("rule", rule, RULES)
    if not callable(rule):
        raise ValueError(f"rule: {rule!r} is neither a rule's name nor a key(inst) callable")
    return rule_name(rule), rule, False


def check_known(field: str, name: str, known: Iterable[str]) -> str:
    """Return ``name`` if it is one of ``known``, else :class:`ValueError` naming ``field`` and listing them.

    The one check behind every named choice of the package (rules, placement
    rules, reservations, packing policies and orders).
    """
    known = tuple(known)
    if name not in known:
        raise ValueError(f"{field}: unknown {field} {name!r}; known: {', '.join(known)}")
    return name


def sort_keys(keys: Sequence[np.ndarray], tiebreak: np.ndarray) -> np.ndarray:
    """Indices sorted by ``keys`` (most significant first, ascending), ties by ``tiebreak``."""
    return np.lexsort((tiebreak, *reversed(keys))) if keys else np.argsort(tiebreak, kind="stable")


def order_by(inst: Instance, rule: Any = "priority") -> np.ndarray:
    """Job indices sorted by ``rule``'s key (built-ins: ties by ``w`` desc, ``w g p`` desc, index;
    a user's rule: ties by index).

    Raises
    ------
    ValueError
        For an unknown rule, or a user's key that raises or does not return one
        real number per job (naming the rule).
    """
    name, fn, builtin = resolve_rule(rule)
    if builtin:
        key = fn(inst)
        return sort_keys((key, -inst.priorities, -inst.job_values), np.arange(inst.num_jobs))
    try:
        raw = fn(inst)
    except Exception as exc:  # a user's rule
        raise ValueError(f"rule: rule {name!r} raised {type(exc).__name__}: {exc}") from exc
    try:
        key = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"rule: rule {name!r} returned {type(raw).__name__}, not numbers") from exc
    if key.shape != (inst.num_jobs,):
        raise ValueError(f"rule: rule {name!r} returned a key of shape {key.shape}, "
                         f"expected one number per job ({inst.num_jobs},)")
    if np.isnan(key).any():
        j = int(np.flatnonzero(np.isnan(key))[0])
        raise ValueError(f"rule: rule {name!r} returned NaN for job {inst.jobs[j].name!r}")
    return np.argsort(key, kind="stable")


def fifo_order(inst: Instance) -> np.ndarray:
    """Arrival order: by release, then position in the job list (docs/model.md's FIFO queue)."""
    return np.argsort(inst.releases, kind="stable")
