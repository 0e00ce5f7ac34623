"""Fast scheduling policies, one registry: ``solve(inst, name, **params)``.

Every method is a function ``(instance, **params) -> Result`` registered in
:data:`METHODS`; every schedule it returns has passed :func:`instances.evaluate`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from typing import Any

from instances import Instance, Result

from .fifo import fifo

__all__ = ["METHODS", "DESCRIPTIONS", "register", "solve"]

logger = logging.getLogger(__name__)

Method = Callable[..., Result]

METHODS: dict[str, Method] = {}
"""Method name -> ``(instance, **params) -> Result``."""

DESCRIPTIONS: dict[str, str] = {}
"""Method name -> one-line description."""


def register(name: str, fn: Method, description: str) -> None:
    """Add a method to the registry under ``name``."""
    if name in METHODS:
        raise ValueError(f"method: {name!r} is already registered")
    METHODS[name] = fn
    DESCRIPTIONS[name] = description


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
        For an unknown method or parameter.
    """
    fn = METHODS.get(method)
    if fn is None:
        raise ValueError(f"method: unknown heuristic {method!r}; known: {', '.join(METHODS)}")
    try:
        result = fn(inst, **params)
    except TypeError as e:
        if "unexpected keyword argument" in str(e):
            raise ValueError(f"params: {e}") from None
        raise
    logger.debug("%s", result.summary())
    return result


register("fifo", partial(fifo, reservation="peak"), "FIFO in arrival order under peak reservation (the baseline)")
register("fifo-curve", partial(fifo, reservation="curve"), "FIFO in arrival order under curve reservation (ablation)")
