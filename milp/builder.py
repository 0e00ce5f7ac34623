"""``milp.build``: the formulation of an instance as arrays, over the one capacity model.

Columns (job group, placement, start) for every start where the job fits
the pool alone and every valid placement (:func:`instances.capacity.job_placements`),
built with numpy index arithmetic. Exact reductions: no assignment row for a
group with one column; a capacity row only where the columns covering it
could overload it; a node row only where it can bind, that is where the
node offers less than the pool (a node row is implied by the pool row
elsewhere, since a job puts at most its GPUs on a node). A flat pool is one
node of ``G`` GPUs that never offers less than the pool: it has no node row,
and its model is the flat model.

:func:`build` runs its steps in order: the capacity (:func:`_base`), the
columns (:func:`_candidate_columns`), their capacity entries, the running sums
and busy-GPU columns, the rows by kind, and the :class:`Formulation` of them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from instances import Instance
from instances.arrays import Reservation
from instances.capacity import DEFAULT_MAX_PLACEMENTS, Capacity, capacity, job_placements
from instances.resources import FULL_GPU_MILLI, gpu_amounts, resources, shares_gpus, uses_resources

from .cuts import check_rounding, rounded_coefficients
from .fixed import FixedUse, fits_offered, offered_gpus
from .formulation import (
    DEFAULT_MAX_COLUMNS,
    DEFAULT_ROUNDING,
    ROW_ASSIGN,
    ROW_CAPACITY,
    ROW_CLIQUE,
    ROW_CPU,
    ROW_GPU,
    ROW_MEMORY,
    ROW_ROUNDED,
    ROW_SYM,
    Formulation,
)
from .shares import busy_columns, gpu_slots, node_kinds, relaxed_views, resource_rows, room_on_gpus
from .spans import node_load, pool_load, runs
from .symmetry import SYMMETRY, fixing_keeps, node_classes, order_rows

__all__ = ["build"]

logger = logging.getLogger(__name__)


def build(
    inst: Instance, max_columns: int = DEFAULT_MAX_COLUMNS, *, aggregate: bool = True,
    cliques: bool = False, rounding: Sequence[int] = DEFAULT_ROUNDING, symmetry: str = "fix",
    max_placements: int = DEFAULT_MAX_PLACEMENTS, reserved: np.ndarray | None = None,
    relax: str = "exact", reservation: Reservation = "curve", fixed: FixedUse | None = None,
) -> Formulation:
    """Build the time-indexed MILP of an instance (flat or on nodes) as arrays.

    Parameters
    ----------
    inst
        The instance.
    max_columns
        Refuse models with more candidate columns than this, before any large
        array is allocated.
    aggregate
        Merge identical jobs into integer columns (exact; removes the
        symmetry between them). Not under ``symmetry="rows"`` on nodes,
        whose running sums are per job.
    cliques
        Add the clique rows, per capacity row, over the jobs larger than half its capacity.
    rounding
        Divisors ``d`` of the rounded capacity rows (integers >= 2; empty:
        none). For every binding row whose capacity ``C`` is not a multiple
        of ``d``, the row ``sum_j a_j x_j <= floor(C / d)`` with
        ``a_j = floor(g_j / d) + max(0, g_j mod d - C mod d) / (d - C mod d)``
        over the columns it covers: the mixed-integer rounding of the
        capacity row divided by ``d`` (:func:`milp.cuts.rounded_coefficients`),
        valid for every integer schedule. With ``C = 9`` and ``d = 2``:
        ``4 x8 + 2 x4 + x2 <= 4`` over the 8-, 4- and 2-GPU jobs covering the slot.
        Over whole-GPU jobs only (the rest of a row is left out, which keeps it valid).
    symmetry
        Handling of identical nodes, one of :data:`milp.symmetry.SYMMETRY`
        (nothing to handle on a flat pool); on version 3 also of the GPU
        slots of a node (``"none"``: every slot for every shared job).
    max_placements
        Largest number of whole-node sets of one multi-node job.
    reserved
        ``(num_nodes, horizon)`` integers (a flat pool: one row): GPUs of each
        node withheld in each slot, ``0 <= reserved[k, t] <= gpus_k``, for
        jobs kept fixed outside the model, as in the windows of
        :func:`matheuristics.lns.lns_improve`. A column then needs its room
        on its nodes over its run (a multi-node job: its nodes withheld
        nowhere), and nodes are identical only with equal rows. The pool's
        own capacity stays the instance's ``G - sum_s d_s[t]``. Refused with
        shared jobs (GPUs withheld by fixed jobs are particular GPUs, which a
        count does not say: give ``fixed`` there).
    relax
        The model, a key of :data:`milp.shares.RELAXATIONS`: ``"exact"`` (the
        instance's), or a relaxation, each an upper bound (``"fluid"``,
        ``"nodes"``, ``"flat"``; module notes of :mod:`milp.shares`). On a
        version 1 or 2 instance ``"fluid"`` and ``"nodes"`` are the exact model.
    reservation
        ``"curve"`` (the default, what :func:`milp.solve` solves) or ``"peak"``:
        the pool row at ``G - P`` and each node's GPUs less those the peak
        reservation withholds there (the highest-indexed ones, so a node
        offers GPUs ``0 .. c_k - 1``).
    fixed
        On model version 3 (exact model), in place of ``reserved``: what jobs held fixed
        outside the model use, by GPU index, CPU and memory (:class:`milp.fixed.FixedUse`).
        The busy GPUs it gives are withheld as ``reserved`` is; the shared jobs' slots are
        then their node's GPU indices themselves (not relabelled, the slot reduction off),
        a share fits a GPU where the fixed shares leave it room, and the CPU and memory
        rows are lowered by the fixed use (:mod:`milp.fixed`). Nodes are identical only
        with equal fixed use too.

    Raises
    ------
    ValueError
        For a bad option, or a model of more than ``max_columns`` columns.
    """
    t0 = time.perf_counter()
    divisors = check_rounding(rounding)
    if symmetry not in SYMMETRY:
        raise ValueError(f"symmetry: must be one of {list(SYMMETRY)}, got {symmetry!r}")
    base = _base(inst, relax, reservation, reserved, fixed, symmetry)
    cols = _candidate_columns(inst, base, aggregate, symmetry, max_columns, max_placements,
                              reservation, fixed)
    ent = _capacity_entries(inst, base, cols)
    sym_pairs, sym_blocks = _symmetry_columns(inst, base, cols, ent, symmetry)
    busy = _busy_columns(inst, base, cols, ent, sym_pairs.shape[0], fixed)
    rows = _Rows()
    assign_groups = _assignment_rows(rows, cols)
    keys = _capacity_rows(rows, cols, ent, busy, cliques, divisors, base.fluid)
    _resource_rows(rows, inst, base, cols, ent, busy, sym_blocks, relax, fixed)
    A = _matrix(rows, cols.n + sym_pairs.shape[0] + busy.count)
    kinds = np.concatenate(rows.kinds)
    stats = _stats(inst, base, cols, ent, busy, keys, assign_groups, kinds, relax, reservation)
    stats = {"build_s": time.perf_counter() - t0, **stats}
    form = _formulation(inst, base, cols, busy, rows, A, kinds, sym_pairs, stats, symmetry,
                        relax, fixed)
    logger.debug("%s", form.summary())
    return form


@dataclass
class _Base:
    """The capacity a model is built over.

    Attributes
    ----------
    place_inst
        The instance whose placements the model uses (:func:`milp.shares.relaxed_views`).
    model
        The capacity of the capacity view under the reservation.
    reserved
        The GPUs withheld per node and slot (those of ``fixed`` when given), or ``None``.
    free
        ``(K, T)``: the GPUs each node offers per slot.
    classes
        The classes of identical nodes (:func:`milp.symmetry.node_classes`).
    reduce
        Whether identical nodes are handled (``symmetry`` not ``"none"`` and a class
        of two or more).
    slotted
        The exact model of an instance with shared jobs: they take GPU slots.
    fluid
        A relaxation of an instance with shared jobs: a share counts as its fluid amount.
    """

    place_inst: Instance
    model: Capacity
    reserved: np.ndarray | None
    free: np.ndarray
    classes: tuple[np.ndarray, ...]
    reduce: bool
    slotted: bool
    fluid: bool


@dataclass
class _Columns:
    """The columns of a model, ``(group, start, placement)`` each, and their groups.

    Attributes
    ----------
    rep, members, size
        Each group's representative job, its jobs and their number (:func:`_groups`).
    shared
        Whether each group is shared (model version 3, exact model).
    col_group, col_start, col_place
        Each column's group, start and placement index.
    placements, place_nodes, place_gpu
        The placements (node tuples), as a ``-1``-padded array, and each one's GPU
        slot (``-1``: a whole-GPU placement).
    candidates
        The candidate columns counted before any was dropped.
    dropped
        Columns dropped as not fitting what ``reserved`` leaves (``"reserved"``) and by
        fixing identical nodes (``"symmetry"``).
    """

    rep: np.ndarray
    members: tuple[np.ndarray, ...]
    size: np.ndarray
    shared: np.ndarray
    col_group: np.ndarray
    col_start: np.ndarray
    col_place: np.ndarray
    placements: list[tuple[int, ...]]
    place_nodes: np.ndarray
    place_gpu: np.ndarray
    candidates: int
    dropped: dict[str, int]

    @property
    def n(self) -> int:
        """The number of columns."""
        return int(self.col_group.size)

    def keep(self, keep: np.ndarray) -> None:
        """Keep the columns where ``keep`` is true."""
        self.col_group, self.col_start = self.col_group[keep], self.col_start[keep]
        self.col_place = self.col_place[keep]


@dataclass
class _Entries:
    """The capacity entries ``(column, key, GPUs)`` of the columns and what each key offers.

    Key ``t`` is the pool at slot ``t``, key ``(1 + k) T + t`` node ``k`` at slot ``t``.

    Attributes
    ----------
    col_p, col_a
        Each column's duration and GPUs (``g_j``, or the fluid amount ``a_j`` on a relaxation).
    amount
        Each group's GPUs in the pool and node rows.
    nodes
        Each column's node positions, ``-1`` padded.
    ent_col, ent_key, ent_coef
        The entries of the columns in the pool and node rows (a shared column has none
        of its own: its busy columns have them).
    cap_key
        What each key offers: the pool row, then each node's GPUs per slot.
    binding
        Whether each key's row can bind (the columns covering it could overload it).
    max_load, node_max
        The most the columns can load the pool per slot and each node per slot.
    """

    col_p: np.ndarray
    col_a: np.ndarray
    amount: np.ndarray
    nodes: np.ndarray
    ent_col: np.ndarray
    ent_key: np.ndarray
    ent_coef: np.ndarray
    cap_key: np.ndarray
    binding: np.ndarray
    max_load: np.ndarray
    node_max: np.ndarray


@dataclass
class _Busy:
    """The busy-GPU columns of a model with GPU slots (model version 3, shared jobs).

    Attributes
    ----------
    busy
        ``(nb, 2)``: each busy column's slot placement and time slot.
    milli_rows
        The per-GPU rows ``(row, column, value)``, or ``None`` without busy columns.
    cap_ent
        The capacity entries ``(column, key, GPUs)``, the busy columns' after the columns'.
    f_busy
        Each busy column's share held by fixed jobs (0: none).
    """

    busy: np.ndarray
    milli_rows: tuple[np.ndarray, ...] | None
    cap_ent: tuple[np.ndarray, ...]
    f_busy: np.ndarray

    @property
    def count(self) -> int:
        """The number of busy columns."""
        return int(self.busy.shape[0])


def _base(inst: Instance, relax: str, reservation: Reservation, reserved: np.ndarray | None,
          fixed: FixedUse | None, symmetry: str) -> _Base:
    """The capacity of the model: the views of ``relax``, the nodes' offer and their classes.

    Parameters
    ----------
    inst
        The instance.
    relax, reservation, reserved, fixed, symmetry
        As for :func:`build`.

    Returns
    -------
    _Base
        The capacity, with ``fixed``'s busy GPUs as ``reserved``.

    Raises
    ------
    ValueError
        For an unknown ``relax``, ``reserved`` with shared jobs, or ``fixed`` other
        than in place of ``reserved`` on the exact model of an instance with nodes.
    """
    cap_inst, place_inst = relaxed_views(inst, relax)
    slotted = relax == "exact" and shares_gpus(inst)
    fluid = relax != "exact" and shares_gpus(inst)
    if reserved is not None and slotted:
        raise ValueError(f"reserved: instance {inst.name!r} has shared jobs; GPUs withheld by "
                         "fixed jobs are particular GPUs, which the count model does not say "
                         "(give fixed=)")
    model = capacity(cap_inst, reservation)
    K = model.num_nodes
    kind_of = node_kinds(place_inst)
    if fixed is not None:
        if reserved is not None or relax != "exact" or not inst.has_nodes:
            raise ValueError("fixed: only for the exact model of an instance with nodes, "
                             "in place of reserved")
        fixed.check(model.sizes, inst.horizon)
        reserved = fixed.busy(model.sizes)
        kind_of = [(None if kind_of is None else kind_of[k], fixed.signature(k))
                   for k in range(K)]
    free = offered_gpus(model, reserved)
    classes = node_classes(model.sizes, free, kind_of)
    reduce = symmetry != "none" and any(c.size > 1 for c in classes)
    return _Base(place_inst, model, reserved, free, classes, reduce, slotted, fluid)


def _candidate_columns(inst: Instance, base: _Base, aggregate: bool, symmetry: str,
                       max_columns: int, max_placements: int, reservation: Reservation,
                       fixed: FixedUse | None) -> _Columns:
    """The columns: every start where the job fits the pool alone, on every valid placement.

    Then those that do not fit what the reservation or ``reserved`` leaves are dropped,
    and those that fixing identical nodes rules out; with GPU slots, the shared
    groups' columns are moved to the slots (:func:`_slot_columns`).

    Parameters
    ----------
    inst
        The instance.
    base
        The capacity (:func:`_base`).
    aggregate, symmetry, max_columns, max_placements, reservation, fixed
        As for :func:`build`; identical jobs are not merged under ``symmetry="rows"``
        with identical nodes, whose running sums are per job.

    Returns
    -------
    _Columns
        The columns, sorted by group, start and placement.

    Raises
    ------
    ValueError
        For more candidate columns than ``max_columns``.
    """
    rep, members = _groups(inst, aggregate and not (base.reduce and symmetry == "rows"))
    size = np.array([m.size for m in members], dtype=np.int64)
    shared = resources(inst).shared[rep] if base.slotted else np.zeros(rep.size, dtype=bool)
    # with fixed use a share may join a GPU the fixed jobs keep busy, where the pool has no room
    col_group, col_start, col_place, placements, candidates = _columns(
        base.place_inst, base.model, rep, max_columns, max_placements,
        shared if fixed is not None else None)
    cols = _Columns(rep, members, size, shared, col_group, col_start, col_place, placements,
                    _place_array(placements, _width(inst, placements)),
                    np.full(len(placements), -1, dtype=np.int64), candidates,
                    {"reserved": 0, "symmetry": 0})
    withheld = base.reserved is not None or reservation == "peak"
    for why, on in (("reserved", withheld), ("symmetry", base.reduce)):
        if on and cols.n:
            keep = (fits_offered(base.place_inst, base.model, base.free, rep[cols.col_group],
                                 cols.col_start, cols.place_nodes[cols.col_place])
                    if why == "reserved" else
                    fixing_keeps(base.classes, cols.place_nodes[cols.col_place], cols.col_group,
                                 members, inst.num_jobs))
            if why == "reserved" and fixed is not None:
                keep |= shared[cols.col_group]  # a share may join a GPU fixed shares keep busy
            cols.dropped[why] = int(cols.n - keep.sum())
            cols.keep(keep)
    if base.slotted:
        _slot_columns(inst, base, cols, symmetry, fixed)
    return cols


def _width(inst: Instance, placements: Sequence[tuple[int, ...]]) -> int:
    """The width of the placement array: the most nodes a job or a placement spans."""
    return max(inst.max_span, *map(len, placements))


def _slot_columns(inst: Instance, base: _Base, cols: _Columns, symmetry: str,
                  fixed: FixedUse | None) -> None:
    """Move the shared groups' columns from their node to its GPU slots (in place).

    With ``fixed``, the slots are the GPU indices themselves (every GPU, no
    relabelling), and a column is dropped where the fixed shares leave its GPU no
    room over its run.

    Parameters
    ----------
    inst
        The instance (model version 3, shared jobs).
    base
        The capacity.
    cols
        The columns, changed in place.
    symmetry, fixed
        As for :func:`build`.
    """
    slots = base.model.node_cap.astype(np.int64) if fixed is not None else base.free.min(axis=1)
    cols.col_group, cols.col_start, cols.col_place, cols.placements, cols.place_gpu = gpu_slots(
        cols.col_group, cols.col_start, cols.col_place, cols.placements, cols.members,
        cols.shared, slots, symmetry != "none" and fixed is None, inst.num_jobs)
    cols.place_nodes = _place_array(cols.placements, cols.place_nodes.shape[1])  # same width
    if fixed is not None and cols.n:
        rep, group = cols.rep, cols.col_group
        keep = room_on_gpus(fixed, cols.place_nodes[cols.col_place, 0],
                            cols.place_gpu[cols.col_place], cols.col_start,
                            inst.durations[rep][group], resources(inst).gpu_milli[rep][group])
        cols.dropped["reserved"] += int(cols.n - keep.sum())
        cols.keep(keep)


def _capacity_entries(inst: Instance, base: _Base, cols: _Columns) -> _Entries:
    """The columns' entries in the pool and node rows, and which of these rows can bind.

    A node row is kept only where the node offers less than the pool (elsewhere
    the pool row implies it); a job on whole nodes counts each node's GPUs there.

    Parameters
    ----------
    inst
        The instance.
    base
        The capacity.
    cols
        The columns.

    Returns
    -------
    _Entries
        The entries, keyed by row, and the rows that can bind.
    """
    T, K = inst.horizon, base.model.num_nodes
    model, free, rep, size = base.model, base.free, cols.rep, cols.size
    col_group, col_start, col_place = cols.col_group, cols.col_start, cols.col_place
    n = cols.n
    g = inst.gpus[rep] if rep.size else np.zeros(0, dtype=np.int64)
    col_p = inst.durations[rep][col_group] if rep.size else g[:0]
    # a group's GPUs in the pool and node rows: g_j, or the fluid amount a_j on a relaxation
    amount = gpu_amounts(inst)[rep] if base.fluid and rep.size else g
    col_a = amount[col_group]
    # a shared column has none of its own (its busy columns have them)
    own = cols.place_gpu[col_place] < 0
    xc = np.arange(n, dtype=np.int64) if own.all() else np.flatnonzero(own)
    idx, slot = runs(col_start[xc], col_p[xc])
    cover = xc[idx]
    max_load = pool_load(T, col_group, col_start, col_p, amount * size)
    nodes = cols.place_nodes[col_place]
    may = np.asarray((free < model.pool).any(axis=1))  # elsewhere the pool row implies it
    node_max = np.zeros((K, T), dtype=amount.dtype)
    ent_col, ent_key, ent_coef = cover, slot, col_a[cover]
    if may.any() and n:
        m_col, m_slot = np.nonzero((nodes >= 0) & may[np.maximum(nodes, 0)])
        m_node = nodes[m_col, m_slot]
        m_coef = np.where(model.multi[rep[col_group[m_col]]], model.sizes[m_node], col_a[m_col])
        node_max = node_load(K, T, col_group[m_col] * K + m_node, col_start[m_col],
                             col_p[m_col], m_coef * size[col_group[m_col]])
        if not own.all():
            mine = own[m_col]
            m_col, m_node, m_coef = m_col[mine], m_node[mine], m_coef[mine]
        idx, t = runs(col_start[m_col], col_p[m_col])
        ent_col = np.concatenate([cover, m_col[idx]])
        ent_key = np.concatenate([slot, (1 + m_node[idx]) * T + t])
        ent_coef = np.concatenate([col_a[cover], m_coef[idx]])
    cap_key = np.concatenate([model.pool, free.reshape(-1)])
    binding = np.concatenate([max_load > model.pool,
                              ((node_max > free) & (free < model.pool)).reshape(-1)])
    return _Entries(col_p, col_a, amount, nodes, ent_col, ent_key, ent_coef, cap_key, binding,
                    max_load, node_max)


def _symmetry_columns(inst: Instance, base: _Base, cols: _Columns, ent: _Entries,
                      symmetry: str) -> tuple[np.ndarray, list[tuple[np.ndarray, ...]]]:
    """Under ``symmetry="rows"`` with identical nodes: the running-sum columns and order rows.

    Parameters
    ----------
    inst
        The instance.
    base
        The capacity (its classes of identical nodes).
    cols, ent
        The columns and their node positions.
    symmetry
        As for :func:`build`.

    Returns
    -------
    tuple
        ``sym_pairs`` (each running-sum column's ``(job, node)``, none otherwise)
        and the row blocks (:func:`milp.symmetry.order_rows`).
    """
    if base.reduce and symmetry == "rows" and cols.n:
        return order_rows(base.classes, ent.nodes, cols.rep[cols.col_group], inst.num_jobs)
    return np.zeros((0, 2), dtype=np.int64), []


def _busy_columns(inst: Instance, base: _Base, cols: _Columns, ent: _Entries, n_sum: int,
                  fixed: FixedUse | None) -> _Busy:
    """With GPU slots: the busy-GPU columns, their per-GPU rows and capacity entries.

    Parameters
    ----------
    inst
        The instance.
    base
        The capacity.
    cols, ent
        The columns and their capacity entries.
    n_sum
        The number of running-sum columns, before the busy ones.
    fixed
        As for :func:`build`: a busy GPU of the fixed jobs is counted in
        ``reserved`` already, its room ``1000 - f``.

    Returns
    -------
    _Busy
        The busy columns (none without GPU slots) and the capacity entries with theirs.
    """
    busy = np.zeros((0, 2), dtype=np.int64)
    milli_rows: tuple[np.ndarray, ...] | None = None
    cap_ent: tuple[np.ndarray, ...] = (ent.ent_col, ent.ent_key, ent.ent_coef)
    if base.slotted and cols.n:
        milli = resources(inst).gpu_milli[cols.rep][cols.col_group]
        busy, milli_rows, busy_ent = busy_columns(
            cols.col_place, cols.col_start, ent.col_p, milli, cols.place_gpu,
            cols.place_nodes[:, 0], inst.horizon, cols.n + n_sum)
        cap_ent = tuple(np.concatenate([a, b]) for a, b in zip(cap_ent, busy_ent))
    nb = busy.shape[0]
    f_busy = (fixed.gpu_milli[cols.place_nodes[busy[:, 0], 0], cols.place_gpu[busy[:, 0]],
                              busy[:, 1]]
              if fixed is not None and nb else np.zeros(nb, dtype=np.int64))
    return _Busy(busy, milli_rows, cap_ent, f_busy)


def _assignment_rows(rows: _Rows, cols: _Columns) -> np.ndarray:
    """Add the assignment rows, only where a group has more than one column (or copies).

    Parameters
    ----------
    rows
        The rows so far, added to.
    cols
        The columns.

    Returns
    -------
    numpy.ndarray
        The groups with an assignment row.
    """
    rep, size, col_group = cols.rep, cols.size, cols.col_group
    ncols_group = np.bincount(col_group, minlength=rep.size)
    assign_groups = np.flatnonzero((ncols_group > 1) | ((ncols_group > 0) & (size > 1)))
    arow = np.full(rep.size, -1, dtype=np.int64)
    arow[assign_groups] = np.arange(assign_groups.size)
    a_mask = arow[col_group] >= 0
    rows.add(arow[col_group][a_mask], np.flatnonzero(a_mask), np.ones(int(a_mask.sum())),
             ROW_ASSIGN, assign_groups, size[assign_groups])
    return assign_groups


def _capacity_rows(rows: _Rows, cols: _Columns, ent: _Entries, busy: _Busy, cliques: bool,
                   divisors: tuple[int, ...], fluid: bool) -> np.ndarray:
    """Add the capacity rows where they can bind, then the clique and rounded rows over them.

    Parameters
    ----------
    rows
        The rows so far, added to.
    cols, ent, busy
        The columns, their capacity entries and the busy columns (whose entries
        the capacity rows hold too).
    cliques
        Add the clique rows (as for :func:`build`).
    divisors
        The divisors of the rounded rows (``rounding``, checked).
    fluid
        A relaxation with shared jobs: the rounded rows are over whole-GPU entries only.

    Returns
    -------
    numpy.ndarray
        The keys of the capacity rows added, ascending.
    """
    binding, cap_key = ent.binding, ent.cap_key
    ent_col, ent_key, ent_coef = ent.ent_col, ent.ent_key, ent.ent_coef
    keys = np.flatnonzero(binding)
    rows.add_at(keys, binding.size, busy.cap_ent[1], busy.cap_ent[0], busy.cap_ent[2],
                ROW_CAPACITY, cap_key[keys])
    if cliques and cols.n:
        big = 2 * ent_coef > cap_key[ent_key]
        big_count = np.bincount(ent_key[big], minlength=binding.size)  # columns, an over-count
        # a clique row helps only where two or more big groups can meet
        big_groups = np.zeros(binding.size, dtype=np.int64)
        pairs = np.unique(np.stack([ent_key[big], cols.col_group[ent_col][big]]), axis=1)
        np.add.at(big_groups, pairs[0], 1)
        q_keys = np.flatnonzero((big_groups >= 2) & (big_count > 0) & binding)
        at = np.flatnonzero(big)
        rows.add_at(q_keys, binding.size, ent_key[at], ent_col[at], np.ones(at.size),
                    ROW_CLIQUE, np.ones(q_keys.size))
    integral = ent_coef == np.floor(ent_coef) if fluid else np.ones(ent_coef.size, dtype=bool)
    for d in divisors if cols.n else ():
        # a row only where it is not the capacity row over d, and not empty
        at = np.flatnonzero((binding & (cap_key % d > 0))[ent_key] & integral)
        coef = rounded_coefficients(ent_coef[at], cap_key[ent_key[at]], d)
        at, coef = at[coef > 0], coef[coef > 0]
        r_keys = np.unique(ent_key[at])
        rows.add_at(r_keys, binding.size, ent_key[at], ent_col[at], coef, ROW_ROUNDED,
                    cap_key[r_keys] // d)
    return keys


def _resource_rows(rows: _Rows, inst: Instance, base: _Base, cols: _Columns, ent: _Entries,
                   busy: _Busy, sym_blocks: list[tuple[np.ndarray, ...]], relax: str,
                   fixed: FixedUse | None) -> None:
    """Add the per-GPU rows, the CPU and memory rows (model version 3) and the order rows.

    Parameters
    ----------
    rows
        The rows so far, added to.
    inst
        The instance.
    base
        The capacity.
    cols, ent, busy
        The columns, their node positions and durations, and the busy columns.
    sym_blocks
        The order rows of ``symmetry="rows"`` (:func:`_symmetry_columns`).
    relax, fixed
        As for :func:`build`: the CPU and memory rows are the exact and fluid
        models', lowered by what ``fixed`` uses.
    """
    nb = busy.count
    if nb:
        assert busy.milli_rows is not None
        rows.add(busy.milli_rows[0], busy.milli_rows[1], busy.milli_rows[2], ROW_GPU,
                 np.arange(nb, dtype=np.int64),
                 np.where(busy.f_busy > 0, FULL_GPU_MILLI - busy.f_busy, 0).astype(np.float64))
    if relax in ("exact", "fluid") and uses_resources(inst) and cols.n:
        kind = {"cpu": ROW_CPU, "memory": ROW_MEMORY}
        used = None if fixed is None else {"cpu": fixed.cpu, "memory": fixed.memory}
        K, T = base.model.num_nodes, inst.horizon
        for name, r_keys, e_key, e_col, e_val, upper in resource_rows(
                inst, cols.rep, cols.col_group, cols.col_start, ent.col_p, ent.nodes, cols.size,
                base.model.multi, used):
            rows.add_at(r_keys, K * T, e_key, e_col, e_val, kind[name], upper)
    for r_ids, c_ids, vals, kinds, refs, lower, upper in sym_blocks:
        rows.add(r_ids, c_ids, vals, int(kinds[0]), refs, upper, lower)


def _matrix(rows: _Rows, num_cols: int) -> sp.csc_matrix:
    """The constraint matrix of the rows, in CSC form, duplicates summed and indices sorted.

    Parameters
    ----------
    rows
        The rows.
    num_cols
        The columns: the model's, the running sums' and the busy ones'.

    Returns
    -------
    scipy.sparse.csc_matrix
        ``rows.count`` by ``num_cols``.
    """
    A = sp.csc_matrix((np.concatenate(rows.vals), (np.concatenate(rows.rows),
                                                    np.concatenate(rows.cols))),
                      shape=(rows.count, num_cols))
    A.sum_duplicates()
    A.sort_indices()
    return A


def _stats(inst: Instance, base: _Base, cols: _Columns, ent: _Entries, busy: _Busy,
           keys: np.ndarray, assign_groups: np.ndarray, kinds: np.ndarray, relax: str,
           reservation: Reservation) -> dict[str, Any]:
    """The counts of the model (:attr:`Formulation.stats`), the build time aside.

    Parameters
    ----------
    inst
        The instance.
    base, cols, ent, busy
        The capacity, the columns, their entries and the busy columns.
    keys
        The keys of the capacity rows.
    assign_groups
        The groups with an assignment row.
    kinds
        Each row's kind.
    relax, reservation
        As for :func:`build`; on model version 3, a relaxation or under ``peak``
        they are recorded, with the per-GPU, CPU and memory rows.

    Returns
    -------
    dict
        Columns (candidate, dropped by why), groups, placements, classes, and rows by kind.
    """
    T, n_jobs, rep, n = inst.horizon, inst.num_jobs, cols.rep, cols.n
    stats: dict[str, Any] = {
        "candidate_columns": cols.candidates,
        "columns_dropped_capacity": int(cols.candidates - n - sum(cols.dropped.values())),
        "columns_dropped_symmetry": cols.dropped["symmetry"],
        "columns_dropped_reserved": cols.dropped["reserved"],
        "groups": int(rep.size),
        "aggregated_jobs": int(n_jobs - rep.size),
        "placements": len(cols.placements),
        "classes": len(base.classes),
        "capacity_rows": int(keys.size),
        "node_rows": int(np.count_nonzero(keys >= T)),
        "capacity_rows_dropped": int(np.count_nonzero(ent.max_load > 0)
                                     + np.count_nonzero(ent.node_max > 0) - keys.size),
        "assignment_rows": int(assign_groups.size),
        "clique_rows": int(np.count_nonzero(kinds == ROW_CLIQUE)),
        "rounded_rows": int(np.count_nonzero(kinds == ROW_ROUNDED)),
        "symmetry_rows": int(np.count_nonzero(kinds == ROW_SYM)),
    }
    if uses_resources(inst) or relax != "exact" or reservation != "curve":
        stats.update(relax=relax, reservation=reservation, busy_columns=busy.count,
                     gpu_rows=int(np.count_nonzero(kinds == ROW_GPU)),
                     cpu_rows=int(np.count_nonzero(kinds == ROW_CPU)),
                     memory_rows=int(np.count_nonzero(kinds == ROW_MEMORY)))
        if base.slotted:  # the shared columns are counted among those dropped otherwise
            stats["columns_dropped_capacity"] = None
    return stats


def _formulation(inst: Instance, base: _Base, cols: _Columns, busy: _Busy, rows: _Rows,
                 A: sp.csc_matrix, kinds: np.ndarray, sym_pairs: np.ndarray,
                 stats: dict[str, Any], symmetry: str, relax: str,
                 fixed: FixedUse | None) -> Formulation:
    """The :class:`Formulation` of the parts, its arrays read-only.

    The columns are the model's (integer, at most the group's copies), then the
    running sums (continuous) and the busy columns (binary; one a fixed share
    keeps busy is fixed at 0, its room on the per-GPU row).

    Parameters
    ----------
    inst
        The instance.
    base, cols, busy, rows
        The capacity, the columns, the busy columns and the rows.
    A, kinds
        The constraint matrix and each row's kind.
    sym_pairs
        The running-sum columns' ``(job, node)``.
    stats
        The counts (:func:`_stats`) and build time.
    symmetry, relax, fixed
        As for :func:`build`.

    Returns
    -------
    Formulation
        The model.
    """
    n, n_sum, nb = cols.n, sym_pairs.shape[0], busy.count
    rep, col_group, size = cols.rep, cols.col_group, cols.size
    empty = np.zeros(0, dtype=np.int64)
    return Formulation(
        instance=inst,
        c=_ro(np.concatenate([(inst.worth_base[rep][col_group]
                               - inst.worth_slope[rep][col_group] * cols.col_start) if n
                              else np.zeros(0), np.zeros(n_sum + nb)])),
        A=A,
        row_lower=_ro(np.concatenate(rows.lower)),
        row_upper=_ro(np.concatenate(rows.upper)),
        col_lower=_ro(np.zeros(n + n_sum + nb)),
        col_upper=_ro(np.concatenate([size[col_group].astype(np.float64), np.full(n_sum, np.inf),
                                      (busy.f_busy == 0).astype(np.float64)])),
        integrality=_ro(np.concatenate([np.ones(n, dtype=np.int64),
                                        np.zeros(n_sum, dtype=np.int64),
                                        np.ones(nb, dtype=np.int64)])),
        col_job=_ro(rep[col_group] if n else empty),
        col_start=_ro(cols.col_start),
        col_group=_ro(col_group),
        col_place=_ro(cols.col_place),
        groups=tuple(_ro(m) for m in cols.members),
        placements=tuple(cols.placements),
        place_nodes=_ro(cols.place_nodes),
        node_free=_ro(base.free),
        classes=tuple(_ro(c) for c in base.classes),
        symmetry=symmetry,
        row_kind=_ro(kinds),
        row_ref=_ro(np.concatenate(rows.refs)),
        sym_pairs=_ro(sym_pairs),
        stats=stats,
        place_gpu=_ro(cols.place_gpu),
        busy=_ro(busy.busy),
        relax=relax,
        gpu_fixed=fixed is not None and base.slotted,
    )


class _Rows:
    """The rows of a model as they are added: COO entries and per-row kind, ref and bounds."""

    def __init__(self) -> None:
        self.rows: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
        self.cols: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
        self.vals: list[np.ndarray] = [np.zeros(0)]
        self.kinds: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
        self.refs: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
        self.lower: list[np.ndarray] = [np.zeros(0)]
        self.upper: list[np.ndarray] = [np.zeros(0)]
        self.count = 0

    def add(self, r_ids: np.ndarray, c_ids: np.ndarray, vals: np.ndarray, kind: int,
            refs: np.ndarray, upper: np.ndarray, lower: np.ndarray | None = None) -> None:
        """Rows ``0 .. len(refs) - 1`` of a block (``r_ids`` local to it), below the rows so far."""
        self.rows.append(r_ids + self.count)
        self.cols.append(c_ids)
        self.vals.append(np.asarray(vals, dtype=np.float64))
        self.kinds.append(np.full(refs.size, kind, dtype=np.int64))
        self.refs.append(refs.astype(np.int64))
        self.lower.append(np.full(refs.size, -np.inf) if lower is None
                          else lower.astype(np.float64))
        self.upper.append(upper.astype(np.float64))
        self.count += refs.size

    def add_at(self, keys: np.ndarray, num_keys: int, ent_key: np.ndarray, ent_col: np.ndarray,
               vals: np.ndarray, kind: int, upper: np.ndarray) -> None:
        """One row per capacity key of ``keys`` (ascending) over the entries that fall on one."""
        at = np.full(num_keys, -1, dtype=np.int64)
        at[keys] = np.arange(keys.size)
        mask = at[ent_key] >= 0
        self.add(at[ent_key][mask], ent_col[mask], vals[mask], kind, keys, upper)


def _groups(inst: Instance, aggregate: bool) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """Representative job of each group and the groups' members."""
    n = inst.num_jobs
    if not aggregate or n == 0:
        return np.arange(n, dtype=np.int64), tuple(np.array([j]) for j in range(n))
    cols = [inst.gpus, inst.durations, inst.releases, inst.deadlines, inst.priorities]
    if uses_resources(inst):  # version 3: equal shares, models, CPU and memory too
        res = resources(inst)
        cols += [res.gpu_milli, res.job_cpu, res.job_memory, *res.eligible.T]
    key = np.stack(cols, axis=1).astype(np.float64)
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(first, kind="stable")  # groups in order of their first job
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    gid = rank[inverse]
    by_group = np.argsort(gid, kind="stable")
    bounds = np.searchsorted(gid[by_group], np.arange(order.size + 1))
    members = tuple(by_group[bounds[k] : bounds[k + 1]] for k in range(order.size))
    return first[order].astype(np.int64), members


def _columns(
    inst: Instance, model: Capacity, rep: np.ndarray, max_columns: int, max_placements: int,
    exempt: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[tuple[int, ...]], int]:
    """Columns ``(group, start, placement)``, sorted so, where the job fits the pool alone
    (the groups ``exempt`` at every start).

    Returns the three column arrays, the placements (the one-node ones first,
    by node) and the number of candidate columns.
    """
    places = job_placements(inst, max_placements)
    placements: list[tuple[int, ...]] = [(k,) for k in range(model.num_nodes)]
    place_id = {q: k for k, q in enumerate(placements)}
    group_places = []
    for j in rep.tolist():
        for q in places[j]:
            if q not in place_id:
                place_id[q] = len(placements)
                placements.append(q)
        group_places.append(sorted(place_id[q] for q in places[j]))
    npl = np.array([len(q) for q in group_places], dtype=np.int64)
    ng = rep.size
    g = inst.gpus[rep] if ng else np.zeros(0, dtype=np.int64)
    p = inst.durations[rep] if ng else np.zeros(0, dtype=np.int64)
    r = inst.releases[rep] if ng else np.zeros(0, dtype=np.int64)
    end = inst.deadlines[rep] if ng else np.zeros(0, dtype=np.int64)
    n_starts = np.maximum(0, end - p - r + 1)
    candidates = int((n_starts * npl).sum())
    if candidates > max_columns:
        raise ValueError(
            f"max_columns: the model of {inst.name!r} has {candidates} columns, over "
            f"max_columns={max_columns}; raise it or coarsen the instance"
        )
    cap = model.pool
    # candidate (group, start) pairs for every start in [r, end - p]
    offsets = np.concatenate([[0], np.cumsum(n_starts)])
    col_group = np.repeat(np.arange(ng, dtype=np.int64), n_starts)
    col_start = np.arange(int(n_starts.sum()), dtype=np.int64) - np.repeat(offsets[:-1], n_starts)
    col_start += np.repeat(r, n_starts)
    # drop starts where the job alone exceeds the pool on some slot
    col_g, col_p = g[col_group], p[col_group]
    keep = np.ones(col_group.size, dtype=bool)
    for gv in np.unique(g):
        if gv <= cap.min():
            continue
        sel = col_g == gv
        ok = np.concatenate([[0], np.cumsum(cap >= gv)])
        s = col_start[sel]
        keep[sel] = (ok[s + col_p[sel]] - ok[s]) == col_p[sel]
    if exempt is not None:
        keep |= exempt[col_group]
    col_group, col_start = col_group[keep], col_start[keep]
    ids = np.array([i for q in group_places for i in q], dtype=np.int64)
    ptr = np.concatenate([[0], np.cumsum(npl)])
    if np.all(npl == 1):
        return col_group, col_start, ids[col_group], placements, candidates
    # each group's pairs times its placements, placement-major
    m = np.bincount(col_group, minlength=ng)
    first = np.concatenate([[0], np.cumsum(m)])
    cnt = m * npl
    out = np.repeat(np.arange(ng, dtype=np.int64), cnt)
    w = np.arange(int(cnt.sum()), dtype=np.int64) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    mm = m[out]
    return (out, col_start[first[out] + w % mm], ids[ptr[out] + w // mm], placements,
            candidates)


def _place_array(placements: Sequence[tuple[int, ...]], width: int) -> np.ndarray:
    """The placements' node positions as an int64 array, ``-1`` padded to ``width``."""
    out = np.full((len(placements), width), -1, dtype=np.int64)
    for i, q in enumerate(placements):
        out[i, : len(q)] = q
    return out


def _ro(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a
