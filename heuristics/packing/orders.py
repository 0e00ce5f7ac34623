"""Offline orders of a packing's pods: the same pods, placed in another order than arrival.

Each order sorts by its own key first and breaks ties by arrival, so it is
fully determined:

- ``arrival``: as they arrived (the online experiment);
- ``largest``: GPU request ``gpus * gpu_milli`` descending (first-fit
  decreasing's order), then CPU descending;
- ``gpus``: GPU count descending, then GPU milli descending (whole GPUs
  first, then the shares from the largest down);
- ``dominant``: the pod's largest share of the biggest node's CPU, memory
  and GPUs, descending (the dominant resource).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from instances.packing import GPU_MILLI, PackingArrays

from ..rules import check_known, sort_keys

__all__ = ["ORDERS", "check_order", "pod_order"]

Key = Callable[[PackingArrays], tuple[np.ndarray, ...]]


def _dominant(a: PackingArrays) -> tuple[np.ndarray, ...]:
    cpu = a.pod_cpu / max(int(a.node_cpu.max()), 1)
    mem = a.pod_mem / max(int(a.node_mem.max()), 1)
    gpu = a.pod_request / (GPU_MILLI * int(a.node_gpus.max()))
    return (-np.maximum(np.maximum(cpu, mem), gpu),)


ORDERS: dict[str, Key] = {
    "arrival": lambda a: (),
    "largest": lambda a: (-a.pod_request, -a.pod_cpu),
    "gpus": lambda a: (-a.pod_gpus, -a.pod_milli),
    "dominant": _dominant,
}
"""Order name -> sort keys (most significant first; ascending sorts first)."""


def check_order(order: str) -> str:
    """Return ``order`` or raise :class:`ValueError` listing the known orders."""
    return check_known("order", order, ORDERS)


def pod_order(arrays: PackingArrays, order: str = "arrival") -> np.ndarray:
    """Pod indices in ``order``, ties broken by arrival.

    Raises
    ------
    ValueError
        For an unknown order.
    """
    return sort_keys(ORDERS[check_order(order)](arrays), np.arange(arrays.pod_gpus.shape[0]))
