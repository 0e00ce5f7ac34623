"""FGD's BestFit written as a user's placement rule through section 14's view: in numpy
(called once per pod) and compiled with numba (inside the compiled loop). The tests hold
both to the built-in ``bestfit`` placement for placement; benchmarks/bench_user_rules.py
times them beside it.
"""

from __future__ import annotations

import numpy as np
from numba import njit


def bestfit(view, job):  # type: ignore[no-untyped-def]
    """FGD's BestFit: the least CPU and GPU left over, half weight each."""
    gpu_free = np.where(view.gpu_free_milli > 0, view.gpu_free_milli, 0).sum(axis=1)
    left = ((view.cpu_free_milli - job.cpu_milli) / 128000.0 * 0.5
            + (gpu_free - job.gpus * job.gpu_milli) / 8000.0 * 0.5)
    return np.clip(np.trunc((1.0 - left) * 100.0), 0, 100)


@njit(cache=True)
def bestfit_compiled(view, job):  # type: ignore[no-untyped-def]  # pragma: no cover (compiled)
    """The same rule, compiled."""
    out = np.empty(view.gpus.shape[0])
    for k in range(out.shape[0]):
        g = 0
        for i in range(view.gpu_free_milli.shape[1]):
            if view.gpu_free_milli[k, i] > 0:
                g += view.gpu_free_milli[k, i]
        s = 0.0
        s += (view.cpu_free_milli[k] - job.cpu_milli) / 128000.0 * 0.5
        s += (g - job.gpus * job.gpu_milli) / 8000.0 * 0.5
        v = int((1.0 - s) * 100.0)
        out[k] = 0 if v < 0 else (100 if v > 100 else v)
    return out
