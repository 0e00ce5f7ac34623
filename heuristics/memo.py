"""What the states of every model version build once per live instance (an instance never changes)."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from instances import Instance

__all__ = ["memo"]

_MEMO: dict[tuple[int, str], tuple[weakref.ref[Instance], Any]] = {}


def memo(inst: Instance, key: str, build: Callable[[], Any]) -> Any:
    """``build()`` once per live instance and ``key`` (an instance never changes).

    :func:`instances.capacity` and the empty rows of a profile take about as
    long as a list pass on a small instance; the entry goes with the instance.
    Shared by the states of every model version (a key names what it holds).
    """
    k = (id(inst), key)
    hit = _MEMO.get(k)
    if hit is not None and hit[0]() is inst:
        return hit[1]
    value = build()
    _MEMO[k] = (weakref.ref(inst, lambda _, k=k: _MEMO.pop(k, None)), value)  # type: ignore[misc]
    return value
