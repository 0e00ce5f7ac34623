"""Reading and writing packing and placement files (JSON).

Formats ``gpusched-packing/1`` and ``gpusched-placement/1``; their JSON Schemas
ship in ``instances/schema/``. Every problem with a file raises
:class:`ValueError` whose message starts with the file and names the field
(``p.json: pods[3].gpu_milli: ...``). Writing is deterministic: the same
packing gives the same bytes.
"""

from __future__ import annotations

import json
import os
from functools import cache
from importlib import resources
from typing import Any

import jsonschema

from ..io import atomic_write_text, read_json
from .model import Packing, PackNode, Placement, Pod

__all__ = [
    "PACKING_FORMAT",
    "PLACEMENT_FORMAT",
    "dumps_packing",
    "load_packing",
    "load_placement",
    "packing_from_dict",
    "packing_to_dict",
    "placement_from_dict",
    "save_packing",
    "save_placement",
]

PACKING_FORMAT = "gpusched-packing/1"
PLACEMENT_FORMAT = "gpusched-placement/1"


@cache
def _schema(kind: str) -> dict[str, Any]:
    text = resources.files("instances").joinpath(f"schema/{kind}.schema.json").read_text()
    return json.loads(text)


def _where(error: jsonschema.ValidationError) -> str:
    """``pods[3].gpu_milli``, ``placement["p3"]["node-7"][0]``: the field at fault."""
    parts = list(error.absolute_path)
    if not parts:
        return "(top level)"
    out, keyed = str(parts[0]), parts[0] == "placement"  # there, keys are pod and node names
    for p in parts[1:]:
        out += f"[{p}]" if isinstance(p, int) else (f"[{json.dumps(p)}]" if keyed else f".{p}")
    return out


def _check(data: Any, kind: str, expected: str) -> None:
    if not isinstance(data, dict):
        raise ValueError(f"(top level): must be a JSON object, got {type(data).__name__}")
    if data.get("format") != expected:
        got = "missing" if "format" not in data else f"got {data['format']!r}"
        raise ValueError(f"format: expected {expected!r}, {got}")
    validator = jsonschema.Draft202012Validator(_schema(kind))
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is not None:
        msg = error.message
        if len(msg) > 200:  # the offending value may be a whole list of pods
            msg = f"{msg[:120]} ... {msg[-60:]}"
        raise ValueError(f"{_where(error)}: {msg}")


def _item(key: str, i: int, noun: str, name: str, e: ValueError) -> ValueError:
    """``pods[3].gpus: ...`` from the model's ``pod 'x'.gpus: ...``."""
    msg, prefix = str(e), f"{noun} {name!r}."
    if msg.startswith(prefix):
        return ValueError(f"{key}[{i}].{msg[len(prefix):]} ({noun} {name!r})")
    return ValueError(f"{key}[{i}]: {msg}")


def packing_from_dict(data: Any) -> Packing:
    """Build and validate a :class:`Packing` from a ``gpusched-packing/1`` object.

    Raises
    ------
    ValueError
        Naming the field (``nodes[2].cpu_milli``, ``pods[7].name``, ...).
    """
    _check(data, "packing", PACKING_FORMAT)
    nodes = []
    for i, n in enumerate(data["nodes"]):
        try:
            nodes.append(PackNode(n["name"], n["gpus"], n["model"], n["cpu_milli"], n["memory_mib"]))
        except ValueError as e:
            raise _item("nodes", i, "node", n["name"], e) from None
    pods = []
    for i, p in enumerate(data["pods"]):
        try:
            pods.append(Pod(p["name"], p["gpus"], p["gpu_milli"], p["cpu_milli"], p["memory_mib"],
                            tuple(p.get("gpu_models", ()))))
        except ValueError as e:
            raise _item("pods", i, "pod", p["name"], e) from None
    return Packing(data["name"], tuple(nodes), tuple(pods))


def packing_to_dict(packing: Packing) -> dict[str, Any]:
    """The ``gpusched-packing/1`` object of ``packing``."""
    pods = []
    for p in packing.pods:
        d: dict[str, Any] = {"name": p.name, "gpus": p.gpus, "gpu_milli": p.gpu_milli,
                             "cpu_milli": p.cpu_milli, "memory_mib": p.memory_mib}
        if p.gpu_models:
            d["gpu_models"] = list(p.gpu_models)
        pods.append(d)
    return {
        "format": PACKING_FORMAT,
        "name": packing.name,
        "nodes": [{"name": n.name, "gpus": n.gpus, "model": n.model, "cpu_milli": n.cpu_milli,
                   "memory_mib": n.memory_mib} for n in packing.nodes],
        "pods": pods,
    }


def dumps_packing(packing: Packing) -> str:
    """The file's text: one node or pod per line, keys in a fixed order (deterministic)."""
    d = packing_to_dict(packing)
    lines = [f'{{"format": {json.dumps(d["format"])}, "name": {json.dumps(d["name"])},']
    for key in ("nodes", "pods"):
        items = d[key]
        lines.append(f' "{key}": [')
        lines.extend(f"  {json.dumps(x)}{',' if i + 1 < len(items) else ''}"
                     for i, x in enumerate(items))
        lines.append(" ]," if key == "nodes" else " ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def placement_from_dict(data: Any) -> Placement:
    """Build a :class:`Placement` from a ``gpusched-placement/1`` object.

    Raises
    ------
    ValueError
        Naming the field (``placement["p3"]``, ``format``, ...).
    """
    _check(data, "placement", PLACEMENT_FORMAT)
    assign = {}
    for pod, where in data["placement"].items():
        ((node, gpus),) = where.items()
        assign[pod] = (node, tuple(gpus))
    return Placement(data["packing"], assign)


def _load(path: str | os.PathLike[str], build: Any) -> Any:
    data = read_json(path)
    try:
        return build(data)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


def load_packing(path: str | os.PathLike[str]) -> Packing:
    """Load and validate a packing file.

    Raises
    ------
    ValueError
        ``<file>: <field>: <what is wrong>``.
    """
    return _load(path, packing_from_dict)


def load_placement(path: str | os.PathLike[str]) -> Placement:
    """Load a placement file (checked against its packing by :func:`check_placement`).

    Raises
    ------
    ValueError
        ``<file>: <field>: <what is wrong>``.
    """
    return _load(path, placement_from_dict)


def save_packing(packing: Packing, path: str | os.PathLike[str]) -> None:
    """Write a packing file (deterministic bytes, atomic)."""
    atomic_write_text(path, dumps_packing(packing))


def save_placement(placement: Placement, path: str | os.PathLike[str]) -> None:
    """Write a placement file (atomic)."""
    atomic_write_text(path, json.dumps(placement.to_dict(), indent=1) + "\n")
