"""Pricing: the configuration of one node type worth most at given shape prices (a MIP).

A GPU holding shares holds a sub-multiset of a **maximal pattern**: GPU milli
values (those of the packing's shares) summing to at most 1000 with no room
for one more. Slots are typed by their milli value, so a set of shares fits
``z_q`` GPUs of pattern ``q`` iff, for every milli value, the shares of that
value are at most the slots of that value. For node type ``t`` and profits
``p_s = value_s - price_s``, pricing maximises ``sum p_s (w_s + y_s)`` over
whole-GPU pods ``w_s``, shares ``y_s`` and pattern counts ``z_q``::

    sum_s g_s w_s + sum_q z_q <= G                 (whole GPUs and share GPUs)
    sum_{s of milli m} y_s <= sum_q slots_qm z_q   (for every milli value m)
    sum_s c_s (w_s + y_s) <= C, same for memory
    w_s, y_s <= d_s                                (pods there are)

This has no symmetry between GPUs. Only shapes with a positive profit enter.
HiGHS solves it (``mip_rel_gap`` 0); its dual bound is what the bound uses, so
a pricing cut short by the time limit still gives a valid (weaker) bound.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache

import numpy as np

from instances.packing import GPU_MILLI

from ..highs import silence_banner
from .columns import Column, Groups

__all__ = ["Priced", "maximal_patterns", "price_type", "stdout_closed"]

EPS = 1e-9


@dataclass(frozen=True)
class Priced:
    """What pricing found: the best configuration (``None``: none with positive profit),
    its profit, the proven upper bound on any configuration's profit, and whether proven
    optimal."""

    column: Column | None
    profit: float
    bound: float
    optimal: bool


@contextmanager
def stdout_closed() -> Iterator[None]:
    """The C-level standard output sent to the null device for a while: HiGHS's MIP prints
    debug lines there whatever ``output_flag`` says, which would break ``--json`` output."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


@cache
def maximal_patterns(sizes: tuple[int, ...]) -> np.ndarray:
    """``(patterns, len(sizes))``: how many of each size each maximal pattern holds."""
    order = sorted(range(len(sizes)), key=lambda i: -sizes[i])
    smallest = min(sizes)
    out: list[list[int]] = []
    cur = [0] * len(sizes)

    def rec(i: int, left: int) -> None:
        if i == len(order):
            if left < smallest:
                out.append(list(cur))
            return
        s = sizes[order[i]]
        for k in range(left // s, -1, -1):
            cur[order[i]] = k
            rec(i + 1, left - k * s)
        cur[order[i]] = 0

    rec(0, GPU_MILLI)
    return np.array(out, dtype=np.int64).reshape(len(out), len(sizes))


PATTERNS_FROM_GPUS = 4
"""Nodes with at least this many GPUs are priced with patterns; smaller ones GPU by GPU
(with one or two GPUs there is little symmetry, and patterns are many)."""

Rows = list[tuple[list[int], list[float], float, float]]


def _caps(gr: Groups, t: int, shapes: list[int]) -> list[int]:
    G, C, M = int(gr.t_gpus[t]), int(gr.t_cpu[t]), int(gr.t_mem[t])
    out = []
    for s in shapes:
        c = int(gr.count[s])
        if gr.cpu[s] > 0:
            c = min(c, C // int(gr.cpu[s]))
        if gr.mem[s] > 0:
            c = min(c, M // int(gr.mem[s]))
        per = G // int(gr.gpus[s]) if gr.milli[s] == GPU_MILLI else G * (GPU_MILLI // int(gr.milli[s]))
        out.append(min(c, per))
    return out


def price_type(gr: Groups, t: int, profit: np.ndarray, time_limit: float) -> Priced:
    """The most profitable configuration of node type ``t`` (see the module docstring)."""
    import highspy

    shapes = [int(s) for s in np.flatnonzero(gr.fits[t] & (profit > EPS))]
    if not shapes:
        return Priced(None, 0.0, 0.0, True)
    G, C, M = int(gr.t_gpus[t]), int(gr.t_cpu[t]), int(gr.t_mem[t])
    whole = [s for s in shapes if gr.milli[s] == GPU_MILLI]
    share = [s for s in shapes if gr.milli[s] < GPU_MILLI]
    items = whole + share
    nw, ns = len(whole), len(share)
    inf = highspy.kHighsInf
    caps = _caps(gr, t, items)
    if G >= PATTERNS_FROM_GPUS:
        sizes = tuple(sorted({int(gr.milli[s]) for s in share}))
        pats = maximal_patterns(sizes) if sizes else np.zeros((0, 0), dtype=np.int64)
        n = nw + ns + pats.shape[0]
        cost = np.concatenate([profit[items], np.zeros(pats.shape[0])])
        hi = np.concatenate([caps, np.full(pats.shape[0], G)]).astype(np.float64)
        # per item, the columns holding its count (one: w_s or y_s)
        count_cols = [[i] for i in range(nw + ns)]
        rows: Rows = [([*range(nw), *range(nw + ns, n)],
                       [*(float(gr.gpus[s]) for s in whole), *([1.0] * pats.shape[0])], -inf,
                       float(G))]
        for v, size in enumerate(sizes):
            idx = [nw + i for i, s in enumerate(share) if gr.milli[s] == size]
            used = [int(q) for q in np.flatnonzero(pats[:, v])]
            rows.append((idx + [nw + ns + q for q in used],
                         [1.0] * len(idx) + [-float(pats[q, v]) for q in used], -inf, 0.0))
    else:
        # y_sk: shares of shape s on GPU k; u_k: GPU k holds shares
        n = nw + ns * G + G

        def y(i: int, k: int) -> int:
            return nw + i * G + k

        cost = np.concatenate([profit[whole], np.repeat(profit[share], G), np.zeros(G)])
        hi = np.concatenate([caps[:nw], np.repeat(
            [min(c, GPU_MILLI // int(gr.milli[s])) for c, s in zip(caps[nw:], share)], G),
            np.ones(G)]).astype(np.float64)
        count_cols = [[i] for i in range(nw)] + [[y(i, k) for k in range(G)] for i in range(ns)]
        u = [nw + ns * G + k for k in range(G)]
        rows = [([*range(nw), *u], [*(float(gr.gpus[s]) for s in whole), *([1.0] * G)], -inf,
                 float(G))]
        for k in range(G):
            rows.append(([*(y(i, k) for i in range(ns)), u[k]],
                         [*(float(gr.milli[s]) for s in share), -float(GPU_MILLI)], -inf, 0.0))
            if k:
                rows.append(([u[k - 1], u[k]], [1.0, -1.0], 0.0, inf))
        for i in range(ns):
            rows.append((count_cols[nw + i], [1.0] * G, -inf, float(caps[nw + i])))
    for res, cap in ((gr.cpu, C), (gr.mem, M)):
        idx = [c for cols in count_cols for c in cols]
        val = [float(res[s]) for s, cols in zip(items, count_cols) for _ in cols]
        rows.append((idx, val, -inf, float(cap)))
    xs, got, bound, optimal = _solve(n, cost, hi, rows, time_limit)
    if xs is None:
        return Priced(None, 0.0, max(bound, 0.0), False)
    if G >= PATTERNS_FROM_GPUS:
        col = _column(t, whole, share, sizes, pats, xs, gr)
    else:
        w = tuple(s for i, s in enumerate(whole) for _ in range(int(xs[i])))
        gpus = [tuple(s for i, s in enumerate(share) for _ in range(int(xs[nw + i * G + k])))
                for k in range(G)]
        col = Column(t, w, tuple(g for g in gpus if g))
    return Priced(col if got > EPS else None, got, max(bound, got), optimal)


def _solve(n: int, cost: np.ndarray, hi: np.ndarray, rows: Rows,
           time_limit: float) -> tuple[np.ndarray | None, float, float, bool]:
    """Solve the pricing MIP: solution (``None`` if none in time), its value, the dual
    bound, whether proven optimal."""
    import highspy

    silence_banner()
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("mip_rel_gap", 0.0)
    h.setOptionValue("mip_abs_gap", 1e-7)
    h.setOptionValue("time_limit", max(0.01, float(time_limit)))
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n, len(rows)
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = cost, np.zeros(n), hi
    lp.row_lower_ = np.array([r[2] for r in rows])
    lp.row_upper_ = np.array([r[3] for r in rows])
    lp.sense_ = highspy.ObjSense.kMaximize
    lp.integrality_ = [highspy.HighsVarType.kInteger] * n
    starts, index, value = [0], [], []
    for r in rows:
        index.extend(r[0])
        value.extend(r[1])
        starts.append(len(index))
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.array(starts, dtype=np.int32)
    lp.a_matrix_.index_ = np.array(index, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(value, dtype=np.float64)
    h.passModel(lp)
    with stdout_closed():
        h.run()
    optimal = h.modelStatusToString(h.getModelStatus()) == "Optimal"
    info = h.getInfo()
    # HiGHS's dual bound holds once it is proven or the search has nodes; stopped before
    # (the clock ran out in presolve) it is a placeholder, 0: the box bounds the MIP then
    searched = optimal or info.mip_node_count > 0
    bound = float(info.mip_dual_bound) if searched else math.inf
    if not math.isfinite(bound):
        bound = float(np.dot(cost, hi))
    if info.primal_solution_status != 2:
        return None, 0.0, bound, False
    xs = np.rint(np.asarray(h.getSolution().col_value)).astype(np.int64)
    got = float(np.dot(cost, xs))
    return xs, got, max(bound, got), optimal
def _column(t: int, whole: list[int], share: list[int], sizes: tuple[int, ...],
            pats: np.ndarray, xs: np.ndarray, gr: Groups) -> Column:
    """The configuration of a pricing solution: shares dealt into the pattern GPUs' slots."""
    nw, ns = len(whole), len(share)
    w = tuple(s for i, s in enumerate(whole) for _ in range(int(xs[i])))
    queue: dict[int, list[int]] = {}
    for i, s in enumerate(share):
        queue.setdefault(int(gr.milli[s]), []).extend([s] * int(xs[nw + i]))
    gpus = []
    for q in np.flatnonzero(xs[nw + ns:]):
        for _ in range(int(xs[nw + ns + q])):
            gpu = []
            for v, size in enumerate(sizes):
                for _ in range(int(pats[q, v])):
                    if queue.get(size):
                        gpu.append(queue[size].pop())
            if gpu:
                gpus.append(tuple(gpu))
    assert not any(queue.values()), "a share without a slot: the pattern rows are wrong"
    return Column(t, w, tuple(gpus))
