"""Index arithmetic over the runs of columns: the slots a column covers, and the largest loads.

Shared by :mod:`milp.builder` (pool and node rows) and :mod:`milp.shares`
(the rows of model version 3). Every function keeps the dtype of the loads
it is given (integers for GPUs, floats for fluid amounts).
"""

from __future__ import annotations

import numpy as np

__all__ = ["node_load", "pool_load", "runs"]


def runs(starts: np.ndarray, lens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For runs ``[starts[i], starts[i] + lens[i])``: each slot's run index and the slot."""
    idx = np.repeat(np.arange(starts.size, dtype=np.int64), lens)
    first = np.concatenate([[0], np.cumsum(lens)])[:-1]
    return idx, np.arange(idx.size, dtype=np.int64) - np.repeat(first, lens) + starts[idx]


def pool_load(T: int, col_group: np.ndarray, col_start: np.ndarray, col_p: np.ndarray,
              load: np.ndarray) -> np.ndarray:
    """Largest load a slot could see: every group covering it at full size (``load`` each)."""
    K = load.size
    has = np.zeros(K, dtype=bool)
    has[col_group] = True
    lo_s = np.full(K, T, dtype=np.int64)
    hi_e = np.zeros(K, dtype=np.int64)
    np.minimum.at(lo_s, col_group, col_start)
    np.maximum.at(hi_e, col_group, col_start + col_p)
    diff = np.zeros(T + 1, dtype=load.dtype)
    np.add.at(diff, lo_s[has], load[has])
    np.add.at(diff, hi_e[has], -load[has])
    return np.cumsum(diff)[:T]


def node_load(K: int, T: int, pair: np.ndarray, lo: np.ndarray, dur: np.ndarray,
              coef: np.ndarray) -> np.ndarray:
    """``(K, T)`` largest load a node could see: each (group, node) pair once, over its span.

    ``pair`` is ``group * K + node`` per entry, ``coef`` the entry's load.
    """
    up, inv = np.unique(pair, return_inverse=True)
    first = np.full(up.size, T, dtype=np.int64)
    last = np.zeros(up.size, dtype=np.int64)
    top = np.zeros(up.size, dtype=coef.dtype)
    np.minimum.at(first, inv, lo)
    np.maximum.at(last, inv, lo + dur)
    np.maximum.at(top, inv, coef)
    res = up % K
    diff = np.zeros(K * (T + 1), dtype=coef.dtype)
    np.add.at(diff, res * (T + 1) + first, top)
    np.add.at(diff, res * (T + 1) + last, -top)
    return np.cumsum(diff.reshape(K, T + 1), axis=1)[:, :T]
