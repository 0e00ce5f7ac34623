"""Symmetry among identical nodes: their classes, the columns and rows that break it, relabelling.

Nodes of equal GPUs (and, with GPUs withheld, equal withheld rows) are
interchangeable: permuting them maps schedules to schedules of the same
value. Within each class every schedule can be relabelled so that the nodes
are ordered by the first job (in instance order) placed on them, unused
nodes last (:meth:`milp.Formulation.canonical`). A symmetry mode of :data:`SYMMETRY` keeps
only such canonical schedules:

* ``"fix"`` drops the columns no canonical schedule uses: job ``j`` can be
  on the class's node of rank ``r`` only if ``r`` is below the number of
  class nodes the jobs up to ``j`` can occupy together (:func:`fixing_keeps`);
* ``"rows"`` adds to the fixing, for each class rank ``r`` and job ``j``,
  the row "``j`` on node ``r + 1`` only if some job ``i <= j`` is on node
  ``r``", through continuous running sums ``z[j, r] = sum_{i <= j} y[i, r]``
  (``y`` a job's columns on a node; :func:`order_rows`), so the rows stay
  linear in size;
* ``"none"``: no reduction (HiGHS's own symmetry detection remains).

Each keeps at least one optimal schedule of every orbit, so the optimum is
unchanged. A flat pool is one node: nothing to reduce.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from .formulation import ROW_SYM, ROW_SYM_SUM

__all__ = ["SYMMETRY", "fixing_keeps", "node_classes", "order_rows"]

SYMMETRY: tuple[str, ...] = ("fix", "rows", "none")
"""Symmetry handling among identical nodes (see the module notes)."""


def node_classes(sizes: np.ndarray, free: np.ndarray,
                 kinds: Sequence[Hashable] | None = None) -> tuple[np.ndarray, ...]:
    """Positions of the nodes of each class of identical nodes, ascending.

    ``sizes`` are the nodes' GPUs, ``free`` the ``(K, T)`` GPUs each offers
    per slot, ``kinds`` what else tells nodes apart (on model version 3: GPU
    model, CPU and memory): nodes are identical when all are equal. Classes
    are ordered by their first node's position.
    """
    seen: dict[tuple[int, bytes, Hashable], list[int]] = {}
    for k, m in enumerate(np.asarray(sizes).tolist()):
        kind = None if kinds is None else kinds[k]
        seen.setdefault((int(m), np.ascontiguousarray(free[k]).tobytes(), kind), []).append(k)
    return tuple(np.array(v, dtype=np.int64) for v in seen.values())


def _class_and_rank(classes: tuple[np.ndarray, ...], num_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    node_class = np.zeros(num_nodes, dtype=np.int64)
    node_rank = np.zeros(num_nodes, dtype=np.int64)
    for ci, members in enumerate(classes):
        node_class[members] = ci
        node_rank[members] = np.arange(members.size)
    return node_class, node_rank


def fixing_keeps(
    classes: tuple[np.ndarray, ...], nodes: np.ndarray, col_group: np.ndarray,
    groups: tuple[np.ndarray, ...], num_jobs: int,
) -> np.ndarray:
    """Per column, whether some canonical schedule may use it (the ``"fix"`` reduction).

    ``nodes`` holds each column's node positions (``-1`` padded). A column of
    a group of identical jobs is kept when it is for the group's last member
    (the weakest of its members' conditions).
    """
    node_class, node_rank = _class_and_rank(classes, int(sum(c.size for c in classes)))
    valid = nodes >= 0
    cls = np.where(valid, node_class[np.maximum(nodes, 0)], -1)
    per_col = np.stack([(cls == ci).sum(axis=1) for ci in range(len(classes))], axis=1)
    reach_group = np.zeros((len(groups), len(classes)), dtype=np.int64)
    np.maximum.at(reach_group, col_group, per_col)
    job_group = np.zeros(num_jobs, dtype=np.int64)
    for k, members in enumerate(groups):
        job_group[members] = k
    room = np.cumsum(reach_group[job_group], axis=0)  # class nodes the jobs up to j can occupy
    last = np.array([int(m[-1]) for m in groups], dtype=np.int64)
    rank = np.where(valid, node_rank[np.maximum(nodes, 0)], -1)
    lim = room[last[col_group][:, None], np.maximum(cls, 0)]
    return np.all(~valid | (rank < lim), axis=1)


def order_rows(
    classes: tuple[np.ndarray, ...], nodes: np.ndarray, col_job: np.ndarray, num_jobs: int,
) -> tuple[np.ndarray, list[tuple[np.ndarray, ...]]]:
    """The running sums and order rows of the ``"rows"`` mode (one job per column).

    Returns ``sym_pairs`` (for running-sum column ``i``, its ``(job, node)``)
    and two row blocks ``(row, column, value, kind, ref, lower, upper)``:
    ``z[e] - z[e - 1] - y[E[e], k_r] = 0`` and ``y[j, next node] - z[j, node] <= 0``,
    columns ``len(col_job) + i`` being the running sums.
    """
    K, n = int(sum(c.size for c in classes)), col_job.size
    m_col, m_slot = np.nonzero(nodes >= 0)
    y_job, y_node = col_job[m_col], nodes[m_col, m_slot]  # one entry per (column, node)
    pairs_list = []
    for members in classes:
        if members.size < 2:
            continue
        E = np.unique(y_job[np.isin(y_node, members)])  # jobs with a column on the class
        for rr in range(members.size - 1) if E.size else ():
            pairs_list.append(np.stack([E, np.full(E.size, members[rr])], axis=1))
    if not pairs_list:
        return np.zeros((0, 2), dtype=np.int64), []
    sym_pairs = np.concatenate(pairs_list)
    n_sum = sym_pairs.shape[0]
    zcol = n + np.arange(n_sum, dtype=np.int64)
    key = sym_pairs[:, 1] * num_jobs + sym_pairs[:, 0]
    order = np.argsort(key)
    where = np.full(K * num_jobs, -1, dtype=np.int64)
    where[key] = np.arange(n_sum)
    prev = np.full(n_sum, -1, dtype=np.int64)
    sk = key[order]
    same = np.concatenate([[False], (sk[1:] // num_jobs) == (sk[:-1] // num_jobs)])
    prev[order[1:]] = np.where(same[1:], order[:-1], -1)
    ykey = y_node * num_jobs + y_job
    hit = where[ykey]
    ym, pm = hit >= 0, prev >= 0
    sums = (np.concatenate([np.arange(n_sum), np.flatnonzero(pm), hit[ym]]),
            np.concatenate([zcol, zcol[prev[pm]], m_col[ym]]),
            np.concatenate([np.ones(n_sum), -np.ones(int(pm.sum())), -np.ones(int(ym.sum()))]),
            np.full(n_sum, ROW_SYM_SUM), key, np.zeros(n_sum), np.zeros(n_sum))
    nxt = np.zeros(K, dtype=np.int64)
    for members in classes:
        nxt[members[:-1]] = members[1:]
    okey = nxt[sym_pairs[:, 1]] * num_jobs + sym_pairs[:, 0]
    lookup = np.full(K * num_jobs, -1, dtype=np.int64)
    lookup[okey] = np.arange(n_sum)
    hit = lookup[ykey]
    ym = hit >= 0
    orders = (np.concatenate([hit[ym], np.arange(n_sum)]), np.concatenate([m_col[ym], zcol]),
              np.concatenate([np.ones(int(ym.sum())), -np.ones(n_sum)]),
              np.full(n_sum, ROW_SYM), okey, np.full(n_sum, -np.inf), np.zeros(n_sum))
    return sym_pairs, [sums, orders]

