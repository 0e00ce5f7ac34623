"""The occupy of model version 3: a placement taken from the state of :mod:`heuristics._shares_state`.

:func:`take` lowers the GPU, node, CPU and memory rows over a job's run and
keeps the summary rows and the level rows true to them (docs/resources-heuristics.md,
"The state's rows"); it is inlined into the decoders' uncounted loops, as the
fit is.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._shares_state import FULL, SharesArrays, layout

__all__ = ["take"]


@njit(cache=True, nogil=True, inline="always")
def _set_levels(rows: np.ndarray, info: np.ndarray, wl: np.ndarray, ml: np.ndarray, k: int,
                u: int, wf0: int, wf1: int, mx0: int, mx1: int) -> None:  # pragma: no cover
    """Node ``k``'s level bits at slot ``u`` once its wholly free GPUs and its most free milli
    on a partly used GPU went from ``wf0``, ``mx0`` to ``wf1``, ``mx1``."""
    BB, LW, LM, W = info[0], info[1], info[2], info[3]
    word = k >> 6
    bit = np.int64(1) << np.int64(k & 63)
    if wf1 < wf0:
        for i in range(LW):
            if wf1 < wl[i] <= wf0:
                rows[BB + i * W + word, u] &= ~bit
    if mx1 < mx0:
        for i in range(LM):
            if mx1 < ml[i] <= mx0:
                rows[BB + (LW + i) * W + word, u] &= ~bit
    elif mx1 > mx0:
        for i in range(LM):
            if mx0 < ml[i] <= mx1:
                rows[BB + (LW + i) * W + word, u] |= bit


@njit(cache=True, nogil=True, inline="always")
def take(rows: np.ndarray, st: SharesArrays, j: int, g: int, s: int, p: int, nodes: np.ndarray,
         nn: int, gpus: np.ndarray, ngp: int) -> None:  # pragma: no cover
    """Occupy slots ``s .. s+p-1`` with job ``j`` on ``nodes[:nn]`` (GPUs ``gpus[:ngp]`` on one node)."""
    sizes, goff, milli, cpu, mem = st.sizes, st.gpu_offset, st.job_milli, st.job_cpu, st.job_memory
    info, wl, ml = st.level_info, st.whole_levels, st.share_levels
    K: int = sizes.shape[0]
    NG = goff[K]
    WF, MX, CP, ME, GB, C = layout(K, NG)
    m = milli[j]
    for e in range(nn):
        k = nodes[e]
        ng = goff[k + 1] - goff[k]
        r0 = GB + goff[k]
        for u in range(s, s + p):
            wf0, mx0 = rows[WF + k, u], rows[MX + k, u]
            if wf0 == sizes[k]:
                rows[C, u] -= sizes[k]
            if nn > 1:  # whole nodes: every GPU held (CPU and memory then bind nothing)
                for i in range(ng):
                    rows[r0 + i, u] = 0
                rows[WF + k, u] = 0
                rows[MX + k, u] = 0
                rows[GB - K + k, u] = 0
            else:
                newly = 0
                for e2 in range(ngp):
                    r = r0 + gpus[e2]
                    was = rows[r, u]
                    rows[r, u] = was - m
                    if was == FULL:
                        newly += 1
                rows[WF + k, u] = wf0 - newly
                rows[GB - K + k, u] -= m * ngp
                rows[0, u] -= newly
                if m < FULL:  # (a whole-GPU job leaves the partly used GPUs as they were)
                    r = r0 + gpus[0]
                    if rows[r, u] > mx0:
                        rows[MX + k, u] = rows[r, u]
                    elif rows[r, u] + m == mx0:
                        mx = 0
                        for i in range(ng):
                            f = rows[r0 + i, u]
                            if f < FULL and f > mx:
                                mx = f
                        rows[MX + k, u] = mx
                rows[CP + k, u] -= cpu[j]
                rows[ME + k, u] -= mem[j]
            _set_levels(rows, info, wl, ml, k, u, wf0, rows[WF + k, u], mx0, rows[MX + k, u])
    if nn > 1:
        for u in range(s, s + p):
            rows[0, u] -= g
