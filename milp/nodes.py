"""The exact node model (the specification (docs/model.md)), built as arrays and solved by HiGHS.

One binary column per usable (job, placement, start): a job of at most the
largest node's GPUs chooses one node with room for it; a larger job chooses a
set of whole nodes whose GPUs sum to exactly ``g_j``. Rows:

* assignment: each job runs at most once (``sum x <= 1``);
* node capacity, per node and slot: the batch GPUs placed there (``g_j`` for
  a one-node job, the node's GPUs for a multi-node job) at most the node's
  GPUs, less what ``reserved`` withholds there (:func:`build_nodes`: jobs
  kept fixed outside the model, as in the LNS windows);
* pool, per slot: ``sum_j g_j x <= G - sum_s d_s[t]`` (inference is served by
  any free GPU);
* the rounded pool and node rows of :func:`milp.formulation.rounded_coefficients`
  (valid for every integer schedule), as in the flat model.

A row is written only where the largest load the columns covering it could
put there exceeds its capacity, as in :func:`milp.build`.

Symmetry among identical nodes (nodes of equal GPUs are interchangeable in
the model: permuting them maps schedules to schedules of the same value).
Within each class of equal nodes, every schedule can be relabelled so that
the nodes are ordered by the first job (in instance order) placed on them
(unused nodes last). ``symmetry`` keeps only such canonical schedules:

* ``"fix"`` (default) drops the columns no canonical schedule uses: job
  ``j`` can be on the class's node of rank ``r`` only if ``r`` is below the
  number of class nodes the jobs up to ``j`` can occupy together;
* ``"rows"`` adds to the fixing, for each class rank ``r`` and job
  ``j``, the row "``j`` on node ``r + 1`` only if some job ``i <= j`` is on
  node ``r``", through continuous running sums ``z[j, r] = sum_{i <= j} y[i, r]``
  (``y`` a job's columns on a node), so the rows stay linear in size. Exact,
  but slower than the fixing alone on every instance measured;
* ``"none"``: no reduction (HiGHS's own symmetry detection, on by default,
  is what remains).

Each keeps at least one optimal schedule of every orbit, so the optimum is
unchanged; warm starts are relabelled to canonical form before they are
passed (:meth:`NodeFormulation.canonical`). The figures are in
``docs/nodes-milp.md``.

:func:`solve_nodes` is what :func:`milp.solve` runs on an instance with
nodes. Its upper bound is the smallest of the node model's dual and LP
bounds, the sum of the values of the jobs that have a column, and the flat
model's bound (the flat model is a relaxation: :func:`milp.build` ignores
nodes), from a flat solve within a share of the time limit.

Over 500 lines because the node model's builder, its two symmetry modes, its HiGHS solve and the flat-bound assembly are one model; the builder and the solve are the candidates to split.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from instances import InfeasibleScheduleError, Instance, Result, Schedule, Status, evaluate
from instances.capacity import DEFAULT_MAX_PLACEMENTS, job_placements

from .formulation import DEFAULT_MAX_COLUMNS, DEFAULT_ROUNDING, rounded_coefficients
from .solver import _check_args, _tolerance

__all__ = [
    "DEFAULT_MAX_PLACEMENTS",
    "FLAT_SHARE",
    "SYMMETRY",
    "NodeFormulation",
    "NodeRaw",
    "PriceOfTopology",
    "build_nodes",
    "job_placements",
    "node_classes",
    "place_schedule",
    "price_of_topology",
    "solve_nodes",
]

logger = logging.getLogger(__name__)

SYMMETRY: tuple[str, ...] = ("fix", "rows", "none")
"""Symmetry handling among identical nodes (see the module notes)."""

FLAT_SHARE = 0.1
"""Share of :func:`solve_nodes`'s time limit the flat solve may take (capped at 10 s)."""

ROW_ASSIGN, ROW_CAPACITY, ROW_ROUNDED, ROW_SYM_SUM, ROW_SYM = 0, 1, 2, 3, 4
"""Row kinds in :attr:`NodeFormulation.row_kind`."""


def node_classes(inst: Instance, reserved: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """Positions of the nodes of each class of identical nodes (equal GPUs), ascending.

    With ``reserved`` (GPUs withheld per node and slot, see :func:`build_nodes`)
    nodes are identical only when their withheld rows are equal too. Classes
    are ordered by their first node's position.
    """
    sizes = inst.node_gpus
    seen: dict[tuple[int, bytes], list[int]] = {}
    for k, m in enumerate(sizes.tolist()):
        row = b"" if reserved is None else np.ascontiguousarray(reserved[k]).tobytes()
        seen.setdefault((int(m), row), []).append(k)
    return tuple(np.array(v, dtype=np.int64) for v in seen.values())


@dataclass(frozen=True, eq=False)
class NodeFormulation:
    """The node MILP ``max c x  s.t.  row_lower <= A x <= row_upper``, as arrays.

    The first :attr:`num_x` columns are the binaries ``x[j, placement, start]``,
    sorted by job, then placement, then start; the remaining columns are the
    continuous running sums of the symmetry rows.

    Attributes
    ----------
    instance
        The instance (with nodes).
    c, A, row_lower, row_upper, col_lower, col_upper, integrality
        The model, in :class:`milp.Formulation`'s layout (``A`` a CSC matrix).
    col_job, col_start, col_place
        Job, start slot and placement index of each binary column.
    placements
        Node positions of each placement index (ascending).
    place_nodes
        :attr:`placements` as an int64 array, ``-1`` padded to ``instance.max_span``.
    classes
        Node positions of each class of identical nodes.
    symmetry
        The symmetry handling the model was built with.
    row_kind, row_ref
        Kind of each row (assignment, capacity, rounded, symmetry sum, symmetry
        order) and its job or ``resource * horizon + slot`` (resource
        ``num_nodes`` is the pool).
    sym_pairs
        For each running-sum column ``num_x + i``: ``(job, node)``, the sum
        of ``y`` over the jobs up to that job (in the class's order) on that node.
    stats
        Build figures.
    """

    instance: Instance
    c: np.ndarray
    A: sp.csc_matrix
    row_lower: np.ndarray
    row_upper: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    integrality: np.ndarray
    col_job: np.ndarray
    col_start: np.ndarray
    col_place: np.ndarray
    placements: tuple[tuple[int, ...], ...]
    place_nodes: np.ndarray
    classes: tuple[np.ndarray, ...]
    symmetry: str
    row_kind: np.ndarray
    row_ref: np.ndarray
    sym_pairs: np.ndarray
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def num_cols(self) -> int:
        """Number of columns (binaries and running sums)."""
        return int(self.c.shape[0])

    @property
    def num_x(self) -> int:
        """Number of binary columns."""
        return int(self.col_job.shape[0])

    @property
    def num_rows(self) -> int:
        """Number of rows."""
        return int(self.A.shape[0])

    @property
    def nnz(self) -> int:
        """Nonzeros of :attr:`A`."""
        return int(self.A.nnz)

    @property
    def trivial_bound(self) -> float:
        """Value of running every job that has a column: a crude upper bound."""
        return float(self.instance.job_values[np.unique(self.col_job)].sum()) if self.num_x else 0.0

    def summary(self) -> str:
        """One line: sizes, symmetry handling and build time."""
        return (
            f"{self.instance.name}: {self.num_x} binaries + {self.num_cols - self.num_x} sums, "
            f"{self.num_rows} rows, {self.nnz} nonzeros, symmetry {self.symmetry}, built in "
            f"{self.stats.get('build_s', 0.0):.3f} s"
        )

    # ------------------------------------------------------- x <-> schedules
    def decode(self, x: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Start and placement arrays (``Schedule.from_array``'s) of a column vector (rounded)."""
        x = np.asarray(x, dtype=np.float64)[: self.num_x]
        inst = self.instance
        start = np.full(inst.num_jobs, -1, dtype=np.int64)
        place = np.full((inst.num_jobs, inst.max_span), -1, dtype=np.int64)
        on = np.flatnonzero(x > 0.5)
        start[self.col_job[on]] = self.col_start[on]
        place[self.col_job[on]] = self.place_nodes[self.col_place[on]]
        return start, place

    def canonical(self, start: np.ndarray, place: np.ndarray) -> np.ndarray:
        """The placement relabelled within each class so that the symmetry reduction keeps it.

        The nodes of a class are reordered by the first run job placed on
        them (instance order; unused nodes last, ties by position), which
        maps a feasible schedule to a feasible one of the same value.
        """
        start = np.asarray(start, dtype=np.int64)
        place = np.asarray(place, dtype=np.int64)
        K, n = self.instance.num_nodes, self.instance.num_jobs
        first = np.full(K, n, dtype=np.int64)
        for j in np.flatnonzero(start >= 0).tolist():
            for k in place[j][place[j] >= 0].tolist():
                first[k] = min(first[k], j)
        relabel = np.arange(K, dtype=np.int64)
        for members in self.classes:
            order = members[np.lexsort((members, first[members]))]
            relabel[order] = members  # the node of rank r takes the r-th position
        out = np.where(place >= 0, relabel[np.maximum(place, 0)], -1)
        out = np.sort(np.where(out >= 0, out, K), axis=1)
        return np.where(out < K, out, -1)

    def encode(self, start: np.ndarray, place: np.ndarray) -> np.ndarray:
        """Column vector of a schedule's arrays (running sums included).

        Raises
        ------
        ValueError
            If a run job has no column for its start and placement (call
            :meth:`canonical` first under a symmetry reduction).
        """
        start = np.asarray(start, dtype=np.int64)
        place = np.asarray(place, dtype=np.int64)
        index = {p: i for i, p in enumerate(self.placements)}
        T = self.instance.horizon + 1
        P = len(self.placements) + 1
        keys = (self.col_job * P + self.col_place) * T + self.col_start
        x = np.zeros(self.num_cols)
        for j in np.flatnonzero(start >= 0).tolist():
            p = index.get(tuple(int(k) for k in place[j] if k >= 0), -1)
            want = (j * P + p) * T + int(start[j])
            pos = int(np.searchsorted(keys, want))
            if p < 0 or pos >= keys.size or keys[pos] != want:
                name = self.instance.jobs[j].name
                raise ValueError(
                    f"start: job {name!r} at slot {int(start[j])} on nodes "
                    f"{[int(k) for k in place[j] if k >= 0]} has no column"
                )
            x[pos] = 1.0
        if self.sym_pairs.size:
            on = np.zeros((self.instance.num_jobs, self.instance.num_nodes))
            run = np.flatnonzero(start >= 0)
            for j in run.tolist():
                on[j, place[j][place[j] >= 0]] = 1.0
            cum = np.cumsum(on, axis=0)
            x[self.num_x :] = cum[self.sym_pairs[:, 0], self.sym_pairs[:, 1]]
        return x


def build_nodes(
    inst: Instance,
    max_columns: int = DEFAULT_MAX_COLUMNS,
    *,
    symmetry: str = "fix",
    rounding: Sequence[int] = DEFAULT_ROUNDING,
    max_placements: int = DEFAULT_MAX_PLACEMENTS,
    reserved: np.ndarray | None = None,
) -> NodeFormulation:
    """Build the node MILP of an instance with nodes as arrays.

    Parameters
    ----------
    inst
        An instance with nodes.
    max_columns
        Refuse models with more candidate columns than this.
    symmetry
        One of :data:`SYMMETRY` (see the module notes).
    rounding
        Divisors of the rounded capacity rows (as :func:`milp.build`).
    max_placements
        Largest number of whole-node sets of one multi-node job.
    reserved
        ``(num_nodes, horizon)`` integers: GPUs of each node withheld in each
        slot (``0 <= reserved[k, t] <= gpus_k``), for jobs kept
        fixed outside the model, as in the windows of
        :func:`matheuristics.lns.lns_improve`. Node ``k`` then offers
        ``gpus_k - reserved[k, t]`` at ``t``: a one-node job's column needs
        that much room over its run, a multi-node job's nodes must be
        withheld nowhere over its run, and nodes are identical for the
        symmetry handling only with equal rows. ``None``: nothing withheld.
        The pool's own capacity stays the instance's ``G - sum_s d_s[t]``.

    Raises
    ------
    ValueError
        For an instance without nodes, a bad option, or a model over ``max_columns``.
    """
    t0 = time.perf_counter()
    if inst.nodes is None:
        raise ValueError(f"inst: instance {inst.name!r} has no nodes; use milp.build")
    if symmetry not in SYMMETRY:
        raise ValueError(f"symmetry: must be one of {list(SYMMETRY)}, got {symmetry!r}")
    divisors = tuple(rounding) if isinstance(rounding, (tuple, list, np.ndarray)) else None
    if divisors is None or not all(
        isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 2 for d in divisors
    ):
        raise ValueError(f"rounding: must be a sequence of integers >= 2, got {rounding!r}")
    T, K, n_jobs = inst.horizon, inst.num_nodes, inst.num_jobs
    sizes = inst.node_gpus
    residual = _residual(inst, reserved)
    job_places = job_placements(inst, max_placements)
    placements: list[tuple[int, ...]] = [(k,) for k in range(K)]
    place_id: dict[tuple[int, ...], int] = {q: k for k, q in enumerate(placements)}
    for ps in job_places:
        for p in ps:
            if p not in place_id:
                place_id[p] = len(placements)
                placements.append(p)
    span = max(inst.max_span, max((len(p) for p in placements), default=1))
    place_nodes = np.full((len(placements), span), -1, dtype=np.int64)
    for i, p in enumerate(placements):
        place_nodes[i, : len(p)] = p

    g, p_, r, end = inst.gpus, inst.durations, inst.releases, inst.deadlines
    n_starts = np.maximum(0, end - p_ - r + 1) if n_jobs else np.zeros(0, dtype=np.int64)
    npl = np.array([len(ps) for ps in job_places], dtype=np.int64)
    candidates = int((n_starts * npl).sum())
    if candidates > max_columns:
        raise ValueError(
            f"max_columns: the node model of {inst.name!r} has {candidates} columns, over "
            f"max_columns={max_columns}; raise it or coarsen the instance"
        )
    cap = inst.batch_capacity("curve")
    ok_prefix: dict[int, np.ndarray] = {}

    # ---- columns: per job, the starts where it fits the pool alone, times its placements
    cj, cs, cp = [], [], []
    for j in range(n_jobs):
        if n_starts[j] == 0 or npl[j] == 0:
            continue
        s = np.arange(r[j], end[j] - p_[j] + 1, dtype=np.int64)
        gj = int(g[j])
        if gj > cap.min():
            if gj not in ok_prefix:
                ok_prefix[gj] = np.concatenate([[0], np.cumsum(cap >= gj)])
            ok = ok_prefix[gj]
            s = s[(ok[s + p_[j]] - ok[s]) == p_[j]]
        if s.size == 0:
            continue
        pids = np.sort(np.array([place_id[q] for q in job_places[j]], dtype=np.int64))
        cj.append(np.full(s.size * pids.size, j, dtype=np.int64))
        cp.append(np.repeat(pids, s.size))
        cs.append(np.tile(s, pids.size))
    col_job = np.concatenate(cj) if cj else np.zeros(0, dtype=np.int64)
    col_start = np.concatenate(cs) if cs else np.zeros(0, dtype=np.int64)
    col_place = np.concatenate(cp) if cp else np.zeros(0, dtype=np.int64)
    dropped_reserved = 0
    if reserved is not None and col_job.size:
        keep = _fits_residual(inst, residual, col_job, col_start, place_nodes[col_place])
        dropped_reserved = int(col_job.size - keep.sum())
        col_job, col_start, col_place = col_job[keep], col_start[keep], col_place[keep]

    # class of each node, rank inside it
    classes = node_classes(inst, reserved)
    node_class = np.zeros(K, dtype=np.int64)
    node_rank = np.zeros(K, dtype=np.int64)
    for ci, members in enumerate(classes):
        node_class[members] = ci
        node_rank[members] = np.arange(members.size)

    dropped_fix = 0
    if symmetry in ("fix", "rows") and col_job.size:
        # class nodes job j can occupy at once; running sum over jobs in instance order
        C = len(classes)
        pn = place_nodes[col_place]
        reach = np.zeros((n_jobs, C), dtype=np.int64)
        valid = pn >= 0
        cls = np.where(valid, node_class[np.maximum(pn, 0)], -1)
        per_col = np.stack([(cls == ci).sum(axis=1) for ci in range(C)], axis=1)
        np.maximum.at(reach, col_job, per_col)
        room = np.cumsum(reach, axis=0)  # class nodes the jobs up to j can occupy
        rank = np.where(valid, node_rank[np.maximum(pn, 0)], -1)
        lim = room[col_job[:, None], np.maximum(cls, 0)]
        keep = np.all(~valid | (rank < lim), axis=1)
        dropped_fix = int(col_job.size - keep.sum())
        col_job, col_start, col_place = col_job[keep], col_start[keep], col_place[keep]
    n = col_job.size
    col_g, col_p = g[col_job], p_[col_job]

    # ---- membership (column, node, GPUs it holds there)
    pn = place_nodes[col_place]
    m_col, m_slot = np.nonzero(pn >= 0)
    m_node = pn[m_col, m_slot]
    multi = inst.multi_node[col_job[m_col]] if n else np.zeros(0, dtype=bool)
    m_coef = np.where(multi, sizes[m_node], col_g[m_col])

    # ---- capacity entries: (column, resource * T + t, coefficient); resource K = pool
    def cover(cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lens = col_p[cols]
        idx = np.repeat(np.arange(cols.size, dtype=np.int64), lens)
        first = np.concatenate([[0], np.cumsum(lens)])[:-1]
        t = np.arange(idx.size, dtype=np.int64) - np.repeat(first, lens) + col_start[cols][idx]
        return idx, t

    idx, t = cover(m_col)
    e_col = [m_col[idx]]
    e_key = [m_node[idx] * T + t]
    e_coef = [m_coef[idx]]
    idx, t = cover(np.arange(n, dtype=np.int64))
    e_col.append(idx)
    e_key.append(K * T + t)
    e_coef.append(col_g[idx])
    ent_col, ent_key, ent_coef = (np.concatenate(a) for a in (e_col, e_key, e_coef))
    cap_key = np.concatenate([residual.reshape(-1), cap]).astype(np.int64)

    # largest load a (resource, slot) could see: each job once, over its columns' span
    pair = np.concatenate([col_job[m_col] * (K + 1) + m_node, col_job * (K + 1) + K])
    pair_lo = np.concatenate([col_start[m_col], col_start])
    pair_hi = pair_lo + np.concatenate([col_p[m_col], col_p])
    pair_coef = np.concatenate([m_coef, col_g])
    up, inv = np.unique(pair, return_inverse=True)
    lo = np.full(up.size, T, dtype=np.int64)
    hi = np.zeros(up.size, dtype=np.int64)
    pc = np.zeros(up.size, dtype=np.int64)
    np.minimum.at(lo, inv, pair_lo)
    np.maximum.at(hi, inv, pair_hi)
    np.maximum.at(pc, inv, pair_coef)
    res = up % (K + 1)
    diff = np.zeros((K + 1) * (T + 1), dtype=np.int64)
    np.add.at(diff, res * (T + 1) + lo, pc)
    np.add.at(diff, res * (T + 1) + hi, -pc)
    max_load = np.cumsum(diff.reshape(K + 1, T + 1), axis=1)[:, :T].reshape(-1)
    binding = max_load > cap_key

    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    kinds: list[np.ndarray] = []
    refs: list[np.ndarray] = []
    lower: list[np.ndarray] = []
    upper: list[np.ndarray] = []
    n_rows = 0

    def add_rows(
        r_ids: np.ndarray, c_ids: np.ndarray, v: np.ndarray, count: int, kind: int,
        ref: np.ndarray, lo_b: np.ndarray, up_b: np.ndarray,
    ) -> None:
        nonlocal n_rows
        rows.append(r_ids + n_rows)
        cols.append(c_ids)
        vals.append(v.astype(np.float64))
        kinds.append(np.full(count, kind, dtype=np.int64))
        refs.append(ref.astype(np.int64))
        lower.append(lo_b.astype(np.float64))
        upper.append(up_b.astype(np.float64))
        n_rows += count

    # assignment rows where a job has more than one column
    per_job = np.bincount(col_job, minlength=n_jobs)
    a_jobs = np.flatnonzero(per_job > 1)
    arow = np.full(n_jobs, -1, dtype=np.int64)
    arow[a_jobs] = np.arange(a_jobs.size)
    am = arow[col_job] >= 0
    add_rows(arow[col_job][am], np.flatnonzero(am), np.ones(int(am.sum())), a_jobs.size,
             ROW_ASSIGN, a_jobs, np.full(a_jobs.size, -np.inf), np.ones(a_jobs.size))

    # capacity rows
    keys = np.flatnonzero(binding)
    krow = np.full(binding.size, -1, dtype=np.int64)
    krow[keys] = np.arange(keys.size)
    em = krow[ent_key] >= 0
    add_rows(krow[ent_key][em], ent_col[em], ent_coef[em], keys.size, ROW_CAPACITY, keys,
             np.full(keys.size, -np.inf), cap_key[keys])
    for d in divisors if n else ():
        at = np.flatnonzero(em & (cap_key[ent_key] % d > 0))
        coef = rounded_coefficients(ent_coef[at], cap_key[ent_key[at]], d)
        at, coef = at[coef > 0], coef[coef > 0]
        rk = np.unique(ent_key[at])
        rrow = np.full(binding.size, -1, dtype=np.int64)
        rrow[rk] = np.arange(rk.size)
        add_rows(rrow[ent_key[at]], ent_col[at], coef, rk.size, ROW_ROUNDED, rk,
                 np.full(rk.size, -np.inf), cap_key[rk] // d)

    # symmetry rows: y[j, node r+1] <= z[j, node r], z[j, k] = sum_{i <= j} y[i, k]
    sym_pairs = np.zeros((0, 2), dtype=np.int64)
    n_sum = 0
    if symmetry == "rows" and n:
        y_job, y_node = col_job[m_col], m_node  # one entry per (column, node)
        pairs_list = []
        for members in classes:
            if members.size < 2:
                continue
            in_class = np.isin(y_node, members)
            E = np.unique(y_job[in_class])  # jobs with a column on the class, in order
            if E.size == 0:
                continue
            for rr in range(members.size - 1):
                pairs_list.append(np.stack([E, np.full(E.size, members[rr])], axis=1))
        if pairs_list:
            sym_pairs = np.concatenate(pairs_list)
            n_sum = sym_pairs.shape[0]
            zcol = n + np.arange(n_sum, dtype=np.int64)
            # sum rows: z[e] - z[e - 1] - y[E[e], k_r] = 0 (z[-1] = 0)
            key = sym_pairs[:, 1] * n_jobs + sym_pairs[:, 0]
            order = np.argsort(key)
            where = np.full(K * n_jobs, -1, dtype=np.int64)
            where[key] = np.arange(n_sum)
            prev = np.full(n_sum, -1, dtype=np.int64)
            sk = key[order]
            same = np.concatenate([[False], (sk[1:] // n_jobs) == (sk[:-1] // n_jobs)])
            prev[order[1:]] = np.where(same[1:], order[:-1], -1)
            ykey = y_node * n_jobs + y_job
            hit = where[ykey]
            ym = hit >= 0
            pm = prev >= 0
            add_rows(
                np.concatenate([np.arange(n_sum), np.flatnonzero(pm), hit[ym]]),
                np.concatenate([zcol, zcol[prev[pm]], m_col[ym]]),
                np.concatenate([np.ones(n_sum), -np.ones(int(pm.sum())), -np.ones(int(ym.sum()))]),
                n_sum, ROW_SYM_SUM, key, np.zeros(n_sum), np.zeros(n_sum),
            )
            # order rows: y[j, next node] - z[j, node] <= 0, for each pair (j, node r)
            nxt = np.zeros(K, dtype=np.int64)
            for members in classes:
                nxt[members[:-1]] = members[1:]
            okey = nxt[sym_pairs[:, 1]] * n_jobs + sym_pairs[:, 0]
            lookup = np.full(K * n_jobs, -1, dtype=np.int64)
            lookup[okey] = np.arange(n_sum)
            hit = lookup[ykey]
            ym = hit >= 0
            add_rows(
                np.concatenate([hit[ym], np.arange(n_sum)]),
                np.concatenate([m_col[ym], zcol]),
                np.concatenate([np.ones(int(ym.sum())), -np.ones(n_sum)]),
                n_sum, ROW_SYM, okey, np.full(n_sum, -np.inf), np.zeros(n_sum),
            )

    n_cols = n + n_sum
    A = sp.csc_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
        shape=(n_rows, n_cols),
    )
    A.sum_duplicates()
    A.sort_indices()
    kind = np.concatenate(kinds)
    stats = {
        "build_s": time.perf_counter() - t0,
        "candidate_columns": candidates,
        "columns_dropped_capacity": int(candidates - n - dropped_fix - dropped_reserved),
        "columns_dropped_symmetry": dropped_fix,
        "columns_dropped_reserved": dropped_reserved,
        "placements": len(placements),
        "classes": len(classes),
        "capacity_rows": int(np.count_nonzero(kind == ROW_CAPACITY)),
        "rounded_rows": int(np.count_nonzero(kind == ROW_ROUNDED)),
        "assignment_rows": int(a_jobs.size),
        "symmetry_rows": int(np.count_nonzero(kind == ROW_SYM)),
    }
    form = NodeFormulation(
        instance=inst,
        c=_ro(np.concatenate([inst.job_values[col_job] if n else np.zeros(0), np.zeros(n_sum)])),
        A=A,
        row_lower=_ro(np.concatenate(lower)),
        row_upper=_ro(np.concatenate(upper)),
        col_lower=_ro(np.zeros(n_cols)),
        col_upper=_ro(np.concatenate([np.ones(n), np.full(n_sum, np.inf)])),
        integrality=_ro(np.concatenate([np.ones(n, dtype=np.int64), np.zeros(n_sum, dtype=np.int64)])),
        col_job=_ro(col_job),
        col_start=_ro(col_start),
        col_place=_ro(col_place),
        placements=tuple(placements),
        place_nodes=_ro(place_nodes),
        classes=tuple(_ro(c) for c in classes),
        symmetry=symmetry,
        row_kind=_ro(kind),
        row_ref=_ro(np.concatenate(refs)),
        sym_pairs=_ro(sym_pairs),
        stats=stats,
    )
    logger.debug("%s", form.summary())
    return form


def _residual(inst: Instance, reserved: np.ndarray | None) -> np.ndarray:
    """``(K, T)`` GPUs each node offers per slot: its GPUs less ``reserved`` (checked)."""
    K, T = inst.num_nodes, inst.horizon
    full = np.repeat(inst.node_gpus[:, None], T, axis=1).astype(np.int64)
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


def _fits_residual(
    inst: Instance, residual: np.ndarray, col_job: np.ndarray, col_start: np.ndarray,
    nodes: np.ndarray,
) -> np.ndarray:
    """Per column: its job alone fits the residual capacity on each of its nodes over its run.

    ``nodes`` is each column's node positions (``-1`` padded). A one-node job
    needs ``g_j`` GPUs there, a multi-node job each of its nodes in full.
    """
    m_col, m_slot = np.nonzero(nodes >= 0)
    m_node = nodes[m_col, m_slot]
    job = col_job[m_col]
    need = np.where(inst.multi_node[job], inst.node_gpus[m_node], inst.gpus[job])
    lens = inst.durations[job]
    idx = np.repeat(np.arange(m_col.size, dtype=np.int64), lens)
    first = np.concatenate([[0], np.cumsum(lens)])[:-1]
    t = np.arange(idx.size, dtype=np.int64) - np.repeat(first, lens) + col_start[m_col][idx]
    short = residual[m_node[idx], t] < need[idx]
    keep = np.ones(col_job.size, dtype=bool)
    keep[m_col[idx[short]]] = False
    return keep


def _ro(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


# --------------------------------------------------------------- placements
def place_schedule(
    inst: Instance, start: np.ndarray, *, fill: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Put a schedule of the flat pool on the nodes: a node schedule to warm-start from.

    Jobs are placed in order of start (larger first at equal starts): a
    one-node job on the node with the least room left over its run (best
    fit, the first such node on ties), a multi-node job on the first set of
    whole nodes free over its run; a job that finds no room is dropped.
    With ``fill``, the jobs left out are then tried in order of value, each
    at its first start and placement with room on the nodes and in the pool.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        Start and placement arrays (``Schedule.from_array``'s) of a schedule
        that is feasible on the nodes.
    """
    T, n = inst.horizon, inst.num_jobs
    sizes = inst.node_gpus
    free = np.repeat(sizes[:, None], T, axis=1)
    pool = inst.batch_capacity("curve")
    start = np.asarray(start, dtype=np.int64)
    out = np.full(n, -1, dtype=np.int64)
    place = np.full((n, inst.max_span), -1, dtype=np.int64)
    places = job_placements(inst)
    g, p = inst.gpus, inst.durations

    def fit(j: int, s: int) -> tuple[int, ...] | None:
        w = slice(s, s + int(p[j]))
        if pool[w].min(initial=int(g[j])) < g[j]:
            return None
        room = free[:, w].min(axis=1)
        if inst.multi_node[j]:
            for q in places[j]:
                if all(room[k] == sizes[k] for k in q):
                    return q
            return None
        ok = np.flatnonzero(room >= g[j])
        return (int(ok[np.argmin(room[ok])]),) if ok.size else None

    def commit(j: int, s: int, q: tuple[int, ...]) -> None:
        w = slice(s, s + int(p[j]))
        for k in q:
            free[k, w] -= sizes[k] if len(q) > 1 else g[j]
        pool[w] -= g[j]
        out[j] = s
        place[j, : len(q)] = q

    run = np.flatnonzero(start >= 0)
    for j in run[np.lexsort((run, -g[run], start[run]))].tolist():
        q = fit(j, int(start[j]))
        if q is not None:
            commit(j, int(start[j]), q)
    if fill:
        left = np.flatnonzero(out < 0)
        for j in left[np.lexsort((left, -inst.job_values[left]))].tolist():
            for s in range(int(inst.releases[j]), int(inst.deadlines[j] - p[j]) + 1):
                q = fit(j, s)
                if q is not None:
                    commit(j, s, q)
                    break
    return out, place


# ------------------------------------------------------------------- solving
@dataclass(frozen=True)
class NodeRaw:
    """A node backend's answer before the checker has seen it (``RawSolve`` with placements).

    Attributes
    ----------
    status
        ``optimal``, ``time_limit``, ``infeasible`` or ``error``.
    start, place
        The incumbent's start and placement arrays, or ``None``.
    dual_bound, lp_bound
        The solver's proven bound and the LP relaxation's, when known.
    nodes
        Branch-and-bound nodes (CP-SAT: branches).
    message
        Notes, or the error.
    """

    status: Status
    start: np.ndarray | None = None
    place: np.ndarray | None = None
    dual_bound: float | None = None
    lp_bound: float | None = None
    nodes: int | None = None
    message: str = ""


def solve_highs_nodes(
    form: NodeFormulation,
    *,
    time_limit: float,
    mip_gap: float,
    threads: int,
    warm_start: tuple[np.ndarray, np.ndarray] | None,
    root_lp: bool = True,
    seed: int = 0,
    **options: Any,
) -> NodeRaw:
    """Solve the node model with highspy (the warm start relabelled to canonical form first).

    ``**options`` are HiGHS options by name (``mip_detect_symmetry=False``, ...).
    """
    import highspy

    from .highs import STATUS, _new_highs, lp_relaxation
    from .highs import pass_model as _pass

    t0 = time.perf_counter()
    lp = lp_relaxation(form, time_limit, threads) if root_lp else None  # type: ignore[arg-type]
    h = _new_highs(threads)
    h.setOptionValue("time_limit", max(0.0, time_limit - (time.perf_counter() - t0)))
    h.setOptionValue("mip_rel_gap", float(mip_gap))
    h.setOptionValue("random_seed", int(seed))
    for key, value in options.items():
        if h.setOptionValue(key, value) != highspy.HighsStatus.kOk:
            raise ValueError(f"params: HiGHS rejects option {key}={value!r}")
    scale = _pass(h, form)  # type: ignore[arg-type]
    if warm_start is not None:
        start, place = warm_start
        x = form.encode(start, form.canonical(start, place))
        h.setSolution(form.num_cols, np.arange(form.num_cols, dtype=np.int32), x)
    h.run()
    name = h.modelStatusToString(h.getModelStatus())
    status = STATUS.get(str(h.getModelStatus()).rsplit(".", 1)[-1], Status.ERROR)
    info = h.getInfo()
    got = None
    if info.primal_solution_status == 2:
        got = form.decode(np.asarray(h.getSolution().col_value))
    dual = float(info.mip_dual_bound) / scale if info.mip_node_count >= 0 else math.inf
    return NodeRaw(
        status=status,
        start=None if got is None else got[0],
        place=None if got is None else got[1],
        dual_bound=dual if math.isfinite(dual) else None,
        lp_bound=lp,
        nodes=int(info.mip_node_count) if info.mip_node_count >= 0 else None,
        message=f"HiGHS (node model, symmetry {form.symmetry}): {name}",
    )


def lagrangian_bound(inst: Instance, time_limit: float) -> float | None:
    """The Lagrangian bound of the flat model (:func:`milp.bound`), valid on nodes too."""
    from .bound import bound

    return float(bound(inst.replace(nodes=None), time_limit=time_limit).value)


def _warm_arrays(inst: Instance, warm: Any) -> tuple[np.ndarray, np.ndarray, str] | None:
    """A given warm start as node arrays; a schedule without a valid placement is placed."""
    if warm is None:
        return None
    if isinstance(warm, Result):
        schedule, label = warm.schedule, warm.method
    elif isinstance(warm, Schedule):
        schedule, label = warm, "given schedule"
    else:
        raise ValueError(
            f"warm_start: must be None, a Schedule or a Result, got {type(warm).__name__}"
        )
    try:
        evaluate(inst, schedule)
        return schedule.to_array(inst), schedule.to_placement_array(inst), label
    except InfeasibleScheduleError as e:
        flat = inst.replace(nodes=None)
        try:
            evaluate(flat, Schedule(schedule.instance, schedule.starts))
        except InfeasibleScheduleError:
            raise ValueError(f"warm_start: the schedule is infeasible: {e}") from None
    start, place = place_schedule(inst, schedule.to_array(inst))
    return start, place, f"{label}, placed on the nodes"


def solve_nodes(
    inst: Instance,
    *,
    time_limit: float = 60.0,
    mip_gap: float = 1e-4,
    threads: int = 1,
    warm_start: Any = None,
    backend: str = "highs",
    progress: Any = False,
    max_columns: int = DEFAULT_MAX_COLUMNS,
    aggregate: bool = True,
    cliques: bool = False,
    rounding: Sequence[int] = DEFAULT_ROUNDING,
    symmetry: str | None = None,
    flat_share: float = FLAT_SHARE,
    flat: Result | None = None,
    lagrangian: bool | None = None,
    **params: Any,
) -> Result:
    """Solve the node problem of an instance with nodes (what :func:`milp.solve` runs there).

    Parameters
    ----------
    inst
        An instance with nodes.
    time_limit, mip_gap, threads, max_columns, rounding
        As :func:`milp.solve`.
    warm_start
        ``None`` or a :class:`~instances.Schedule` / :class:`~instances.Result`
        (one without a valid placement that is feasible on the flat pool is
        placed on the nodes). The flat solve's incumbent, placed on the nodes
        (:func:`place_schedule`), is offered as well.
    backend
        ``"highs"`` (method ``milp``) or ``"cpsat"`` (:mod:`milp.cpsat_nodes`).
    progress
        Ignored (no progress bar for the node model yet).
    aggregate, cliques
        Options of the flat solve (:func:`milp.build`).
    symmetry
        One of :data:`SYMMETRY`; ``None``: ``"fix"`` for HiGHS, ``"none"``
        for CP-SAT.
    flat_share
        Share of ``time_limit`` (at most 10 s) for solving the flat model
        first: its bound bounds the node optimum, its schedule seeds the
        warm start. ``0``: no flat solve.
    flat
        A finished solve of the flat model (``inst.replace(nodes=None)``) to
        use instead of running one.
    lagrangian
        Also take the flat model's Lagrangian bound (:func:`lagrangian_bound`).
    **params
        Backend options (HiGHS: ``root_lp``, ``seed`` and HiGHS options by
        name; CP-SAT: ``seed`` and CP-SAT parameters).

    Returns
    -------
    instances.Result
        A schedule with a valid placement, its value recomputed by the
        checker; ``upper_bound`` the smallest valid bound, never below it.
    """
    t0 = time.perf_counter()
    if inst.nodes is None:
        raise ValueError(f"inst: instance {inst.name!r} has no nodes; use milp.solve")
    if backend not in ("highs", "cpsat"):
        raise ValueError(
            f"backend: on an instance with nodes must be 'highs' or 'cpsat', got {backend!r}"
        )
    _check_args(backend, time_limit, mip_gap, threads)
    if not (isinstance(flat_share, (int, float)) and 0 <= flat_share <= 1):
        raise ValueError(f"flat_share: must be in [0, 1], got {flat_share!r}")
    if isinstance(warm_start, str):
        raise ValueError(
            f"warm_start: must be None, a Schedule or a Result, got {warm_start!r} "
            "('auto' is resolved above the MILP, by matheuristics.solve_milp)"
        )
    sym = symmetry if symmetry is not None else ("fix" if backend == "highs" else "none")
    form = build_nodes(inst, max_columns, symmetry=sym, rounding=rounding)
    method = "milp" if backend == "highs" else "cpsat"
    call: dict[str, Any] = {
        "time_limit": time_limit, "mip_gap": mip_gap, "threads": threads, "backend": backend,
        "model": "nodes", "symmetry": sym, "rounding": [int(d) for d in rounding],
        "flat_share": flat_share, **params,
    }
    warm: list[tuple[str, np.ndarray, np.ndarray]] = []
    given = _warm_arrays(inst, warm_start)
    if given is not None:
        warm.append((given[2], given[0], given[1]))
        call["warm_start"] = given[2]

    notes: list[str] = []
    flat_bound: float | None = None
    flat_inst = inst.replace(nodes=None)
    if flat is None and flat_share > 0 and time_limit > 0:
        from .solver import solve

        budget = min(10.0, flat_share * time_limit)
        fws: Any = None
        if given is not None:
            fws = Schedule(inst.name, {inst.jobs[j].name: int(given[0][j])
                                       for j in np.flatnonzero(given[0] >= 0)})
        flat = solve(flat_inst, time_limit=budget, mip_gap=mip_gap, threads=threads,
                     warm_start=fws, aggregate=aggregate, cliques=cliques, rounding=rounding)
    if flat is not None:
        if flat.status is not Status.ERROR and flat.upper_bound is not None:
            flat_bound = float(flat.upper_bound)
            notes.append(f"flat model: {flat.status}, bound {flat_bound:.6g}")
        start, place = place_schedule(inst, flat.schedule.to_array(flat_inst))
        warm.append(("flat incumbent placed on the nodes", start, place))
    lagr = lagrangian_bound(inst, 0.1 * time_limit) if lagrangian else None

    values = [float(inst.job_values[w[1] >= 0].sum()) for w in warm]
    best_warm = warm[int(np.argmax(values))] if warm else None
    if best_warm is not None:
        call.setdefault("warm_start", best_warm[0])
    remaining = time_limit - (time.perf_counter() - t0)
    if form.num_x == 0:
        raw = NodeRaw(Status.OPTIMAL, None, None, 0.0, 0.0, 0, "no job can run: nothing to solve")
    elif remaining <= 0:
        raw = NodeRaw(Status.TIME_LIMIT, message="time limit reached before the solver started")
    else:
        ws = None if best_warm is None else (best_warm[1], best_warm[2])
        try:
            if backend == "highs":
                raw = solve_highs_nodes(form, time_limit=remaining, mip_gap=mip_gap,
                                        threads=threads, warm_start=ws, **params)
            else:
                from .cpsat_nodes import solve_cpsat_nodes

                raw = solve_cpsat_nodes(form, time_limit=remaining, mip_gap=mip_gap,
                                        threads=threads, warm_start=ws, **params)
        except ValueError as e:
            if str(e).startswith("params:"):
                raise
            raw = NodeRaw(Status.ERROR, message=f"ValueError: {e}")
        except TypeError as e:
            if "unexpected keyword argument" in str(e):
                raise ValueError(f"params: backend {backend!r}: {e}") from None
            raw = NodeRaw(Status.ERROR, message=f"TypeError: {e}")
        except Exception as e:  # a solver failure must not crash the caller
            logger.exception("node backend %s failed", backend)
            raw = NodeRaw(Status.ERROR, message=f"{type(e).__name__}: {e}")
    return _assemble(inst, method, form, raw, warm, flat_bound, lagr, call, notes, t0)


def _assemble(
    inst: Instance, method: str, form: NodeFormulation, raw: NodeRaw,
    warm: list[tuple[str, np.ndarray, np.ndarray]], flat_bound: float | None,
    lagr: float | None, call: dict[str, Any], notes: list[str], t0: float,
) -> Result:
    status = raw.status
    notes = ([raw.message] if raw.message else []) + notes
    n = inst.num_jobs
    candidates = []
    if raw.start is not None and raw.place is not None:
        candidates.append(("solver", raw.start, raw.place))
    candidates += warm
    candidates.append(("empty schedule", np.full(n, -1, dtype=np.int64),
                       np.full((n, inst.max_span), -1, dtype=np.int64)))
    best = None
    for label, start, place in candidates:
        schedule = Schedule.from_array(inst, start, place)
        try:
            metrics = evaluate(inst, schedule)
        except InfeasibleScheduleError as e:
            notes.append(f"{label} rejected by the checker: {e}")
            status = Status.ERROR
            continue
        if best is None or metrics.value > best[2].value + _tolerance(inst, metrics.value):
            best = (label, schedule, metrics)
    assert best is not None  # the empty schedule is always feasible
    label, schedule, metrics = best
    value = metrics.value
    if label != "solver":
        notes.append(f"incumbent from the {label}")

    bounds = {"sum of values": form.trivial_bound}
    if status is not Status.ERROR:
        for name, b in (("dual", raw.dual_bound), ("lp", raw.lp_bound), ("flat", flat_bound),
                        ("lagrangian", lagr)):
            if b is not None and math.isfinite(b):
                bounds[name] = float(b)
    which = min(bounds, key=lambda k: bounds[k])
    upper: float | None = bounds[which]
    assert upper is not None
    if upper < value - _tolerance(inst, value):
        notes.append(f"bug: upper bound {upper!r} ({which}) below the checked value {value!r}")
        logger.error("%s on %s: %s", method, inst.name, notes[-1])
        status, upper = Status.ERROR, None
    else:
        upper = max(upper, value)
        if which != "dual":
            notes.append(f"bound from the {which} ({upper:.6g})")
        if status is Status.TIME_LIMIT and upper - value <= _tolerance(inst, value):
            status = Status.OPTIMAL
    return Result(
        method=method, status=status, schedule=schedule, value=value, upper_bound=upper,
        runtime_s=time.perf_counter() - t0, metrics=metrics, reservation="curve",
        params=call, lp_bound=raw.lp_bound, nodes=raw.nodes, message="; ".join(notes),
    )


# ---------------------------------------------------------- price of topology
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
    from .solver import solve

    if inst.nodes is None:
        raise ValueError(f"inst: instance {inst.name!r} has no nodes")
    t0 = time.perf_counter()
    flat = solve(inst.replace(nodes=None), time_limit=time_limit / 2, threads=threads)
    left = max(0.0, time_limit - (time.perf_counter() - t0))
    node = solve_nodes(inst, time_limit=left, threads=threads, flat=flat, **params)
    if flat.upper_bound is None or node.upper_bound is None:
        raise ValueError(f"price_of_topology: a solve of {inst.name!r} left no bound "
                         f"(flat: {flat.message}; nodes: {node.message})")
    flat_lower = max(flat.value, node.value)
    lower = max(0.0, flat_lower - node.upper_bound)
    upper = max(lower, flat.upper_bound - node.value)
    exact = flat.status is Status.OPTIMAL and node.status is Status.OPTIMAL
    return PriceOfTopology(lower, upper, exact, flat, node)
