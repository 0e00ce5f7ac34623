"""Seeded, deterministic instance families: the registry.

``generate(family, seed)`` gives the same :class:`~instances.Instance` (and so
the same file bytes) for the same family, seed and parameters. Every random
draw comes from one :class:`numpy.random.Generator` seeded with the seed and
the family's name. The generators are in :mod:`.catalogue`, their building
blocks (job sizes by kind, daily curves, job draws) in :mod:`.generators`,
and the real traffic of ``trace-servegen`` in :mod:`instances.servegen`.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ..model import Instance, check_size_params
from ..servegen import servegen_hourly_rps
from .catalogue import (
    GENERATORS,
    OPENB_DAYS,
    OPENB_INFERENCE_SHARE,
    OPENB_MIN_GPUS,
    SEED_SCENARIOS,
    TRACE_GPU_THROUGHPUT_RPS,
    contention,
)
from .generators import KIND_SPECS, daily_curve

__all__ = [
    "FAMILIES",
    "KIND_SPECS",
    "OPENB_DAYS",
    "OPENB_INFERENCE_SHARE",
    "OPENB_MIN_GPUS",
    "SEED_SCENARIOS",
    "TRACE_GPU_THROUGHPUT_RPS",
    "contention",
    "daily_curve",
    "generate",
    "servegen_hourly_rps",
]

_MARKUP = re.compile(r":[a-z]+:`~?([^`]+)`|``([^`]+)``|`([^`]+)`")


def plain_text(doc: str) -> str:
    """``doc`` on one line with reStructuredText roles and literals unwrapped."""
    text = " ".join(doc.split())
    return _MARKUP.sub(lambda m: next(g for g in m.groups() if g is not None), text)


def _first_line(fn: Callable[..., Any]) -> str:
    doc = inspect.getdoc(fn) or ""
    return plain_text(doc.split("\n\n")[0])


FAMILIES: dict[str, str] = {name: _first_line(fn) for name, fn in GENERATORS.items()}
"""Family name -> one-line description (plain text)."""


def generate(family: str, seed: int = 0, **params: Any) -> Instance:
    """Generate an instance of a named family.

    Parameters
    ----------
    family
        A key of :data:`FAMILIES`.
    seed
        Seed of the random stream; the same family, seed and parameters give
        the same instance.
    **params
        Family parameters (``num_jobs``, ``num_gpus``, ...) overriding the
        defaults that the seed would draw.

    Returns
    -------
    Instance
        Named ``<family>-s<seed>``, with the family, seed and parameters in
        ``meta``.

    Raises
    ------
    ValueError
        For an unknown family, a negative seed or a bad parameter.
    """
    if family not in GENERATORS:
        raise ValueError(f"family: unknown family {family!r}; known: {', '.join(GENERATORS)}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed: must be a non-negative integer, got {seed!r}")
    fn = GENERATORS[family]
    sig = inspect.signature(fn).parameters
    accepted = set(sig) - {"rng", "seed"}
    unknown = set(params) - accepted
    if unknown:
        raise ValueError(
            f"{sorted(unknown)[0]}: not a parameter of family {family!r}; "
            f"accepted: {sorted(accepted)}"
        )
    check_size_params(params)
    rng = np.random.default_rng([int(seed), _family_key(family)])
    inst = fn(rng, **params, **({"seed": int(seed)} if "seed" in sig else {}))
    name = f"{family}-s{int(seed)}" + "".join(f"-{k}{v}" for k, v in sorted(params.items()))
    meta = {"family": family, "seed": int(seed), "params": dict(sorted(params.items())), **inst.meta}
    return inst.replace(name=name, meta=meta)


def _family_key(family: str) -> int:
    """A stable integer per family name, so families draw independent streams."""
    return int.from_bytes(family.encode(), "little") % (2**63)
