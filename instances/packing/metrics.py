"""The packing experiment's curves: arrived, allocated and fragmentation after every pod.

After pod ``k`` (in arrival order, failed pods included): **arrived** is the
GPU request of pods ``1..k`` over the capacity, **allocated** the GPU milli
placed over the capacity, **unallocated** ``100 - allocated`` and
**fragmentation** the cluster's fragmented GPU milli (:func:`~.frag.node_frag`
summed over the nodes) over the capacity, all in percent. FGD's analysis
bins a run to integer arrived percentages: the mean over the pods whose
arrived percentage rounds to the bin, or, where none does, over those within
one point of it (:func:`bin_curve`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numba import njit

from .checker import evaluate_placement
from .frag import TargetWorkload, node_frag, target_workload
from .model import GPU_MILLI, Packing, Placement

__all__ = ["ARRIVED_BINS", "PackingCurve", "bin_curve", "packing_curve", "placement_arrays"]

ARRIVED_BINS = np.arange(131)
"""The integer arrived percentages of the binned curves (0..130)."""


@dataclass(frozen=True)
class PackingCurve:
    """A run's figures after 0, 1, ..., P pods (arrays of length ``P + 1``, milli-GPUs)."""

    arrived_milli: np.ndarray
    allocated_milli: np.ndarray
    frag_milli: np.ndarray
    capacity_milli: int

    def pct(self, a: np.ndarray) -> np.ndarray:
        """``a`` over the capacity, in percent."""
        return 100.0 * a / self.capacity_milli

    def binned(self) -> pd.DataFrame:
        """Columns ``arrived_pct`` (0..130), ``allocated_pct``, ``unallocated_pct``,
        ``fragmentation_pct``; a bin no pod comes near is left out."""
        arrived = self.pct(self.arrived_milli)
        alloc = bin_curve(arrived, self.pct(self.allocated_milli))
        frag = bin_curve(arrived, self.pct(self.frag_milli))
        df = pd.DataFrame({"arrived_pct": ARRIVED_BINS, "allocated_pct": alloc,
                           "unallocated_pct": 100.0 - alloc, "fragmentation_pct": frag})
        return df[np.isfinite(alloc)].reset_index(drop=True)


def bin_curve(arrived_pct: np.ndarray, values: np.ndarray,
              bins: np.ndarray = ARRIVED_BINS) -> np.ndarray:
    """Mean of ``values`` per integer arrived percentage (NaN where no point is near)."""
    r = np.round(arrived_pct)  # half to even, as the analysis rounds
    out = np.full(bins.shape[0], np.nan)
    for i, b in enumerate(bins):
        sel = r == b
        if not sel.any():
            sel = (r >= b - 1) & (r <= b + 1)
        if sel.any():
            out[i] = values[sel].mean()
    return out


def placement_arrays(packing: Packing, placement: Placement) -> tuple[np.ndarray, np.ndarray]:
    """Node index of every pod (-1: failed) and its GPUs as a ``(pods, max GPUs)`` 0/1 array."""
    nodes = packing.node_index
    node_of = np.full(len(packing.pods), -1, dtype=np.int64)
    width = int(packing.arrays.node_gpus.max())
    gpu_of = np.zeros((len(packing.pods), width), dtype=np.int8)
    for j, p in enumerate(packing.pods):
        where = placement.assign.get(p.name)
        if where is not None:
            node_of[j] = nodes[where[0]]
            gpu_of[j, list(where[1])] = 1
    return node_of, gpu_of


def packing_curve(packing: Packing, placement: Placement,
                  workload: TargetWorkload | None = None) -> PackingCurve:
    """The figures of ``placement`` after every pod of ``packing``, in arrival order.

    The placement is checked first (:func:`~.checker.evaluate_placement`); the
    fragmentation uses ``workload`` (default: the packing's own target workload).

    Raises
    ------
    InvalidPlacementError
        If the placement breaks a rule.
    """
    evaluate_placement(packing, placement)
    a = packing.arrays
    w = workload if workload is not None else target_workload(packing)
    node_of, gpu_of = placement_arrays(packing, placement)
    frag = _replay(node_of, gpu_of, a.pod_milli, a.pod_cpu, a.node_gpus, a.node_cpu,
                   a.node_model, w.cpu, w.milli, w.gpus, w.allowed, w.freq)
    req = a.pod_request
    placed = np.where(node_of >= 0, req, 0)
    zero = np.zeros(1, dtype=np.int64)
    return PackingCurve(
        arrived_milli=np.concatenate([zero, np.cumsum(req)]),
        allocated_milli=np.concatenate([zero, np.cumsum(placed)]),
        frag_milli=frag,
        capacity_milli=GPU_MILLI * int(a.node_gpus.sum()),
    )


@njit(cache=True, nogil=True)
def _replay(node_of: np.ndarray, gpu_of: np.ndarray, pod_milli: np.ndarray,
            pod_cpu: np.ndarray, node_gpus: np.ndarray, node_cpu: np.ndarray,
            node_model: np.ndarray, t_cpu: np.ndarray, t_milli: np.ndarray,
            t_gpus: np.ndarray, t_allowed: np.ndarray,
            t_freq: np.ndarray) -> np.ndarray:  # pragma: no cover (compiled)
    """Cluster fragmentation after 0..P pods, placing them in arrival order."""
    n_nodes = node_gpus.shape[0]
    width = gpu_of.shape[1]
    left = np.zeros((n_nodes, width), dtype=np.int64)
    cpu = node_cpu.copy()
    frag = np.zeros(n_nodes)
    for n in range(n_nodes):
        left[n, :node_gpus[n]] = 1000
        frag[n] = node_frag(cpu[n], left[n, :node_gpus[n]], node_model[n], t_cpu, t_milli,
                            t_gpus, t_allowed, t_freq)
    out = np.zeros(node_of.shape[0] + 1)
    total = frag.sum()
    out[0] = total
    for j in range(node_of.shape[0]):
        n = node_of[j]
        if n >= 0:
            cpu[n] -= pod_cpu[j]
            for g in range(width):
                if gpu_of[j, g]:
                    left[n, g] -= pod_milli[j]
            new = node_frag(cpu[n], left[n, :node_gpus[n]], node_model[n], t_cpu, t_milli,
                            t_gpus, t_allowed, t_freq)
            total += new - frag[n]
            frag[n] = new
        out[j + 1] = total
    return out
