"""The one capacity model every algorithm reads: nodes of GPUs beside the pool row.

A batch job takes a *placement* (one node, or whole nodes for a job larger
than the largest node) for its whole run; at every slot each node's batch
GPUs stay within the node's capacity and all batch GPUs within the pool row
(``G`` less inference, docs/model.md). An instance without nodes is the case
of **one node of G GPUs**: its node row never binds (the node holds ``G``
under ``curve``, ``G - P`` under ``peak``, exactly the pool row's level), so
every algorithm written over :class:`Capacity` gives on a flat instance what
the flat model gives. The node is internal: flat files, rows and hashes do
not change, and a flat schedule carries no placement.

The placement rules shared by the heuristics, the MILP and the matheuristics
live here too, once: which placements are valid (:func:`job_placements`),
which set of whole nodes a multi-node job takes (:func:`lexicographic_subset`),
and the greedy that gives the jobs of a start array their nodes (:func:`place_starts`).
See docs/architecture.md for where the resources of model version 3 land.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

from .resources import FULL_GPU_MILLI, resources, uses_resources

if TYPE_CHECKING:
    from .arrays import Reservation
    from .model import Instance

__all__ = [
    "DEFAULT_MAX_PLACEMENTS",
    "UNLIMITED",
    "Capacity",
    "Shares",
    "capacity",
    "fits_alone",
    "job_placements",
    "lexicographic_subset",
    "place_starts",
    "whole_node_sets",
]

DEFAULT_MAX_PLACEMENTS = 10_000
"""Most sets of whole nodes :func:`job_placements` enumerates for one job."""


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=a.dtype)
    a.flags.writeable = False
    return a


UNLIMITED = 2**62
"""CPU or memory of a node that sets none (unlimited), as an ``int64`` level."""


@dataclass(frozen=True, eq=False)
class Shares:
    """The version 3 part of a :class:`Capacity`: GPUs by index, CPU, memory, models (read-only).

    Attributes
    ----------
    gpu_offset
        ``(K + 1,)`` int64: node ``k``'s GPUs ``0 .. g_k - 1`` are positions
        ``gpu_offset[k] .. gpu_offset[k + 1] - 1`` of the per-GPU arrays.
    gpu_milli
        ``(sum g_k,)`` int64: the milli each GPU offers batch work, 1000, or 0
        where the reservation withholds it (``peak``: the last node's
        highest-indexed GPUs first, :func:`instances.resources.withheld_indices`).
    node_cpu, node_memory
        ``(K,)`` int64: ``cpu_milli`` and ``memory_mib`` of each node
        (:data:`UNLIMITED` where absent).
    eligible
        ``(n, K)`` bool: job ``j`` may use node ``k`` (:func:`fits_alone`:
        model, and CPU and memory alone, a multi-node job in proportion).
    job_milli, job_cpu, job_memory
        ``(n,)`` int64: each job's ``gpu_milli``, ``cpu_milli``, ``memory_mib``.
    """

    gpu_offset: np.ndarray
    gpu_milli: np.ndarray
    node_cpu: np.ndarray
    node_memory: np.ndarray
    eligible: np.ndarray
    job_milli: np.ndarray
    job_cpu: np.ndarray
    job_memory: np.ndarray


@dataclass(frozen=True, eq=False)
class Capacity:
    """The capacity an instance offers batch work under one reservation (arrays read-only).

    Attributes
    ----------
    reservation
        ``"curve"`` or ``"peak"``.
    pool
        ``(T,)`` int64: batch GPUs per slot, the pool row (:meth:`Instance.batch_capacity`).
    sizes
        ``(K,)`` int64: GPUs of each node; a flat instance has one node of ``G``.
    node_cap
        ``(K,)`` int64: GPUs of each node left for batch work (``peak``
        withholds from the end of the node list, :meth:`Instance.node_withheld`).
    multi
        ``(n,)`` bool: the job is larger than the largest node and takes whole nodes.
    flat
        Whether the instance has no nodes (the one node is internal).
    shares
        Model version 3 (some job sets a share, a model, CPU or memory): the
        per-GPU level, CPU, memory and eligibility (:class:`Shares`); ``None``
        on version 1 and 2, where whole GPUs and counts suffice.
    """

    reservation: str
    pool: np.ndarray
    sizes: np.ndarray
    node_cap: np.ndarray
    multi: np.ndarray
    flat: bool
    shares: Shares | None = None

    @property
    def num_nodes(self) -> int:
        """``K``: the instance's nodes, or 1 for a flat pool."""
        return int(self.sizes.shape[0])

    @property
    def horizon(self) -> int:
        """``T``: the number of slots."""
        return int(self.pool.shape[0])


def capacity(inst: Instance, reservation: Reservation = "curve") -> Capacity:
    """The :class:`Capacity` of ``inst`` under ``reservation`` (flat: one node of ``G``).

    On model version 3 (:attr:`Instance.jobs_use_resources`) it also carries
    :attr:`Capacity.shares`; the version 2 arrays are the same either way.

    Raises
    ------
    ValueError
        For an unknown reservation.
    """
    pool = inst.batch_capacity(reservation)
    if inst.has_nodes:
        sizes = np.asarray(inst.node_gpus, dtype=np.int64)
        node_cap = inst.node_capacity(reservation)
    else:
        sizes = np.array([inst.num_gpus], dtype=np.int64)
        node_cap = np.array([inst.num_gpus if reservation == "curve" else int(pool.max(initial=0))],
                            dtype=np.int64)
    return Capacity(reservation, _readonly(pool), _readonly(sizes), _readonly(node_cap),
                    _readonly(np.asarray(inst.multi_node, dtype=np.bool_)), not inst.has_nodes,
                    _shares(inst, node_cap) if inst.jobs_use_resources else None)


def _shares(inst: Instance, node_cap: np.ndarray) -> Shares:
    """The :class:`Shares` of a version 3 instance (``node_cap``: GPUs offered per node)."""
    res = resources(inst)
    offset = np.zeros(inst.num_nodes + 1, dtype=np.int64)
    np.cumsum(inst.node_gpus, out=offset[1:])
    local = np.arange(int(offset[-1])) - np.repeat(offset[:-1], inst.node_gpus)
    milli = np.where(local < np.repeat(node_cap, inst.node_gpus), FULL_GPU_MILLI, 0)

    def level(x: np.ndarray) -> np.ndarray:
        return _readonly(np.where(np.isinf(x), UNLIMITED, x).astype(np.int64))

    return Shares(_readonly(offset), _readonly(milli.astype(np.int64)), level(res.node_cpu),
                  level(res.node_memory), _readonly(fits_alone(inst)),
                  _readonly(np.array(res.gpu_milli, dtype=np.int64)),
                  _readonly(np.array(res.job_cpu, dtype=np.int64)),
                  _readonly(np.array(res.job_memory, dtype=np.int64)))


def lexicographic_subset(sizes: list[int], g: int) -> list[int]:
    """Indices into ``sizes`` of the lexicographically smallest subset summing to ``g``, or ``[]``.

    The set of whole nodes a multi-node job takes among those free (docs/model.md).
    Suffix subset sums (bit sets) say whether a target is still reachable
    from a position on; the greedy then takes each index that keeps the rest
    reachable.
    """
    m = len(sizes)
    suffix = [0] * (m + 1)
    suffix[m] = 1
    mask = (1 << (g + 1)) - 1
    for i in range(m - 1, -1, -1):
        suffix[i] = (suffix[i + 1] | (suffix[i + 1] << sizes[i])) & mask
    if not (suffix[0] >> g) & 1:
        return []
    out, rest = [], g
    for i in range(m):
        if rest == 0:
            break
        if sizes[i] <= rest and (suffix[i + 1] >> (rest - sizes[i])) & 1:
            out.append(i)
            rest -= sizes[i]
    return out


@cache
def whole_node_sets(sizes: tuple[int, ...], g: int, limit: int) -> tuple[tuple[int, ...], ...]:
    """Sets of node positions whose sizes sum to exactly ``g``, in lexicographic order.

    Stops once more than ``limit`` sets are found (the caller refuses then).
    """
    K = len(sizes)
    suffix = [sum(sizes[k:]) for k in range(K + 1)]
    sets: list[tuple[int, ...]] = []
    chosen: list[int] = []

    def visit(k: int, left: int) -> None:
        if len(sets) > limit:
            return
        if left == 0:
            sets.append(tuple(chosen))
            return
        if k == K or suffix[k] < left:
            return
        if sizes[k] <= left:
            chosen.append(k)
            visit(k + 1, left - sizes[k])
            chosen.pop()
        visit(k + 1, left)

    visit(0, g)
    return tuple(sets)


def job_placements(
    inst: Instance, max_placements: int = DEFAULT_MAX_PLACEMENTS
) -> list[list[tuple[int, ...]]]:
    """The valid placements of every job, as tuples of node positions (docs/model.md).

    A job of at most the largest node's GPUs: each node with room for it,
    ``(k,)``. A larger job: every set of whole nodes whose GPUs sum to
    exactly ``g_j``, ascending positions, in lexicographic order. A flat
    instance: ``[(0,)]`` for every job (its one internal node). On model
    version 3, only the nodes the job fits alone (:func:`fits_alone`: model,
    CPU, memory) are used.

    Raises
    ------
    ValueError
        If a multi-node job has more than ``max_placements`` sets.
    """
    if not inst.has_nodes:
        return [[(0,)] for _ in inst.jobs]
    sizes = tuple(int(m) for m in inst.node_gpus.tolist())
    largest = max(sizes)
    fits = fits_alone(inst) if uses_resources(inst) else None
    out: list[list[tuple[int, ...]]] = []
    for i, job in enumerate(inst.jobs):
        g = job.gpus
        if g <= largest:
            out.append([(k,) for k in range(len(sizes))
                        if sizes[k] >= g and (fits is None or fits[i, k])])
            continue
        if fits is None:
            sets = whole_node_sets(sizes, g, max_placements)
        else:  # the sets of the nodes the job fits, mapped back to positions
            at = np.flatnonzero(fits[i])
            sets = tuple(tuple(int(at[k]) for k in q) for q in whole_node_sets(
                tuple(sizes[k] for k in at.tolist()), g, max_placements))
        if len(sets) > max_placements:
            raise ValueError(
                f"jobs[{i}].gpus: job {job.name!r} has more than "
                f"max_placements={max_placements} sets of whole nodes"
            )
        out.append(list(sets))
    return out


def fits_alone(inst: Instance) -> np.ndarray:
    """``(n, K)`` bool: job ``j`` alone on node ``k`` meets the node's model, CPU and memory.

    The rules of :func:`instances.resources.has_placement`, over every job
    and node at once: node ``k`` has a model the job accepts, and the
    job's ``cpu_milli`` and ``memory_mib`` fit the node's, a job larger than
    the largest node charging each of its nodes in proportion to the GPUs
    it takes there (``cpu_j g_k / g_j``, compared as ``cpu_j g_k <= C_k g_j``
    in integers, exact in float64). GPUs are not looked at.
    """
    res = resources(inst)
    multi = inst.multi_node[:, None]
    g, size = inst.gpus[:, None].astype(np.float64), inst.node_gpus[None, :].astype(np.float64)
    ok = res.eligible.copy()
    for need, cap in ((res.job_cpu, res.node_cpu), (res.job_memory, res.node_memory)):
        need = need[:, None].astype(np.float64)
        ok &= np.where(multi, need * size <= cap[None, :] * g, need <= cap[None, :])
    return ok


def place_starts(
    inst: Instance, start: np.ndarray, *, reserved: np.ndarray | None = None,
    keep: np.ndarray | None = None, fill: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Give the jobs of a start array placements on the nodes, greedily: a node schedule.

    Jobs are taken in order of start (larger first at equal starts, then
    instance order). A job keeps its row of ``keep`` (a placement array) when
    that placement still has room over its run; otherwise a one-node job
    takes the node with the least room left over its run (best fit, the
    first such node on ties), a multi-node job the lexicographically
    smallest set of nodes wholly free over its run
    (:func:`lexicographic_subset`). A job that finds no room, on the nodes or
    in the pool, is dropped. With ``fill``, the jobs not run are then tried
    in order of value (largest first), each at its first start and
    placement with room. The greedy is not complete: a placement of every
    job may exist when it drops one.

    Parameters
    ----------
    inst
        An instance with nodes.
    start
        Per-job start array (``-1``: not run), e.g. a schedule of the flat pool.
    reserved
        ``(num_nodes, horizon)`` GPUs withheld per node and slot (``None``: none).
    keep
        A placement array (``Schedule.to_placement_array``'s form) whose rows are
        kept where they still fit.
    fill
        Then try to add the jobs not run.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        The start array of the jobs placed (``-1`` for the ones dropped or
        not run) and its placement array, a schedule feasible on the nodes
        under ``curve`` reservation.

    Raises
    ------
    ValueError
        For an instance without nodes.
    """
    if not inst.has_nodes:
        raise ValueError(f"inst: instance {inst.name!r} has no nodes to place jobs on")
    n, sizes = inst.num_jobs, inst.node_gpus
    free = np.repeat(sizes[:, None], inst.horizon, axis=1)
    if reserved is not None:
        free = free - np.asarray(reserved, dtype=np.int64)
    pool = inst.batch_capacity("curve")
    g, p, multi = inst.gpus, inst.durations, inst.multi_node
    start = np.asarray(start, dtype=np.int64)
    out = np.full(n, -1, dtype=np.int64)
    place = np.full((n, inst.max_span), -1, dtype=np.int64)

    def fit(j: int, s: int) -> list[int] | None:
        w = slice(s, s + int(p[j]))
        if pool[w].min(initial=int(g[j])) < g[j]:
            return None
        room = free[:, w].min(axis=1)
        old = [] if keep is None else [int(k) for k in keep[j] if k >= 0]
        if multi[j]:
            whole = np.flatnonzero(room == sizes)
            if old and set(old) <= set(whole.tolist()) and int(sizes[old].sum()) == g[j]:
                return old
            pick = lexicographic_subset(sizes[whole].tolist(), int(g[j]))
            return whole[pick].tolist() if pick else None
        if len(old) == 1 and room[old[0]] >= g[j]:
            return old
        ok = np.flatnonzero(room >= g[j])
        return [int(ok[np.argmin(room[ok])])] if ok.size else None

    def commit(j: int, s: int, nodes: list[int]) -> None:
        w = slice(s, s + int(p[j]))
        free[nodes, w] -= sizes[nodes][:, None] if multi[j] else g[j]
        pool[w] -= g[j]
        out[j] = s
        place[j, : len(nodes)] = nodes

    run = np.flatnonzero(start >= 0)
    for j in run[np.lexsort((run, -g[run], start[run]))].tolist():
        nodes = fit(j, int(start[j]))
        if nodes is not None:
            commit(j, int(start[j]), nodes)
    if fill:
        left = np.flatnonzero(out < 0)
        for j in left[np.lexsort((left, -inst.job_values[left]))].tolist():
            for s in range(int(inst.releases[j]), int(inst.deadlines[j] - p[j]) + 1):
                nodes = fit(j, s)
                if nodes is not None:
                    commit(j, s, nodes)
                    break
    return out, place
