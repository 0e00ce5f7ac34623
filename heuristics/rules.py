"""Priority rules: each turns an instance into a job order for the list decoders.

Every rule sorts by its own key first, then breaks ties by priority ``w``
(descending), then by value ``w g p`` (descending), then by position in the
instance's job list, so an order is always fully determined.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from instances import Instance

__all__ = ["RULES", "fifo_order", "order_by"]

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


def check_rule(rule: str) -> str:
    """Return ``rule`` or raise :class:`ValueError` listing the known rules."""
    if rule not in RULES:
        raise ValueError(f"rule: unknown rule {rule!r}; known: {', '.join(RULES)}")
    return rule


def order_by(inst: Instance, rule: str = "priority") -> np.ndarray:
    """Job indices sorted by ``rule``, ties broken by ``w`` desc, ``w g p`` desc, index.

    Raises
    ------
    ValueError
        For an unknown rule.
    """
    key = RULES[check_rule(rule)](inst)
    idx = np.arange(inst.num_jobs)
    return np.lexsort((idx, -inst.job_values, -inst.priorities, key))


def fifo_order(inst: Instance) -> np.ndarray:
    """Arrival order: by release, then position in the job list (docs/model.md's FIFO queue)."""
    return np.argsort(inst.releases, kind="stable")
