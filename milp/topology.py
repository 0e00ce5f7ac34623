"""The price of topology (the flat optimum minus the node optimum) and the price of sharing
(the fluid optimum minus the optimum, model version 3), or brackets on them.

Both compare a relaxation with the model it relaxes: a point of the model
is one of the relaxation, so with ``coarse`` and ``fine`` the two solves the
price is in ``[max(0, max(coarse value, fine value) - fine bound),
coarse bound - fine value]``, and exactly the difference of the optima when
both are proven.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar

from instances import Instance, Result, Status
from instances.resources import shares_gpus

from .relaxation import Relaxed, relaxation
from .solver import solve

__all__ = ["PriceOfSharing", "PriceOfTopology", "price_of_sharing", "price_of_topology"]


@dataclass(frozen=True)
class _Price:
    """A price: the bracket's ends and whether both optima are proven."""

    lower: float
    upper: float
    exact: bool
    WHAT: ClassVar[str] = "price"

    def _optima(self) -> tuple[float, Result]:
        """The coarse model's best value and the fine model's result."""
        raise NotImplementedError

    @property
    def value(self) -> float | None:
        """The price, the coarse optimum minus the fine one, when both are proven; else ``None``."""
        if not self.exact:
            return None
        coarse, fine = self._optima()
        return max(coarse, fine.value) - fine.value

    def summary(self) -> str:
        """One line: the price or its bracket."""
        name = self._optima()[1].schedule.instance
        if self.value is not None:
            return f"{name}: {self.WHAT} {self.value:.6g} (both optimal)"
        return f"{name}: {self.WHAT} in [{self.lower:.6g}, {self.upper:.6g}]"


def _bracket(what: str, inst: Instance, coarse: Relaxed | Result, fine: Result,
             notes: str) -> tuple[float, float, bool]:
    """``(lower, upper, exact)`` of ``coarse optimum - fine optimum`` (module notes)."""
    if coarse.upper_bound is None or fine.upper_bound is None:
        raise ValueError(f"{what}: a solve of {inst.name!r} left no bound ({notes})")
    lower = max(0.0, max(coarse.value, fine.value) - fine.upper_bound)
    upper = max(lower, coarse.upper_bound - fine.value)
    return lower, upper, coarse.status is Status.OPTIMAL and fine.status is Status.OPTIMAL


@dataclass(frozen=True)
class PriceOfTopology(_Price):
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

    flat: Result
    node: Result
    WHAT: ClassVar[str] = "price of topology"

    def _optima(self) -> tuple[float, Result]:
        return self.flat.value, self.node


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
    ends = _bracket("price_of_topology", inst, flat, node,
                    f"flat: {flat.message}; nodes: {node.message}")
    return PriceOfTopology(*ends, flat, node)


@dataclass(frozen=True)
class PriceOfSharing(_Price):
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

    fluid: Relaxed
    optimum: Result
    WHAT: ClassVar[str] = "price of sharing"

    def _optima(self) -> tuple[float, Result]:
        return self.fluid.value, self.optimum


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
    ends = _bracket("price_of_sharing", inst, fluid, res,
                    f"fluid: {fluid.message}; exact: {res.message}")
    return PriceOfSharing(*ends, fluid, res)
