"""Seeded, deterministic instance families: the registry.

``generate(family, seed)`` gives the same instance (and file bytes) for the
same family, seed and parameters: every draw comes from one generator seeded
with the seed and the family's name. The generators are in :mod:`.catalogue`,
their building blocks in :mod:`.generators`. Every family takes a node shape
(``node_gpus``); without one the instance is the flat one of version 1.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..model import Instance, check_size_params, is_int
from ..nodes import openb_node_mix, with_nodes
from .catalogue import (
    GENERATORS,
    OPENB_DAYS,
    OPENB_INFERENCE_SHARE,
    OPENB_MIN_GPUS,
    SEED_SCENARIOS,
    TRACE_GPU_THROUGHPUT_RPS,
    contention,
)
from .generators import KIND_SPECS, RESOLVED, daily_curve

__all__ = [
    "FAMILIES",
    "KIND_SPECS",
    "NODE_SHAPES",
    "OPENB_DAYS",
    "OPENB_INFERENCE_SHARE",
    "OPENB_MIN_GPUS",
    "RESOURCE_FAMILIES",
    "SEED_SCENARIOS",
    "TRACE_GPU_THROUGHPUT_RPS",
    "contention",
    "daily_curve",
    "generate",
    "node_shape_label",
]

RESOURCE_FAMILIES: tuple[str, ...] = ("openb-shares",)
"""Families whose instances use model version 3 resources at every seed (docs/model.md);
the methods and the benchmark library take them once the algorithms read version 3."""

NODE_SHAPES = "an integer (nodes of that many GPUs), a list of node sizes, or 'openb'"
"""What ``node_gpus`` may be (for messages and ``gpusched families``)."""

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


def generate(
    family: str, seed: int = 0, node_gpus: int | Sequence[int] | str | None = None,
    **params: Any,
) -> Instance:
    """Generate an instance of a named family.

    Parameters
    ----------
    family
        A key of :data:`FAMILIES`.
    seed
        The same family, seed and parameters give the same instance.
    node_gpus
        The node shape (``None``: one flat pool): an integer (:func:`instances.with_nodes`),
        a list of node sizes summing to the pool, or ``"openb"`` (the openb node mix
        sampled to the pool, its order from ``seed``). The jobs stay the flat ones.
    **params
        Family parameters (``num_jobs``, ``num_gpus``, ...) overriding what the seed draws.

    Returns
    -------
    Instance
        Named ``<family>-s<seed>`` (then the parameters, and ``-node_gpus<shape>``),
        with the family, seed, parameters and node shape in ``meta``.

    Raises
    ------
    ValueError
        For an unknown family, a negative seed or a bad parameter; a bad node shape
        is named ``node_gpus``.
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
            f"accepted: {sorted(accepted | {'node_gpus'})}"
        )
    check_size_params(params)
    shape = None if node_gpus is None else _check_shape(node_gpus)
    rng = np.random.default_rng([int(seed), _family_key(family)])
    inst = fn(rng, **params, **({"seed": int(seed)} if "seed" in sig else {}))
    resolved = inst.meta.get(RESOLVED)  # a family's own spelling of what it was given
    if resolved:
        params = {**params, **resolved}
        inst = inst.replace(meta={k: v for k, v in inst.meta.items() if k != RESOLVED})
    name = f"{family}-s{int(seed)}" + "".join(f"-{k}{v}" for k, v in sorted(params.items()))
    meta = {"family": family, "seed": int(seed), "params": dict(sorted(params.items())), **inst.meta}
    inst = inst.replace(name=name, meta=meta)
    if shape is None:
        return inst
    return _on_nodes(inst, shape, int(seed))


def _check_shape(node_gpus: Any) -> int | list[int] | str:
    """``node_gpus`` as an int, a list of ints or ``"openb"``, or a ``ValueError`` naming it."""
    if node_gpus == "openb":
        return "openb"
    if is_int(node_gpus) and node_gpus >= 1:
        return int(node_gpus)
    if (isinstance(node_gpus, Sequence) and not isinstance(node_gpus, str) and node_gpus
            and all(is_int(g) for g in node_gpus)):
        return [int(g) for g in node_gpus]
    raise ValueError(f"node_gpus: must be {NODE_SHAPES} (each >= 1), got {node_gpus!r}")


def _on_nodes(inst: Instance, shape: int | list[int] | str, seed: int) -> Instance:
    """``inst`` on nodes of ``shape``; the shape goes into the name and ``meta``."""
    sizes = openb_node_mix(inst.num_gpus, seed) if isinstance(shape, str) else shape
    try:
        out = with_nodes(inst, sizes)
    except ValueError as e:
        msg = str(e)
        raise ValueError(msg if msg.startswith("node_gpus") else f"node_gpus: {shape!r}: {msg}") from None
    label = shape_text(shape)
    meta = {**inst.meta, "params": {**inst.meta.get("params", {}), "node_gpus": shape},
            "node_gpus": shape}
    return out.replace(name=f"{inst.name}-node_gpus{label}", meta=meta)


def shape_text(shape: int | Sequence[int] | str) -> str:
    """A node shape as text: ``8``, ``8,4,2,2`` or ``openb``."""
    if isinstance(shape, (str, int)):
        return str(shape)
    return ",".join(str(g) for g in shape)


def node_shape_label(inst: Instance) -> str:
    """The node shape an instance was generated with (``8``, ``8,4,2,2``, ``openb``; ``""``
    flat), or, for nodes from elsewhere (a file, a trace), its node sizes.
    """
    if inst.nodes is None:
        return ""
    shape = inst.meta.get("node_gpus")
    if isinstance(shape, (int, str)) or (isinstance(shape, list) and shape):
        return shape_text(shape)
    return ",".join(str(n.gpus) for n in inst.nodes)


def _family_key(family: str) -> int:
    """A stable integer per family name, so families draw independent streams."""
    return int.from_bytes(family.encode(), "little") % (2**63)
