"""The price of topology (the flat optimum minus the node optimum) and the price of sharing
(the fluid optimum minus the optimum, model version 3), or brackets on them."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from instances import Instance, Result, Status
from instances.resources import shares_gpus

from .relaxation import Relaxed, relaxation
from .solver import solve

__all__ = ["PriceOfSharing", "PriceOfTopology", "price_of_sharing", "price_of_topology"]


@dataclass(frozen=True)
class PriceOfTopology:
    """The flat optimum minus the node optimum (the specification (docs/model.md)), or bounds on it.

    Attributes
    ----------
    lower, upper
        ``max(0, flat_lower - node_upper)`` and ``flat_upper - node_value``,
        where ``flat_lower`` is the best value known of the flat problem (a
        node schedule is also a flat one). Always a valid bracket.
    exact
        Both problems solved to proven optimality (within the solves' ``mip_gap``).
    flat, node
        The two solves.
    """

    lower: float
    upper: float
    exact: bool
    flat: Result
    node: Result

    @property
    def value(self) -> float | None:
        """The price, ``flat optimum - node optimum``, when both are proven; else ``None``."""
        if not self.exact:
            return None
        return max(self.flat.value, self.node.value) - self.node.value

    def summary(self) -> str:
        """One line: the price or its bracket."""
        name = self.node.schedule.instance
        if self.value is not None:
            return f"{name}: price of topology {self.value:.6g} (both optimal)"
        return f"{name}: price of topology in [{self.lower:.6g}, {self.upper:.6g}]"


def price_of_topology(
    inst: Instance, time_limit: float = 60.0, *, threads: int = 1, **params: Any
) -> PriceOfTopology:
    """Solve the flat model and the node model of ``inst``; bracket their difference.

    ``time_limit`` is shared: at most half for the flat solve, the rest
    for the node model (which reuses the flat solve's bound and schedule).

    Raises
    ------
    ValueError
        For an instance without nodes, or a bad argument.
    """
    if inst.nodes is None:
        raise ValueError(f"inst: instance {inst.name!r} has no nodes")
    t0 = time.perf_counter()
    flat = solve(inst.replace(nodes=None), time_limit=time_limit / 2, threads=threads)
    left = max(0.0, time_limit - (time.perf_counter() - t0))
    node = solve(inst, time_limit=left, threads=threads, flat=flat, **params)
    if flat.upper_bound is None or node.upper_bound is None:
        raise ValueError(f"price_of_topology: a solve of {inst.name!r} left no bound "
                         f"(flat: {flat.message}; nodes: {node.message})")
    flat_lower = max(flat.value, node.value)
    lower = max(0.0, flat_lower - node.upper_bound)
    upper = max(lower, flat.upper_bound - node.value)
    exact = flat.status is Status.OPTIMAL and node.status is Status.OPTIMAL
    return PriceOfTopology(lower, upper, exact, flat, node)


@dataclass(frozen=True)
class PriceOfSharing:
    """The fluid optimum minus the optimum (docs/model.md, model version 3), or bounds on it.

    What whole GPUs cost an optimal scheduler: in the fluid model a shared
    job's ``gpu_milli / 1000`` counts against its node and the pool, as if
    shares packed GPUs without waste.

    Attributes
    ----------
    lower, upper
        ``max(0, fluid_lower - upper_bound)`` and ``fluid_upper - value``,
        where ``fluid_lower`` is the best fluid value known (a schedule is
        also a fluid point). Always a valid bracket.
    exact
        Both solved to proven optimality (within the solves' ``mip_gap``).
    fluid, optimum
        The fluid relaxation's solve and the exact model's.
    """

    lower: float
    upper: float
    exact: bool
    fluid: Relaxed
    optimum: Result

    @property
    def value(self) -> float | None:
        """The price, ``fluid optimum - optimum``, when both are proven; else ``None``."""
        if not self.exact:
            return None
        return max(self.fluid.value, self.optimum.value) - self.optimum.value

    def summary(self) -> str:
        """One line: the price or its bracket."""
        name = self.optimum.schedule.instance
        if self.value is not None:
            return f"{name}: price of sharing {self.value:.6g} (both optimal)"
        return f"{name}: price of sharing in [{self.lower:.6g}, {self.upper:.6g}]"


def price_of_sharing(
    inst: Instance, time_limit: float = 60.0, *, threads: int = 1, **params: Any
) -> PriceOfSharing:
    """Solve the fluid relaxation and the exact model of ``inst``; bracket their difference.

    ``time_limit`` is shared: at most half for the fluid solve, the rest
    for the exact model (which holds the fluid bound and starts from the
    fluid point where it fits).

    Raises
    ------
    ValueError
        For an instance without shared jobs, or a bad argument.
    """
    if not shares_gpus(inst):
        raise ValueError(f"inst: instance {inst.name!r} has no shared job")
    t0 = time.perf_counter()
    fluid = relaxation(inst, "fluid", time_limit=time_limit / 2, threads=threads)
    left = max(0.0, time_limit - (time.perf_counter() - t0))
    res = solve(inst, time_limit=left, threads=threads, relaxed=fluid, **params)
    if fluid.upper_bound is None or res.upper_bound is None:
        raise ValueError(f"price_of_sharing: a solve of {inst.name!r} left no bound "
                         f"(fluid: {fluid.message}; exact: {res.message})")
    fluid_lower = max(fluid.value, res.value)
    lower = max(0.0, fluid_lower - res.upper_bound)
    upper = max(lower, fluid.upper_bound - res.value)
    exact = fluid.status is Status.OPTIMAL and res.status is Status.OPTIMAL
    return PriceOfSharing(lower, upper, exact, fluid, res)
