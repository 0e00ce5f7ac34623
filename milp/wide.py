"""Window rows for wide jobs: at most ``k`` of the jobs that cannot share a slot fit in a window.

Where the capacity left by inference is under twice a job's width, two such
jobs never run at once. On a window ``W`` of slots (a maximal run where
``cap(t) >= w`` for a width ``w`` of the instance), the jobs ``C`` with
``2 g_j > max_{t in W} cap(t)`` run one at a time there, so those whose run
lies inside ``W`` fit a single machine of ``|W|`` slots: at most ``k(W)`` of
them run inside ``W``, ``k(W)`` being the largest number of their durations
(shortest first, identical jobs counted each) whose sum is at most ``|W|``.
The time-indexed LP sees each slot alone (its rounded rows, :mod:`milp.cuts`,
give at most one such job per slot) and may spread fractions of more jobs
over the window than fit in it whole: the rows ``sum_{j in C} sum_{s: [s, s +
p_j) in W} x_{j,s} <= k(W)`` cut those points and no schedule (measured in
docs/milp.md; tested against brute force in ``tests/milp/test_wide_rows.py``).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp

from .formulation import ROW_CLIQUE, Formulation

__all__ = ["window_rows", "with_window_rows"]


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """Maximal runs ``[a, b)`` of ``True`` in ``mask``."""
    out = []
    t, T = 0, len(mask)
    while t < T:
        if mask[t]:
            a = t
            while t < T and mask[t]:
                t += 1
            out.append((a, t))
        else:
            t += 1
    return out


def window_rows(form: Formulation) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """The window rows of a flat model: ``(rows, upper, window start)``.

    ``rows`` has one row per window where the row can cut (more jobs have
    columns inside it than fit), over the model's columns (the ``x`` columns
    only); ``upper`` is ``k(W)``. A model with nodes, or with no ``x``
    columns, gets none.
    """
    n = form.num_cols
    empty = sp.csr_matrix((0, n)), np.zeros(0), np.zeros(0, dtype=np.int64)
    if form.has_nodes or form.num_x == 0:
        return empty
    inst = form.instance
    # what inference leaves (the model's capacity is at most this under any reservation)
    cap = np.minimum(np.asarray(form.node_free[0], dtype=np.int64),
                     inst.num_gpus - np.asarray(inst.total_demand, dtype=np.int64))
    gj = np.array([j.gpus for j in inst.jobs], dtype=np.int64)
    pj = np.array([j.duration for j in inst.jobs], dtype=np.int64)
    nx = form.num_x
    cjob = np.asarray(form.col_job[:nx])
    cgroup = np.asarray(form.col_group[:nx])
    cstart = np.asarray(form.col_start[:nx])
    cg, cp = gj[cjob], pj[cjob]
    size = np.array([len(g) for g in form.groups], dtype=np.int64)
    seen: set[tuple[int, int, bytes]] = set()
    data: list[np.ndarray] = []
    upper: list[float] = []
    where: list[int] = []
    for w in sorted(set(gj.tolist()), reverse=True):
        for a, b in _runs(cap >= w):
            top = int(cap[a:b].max())
            inside = (2 * cg > top) & (cstart >= a) & (cstart + cp <= b)
            if not inside.any():
                continue
            grp = np.unique(cgroup[inside])
            key = (a, b, grp.tobytes())
            if key in seen:
                continue
            seen.add(key)
            durs = np.sort(np.repeat(pj[[form.groups[g][0] for g in grp]], size[grp]))
            k = int(np.searchsorted(np.cumsum(durs), b - a, side="right"))
            if k >= len(durs):
                continue
            row = np.zeros(n)
            row[np.flatnonzero(inside)] = 1.0
            data.append(row)
            upper.append(float(k))
            where.append(a)
    if not data:
        return empty
    return (sp.csr_matrix(np.vstack(data)), np.array(upper),
            np.array(where, dtype=np.int64))


def with_window_rows(form: Formulation) -> Formulation:
    """``form`` with its window rows (:func:`window_rows`) appended as clique rows.

    Their ``row_ref`` is the window's first slot (resource 0, the pool).
    """
    rows, upper, where = window_rows(form)
    if rows.shape[0] == 0:
        return form
    A = sp.vstack([form.A.tocsr(), rows]).tocsc()
    stats = {**form.stats, "window_rows": int(rows.shape[0])}
    return dataclasses.replace(
        form, A=A,
        row_lower=np.concatenate([form.row_lower, np.full(len(upper), -np.inf)]),
        row_upper=np.concatenate([form.row_upper, upper]),
        row_kind=np.concatenate([form.row_kind, np.full(len(upper), ROW_CLIQUE,
                                                        dtype=form.row_kind.dtype)]),
        row_ref=np.concatenate([form.row_ref, where.astype(form.row_ref.dtype)]),
        stats=stats,
    )
