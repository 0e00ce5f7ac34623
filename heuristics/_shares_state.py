"""The arrays of a version 3 instance that the compiled fit, occupy and decoders read.

What changes while jobs are placed is one ``int64`` array of rows (the state,
:class:`heuristics.shares.SharesProfile`); what does not is
:class:`SharesArrays`, built once per instance and reservation and handed to
every compiled call beside the rows. A ``NamedTuple`` of arrays: numba
compiles it as the plain tuple it is (a field read is a constant index), and
the code reads ``st.job_milli`` rather than ``st[4]``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["SharesArrays"]


class SharesArrays(NamedTuple):
    """The read-only arrays of a version 3 instance under one reservation (``K`` nodes, ``n``
    jobs; all ``int64`` but the two ``bool`` tables)."""

    sizes: np.ndarray
    """``(K,)``: each node's GPUs."""
    node_cap: np.ndarray
    """``(K,)``: each node's GPUs left for batch work (``peak`` withholds some): what a node
    nothing runs on has wholly free."""
    gpu_offset: np.ndarray
    """``(K + 1,)``: node ``k``'s GPUs ``0 .. g_k - 1`` are the GPU rows ``gpu_offset[k] ..
    gpu_offset[k + 1] - 1``; ``gpu_offset[K]`` counts every GPU."""
    eligible: np.ndarray
    """``(n, K)`` bool: job ``j`` may use node ``k`` (model, and CPU and memory alone;
    :attr:`instances.capacity.Shares.eligible`)."""
    job_milli: np.ndarray
    """``(n,)``: each job's ``gpu_milli`` (1000: whole GPUs)."""
    job_cpu: np.ndarray
    """``(n,)``: each job's ``cpu_milli``."""
    job_memory: np.ndarray
    """``(n,)``: each job's ``memory_mib``."""
    node_model: np.ndarray
    """``(K,)``: each node's GPU model, as a column of :attr:`shape_models`."""
    job_shape: np.ndarray
    """``(n,)``: each job's shape in the ``frag`` workload (``-1``: none, a job on whole nodes
    or of a shape left out)."""
    shape_cpu: np.ndarray
    """``(S,)``: each workload shape's ``cpu_milli``."""
    shape_milli: np.ndarray
    """``(S,)``: each workload shape's ``gpu_milli``."""
    shape_gpus: np.ndarray
    """``(S,)``: each workload shape's GPUs."""
    shape_models: np.ndarray
    """``(S, models)`` bool: the node models each workload shape may use."""
    node_class: np.ndarray
    """``(K,)``: each node's class (equal GPUs, GPUs offered, model, CPU and memory): nodes of
    one class that nothing runs on score the same."""
    largest: np.ndarray
    """``(2,)``: the largest node's GPUs (a job asking more takes whole nodes), and the most
    GPUs a job on whole nodes asks (0: none; it sizes the subset search's table)."""
    job_kind: np.ndarray
    """``(n,)``: each job's kind: jobs of equal GPUs, duration, share, CPU, memory and eligible
    nodes ask the same of the state."""
    num_kinds: np.ndarray
    """``(1,)``: the number of kinds."""
    level_info: np.ndarray
    """``(4,)``: the level rows' layout: the first level row, the number of whole-GPU levels,
    of share levels, and the ``int64`` words per level (``ceil(K / 64)``)."""
    whole_levels: np.ndarray
    """``(LW,)`` ascending: the whole-GPU levels (1, the one-node whole-GPU jobs' GPUs, the
    node sizes): per level, the nodes with that many wholly free GPUs or more."""
    share_levels: np.ndarray
    """``(LM,)`` ascending: the share levels (the shared jobs' ``gpu_milli``): per level, the
    nodes with a partly used GPU that has that much free or more."""
    job_level: np.ndarray
    """``(n,)``: each job's level (a share: in :attr:`share_levels`, else in
    :attr:`whole_levels`; ``-1``: a job on whole nodes)."""
    eligible_words: np.ndarray
    """``(n, W)``: :attr:`eligible` as bits (node ``k``: bit ``k % 64`` of word ``k // 64``)."""
