"""The time-indexed formulation as arrays (the specification (docs/model.md)), built without solving.

One column per usable (job, start) pair, ``x[j, s] = 1`` iff job ``j`` starts at
slot ``s``, built with numpy index arithmetic (no Python loop over nonzeros).
Exact reductions: a column only for starts where the job fits the
inference-free capacity alone; no assignment row for a job with one column;
a capacity row only where the columns covering a slot could overload it.
Options: rounded capacity rows (``rounding``, the mixed-integer rounding of a
capacity row divided by ``d``: :func:`rounded_coefficients`), clique rows
(``cliques``), identical jobs merged into integer columns (``aggregate``); each
is valid for every integer schedule, so none changes the optimum. What each
option does to the bounds and the search, as measured, is in ``docs/milp.md``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from instances import Instance

__all__ = ["DEFAULT_MAX_COLUMNS", "DEFAULT_ROUNDING", "Formulation", "build"]

logger = logging.getLogger(__name__)

DEFAULT_MAX_COLUMNS = 5_000_000
"""Largest number of columns :func:`build` accepts unless told otherwise."""

ROW_ASSIGN, ROW_CAPACITY, ROW_CLIQUE, ROW_ROUNDED = 0, 1, 2, 3
"""Row kinds in :attr:`Formulation.row_kind`."""

DEFAULT_ROUNDING = (2, 4)
"""Divisors of the rounded capacity rows :func:`build` adds unless told otherwise."""


@dataclass(frozen=True, eq=False)
class Formulation:
    """The MILP ``max c x  s.t.  row_lower <= A x <= row_upper, col bounds, integrality``.

    Every array is read-only. Columns are grouped by job group (a single job,
    or several identical jobs when aggregated); within a group, columns are
    sorted by start.

    Attributes
    ----------
    instance
        The instance the model is for.
    c
        Objective coefficients (maximize): the value of one run of the job.
    A
        Constraint matrix, ``scipy.sparse.csc_matrix`` of shape (rows, columns).
    row_lower, row_upper, col_lower, col_upper
        Bounds (``-inf`` / ``inf`` where absent).
    integrality
        1 for an integer column (every column is integer; binary when its
        upper bound is 1).
    col_job
        Representative job index of each column (the group's first job).
    col_start
        Start slot of each column.
    col_group
        Group index of each column.
    groups
        Job indices of each group, in instance order.
    row_kind
        ``0`` assignment row (``sum_s x <= group size``), ``1`` capacity row,
        ``2`` clique row, ``3`` rounded capacity row.
    row_ref
        Group index (assignment rows) or slot (the other rows).
    stats
        Build figures: seconds, rows kept and dropped, columns dropped.
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
    col_group: np.ndarray
    groups: tuple[np.ndarray, ...]
    row_kind: np.ndarray
    row_ref: np.ndarray
    stats: dict[str, Any] = field(default_factory=dict)

    # ----------------------------------------------------------------- sizes
    @property
    def num_cols(self) -> int:
        """Number of columns."""
        return int(self.c.shape[0])

    @property
    def num_rows(self) -> int:
        """Number of rows."""
        return int(self.A.shape[0])

    @property
    def nnz(self) -> int:
        """Nonzeros of :attr:`A`."""
        return int(self.A.nnz)

    @property
    def columns(self) -> tuple[np.ndarray, np.ndarray]:
        """``(job index, start)`` of every column (the group's first job when aggregated)."""
        return self.col_job, self.col_start

    @property
    def trivial_bound(self) -> float:
        """Value of running every job that has a column: a crude upper bound."""
        if self.num_cols == 0:
            return 0.0
        has = np.unique(self.col_group)
        return float(sum(float(self.instance.job_values[self.groups[k]].sum()) for k in has))

    # ------------------------------------------------------- x <-> schedules
    def encode(self, start: np.ndarray) -> np.ndarray:
        """Column vector of a per-job start array (``-1``: not run).

        Raises
        ------
        ValueError
            If a run job starts where it has no column (the start is
            infeasible for the job on its own).
        """
        start = np.asarray(start, dtype=np.int64)
        x = np.zeros(self.num_cols)
        if self.num_cols == 0:
            if np.any(start >= 0):
                raise ValueError("start: the model has no column, the schedule runs a job")
            return x
        group_of = np.full(self.instance.num_jobs, -1, dtype=np.int64)
        for k, members in enumerate(self.groups):
            group_of[members] = k
        run = np.flatnonzero(start >= 0)
        if run.size == 0:
            return x
        # columns are sorted by (group, start): search the pair as one key
        T = self.instance.horizon + 1
        keys = self.col_group * T + self.col_start
        want = group_of[run] * T + start[run]
        pos = np.searchsorted(keys, want)
        pos = np.minimum(pos, keys.size - 1)
        bad = (group_of[run] < 0) | (keys[pos] != want)
        if np.any(bad):
            j = int(run[np.flatnonzero(bad)[0]])
            raise ValueError(
                f"start: job {self.instance.jobs[j].name!r} at slot {int(start[j])} has no column"
            )
        np.add.at(x, pos, 1.0)
        return x

    def decode(self, x: Sequence[float] | np.ndarray) -> np.ndarray:
        """Per-job start array (``-1``: not run) of a column vector (rounded)."""
        counts = np.rint(np.asarray(x, dtype=np.float64)).astype(np.int64)
        start = np.full(self.instance.num_jobs, -1, dtype=np.int64)
        used = np.zeros(len(self.groups), dtype=np.int64)
        for col in np.flatnonzero(counts > 0):
            k = int(self.col_group[col])
            members = self.groups[k]
            n = min(int(counts[col]), members.size - int(used[k]))
            start[members[used[k] : used[k] + n]] = self.col_start[col]
            used[k] += n
        return start

    def run_mass(self, x: Sequence[float] | np.ndarray) -> np.ndarray:
        """How much of each job a (fractional) column vector runs, in ``[0, 1]``.

        A group of identical jobs shares its columns' sum equally among its
        members; a job with no column gets 0. Of an LP solution, this is
        the ``guide`` of :func:`matheuristics.lns.lns_improve`.
        """
        x = np.asarray(x, dtype=np.float64)
        if x.shape != (self.num_cols,):
            raise ValueError(f"x: expected {self.num_cols} values, got shape {x.shape}")
        sizes = np.array([g.size for g in self.groups], dtype=np.int64)
        per_group = np.bincount(self.col_group, weights=x, minlength=sizes.size)
        mass = np.zeros(self.instance.num_jobs)
        if sizes.size:
            mass[np.concatenate(self.groups)] = np.repeat(per_group / sizes, sizes)
        return np.clip(mass, 0.0, 1.0)

    # --------------------------------------------------------------- export
    def col_names(self) -> list[str]:
        """Readable, unique column names, ``x_<job>_s<start>`` (:func:`milp.export.col_names`)."""
        from .export import col_names

        return col_names(self)

    def row_names(self) -> list[str]:
        """Readable, unique row names (:func:`milp.export.row_names`)."""
        from .export import row_names

        return row_names(self)

    def to_pulp(self) -> Any:
        """The same model as a ``pulp.LpProblem`` (maximize), with readable names."""
        from .export import pulp_model

        return pulp_model(self)[0]

    def pulp_model(self) -> tuple[Any, list[Any]]:
        """The PuLP problem and its variables in column order (:func:`milp.export.pulp_model`)."""
        from .export import pulp_model

        return pulp_model(self)

    def write_mps(self, path: str) -> None:
        """Write the model as an MPS file with HiGHS's writer (:func:`milp.export.write_model`)."""
        from .export import write_model

        write_model(self, path, ".mps")

    def write_lp(self, path: str) -> None:
        """Write the model in CPLEX LP format with HiGHS's writer (names kept)."""
        from .export import write_model

        write_model(self, path, ".lp")

    def feasible(self, start: np.ndarray) -> bool:
        """Whether a per-job start array satisfies every row and bound of the model.

        One sparse product (``A @ encode(start) <= row_upper``): the test of a
        start array on the hot path of a search, where :func:`instances.evaluate`
        (plain loops, run at the public boundary) would cost more than the
        window it checks. Every column is a start that fits alone and every
        row holds for each feasible schedule, so this is feasibility under
        ``curve`` reservation.
        """
        try:
            x = self.encode(start)
        except ValueError:
            return False
        if self.num_rows == 0:
            return bool(np.all(x <= self.col_upper))
        load = self.A @ x
        return bool(np.all(load <= self.row_upper + 1e-9) and np.all(x <= self.col_upper))

    def summary(self) -> str:
        """One line: sizes and build time."""
        return (
            f"{self.instance.name}: {self.num_cols} columns, {self.num_rows} rows, "
            f"{self.nnz} nonzeros, built in {self.stats.get('build_s', 0.0):.3f} s"
        )


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


def build(
    inst: Instance, max_columns: int = DEFAULT_MAX_COLUMNS, *, aggregate: bool = True,
    cliques: bool = False, rounding: Sequence[int] = DEFAULT_ROUNDING,
) -> Formulation:
    """Build the time-indexed MILP of an instance as arrays.

    Parameters
    ----------
    inst
        The instance.
    max_columns
        Refuse models with more candidate columns than this, before any large
        array is allocated.
    aggregate
        Merge identical jobs into integer columns (exact; removes the symmetry between them).
    cliques
        Add the per-slot clique rows over jobs larger than half the capacity.
    rounding
        Divisors ``d`` of the rounded capacity rows (integers >= 2; empty:
        none). For every binding slot whose capacity ``C`` is not a multiple
        of ``d``, the row ``sum_j a_j x_j <= floor(C / d)`` with
        ``a_j = floor(g_j / d) + max(0, g_j mod d - C mod d) / (d - C mod d)``
        over the columns covering the slot: the mixed-integer rounding of
        the capacity row divided by ``d``, valid for every integer
        schedule. With ``C = 9`` and ``d = 2``:
        ``4 x8 + 2 x4 + x2 <= 4`` over the 8-, 4- and 2-GPU jobs covering the slot.

    Returns
    -------
    Formulation

    Raises
    ------
    ValueError
        If the model would have more than ``max_columns`` columns.
    """
    t0 = time.perf_counter()
    divisors = tuple(rounding) if isinstance(rounding, (tuple, list, np.ndarray)) else None
    if divisors is None or not all(
        isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 2 for d in divisors
    ):
        raise ValueError(f"rounding: must be a sequence of integers >= 2, got {rounding!r}")
    T = inst.horizon
    rep, members = _groups(inst, aggregate)
    K = rep.size
    size = np.array([m.size for m in members], dtype=np.int64)
    g = inst.gpus[rep] if K else np.zeros(0, dtype=np.int64)
    p = inst.durations[rep] if K else np.zeros(0, dtype=np.int64)
    r = inst.releases[rep] if K else np.zeros(0, dtype=np.int64)
    end = inst.deadlines[rep] if K else np.zeros(0, dtype=np.int64)
    n_starts = np.maximum(0, end - p - r + 1)
    candidates = int(n_starts.sum())
    if candidates > max_columns:
        raise ValueError(
            f"max_columns: the model of {inst.name!r} has {candidates} columns, over "
            f"max_columns={max_columns}; raise it or coarsen the instance"
        )
    cap = inst.batch_capacity("curve")

    # candidate columns: (group, start) for every start in [r, end - p]
    offsets = np.concatenate([[0], np.cumsum(n_starts)])
    col_group = np.repeat(np.arange(K, dtype=np.int64), n_starts)
    col_start = np.arange(candidates, dtype=np.int64) - np.repeat(offsets[:-1], n_starts)
    col_start += np.repeat(r, n_starts)
    # drop starts where the job alone exceeds the capacity on some slot
    col_g, col_p = g[col_group], p[col_group]
    keep = np.ones(candidates, dtype=bool)
    for gv in np.unique(g):
        if gv <= cap.min():
            continue
        sel = col_g == gv
        ok = np.concatenate([[0], np.cumsum(cap >= gv)])
        s = col_start[sel]
        keep[sel] = (ok[s + col_p[sel]] - ok[s]) == col_p[sel]
    col_group, col_start = col_group[keep], col_start[keep]
    col_g, col_p = col_g[keep], col_p[keep]
    n = col_group.size
    col_size = size[col_group]

    # capacity entries: column i covers slots col_start[i] .. + col_p[i] - 1
    cover = np.repeat(np.arange(n, dtype=np.int64), col_p)
    first = np.concatenate([[0], np.cumsum(col_p)])[:-1]
    slot = np.arange(cover.size, dtype=np.int64) - np.repeat(first, col_p) + col_start[cover]

    # largest load a slot could see: every group covering it at full size
    has = np.zeros(K, dtype=bool)
    has[col_group] = True
    lo_s = np.full(K, T, dtype=np.int64)
    hi_e = np.zeros(K, dtype=np.int64)
    np.minimum.at(lo_s, col_group, col_start)
    np.maximum.at(hi_e, col_group, col_start + col_p)
    diff = np.zeros(T + 1, dtype=np.int64)
    np.add.at(diff, lo_s[has], (g * size)[has])
    np.add.at(diff, hi_e[has], -(g * size)[has])
    max_load = np.cumsum(diff)[:T]
    binding = max_load > cap
    cap_rows = np.flatnonzero(binding)

    # assignment rows, only where a group has more than one column (or copies)
    ncols_group = np.bincount(col_group, minlength=K)
    assign_groups = np.flatnonzero((ncols_group > 1) | ((ncols_group > 0) & (size > 1)))
    arow = np.full(K, -1, dtype=np.int64)
    arow[assign_groups] = np.arange(assign_groups.size)
    a_mask = arow[col_group] >= 0

    n_assign = assign_groups.size
    crow = np.full(T, -1, dtype=np.int64)
    crow[cap_rows] = n_assign + np.arange(cap_rows.size)
    c_mask = crow[slot] >= 0

    rows = [arow[col_group][a_mask], crow[slot][c_mask]]
    cols = [np.flatnonzero(a_mask), cover[c_mask]]
    vals = [np.ones(int(a_mask.sum())), col_g[cover][c_mask].astype(np.float64)]
    row_kind = [np.full(n_assign, ROW_ASSIGN), np.full(cap_rows.size, ROW_CAPACITY)]
    row_ref = [assign_groups, cap_rows]
    row_upper = [size[assign_groups].astype(np.float64), cap[cap_rows].astype(np.float64)]
    n_rows = n_assign + cap_rows.size

    if cliques and n:
        big = 2 * col_g[cover] > cap[slot]
        big_count = np.bincount(slot[big], minlength=T)  # columns, an over-count of jobs
        # a clique row helps only where two or more big groups can meet
        big_groups = np.zeros(T, dtype=np.int64)
        pairs = np.unique(np.stack([slot[big], col_group[cover][big]]), axis=1)
        np.add.at(big_groups, pairs[0], 1)
        q_slots = np.flatnonzero((big_groups >= 2) & (big_count > 0) & binding)
        qrow = np.full(T, -1, dtype=np.int64)
        qrow[q_slots] = n_rows + np.arange(q_slots.size)
        q_mask = big & (qrow[slot] >= 0)
        rows.append(qrow[slot][q_mask])
        cols.append(cover[q_mask])
        vals.append(np.ones(int(q_mask.sum())))
        row_kind.append(np.full(q_slots.size, ROW_CLIQUE))
        row_ref.append(q_slots)
        row_upper.append(np.ones(q_slots.size))
        n_rows += q_slots.size

    for d in divisors if n else ():
        # a row only where it is not the capacity row over d, and not empty
        at = np.flatnonzero((binding & (cap % d > 0))[slot])
        coef = rounded_coefficients(col_g[cover[at]], cap[slot[at]], d)
        at, coef = at[coef > 0], coef[coef > 0]
        slots = np.unique(slot[at])
        rrow = np.full(T, -1, dtype=np.int64)
        rrow[slots] = n_rows + np.arange(slots.size)
        rows.append(rrow[slot[at]])
        cols.append(cover[at])
        vals.append(coef)
        row_kind.append(np.full(slots.size, ROW_ROUNDED))
        row_ref.append(slots)
        row_upper.append((cap[slots] // d).astype(np.float64))
        n_rows += slots.size

    A = sp.csc_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
        shape=(n_rows, n),
    )
    A.sort_indices()
    c = inst.job_values[rep][col_group] if n else np.zeros(0)
    kinds = np.concatenate(row_kind)
    stats = {
        "build_s": time.perf_counter() - t0,
        "candidate_columns": candidates,
        "columns_dropped_capacity": int(candidates - n),
        "groups": int(K),
        "aggregated_jobs": int(inst.num_jobs - K),
        "capacity_rows": int(cap_rows.size),
        "capacity_rows_dropped": int(np.count_nonzero(max_load > 0) - cap_rows.size),
        "assignment_rows": int(n_assign),
        "clique_rows": int(np.count_nonzero(kinds == ROW_CLIQUE)),
        "rounded_rows": int(np.count_nonzero(kinds == ROW_ROUNDED)),
    }
    form = Formulation(
        instance=inst,
        c=_ro(np.asarray(c, dtype=np.float64)),
        A=A,
        row_lower=_ro(np.full(n_rows, -np.inf)),
        row_upper=_ro(np.concatenate(row_upper) if n_rows else np.zeros(0)),
        col_lower=_ro(np.zeros(n)),
        col_upper=_ro(col_size.astype(np.float64)),
        integrality=_ro(np.ones(n, dtype=np.int64)),
        col_job=_ro(rep[col_group] if n else np.zeros(0, dtype=np.int64)),
        col_start=_ro(col_start),
        col_group=_ro(col_group),
        groups=tuple(_ro(m) for m in members),
        row_kind=_ro(kinds if n_rows else np.zeros(0, dtype=np.int64)),
        row_ref=_ro(np.concatenate(row_ref) if n_rows else np.zeros(0, dtype=np.int64)),
        stats=stats,
    )
    logger.debug("%s", form.summary())
    return form


def rounded_coefficients(g: np.ndarray, cap: np.ndarray, d: int) -> np.ndarray:
    """Coefficients of the rounded capacity row ``sum a x <= floor(cap / d)``.

    The mixed-integer rounding of ``sum g x <= cap`` divided by ``d`` (with
    ``x`` integer and non-negative): ``a = floor(g / d) + max(0, (g mod d) -
    (cap mod d)) / (d - (cap mod d))``, computed from integers so that the
    only rounding is the one division. Where ``cap`` is a multiple of ``d``
    the row is the capacity row over ``d`` (``a = g / d``).
    """
    g, cap = np.asarray(g, dtype=np.int64), np.asarray(cap, dtype=np.int64)
    rc = cap % d
    return g // d + np.maximum(0, g % d - rc) / np.where(rc > 0, d - rc, d)


def _ro(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a
