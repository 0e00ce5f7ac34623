"""The state of model version 3: the rows' layout, the instance's arrays read with them, the empty state.

One ``int64`` array ``rows`` (``(R, T)``) holds what is left of
:func:`instances.capacity` while jobs are placed: the pool row (busy GPUs: a
GPU shared by several jobs counts once), per node its wholly free GPUs, most
free milli on a partly used GPU, CPU, memory and free milli summed over its
GPUs, each GPU's free milli, the cluster row (the GPUs of the wholly free
nodes), the ``frag`` workload's counts (the jobs still to place per shape),
and the level rows (bit sets of nodes); :func:`layout` gives the first rows,
docs/resources-heuristics.md ("The state's rows") the whole. What does not
change while jobs are placed is :class:`SharesArrays`, built once per
instance and reservation and handed to every compiled call beside the rows.
A ``NamedTuple`` of arrays: numba compiles it as the plain tuple it is (a
field read is a constant index).

:func:`new_state` builds both for an instance; the fit
(:mod:`heuristics._shares_fit`), the occupy (:mod:`heuristics._shares_take`)
and the decoders (:mod:`heuristics._shares_decode`) read them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from instances import Instance
from instances.capacity import UNLIMITED, Capacity, capacity
from instances.packing.frag import COVERAGE

from .memo import memo

__all__ = ["FULL", "SharesArrays", "counts_of", "layout", "new_state"]

FULL = 1000
"""A whole GPU's milli."""

_MEMO_BYTES = 64 * 2**20
"""The largest empty state kept per instance (a larger one is built at each call)."""


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


@njit(cache=True, nogil=True, inline="always")
def layout(K: int, NG: int) -> tuple[int, int, int, int, int, int]:  # pragma: no cover
    """First rows of: wholly free, max milli, CPU, memory, GPUs, and the cluster row (the GPUs
    of the wholly free nodes; the nodes' free milli: ``GB - K``; the frag counts: ``C + 1``)."""
    return 1, 1 + K, 1 + 2 * K, 1 + 3 * K, 1 + 5 * K, 1 + 5 * K + NG


@njit(cache=True, nogil=True, inline="always")
def counts_of(rows: np.ndarray, st: SharesArrays) -> np.ndarray:  # pragma: no cover
    """The jobs still to place per workload shape: a view of the last rows."""
    K: int = st.sizes.shape[0]
    first = layout(K, st.gpu_offset[K])[5] + 1
    return rows[first:].reshape(-1)[: st.shape_cpu.shape[0]]


def new_state(inst: Instance, reservation: str) -> tuple[np.ndarray, SharesArrays]:
    """The rows of a version 3 instance with nothing placed (a copy of its own) under
    ``reservation`` (checked by the caller), and the arrays read with them.

    The arrays and the empty rows are built once per live instance
    (:func:`heuristics.memo.memo`); rows larger than 64 MB, at each call.
    """
    st, rows, build = memo(inst, reservation + " v3 state", lambda: _tables(inst, reservation))
    return (rows.copy() if rows is not None else build()), st


def _tables(inst: Instance, reservation: str) -> tuple[SharesArrays, np.ndarray | None,
                                                       Callable[[], np.ndarray]]:
    """:func:`new_state`'s arrays, its empty rows (``None`` above 64 MB) and how to build them."""
    cap = memo(inst, reservation, lambda: capacity(inst, reservation))  # type: ignore[arg-type]
    sh = cap.shares
    assert sh is not None
    shape, t_cpu, t_milli, t_gpus, allowed, counts, node_model = _workload(inst, cap)
    kind, kinds = _kinds(inst, cap)
    info, wl, ml, level, words = _levels(inst, cap, counts.size)
    st = SharesArrays(
        sizes=cap.sizes, node_cap=cap.node_cap, gpu_offset=sh.gpu_offset, eligible=sh.eligible,
        job_milli=sh.job_milli, job_cpu=sh.job_cpu, job_memory=sh.job_memory,
        node_model=node_model, job_shape=shape, shape_cpu=t_cpu, shape_milli=t_milli,
        shape_gpus=t_gpus, shape_models=allowed,
        node_class=_classes(cap, node_model),
        largest=_readonly(np.array([cap.sizes.max(), _widest(inst)], dtype=np.int64)),
        job_kind=kind, num_kinds=kinds, level_info=info, whole_levels=wl, share_levels=ml,
        job_level=level, eligible_words=words)
    def build() -> np.ndarray:
        return _empty(cap, counts, info, wl)

    T = cap.horizon
    small = (int(info[0]) + (int(info[1]) + int(info[2])) * int(info[3])) * T * 8 <= _MEMO_BYTES
    return st, _readonly(build()) if small else None, build


def _workload(inst: Instance, cap: Capacity) -> tuple[np.ndarray, ...]:
    """FGD's workload over the instance's one-node jobs: each job's shape (``-1``: none), the
    shapes' CPU, milli, GPUs and models allowed per node model, their counts, and each node's
    model index. The most frequent shapes covering :data:`~instances.packing.frag.COVERAGE`
    of the jobs are kept (ties: the larger shape), as FGD's target workload does."""
    assert inst.nodes is not None and cap.shares is not None
    models: dict[str | None, int] = {}
    node_model = np.array([models.setdefault(n.model, len(models)) for n in inst.nodes],
                          dtype=np.int64)
    keys: dict[tuple[Any, ...], list[int]] = {}
    for j, job in enumerate(inst.jobs):
        if not inst.multi_node[j]:
            key = (job.cpu_milli, job.gpu_milli, job.gpus, job.gpu_models or ())
            keys.setdefault(key, []).append(j)
    ranked = sorted(keys.items(), key=lambda kv: (len(kv[1]), kv[0][:3], "|".join(kv[0][3])),
                    reverse=True)
    need, total, kept = COVERAGE * sum(len(v) for v in keys.values()), 0, 0
    while kept < len(ranked) and total < need:
        total += len(ranked[kept][1])
        kept += 1
    ranked = ranked[:kept]
    shape = np.full(inst.num_jobs, -1, dtype=np.int64)
    allowed = np.ones((max(kept, 1), max(len(models), 1)), dtype=np.bool_)
    for s, (key, members) in enumerate(ranked):
        shape[members] = s
        if key[3]:
            allowed[s] = [m in key[3] for m in models]
    cols = [np.array([k[i] for k, _ in ranked] or [0], dtype=np.int64) for i in range(3)]
    counts = np.array([len(v) for _, v in ranked] or [0], dtype=np.int64)
    return shape, *cols, allowed, counts, node_model


def _widest(inst: Instance) -> int:
    """The most GPUs a job on whole nodes asks (0 when none does)."""
    return int(inst.gpus[inst.multi_node].max(initial=0))


def _levels(inst: Instance, cap: Capacity, shapes: int) -> tuple[np.ndarray, ...]:
    """The level rows' layout: ``info`` (first level row, whole-GPU levels, share levels, words
    per row), the whole-GPU levels (1, the one-node whole-GPU jobs' GPUs, the node sizes), the
    share levels (the shared jobs' ``gpu_milli``), each job's level (``-1``: on whole nodes),
    and each job's eligible nodes as bits."""
    sh = cap.shares
    assert sh is not None
    K, NG, T = cap.num_nodes, int(sh.gpu_offset[-1]), cap.horizon
    W = -(-K // 64)
    shared = sh.job_milli < FULL
    one = ~inst.multi_node
    wl = np.union1d([1, *cap.sizes.tolist()], inst.gpus[one & ~shared]).astype(np.int64)
    ml = np.unique(sh.job_milli[shared]).astype(np.int64)
    level = np.where(shared, np.searchsorted(ml, sh.job_milli),
                     np.searchsorted(wl, inst.gpus)).astype(np.int64)
    level[~one] = -1
    info = np.array([layout(K, NG)[5] + 1 + -(-shapes // T), wl.size, ml.size, W], dtype=np.int64)
    return (_readonly(info), _readonly(wl), _readonly(ml), _readonly(level),
            _readonly(_words(sh.eligible, W)))


def _words(flags: np.ndarray, W: int) -> np.ndarray:
    """``(m, K)`` booleans as ``(m, W)`` int64 words (flag ``k``: bit ``k % 64`` of word ``k // 64``)."""
    m, K = flags.shape
    pad = np.zeros((m, W * 64), dtype=np.uint64)
    pad[:, :K] = flags
    out = (pad.reshape(m, W, 64) << np.arange(64, dtype=np.uint64)).sum(axis=2, dtype=np.uint64)
    return np.ascontiguousarray(out.view(np.int64))


def _kinds(inst: Instance, cap: Capacity) -> tuple[np.ndarray, np.ndarray]:
    """Each job's kind (jobs of equal GPUs, duration, share, CPU, memory and eligible nodes ask
    the same of the state) and the number of kinds."""
    sh = cap.shares
    assert sh is not None
    elig = np.unique(sh.eligible, axis=0, return_inverse=True)[1].reshape(-1)
    keys = np.stack([inst.gpus, inst.durations, sh.job_milli, sh.job_cpu, sh.job_memory, elig],
                    axis=1)
    kind = np.unique(keys, axis=0, return_inverse=True)[1].reshape(-1).astype(np.int64)
    return _readonly(kind), _readonly(np.array([kind.max(initial=-1) + 1], dtype=np.int64))


def _classes(cap: Capacity, node_model: np.ndarray) -> np.ndarray:
    """Each node's class: nodes of equal GPUs, GPUs offered, model, CPU and memory share one."""
    sh = cap.shares
    assert sh is not None
    keys = np.stack([cap.sizes, cap.node_cap, node_model, sh.node_cpu, sh.node_memory], axis=1)
    return _readonly(np.unique(keys, axis=0, return_inverse=True)[1].reshape(-1).astype(np.int64))


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _empty(cap: Capacity, counts: np.ndarray, info: np.ndarray, wl: np.ndarray) -> np.ndarray:
    """The rows of a version 3 state with nothing placed (module notes, :func:`layout`)."""
    sh = cap.shares
    assert sh is not None
    K, NG, T = cap.num_nodes, int(sh.gpu_offset[-1]), cap.horizon
    first, W = int(info[0]), int(info[3])
    rows = np.zeros((first + (int(info[1]) + int(info[2])) * W, T), dtype=np.int64)
    C = layout(K, NG)[5]
    rows[C + 1 :].reshape(-1)[: counts.size] = counts
    full = np.add.reduceat(sh.gpu_milli == FULL, sh.gpu_offset[:-1]) if NG else np.zeros(K)
    rows[0] = cap.pool
    rows[1 : K + 1] = full[:, None]
    rows[K + 1 : 2 * K + 1] = 0  # no GPU partly used (a withheld one: 0 free)
    rows[2 * K + 1 : 3 * K + 1] = np.minimum(sh.node_cpu, UNLIMITED)[:, None]
    rows[3 * K + 1 : 4 * K + 1] = sh.node_memory[:, None]
    rows[4 * K + 1 : 5 * K + 1] = np.add.reduceat(sh.gpu_milli, sh.gpu_offset[:-1])[:, None]
    rows[5 * K + 1 : 5 * K + 1 + NG] = sh.gpu_milli[:, None]
    rows[C] = int(cap.sizes[full == cap.sizes].sum())
    # the nodes with each whole-GPU level of wholly free GPUs (none has a partly used GPU)
    rows[first : first + wl.size * W] = _words(full[None, :] >= wl[:, None], W).reshape(-1, 1)
    return rows
