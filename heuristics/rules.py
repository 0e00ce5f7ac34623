"""Priority rules: each turns an instance into a job order for the list decoders.

Every rule sorts by its own key first, then breaks ties by priority ``w``
(descending), then by value ``w g p`` (descending), then by position in the
instance's job list, so an order is always fully determined.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np

from instances import Instance

__all__ = ["RULES", "check_known", "fifo_order", "order_by", "sort_keys"]

Key = Callable[[Instance], np.ndarray]

RULES: dict[str, Key] = {
    "priority": lambda inst: -inst.priorities,
    "value": lambda inst: -inst.job_values,
    "area": lambda inst: -(inst.gpus * inst.durations),
    "lpt": lambda inst: -inst.durations,
    "spt": lambda inst: inst.durations,
    "edd": lambda inst: inst.deadlines,
    "release": lambda inst: inst.releases,
    "density": lambda inst: -inst.priorities * inst.gpus,
    "slack": lambda inst: inst.deadlines - inst.releases - inst.durations,
}
"""Rule name -> sort key (ascending sorts first). ``priority``: ``w`` descending;
``value``: ``w g p`` descending; ``area``: ``g p`` descending; ``lpt``/``spt``:
longest/shortest duration first; ``edd``: earliest end-by slot first;
``release``: earliest release first; ``density``: ``w g`` descending;
``slack``: least start-time freedom ``min(D, T) - r - p`` first."""


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


def order_by(inst: Instance, rule: str = "priority") -> np.ndarray:
    """Job indices sorted by ``rule``, ties broken by ``w`` desc, ``w g p`` desc, index.

    Raises
    ------
    ValueError
        For an unknown rule.
    """
    key = RULES[check_known("rule", rule, RULES)](inst)
    return sort_keys((key, -inst.priorities, -inst.job_values), np.arange(inst.num_jobs))


def fifo_order(inst: Instance) -> np.ndarray:
    """Arrival order: by release, then position in the job list (docs/model.md's FIFO queue)."""
    return np.argsort(inst.releases, kind="stable")
