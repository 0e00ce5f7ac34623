"""Calling a user's placement rule: its scores checked, the node and the GPUs chosen (section 14).

The job goes to the node with the highest score among those where
``view.fits`` is true, ties to the earliest node; a NaN or ``-inf`` score
rules a node out. Without the rule's own ``gpus``, a whole-GPU job takes
the lowest-indexed wholly free GPUs and a shared job the GPU with the least
free milli that still fits (the first of equals). Anything else a rule
returns, or an exception it raises, is a :class:`ValueError` naming the
rule and the job.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from instances.resources import FULL_GPU_MILLI

from .placement_rules import PlacementRule
from .view import JobView, NodeView

__all__ = ["choose_gpus", "choose_node", "default_gpus", "rule_error"]


def rule_error(entry: PlacementRule, job: JobView, what: str) -> ValueError:
    """The one-line error of a rule that misbehaved on ``job``."""
    return ValueError(f"placement: rule {entry.name!r} on job {job.name!r} (index {job.index}): {what}")


def choose_node(entry: PlacementRule, view: NodeView, job: JobView) -> int:
    """The node ``entry``'s scores pick for ``job`` on ``view``, or -1 when none is left.

    Raises
    ------
    ValueError
        When the rule raises, or returns anything but one real number per node.
    """
    try:
        raw = entry.score(view, job)
    except Exception as exc:  # a user's rule: whatever it raises is reported as its error
        raise rule_error(entry, job, f"raised {type(exc).__name__}: {exc}") from exc
    try:
        scores = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise rule_error(entry, job, f"returned {type(raw).__name__}, not numbers "
                                     f"({exc})") from exc
    n = view.fits.shape[0]
    if scores.shape != (n,):
        raise rule_error(entry, job, f"returned scores of shape {scores.shape}, "
                                     f"expected one per node ({n},)")
    masked = np.where(view.fits & (scores == scores), scores, -np.inf)  # NaN != NaN: out
    best = int(np.argmax(masked))  # the first of the highest: ties to the earliest node
    return best if masked[best] > -np.inf else -1


@njit(cache=True)
def default_gpus(free: np.ndarray, gpus: int, milli: int) -> np.ndarray:  # pragma: no cover
    """The GPUs of a node (``free``: each GPU's free milli, -1 past its GPUs) a job takes by default.

    A whole-GPU job the lowest-indexed wholly free GPUs; a share the GPU with
    the least free milli that still fits, the first of equals; none for a
    CPU-only job. Empty when the node cannot host it. Compiled, so that the
    compiled packing loop and the plain paths take the same GPUs.
    """
    out = np.empty(max(gpus, 0), dtype=np.int64)
    if gpus == 1 and milli < FULL_GPU_MILLI:
        best = -1
        for i in range(free.shape[0]):
            if free[i] >= milli and (best < 0 or free[i] < free[best]):
                best = i
        if best < 0:
            return out[:0]
        out[0] = best
        return out
    taken = 0
    for i in range(free.shape[0]):
        if taken < gpus and free[i] >= FULL_GPU_MILLI:
            out[taken] = i
            taken += 1
    return out if taken == gpus else out[:0]


def choose_gpus(entry: PlacementRule, view: NodeView, job: JobView, node: int) -> list[int]:
    """The GPU indices ``job`` takes on ``node``: the rule's own ``gpus`` if it has one, checked.

    Raises
    ------
    ValueError
        When the rule's ``gpus`` raises or names GPUs that cannot host the job.
    """
    free = view.gpu_free_milli[node]
    own = entry.gpus
    if own is None:
        return [int(i) for i in default_gpus(free, job.gpus, job.gpu_milli)]
    try:
        picked = [int(i) for i in own(view, job, node)]
    except Exception as exc:  # a user's rule
        raise rule_error(entry, job, f"gpus() raised {type(exc).__name__}: {exc}") from exc
    shared = job.gpus == 1 and job.gpu_milli < FULL_GPU_MILLI
    need = job.gpu_milli if shared else FULL_GPU_MILLI
    width = int(view.gpus[node])
    bad = [i for i in picked if not 0 <= i < width or free[i] < need]
    if len(picked) != job.gpus or len(set(picked)) != len(picked) or bad:
        raise rule_error(entry, job, f"gpus() returned {picked} on node {node}: the job needs "
                                     f"{job.gpus} distinct GPU(s) of this node with {need} milli "
                                     f"free (free: {free[:width].tolist()})")
    return sorted(picked)
