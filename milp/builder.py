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

import numpy as np
import scipy.sparse as sp

from instances import Instance
from instances.capacity import DEFAULT_MAX_PLACEMENTS, Capacity, capacity, job_placements

from .formulation import (
    DEFAULT_MAX_COLUMNS,
    DEFAULT_ROUNDING,
    ROW_ASSIGN,
    ROW_CAPACITY,
    ROW_CLIQUE,
    ROW_ROUNDED,
    ROW_SYM,
    Formulation,
    check_rounding,
    rounded_coefficients,
)
from .symmetry import SYMMETRY, fixing_keeps, node_classes, order_rows

__all__ = ["build"]

logger = logging.getLogger(__name__)


def build(
    inst: Instance, max_columns: int = DEFAULT_MAX_COLUMNS, *, aggregate: bool = True,
    cliques: bool = False, rounding: Sequence[int] = DEFAULT_ROUNDING, symmetry: str = "fix",
    max_placements: int = DEFAULT_MAX_PLACEMENTS, reserved: np.ndarray | None = None,
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
        capacity row divided by ``d`` (:func:`milp.formulation.rounded_coefficients`),
        valid for every integer schedule. With ``C = 9`` and ``d = 2``:
        ``4 x8 + 2 x4 + x2 <= 4`` over the 8-, 4- and 2-GPU jobs covering the slot.
    symmetry
        Handling of identical nodes, one of :data:`milp.symmetry.SYMMETRY`
        (nothing to handle on a flat pool).
    max_placements
        Largest number of whole-node sets of one multi-node job.
    reserved
        ``(num_nodes, horizon)`` integers (a flat pool: one row): GPUs of each
        node withheld in each slot, ``0 <= reserved[k, t] <= gpus_k``, for
        jobs kept fixed outside the model, as in the windows of
        :func:`matheuristics.lns.lns_improve`. A column then needs its room
        on its nodes over its run (a multi-node job: its nodes withheld
        nowhere), and nodes are identical only with equal rows. The pool's
        own capacity stays the instance's ``G - sum_s d_s[t]``.

    Raises
    ------
    ValueError
        For a bad option, or a model of more than ``max_columns`` columns.
    """
    t0 = time.perf_counter()
    divisors = check_rounding(rounding)
    if symmetry not in SYMMETRY:
        raise ValueError(f"symmetry: must be one of {list(SYMMETRY)}, got {symmetry!r}")
    model = capacity(inst, "curve")
    T, K, n_jobs = inst.horizon, model.num_nodes, inst.num_jobs
    free = _node_free(model, reserved)
    classes = node_classes(model.sizes, free)
    reduce = symmetry != "none" and any(c.size > 1 for c in classes)
    rep, members = _groups(inst, aggregate and not (reduce and symmetry == "rows"))
    size = np.array([m.size for m in members], dtype=np.int64)
    col_group, col_start, col_place, placements, candidates = _columns(
        inst, model, rep, max_columns, max_placements)
    place_nodes = np.full((len(placements), max(inst.max_span, *map(len, placements))), -1,
                          dtype=np.int64)
    for i, q in enumerate(placements):
        place_nodes[i, : len(q)] = q
    dropped: dict[str, int] = {"reserved": 0, "symmetry": 0}
    for why, on in (("reserved", reserved is not None), ("symmetry", reduce)):
        if on and col_group.size:
            keep = (_fits_free(inst, model, free, rep[col_group], col_start,
                               place_nodes[col_place]) if why == "reserved" else
                    fixing_keeps(classes, place_nodes[col_place], col_group, members, n_jobs))
            dropped[why] = int(col_group.size - keep.sum())
            col_group, col_start, col_place = col_group[keep], col_start[keep], col_place[keep]
    n = col_group.size
    g = inst.gpus[rep] if rep.size else np.zeros(0, dtype=np.int64)
    col_g, col_p = g[col_group], inst.durations[rep][col_group] if rep.size else g[:0]

    # capacity entries (column, key, GPUs): key t is the pool at slot t, (1 + k) T + t node k
    cover, slot = _runs(col_start, col_p)
    max_load = _pool_load(T, col_group, col_start, col_p, g * size)
    nodes = place_nodes[col_place]
    may = np.asarray((free < model.pool).any(axis=1))  # elsewhere the pool row implies it
    node_load = np.zeros((K, T), dtype=np.int64)
    ent_col, ent_key, ent_coef = cover, slot, col_g[cover]
    if may.any() and n:
        m_col, m_slot = np.nonzero((nodes >= 0) & may[np.maximum(nodes, 0)])
        m_node = nodes[m_col, m_slot]
        m_coef = np.where(model.multi[rep[col_group[m_col]]], model.sizes[m_node], col_g[m_col])
        idx, t = _runs(col_start[m_col], col_p[m_col])
        ent_col = np.concatenate([cover, m_col[idx]])
        ent_key = np.concatenate([slot, (1 + m_node[idx]) * T + t])
        ent_coef = np.concatenate([col_g[cover], m_coef[idx]])
        node_load = _node_load(K, T, col_group[m_col] * K + m_node, col_start[m_col],
                               col_p[m_col], m_coef * size[col_group[m_col]])
    cap_key = np.concatenate([model.pool, free.reshape(-1)])
    binding = np.concatenate([max_load > model.pool,
                              ((node_load > free) & (free < model.pool)).reshape(-1)])

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
    rows.add_at(keys, binding.size, ent_key, ent_col, ent_coef, ROW_CAPACITY, cap_key[keys])
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
    for d in divisors if n else ():
        # a row only where it is not the capacity row over d, and not empty
        at = np.flatnonzero((binding & (cap_key % d > 0))[ent_key])
        coef = rounded_coefficients(ent_coef[at], cap_key[ent_key[at]], d)
        at, coef = at[coef > 0], coef[coef > 0]
        r_keys = np.unique(ent_key[at])
        rows.add_at(r_keys, binding.size, ent_key[at], ent_col[at], coef, ROW_ROUNDED,
                    cap_key[r_keys] // d)
    sym_pairs = np.zeros((0, 2), dtype=np.int64)
    if reduce and symmetry == "rows" and n:
        sym_pairs, blocks = order_rows(classes, nodes, rep[col_group], n_jobs)
        for r_ids, c_ids, vals, kinds, refs, lower, upper in blocks:
            rows.add(r_ids, c_ids, vals, int(kinds[0]), refs, upper, lower)
    n_sum = sym_pairs.shape[0]

    A = sp.csc_matrix((np.concatenate(rows.vals), (np.concatenate(rows.rows),
                                                    np.concatenate(rows.cols))),
                      shape=(rows.count, n + n_sum))
    A.sum_duplicates()
    A.sort_indices()
    kinds = np.concatenate(rows.kinds)
    stats = {
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
        "capacity_rows_dropped": int(np.count_nonzero(max_load > 0) + np.count_nonzero(node_load > 0)
                                     - keys.size),
        "assignment_rows": int(assign_groups.size),
        "clique_rows": int(np.count_nonzero(kinds == ROW_CLIQUE)),
        "rounded_rows": int(np.count_nonzero(kinds == ROW_ROUNDED)),
        "symmetry_rows": int(np.count_nonzero(kinds == ROW_SYM)),
    }
    empty = np.zeros(0, dtype=np.int64)
    form = Formulation(
        instance=inst,
        c=_ro(np.concatenate([inst.job_values[rep][col_group] if n else np.zeros(0),
                              np.zeros(n_sum)])),
        A=A,
        row_lower=_ro(np.concatenate(rows.lower)),
        row_upper=_ro(np.concatenate(rows.upper)),
        col_lower=_ro(np.zeros(n + n_sum)),
        col_upper=_ro(np.concatenate([size[col_group].astype(np.float64), np.full(n_sum, np.inf)])),
        integrality=_ro(np.concatenate([np.ones(n, dtype=np.int64),
                                        np.zeros(n_sum, dtype=np.int64)])),
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
    key = np.stack(
        [inst.gpus, inst.durations, inst.releases, inst.deadlines, inst.priorities], axis=1
    ).astype(np.float64)
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
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[tuple[int, ...]], int]:
    """Columns ``(group, start, placement)``, sorted so, where the job fits the pool alone.

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


def _node_free(model: Capacity, reserved: np.ndarray | None) -> np.ndarray:
    """``(K, T)`` GPUs each node offers per slot: its capacity less ``reserved`` (checked)."""
    K, T = model.num_nodes, model.horizon
    full = np.repeat(model.node_cap[:, None], T, axis=1).astype(np.int64)
    if reserved is None:
        return full
    arr = np.asarray(reserved)
    if arr.shape != (K, T) or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"reserved: must be integers of shape ({K}, {T}), got "
                         f"{arr.dtype} of shape {arr.shape}")
    if arr.size and (arr.min() < 0 or np.any(arr > full)):
        k, t = np.argwhere((arr < 0) | (arr > full))[0].tolist()
        raise ValueError(f"reserved: node {k} slot {t} withholds {int(arr[k, t])} GPUs, "
                         f"not in [0, {int(full[k, t])}]")
    return full - arr.astype(np.int64)


def _fits_free(
    inst: Instance, model: Capacity, free: np.ndarray, col_job: np.ndarray,
    col_start: np.ndarray, nodes: np.ndarray,
) -> np.ndarray:
    """Per column: its job alone fits what each of its nodes offers over its run.

    ``nodes`` is each column's node positions (``-1`` padded). A one-node job
    needs ``g_j`` GPUs there, a multi-node job each of its nodes in full.
    """
    m_col, m_slot = np.nonzero(nodes >= 0)
    m_node = nodes[m_col, m_slot]
    job = col_job[m_col]
    need = np.where(model.multi[job], model.sizes[m_node], inst.gpus[job])
    idx, t = _runs(col_start[m_col], inst.durations[job])
    short = free[m_node[idx], t] < need[idx]
    keep = np.ones(col_job.size, dtype=bool)
    keep[m_col[idx[short]]] = False
    return keep


def _runs(starts: np.ndarray, lens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For runs ``[starts[i], starts[i] + lens[i])``: each slot's run index and the slot."""
    idx = np.repeat(np.arange(starts.size, dtype=np.int64), lens)
    first = np.concatenate([[0], np.cumsum(lens)])[:-1]
    return idx, np.arange(idx.size, dtype=np.int64) - np.repeat(first, lens) + starts[idx]


def _pool_load(T: int, col_group: np.ndarray, col_start: np.ndarray, col_p: np.ndarray,
               load: np.ndarray) -> np.ndarray:
    """Largest load a slot could see: every group covering it at full size (``load`` each)."""
    K = load.size
    has = np.zeros(K, dtype=bool)
    has[col_group] = True
    lo_s = np.full(K, T, dtype=np.int64)
    hi_e = np.zeros(K, dtype=np.int64)
    np.minimum.at(lo_s, col_group, col_start)
    np.maximum.at(hi_e, col_group, col_start + col_p)
    diff = np.zeros(T + 1, dtype=np.int64)
    np.add.at(diff, lo_s[has], load[has])
    np.add.at(diff, hi_e[has], -load[has])
    return np.cumsum(diff)[:T]


def _node_load(K: int, T: int, pair: np.ndarray, lo: np.ndarray, dur: np.ndarray,
               coef: np.ndarray) -> np.ndarray:
    """``(K, T)`` largest load a node could see: each (group, node) pair once, over its span."""
    up, inv = np.unique(pair, return_inverse=True)
    first = np.full(up.size, T, dtype=np.int64)
    last = np.zeros(up.size, dtype=np.int64)
    top = np.zeros(up.size, dtype=np.int64)
    np.minimum.at(first, inv, lo)
    np.maximum.at(last, inv, lo + dur)
    np.maximum.at(top, inv, coef)
    res = up % K
    diff = np.zeros(K * (T + 1), dtype=np.int64)
    np.add.at(diff, res * (T + 1) + first, top)
    np.add.at(diff, res * (T + 1) + last, -top)
    return np.cumsum(diff.reshape(K, T + 1), axis=1)[:, :T]


def _ro(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a
