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
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
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
    cap_inst, place_inst = relaxed_views(inst, relax)
    slotted = relax == "exact" and shares_gpus(inst)
    fluid = relax != "exact" and shares_gpus(inst)
    if reserved is not None and slotted:
        raise ValueError(f"reserved: instance {inst.name!r} has shared jobs; GPUs withheld by "
                         "fixed jobs are particular GPUs, which the count model does not say "
                         "(give fixed=)")
    model = capacity(cap_inst, reservation)
    T, K, n_jobs = inst.horizon, model.num_nodes, inst.num_jobs
    kind_of = node_kinds(place_inst)
    if fixed is not None:
        if reserved is not None or relax != "exact" or not inst.has_nodes:
            raise ValueError("fixed: only for the exact model of an instance with nodes, "
                             "in place of reserved")
        fixed.check(model.sizes, T)
        reserved = fixed.busy(model.sizes)
        kind_of = [(None if kind_of is None else kind_of[k], fixed.signature(k))
                   for k in range(K)]
    free = offered_gpus(model, reserved)
    classes = node_classes(model.sizes, free, kind_of)
    reduce = symmetry != "none" and any(c.size > 1 for c in classes)
    rep, members = _groups(inst, aggregate and not (reduce and symmetry == "rows"))
    size = np.array([m.size for m in members], dtype=np.int64)
    shared = resources(inst).shared[rep] if slotted else np.zeros(rep.size, dtype=bool)
    # with fixed use a share may join a GPU the fixed jobs keep busy, where the pool has no room
    col_group, col_start, col_place, placements, candidates = _columns(
        place_inst, model, rep, max_columns, max_placements,
        shared if fixed is not None else None)
    width = max(inst.max_span, *map(len, placements))
    place_nodes = _place_array(placements, width)
    dropped: dict[str, int] = {"reserved": 0, "symmetry": 0}
    withheld = reserved is not None or reservation == "peak"
    for why, on in (("reserved", withheld), ("symmetry", reduce)):
        if on and col_group.size:
            keep = (fits_offered(place_inst, model, free, rep[col_group], col_start,
                               place_nodes[col_place]) if why == "reserved" else
                    fixing_keeps(classes, place_nodes[col_place], col_group, members, n_jobs))
            if why == "reserved" and fixed is not None:
                keep |= shared[col_group]  # a share may join a GPU fixed shares keep busy
            dropped[why] = int(col_group.size - keep.sum())
            col_group, col_start, col_place = col_group[keep], col_start[keep], col_place[keep]
    place_gpu = np.full(len(placements), -1, dtype=np.int64)
    if slotted:
        # with fixed use, the slots are the GPU indices themselves (every GPU, no relabelling)
        slots = model.node_cap.astype(np.int64) if fixed is not None else free.min(axis=1)
        col_group, col_start, col_place, placements, place_gpu = gpu_slots(
            col_group, col_start, col_place, placements, members, shared, slots,
            symmetry != "none" and fixed is None, n_jobs)
        place_nodes = _place_array(placements, width)
        if fixed is not None and col_group.size:
            keep = room_on_gpus(fixed, place_nodes[col_place, 0], place_gpu[col_place], col_start,
                                inst.durations[rep][col_group],
                                resources(inst).gpu_milli[rep][col_group])
            dropped["reserved"] += int(col_group.size - keep.sum())
            col_group, col_start, col_place = col_group[keep], col_start[keep], col_place[keep]
    n = col_group.size
    g = inst.gpus[rep] if rep.size else np.zeros(0, dtype=np.int64)
    col_p = inst.durations[rep][col_group] if rep.size else g[:0]
    # a group's GPUs in the pool and node rows: g_j, or the fluid amount a_j on a relaxation
    amount = gpu_amounts(inst)[rep] if fluid and rep.size else g
    col_a = amount[col_group]

    # capacity entries (column, key, GPUs): key t is the pool at slot t, (1 + k) T + t node k;
    # a shared column has none of its own (its busy columns have them)
    own = place_gpu[col_place] < 0
    xc = np.arange(n, dtype=np.int64) if own.all() else np.flatnonzero(own)
    idx, slot = runs(col_start[xc], col_p[xc])
    cover = xc[idx]
    max_load = pool_load(T, col_group, col_start, col_p, amount * size)
    nodes = place_nodes[col_place]
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

    sym_pairs = np.zeros((0, 2), dtype=np.int64)
    sym_blocks: list[tuple[np.ndarray, ...]] = []
    if reduce and symmetry == "rows" and n:
        sym_pairs, sym_blocks = order_rows(classes, nodes, rep[col_group], n_jobs)
    n_sum = sym_pairs.shape[0]
    busy = np.zeros((0, 2), dtype=np.int64)
    cap_ent: tuple[np.ndarray, ...] = (ent_col, ent_key, ent_coef)
    if slotted and n:
        milli = resources(inst).gpu_milli[rep][col_group]
        busy, milli_rows, busy_ent = busy_columns(col_place, col_start, col_p, milli, place_gpu,
                                                  place_nodes[:, 0], T, n + n_sum)
        cap_ent = tuple(np.concatenate([a, b]) for a, b in zip(cap_ent, busy_ent))
    nb = busy.shape[0]
    # a busy GPU of the fixed jobs: counted in reserved already, its room 1000 - f
    f_busy = (fixed.gpu_milli[place_nodes[busy[:, 0], 0], place_gpu[busy[:, 0]], busy[:, 1]]
              if fixed is not None and nb else np.zeros(nb, dtype=np.int64))

    rows = _Rows()
    # assignment rows, only where a group has more than one column (or copies)
    ncols_group = np.bincount(col_group, minlength=rep.size)
    assign_groups = np.flatnonzero((ncols_group > 1) | ((ncols_group > 0) & (size > 1)))
    arow = np.full(rep.size, -1, dtype=np.int64)
    arow[assign_groups] = np.arange(assign_groups.size)
    a_mask = arow[col_group] >= 0
    rows.add(arow[col_group][a_mask], np.flatnonzero(a_mask), np.ones(int(a_mask.sum())),
             ROW_ASSIGN, assign_groups, size[assign_groups])
    keys = np.flatnonzero(binding)
    rows.add_at(keys, binding.size, cap_ent[1], cap_ent[0], cap_ent[2], ROW_CAPACITY,
                cap_key[keys])
    if cliques and n:
        big = 2 * ent_coef > cap_key[ent_key]
        big_count = np.bincount(ent_key[big], minlength=binding.size)  # columns, an over-count
        # a clique row helps only where two or more big groups can meet
        big_groups = np.zeros(binding.size, dtype=np.int64)
        pairs = np.unique(np.stack([ent_key[big], col_group[ent_col][big]]), axis=1)
        np.add.at(big_groups, pairs[0], 1)
        q_keys = np.flatnonzero((big_groups >= 2) & (big_count > 0) & binding)
        at = np.flatnonzero(big)
        rows.add_at(q_keys, binding.size, ent_key[at], ent_col[at], np.ones(at.size),
                    ROW_CLIQUE, np.ones(q_keys.size))
    integral = ent_coef == np.floor(ent_coef) if fluid else np.ones(ent_coef.size, dtype=bool)
    for d in divisors if n else ():
        # a row only where it is not the capacity row over d, and not empty
        at = np.flatnonzero((binding & (cap_key % d > 0))[ent_key] & integral)
        coef = rounded_coefficients(ent_coef[at], cap_key[ent_key[at]], d)
        at, coef = at[coef > 0], coef[coef > 0]
        r_keys = np.unique(ent_key[at])
        rows.add_at(r_keys, binding.size, ent_key[at], ent_col[at], coef, ROW_ROUNDED,
                    cap_key[r_keys] // d)
    if nb:
        rows.add(milli_rows[0], milli_rows[1], milli_rows[2], ROW_GPU,
                 np.arange(nb, dtype=np.int64),
                 np.where(f_busy > 0, FULL_GPU_MILLI - f_busy, 0).astype(np.float64))
    if relax in ("exact", "fluid") and uses_resources(inst) and n:
        kind = {"cpu": ROW_CPU, "memory": ROW_MEMORY}
        used = None if fixed is None else {"cpu": fixed.cpu, "memory": fixed.memory}
        for name, r_keys, e_key, e_col, e_val, upper in resource_rows(
                inst, rep, col_group, col_start, col_p, nodes, size, model.multi, used):
            rows.add_at(r_keys, K * T, e_key, e_col, e_val, kind[name], upper)
    for r_ids, c_ids, vals, kinds, refs, lower, upper in sym_blocks:
        rows.add(r_ids, c_ids, vals, int(kinds[0]), refs, upper, lower)

    A = sp.csc_matrix((np.concatenate(rows.vals), (np.concatenate(rows.rows),
                                                    np.concatenate(rows.cols))),
                      shape=(rows.count, n + n_sum + nb))
    A.sum_duplicates()
    A.sort_indices()
    kinds = np.concatenate(rows.kinds)
    stats: dict[str, Any] = {
        "build_s": time.perf_counter() - t0,
        "candidate_columns": candidates,
        "columns_dropped_capacity": int(candidates - n - sum(dropped.values())),
        "columns_dropped_symmetry": dropped["symmetry"],
        "columns_dropped_reserved": dropped["reserved"],
        "groups": int(rep.size),
        "aggregated_jobs": int(n_jobs - rep.size),
        "placements": len(placements),
        "classes": len(classes),
        "capacity_rows": int(keys.size),
        "node_rows": int(np.count_nonzero(keys >= T)),
        "capacity_rows_dropped": int(np.count_nonzero(max_load > 0) + np.count_nonzero(node_max > 0)
                                     - keys.size),
        "assignment_rows": int(assign_groups.size),
        "clique_rows": int(np.count_nonzero(kinds == ROW_CLIQUE)),
        "rounded_rows": int(np.count_nonzero(kinds == ROW_ROUNDED)),
        "symmetry_rows": int(np.count_nonzero(kinds == ROW_SYM)),
    }
    if uses_resources(inst) or relax != "exact" or reservation != "curve":
        stats.update(relax=relax, reservation=reservation, busy_columns=nb,
                     gpu_rows=int(np.count_nonzero(kinds == ROW_GPU)),
                     cpu_rows=int(np.count_nonzero(kinds == ROW_CPU)),
                     memory_rows=int(np.count_nonzero(kinds == ROW_MEMORY)))
        if slotted:  # the shared columns are counted among those dropped otherwise
            stats["columns_dropped_capacity"] = None
    empty = np.zeros(0, dtype=np.int64)
    form = Formulation(
        instance=inst,
        c=_ro(np.concatenate([inst.job_values[rep][col_group] if n else np.zeros(0),
                              np.zeros(n_sum + nb)])),
        A=A,
        row_lower=_ro(np.concatenate(rows.lower)),
        row_upper=_ro(np.concatenate(rows.upper)),
        col_lower=_ro(np.zeros(n + n_sum + nb)),
        col_upper=_ro(np.concatenate([size[col_group].astype(np.float64), np.full(n_sum, np.inf),
                                      (f_busy == 0).astype(np.float64)])),
        integrality=_ro(np.concatenate([np.ones(n, dtype=np.int64),
                                        np.zeros(n_sum, dtype=np.int64),
                                        np.ones(nb, dtype=np.int64)])),
        col_job=_ro(rep[col_group] if n else empty),
        col_start=_ro(col_start),
        col_group=_ro(col_group),
        col_place=_ro(col_place),
        groups=tuple(_ro(m) for m in members),
        placements=tuple(placements),
        place_nodes=_ro(place_nodes),
        node_free=_ro(free),
        classes=tuple(_ro(c) for c in classes),
        symmetry=symmetry,
        row_kind=_ro(kinds),
        row_ref=_ro(np.concatenate(rows.refs)),
        sym_pairs=_ro(sym_pairs),
        stats=stats,
        place_gpu=_ro(place_gpu),
        busy=_ro(busy),
        relax=relax,
        gpu_fixed=fixed is not None and slotted,
    )
    logger.debug("%s", form.summary())
    return form


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
