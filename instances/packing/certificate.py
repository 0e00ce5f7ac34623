"""The bound's dual certificate, and its independent check.

The bound on the GPU milli any offline placement of a packing's pods could
hold is the dual of the configuration LP over node types: with a price
``pi_s >= 0`` for each pod shape ``s`` (GPUs, GPU milli, CPU, memory,
models) asked ``d_s`` times, and, for each node type ``t`` (GPUs, model,
CPU, memory) present ``n_t`` times, ``z_t`` the most that one node of type
``t`` can hold of ``value - price`` over every set of pods that fits it (GPU
by GPU: whole GPUs alone, shares summing to at most 1000 per GPU, CPU and
memory, the model; at most ``d_s`` of each shape)::

    bound = sum_s d_s pi_s + sum_t n_t max(0, z_t)

Any prices give an upper bound (weak duality); good ones give a tight one.
:func:`check_packing_bound` recomputes it from the packing and the prices
alone: its own grouping of pods and nodes, its own model of ``z_t`` solved
exactly with :func:`scipy.optimize.milp`, nothing shared with the solver that
found the prices. A CPU-only pod adds no GPU milli and is left out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .model import GPU_MILLI, Packing

__all__ = [
    "PackingCertificate",
    "ShapeKey",
    "TypeKey",
    "check_packing_bound",
    "node_types",
    "pod_shapes",
]

ShapeKey = tuple[int, int, int, int, tuple[str, ...]]
"""A pod shape: GPUs, GPU milli, CPU milli, memory MiB, models (empty: any)."""

TypeKey = tuple[int, str, int, int]
"""A node type: GPUs, model, CPU milli, memory MiB."""

SAFETY = 1e-6
"""Added to every exact ``z_t`` (relative to its size), for the solver's tolerances."""


@dataclass(frozen=True)
class PackingCertificate:
    """Prices per pod shape (and the solver's ``z_t`` per node type, for the record).

    Attributes
    ----------
    packing
        Name of the packing.
    pods
        How many of its first pods the bound is for.
    bound_milli
        The bound claimed.
    shapes, prices
        Pod shapes and their prices ``pi_s``; a shape not listed has price 0.
    types, values
        Node types and the solver's ``z_t`` (the check recomputes them).
    """

    packing: str
    pods: int
    bound_milli: int
    shapes: tuple[ShapeKey, ...]
    prices: tuple[float, ...]
    types: tuple[TypeKey, ...] = ()
    values: tuple[float, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON object (``gpusched-packing-bound/1``)."""
        return {
            "format": "gpusched-packing-bound/1", "packing": self.packing, "pods": self.pods,
            "bound_milli": self.bound_milli,
            "shapes": [{"gpus": g, "gpu_milli": m, "cpu_milli": c, "memory_mib": me,
                        "gpu_models": list(mo), "price": p}
                       for (g, m, c, me, mo), p in zip(self.shapes, self.prices)],
            "node_types": [{"gpus": g, "model": mo, "cpu_milli": c, "memory_mib": me, "z": z}
                           for (g, mo, c, me), z in zip(self.types, self.values)],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PackingCertificate:
        """The inverse of :meth:`to_dict`.

        Raises
        ------
        ValueError
            Naming the field that is missing or wrong.
        """
        try:
            if data["format"] != "gpusched-packing-bound/1":
                raise ValueError(f"format: expected 'gpusched-packing-bound/1', got {data['format']!r}")
            shapes = tuple((int(s["gpus"]), int(s["gpu_milli"]), int(s["cpu_milli"]),
                            int(s["memory_mib"]), tuple(s["gpu_models"])) for s in data["shapes"])
            prices = tuple(float(s["price"]) for s in data["shapes"])
            types = tuple((int(t["gpus"]), str(t["model"]), int(t["cpu_milli"]),
                           int(t["memory_mib"])) for t in data["node_types"])
            values = tuple(float(t["z"]) for t in data["node_types"])
            return cls(str(data["packing"]), int(data["pods"]), int(data["bound_milli"]), shapes,
                       prices, types, values)
        except (KeyError, TypeError) as e:
            raise ValueError(f"certificate: missing or bad field {e}") from None


def pod_shapes(packing: Packing) -> dict[ShapeKey, int]:
    """The packing's GPU pods by shape: shape -> count (CPU-only pods left out)."""
    out: dict[ShapeKey, int] = {}
    for p in packing.pods:
        if p.gpus > 0:
            key = (p.gpus, p.gpu_milli, p.cpu_milli, p.memory_mib, p.gpu_models)
            out[key] = out.get(key, 0) + 1
    return out


def node_types(packing: Packing) -> dict[TypeKey, int]:
    """The packing's nodes by type: type -> count."""
    out: dict[TypeKey, int] = {}
    for n in packing.nodes:
        key = (n.gpus, n.model, n.cpu_milli, n.memory_mib)
        out[key] = out.get(key, 0) + 1
    return out


def _fillings(sizes: list[int]) -> list[dict[int, int]]:
    """Every way to fill one GPU with shares of these milli sizes that leaves no room for one
    more (size -> how many); any set of shares one GPU holds is within one of them."""
    out: list[dict[int, int]] = []

    def grow(i: int, room: int, got: dict[int, int]) -> None:
        if i == len(sizes):
            if all(room < x for x in sizes):
                out.append(dict(got))
            return
        for k in range(room // sizes[i] + 1):
            if k:
                got[sizes[i]] = k
            grow(i + 1, room - k * sizes[i], got)
        got.pop(sizes[i], None)

    grow(0, GPU_MILLI, {})
    return out


def _best_on_type(t: TypeKey, items: list[tuple[ShapeKey, int, float]],
                  time_limit: float | None) -> float:
    """Most ``profit`` one node of type ``t`` holds (an upper bound if not proven in time).

    Variables: ``n_s`` pods of shape ``s`` on the node; and either, for nodes of one or
    two GPUs, ``x_sk`` shares of shape ``s`` on GPU ``k`` (GPU by GPU), or, for larger
    nodes, ``f_q`` GPUs filled as filling ``q`` (:func:`_fillings`), whose slots of each
    size bound the shares of that size.
    """
    from scipy.optimize import Bounds, LinearConstraint, milp

    gpus, _, cpu, mem = t
    shapes = [s for s, _, _ in items]
    share_sizes = sorted({s[1] for s in shapes if s[1] < GPU_MILLI})
    cols: list[tuple[float, float]] = [(p, float(d)) for _, d, p in items]  # n_s: profit, most
    rows: list[tuple[dict[int, float], float]] = []  # (coefficients, upper limit)
    gpu_row: dict[int, float] = {i: float(s[0]) for i, s in enumerate(shapes)
                                 if s[1] == GPU_MILLI}
    if gpus <= 2:
        on = {}
        for i, s in enumerate(shapes):
            if s[1] < GPU_MILLI:
                for k in range(gpus):
                    on[i, k] = len(cols)
                    cols.append((0.0, float(GPU_MILLI // s[1])))
                rows.append(({i: 1.0, **{on[i, k]: -1.0 for k in range(gpus)}}, 0.0))
        for k in range(gpus):
            used = len(cols)  # GPU k holds shares
            cols.append((0.0, 1.0))
            gpu_row[used] = 1.0
            rows.append(({**{on[i, kk]: float(shapes[i][1]) for (i, kk) in on if kk == k},
                          used: -float(GPU_MILLI)}, 0.0))
    else:
        fills = _fillings(share_sizes) if share_sizes else []
        first = len(cols)
        cols.extend((0.0, float(gpus)) for _ in fills)
        gpu_row.update({first + q: 1.0 for q in range(len(fills))})
        for size in share_sizes:
            row = {i: 1.0 for i, s in enumerate(shapes) if s[1] == size}
            row.update({first + q: -float(f[size]) for q, f in enumerate(fills) if size in f})
            rows.append((row, 0.0))
    rows.append((gpu_row, float(gpus)))
    rows.append(({i: float(s[2]) for i, s in enumerate(shapes)}, float(cpu)))
    rows.append(({i: float(s[3]) for i, s in enumerate(shapes)}, float(mem)))
    A = np.zeros((len(rows), len(cols)))
    for r, (coef, _) in enumerate(rows):
        for j, v in coef.items():
            A[r, j] = v
    res = milp(-np.array([c for c, _ in cols]), integrality=np.ones(len(cols)),
               bounds=Bounds(np.zeros(len(cols)), np.array([u for _, u in cols])),
               constraints=LinearConstraint(A, -np.inf, np.array([u for _, u in rows])),
               options={"mip_rel_gap": 0.0, "time_limit": time_limit, "disp": False})
    bound = getattr(res, "mip_dual_bound", None)
    if res.status == 0 and res.fun is not None:
        best = -float(res.fun)
        if bound is not None and math.isfinite(bound):
            best = max(best, -float(bound))
        return best
    if bound is not None and math.isfinite(bound):
        return -float(bound)
    raise ValueError(f"node type {t}: the certificate's check did not finish "
                     f"({res.message}); give it more time")


def check_packing_bound(packing: Packing, certificate: PackingCertificate, *,
                        time_limit: float | None = None) -> float:
    """The bound the certificate's prices prove for ``packing``, recomputed from scratch
    (never above the cluster's capacity, a bound that needs no prices).

    Raises
    ------
    ValueError
        If the certificate is for other pods, has a negative or non-finite price, or
        claims a bound below what its prices prove.
    """
    if certificate.pods != len(packing.pods):
        raise ValueError(f"certificate: for the first {certificate.pods} pods, the packing "
                         f"has {len(packing.pods)}")
    price = dict(zip(certificate.shapes, certificate.prices))
    for key, p in price.items():
        if not (math.isfinite(p) and p >= 0):
            raise ValueError(f"certificate: shape {key}: price must be finite and >= 0, got {p}")
    shapes = pod_shapes(packing)
    total = 0.0
    for key, d in shapes.items():
        total += d * price.get(key, 0.0)
    for t, count in node_types(packing).items():
        gpus, model, cpu, mem = t
        items = []
        for key, d in shapes.items():
            g, m, c, me, models = key
            profit = g * m - price.get(key, 0.0)
            if (profit > 0 and g <= gpus and c <= cpu and me <= mem
                    and (not models or model in models)):
                items.append((key, d, profit))
        if items:
            z = _best_on_type(t, items, time_limit)
            total += count * max(0.0, z + SAFETY * max(1.0, abs(z)))
    total = min(total, float(packing.capacity_milli))  # no placement holds more than all GPUs
    if certificate.bound_milli < total - 1e-6 * max(1.0, total) - 1:
        raise ValueError(f"certificate: claims {certificate.bound_milli} milli, its prices "
                         f"prove only {total:.3f}")
    return total
