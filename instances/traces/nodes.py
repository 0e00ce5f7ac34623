"""Node lists for trace import: the openb node CSV, the pool rule, the placement test.

A node list is a list of ``(name, gpus)`` pairs in file order. Valid
placements follow the specification (docs/model.md): one node, or for a job larger than
the largest node, whole nodes whose GPUs sum exactly to the job's.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Sequence

import numpy as np

__all__ = ["placeable", "read_node_resources", "read_nodes", "select_nodes"]

NodeList = list[tuple[str, int]]


def read_nodes(path: str | os.PathLike[str]) -> NodeList:
    """Read an openb node CSV (columns ``sn`` and ``gpu``), leaving out nodes with 0 GPUs.

    Raises
    ------
    ValueError
        Naming the file, the line and the field: an empty file, a missing column,
        a bad GPU count, a repeated name, or no node with a GPU.
    """
    p = os.fspath(path)
    out: NodeList = []
    seen: dict[str, int] = {}
    with open(p, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None:
            raise ValueError(f"{p}: empty file")
        header = [h.strip() for h in header]
        for col in ("sn", "gpu"):
            if col not in header:
                raise ValueError(f"{p}: line 1: missing column {col!r} (header: {','.join(header)})")
        i_sn, i_gpu = header.index("sn"), header.index("gpu")
        last = 1
        for row in reader:
            line = last + 1
            last = reader.line_num
            if not row:
                continue
            if len(row) != len(header):
                raise ValueError(
                    f"{p}: line {line}: expected {len(header)} fields, got {len(row)}"
                )
            name, raw = row[i_sn].strip(), row[i_gpu].strip()
            if not name:
                raise ValueError(f"{p}: line {line}: sn: empty node name")
            try:
                g = int(raw)
            except ValueError:
                raise ValueError(
                    f"{p}: line {line}: gpu: must be an integer >= 0, got {raw!r}"
                ) from None
            if g < 0:
                raise ValueError(f"{p}: line {line}: gpu: must be an integer >= 0, got {raw!r}")
            if name in seen:
                raise ValueError(f"{p}: line {line}: sn: node {name!r} repeats line {seen[name]}")
            seen[name] = line
            if g > 0:
                out.append((name, g))
    if not out:
        raise ValueError(f"{p}: no node with a GPU")
    return out


def read_node_resources(
    path: str | os.PathLike[str],
) -> dict[str, tuple[str | None, int | None, int | None]]:
    """The ``model``, ``cpu_milli`` and ``memory_mib`` of each node of an openb node CSV
    (``resources="full"``); a missing column or empty field gives ``None``.

    Raises
    ------
    ValueError
        Naming the file, the line and the field, for a CPU or memory that is not an
        integer >= 0.
    """
    p = os.fspath(path)
    out: dict[str, tuple[str | None, int | None, int | None]] = {}
    with open(p, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        line = 1
        for row in reader:
            line = reader.line_num
            if not row.get("sn") or row.get("gpu", "").strip() in ("", "0"):
                continue  # read_nodes has checked the names and GPU counts
            model = (row.get("model") or "").strip() or None
            values: list[int | None] = []
            for col in ("cpu_milli", "memory_mib"):
                raw = (row.get(col) or "").strip()
                try:
                    v = None if not raw else int(raw)
                except ValueError:
                    v = -1
                if v is not None and v < 0:
                    raise ValueError(f"{p}: line {line}: {col}: must be an integer >= 0, got {raw!r}")
                values.append(v)
            out[row["sn"].strip()] = (model, values[0], values[1])
    return out


def _check_list(nodes: Sequence[tuple[str, int]]) -> None:
    if not nodes:
        raise ValueError("nodes: the node list is empty")
    names: set[str] = set()
    for i, (n, g) in enumerate(nodes):
        if not isinstance(n, str) or not n:
            raise ValueError(f"nodes[{i}]: name must be a non-empty string, got {n!r}")
        if isinstance(g, bool) or not isinstance(g, (int, np.integer)) or g < 1:
            raise ValueError(f"nodes[{i}] ({n}): gpus must be an integer >= 1, got {g!r}")
        if n in names:
            raise ValueError(f"nodes[{i}]: duplicate node name {n!r}")
        names.add(n)


def _earliest_subset(sizes: Sequence[int], target: int) -> list[int] | None:
    """Positions of the subset of ``sizes`` summing to ``target`` whose sorted
    position list is lexicographically smallest, or ``None``."""
    n = len(sizes)
    mask = (1 << (target + 1)) - 1
    reach = [0] * (n + 1)  # reach[i]: bit s set when sizes[i:] can make s
    reach[n] = 1
    for i in range(n - 1, -1, -1):
        reach[i] = (reach[i + 1] | (reach[i + 1] << sizes[i])) & mask
    if not (reach[0] >> target) & 1:
        return None
    out: list[int] = []
    s = target
    for i in range(n):
        if s == 0:
            break
        g = sizes[i]
        if g <= s and (reach[i + 1] >> (s - g)) & 1:
            out.append(i)
            s -= g
    return out


def select_nodes(
    nodes: Sequence[tuple[str, int]], num_gpus: int, source: str | None = None
) -> NodeList:
    """The nodes that make a pool of exactly ``num_gpus`` GPUs, in list order, keeping the
    list's mix of sizes: a quota by size, the remainder to the least used quota, the
    nodes of each size spread along the list, else the lexicographically smallest
    set of whole nodes (the rule is in docs/traces.md).

    Raises
    ------
    ValueError
        When ``num_gpus`` exceeds the list's GPUs or no set of whole nodes sums to it.
    """
    _check_list(nodes)
    where = f" of {source}" if source else ""
    sizes = [int(g) for _, g in nodes]
    total = sum(sizes)
    if isinstance(num_gpus, bool) or not isinstance(num_gpus, (int, np.integer)) or num_gpus < 1:
        raise ValueError(f"num_gpus: must be an integer >= 1, got {num_gpus!r}")
    if num_gpus > total:
        raise ValueError(f"num_gpus: {num_gpus} is more than the {total} GPUs of the node list{where}")
    by_size: dict[int, list[int]] = {}
    for i, g in enumerate(sizes):
        by_size.setdefault(g, []).append(i)
    quota = {s: num_gpus * s * len(ix) / total for s, ix in by_size.items()}
    k = {s: min(len(by_size[s]), math.floor(quota[s] / s)) for s in by_size}
    rest = num_gpus - sum(s * n for s, n in k.items())
    while rest > 0:
        fit = [s for s in by_size if s <= rest and k[s] < len(by_size[s])]
        if not fit:
            break
        s = max(fit, key=lambda s: (quota[s] - k[s] * s, s))
        k[s] += 1
        rest -= s
    if rest == 0:
        taken = sorted(
            by_size[s][math.floor((i + 0.5) * len(by_size[s]) / n)]
            for s, n in k.items() for i in range(n)
        )
    else:
        full = _earliest_subset(sizes, num_gpus)
        if full is None:
            kinds = ", ".join(str(s) for s in sorted(by_size))
            raise ValueError(
                f"num_gpus: no set of whole nodes of the node list{where} (nodes of "
                f"{kinds} GPUs) sums to {num_gpus}"
            )
        taken = full
    return [(nodes[i][0], int(nodes[i][1])) for i in taken]


def placeable(nodes: Sequence[tuple[str, int]], gpus: np.ndarray | Sequence[int]) -> np.ndarray:
    """For each GPU count in ``gpus``: does a job of that size have a valid placement?

    True when one node holds it (``g <= largest node``), or whole nodes of the
    list sum to exactly ``g``; ``g <= 0`` is False.
    """
    _check_list(nodes)
    g = np.asarray(gpus, dtype=np.int64)
    sizes = [int(x) for _, x in nodes]
    biggest = max(sizes)
    total = sum(sizes)
    reach = 1
    mask = (1 << (total + 1)) - 1
    for s in sizes:
        reach = (reach | (reach << s)) & mask
    out = (g >= 1) & (g <= biggest)
    big = (g > biggest) & (g <= total)
    for v in np.unique(g[big]):
        out[g == v] = bool((reach >> int(v)) & 1)
    return out
