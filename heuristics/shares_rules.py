"""FGD's six packing policies as placement rules of the version 3 heuristics (docs/packing-time.md).

``heuristics.listsched.list_schedule(inst, placement="dotprod")`` and
``gpusched.solve(inst, "list", placement="fgd")`` place each job, at its
earliest start with a valid placement, on the node the policy scores highest
(:mod:`heuristics.packing.scores`) on the node's state over the run (each
GPU's least free milli over the run, the least free CPU), ties to the
earliest node; :mod:`heuristics._shares_rules` is the compiled chooser.
``random`` takes a seed as ``"random:SEED"`` (``"random"``: seed 0). The
serial decoder (``list``, ``list-peak``, ``sampling``, ``local-search``) and
the public :func:`heuristics.shares.fit` / :func:`heuristics.shares.occupy`
read them; the parallel scheme refuses them. The rules need a version 3
instance: on version 1 and 2 the placement rules stay those of
:data:`heuristics.placement.PLACEMENTS`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _shares_rules as compiled
from ._shares_state import SharesArrays
from .packing import FGD_POLICIES
from .placement import PLACEMENTS, check_placement
from .placement_rules import resolve_placement

__all__ = ["POLICY_RULES", "V3_PLACEMENTS", "decode", "find", "note", "rule_code", "with_aux"]

POLICY_RULES: tuple[str, ...] = FGD_POLICIES
"""FGD's six policies, in the paper's order; codes ``3 ..`` after :data:`PLACEMENTS`."""

V3_PLACEMENTS: tuple[str, ...] = (*PLACEMENTS, *POLICY_RULES)
"""Every placement rule of the version 3 heuristics (``random`` also as ``random:SEED``)."""


def rule_code(placement: Any) -> tuple[int, int]:
    """``(code, seed)`` of a built-in version 3 placement rule (a name of
    :data:`heuristics.placement_rules.PLACEMENT_RULES`, or ``random:SEED``).

    Raises
    ------
    ValueError
        For an unknown rule, or a user's rule (which runs in :mod:`heuristics.user_decode`).
    """
    entry = resolve_placement(placement)
    if not entry.builtin:
        raise ValueError(f"placement: {entry.name!r} is a user's rule; it does not run in the "
                         "version 3 kernels (heuristics.user_decode runs it)")
    base = entry.name.partition(":")[0]
    if base in POLICY_RULES:
        return compiled.FIRST + POLICY_RULES.index(base), entry.seed
    return check_placement(base), 0


def with_aux(rows: np.ndarray, rule: int, seed: int, sizes: np.ndarray) -> np.ndarray:
    """``rows`` with the rows a policy rule keeps: for ``clustering`` each node's jobs per class
    and slot, and the seed's row; unchanged for the kernel's own rules."""
    if rule < compiled.FIRST:
        return rows
    K, T = sizes.size, rows.shape[1]
    extra = K * (int(sizes.max()) + 1) if rule == compiled.CLUSTERING else 0
    out = np.zeros((rows.shape[0] + extra + 1, T), dtype=np.int64)
    out[: rows.shape[0]] = rows
    out[-1, 0] = seed
    return out


def _inputs(rows: np.ndarray, st: SharesArrays,
            n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The random draws of the state's seed (those of :func:`heuristics.packing.place`) and FGD's
    target workload frequencies over the instance's one-node jobs."""
    rng = np.random.default_rng(int(rows[-1, 0]))
    u_node, u_gpu = rng.random(n), rng.random(n)
    shape, shapes = st.job_shape, st.shape_cpu.size
    counts = np.bincount(shape[shape >= 0], minlength=shapes)[:shapes].astype(float)
    total = counts.sum()
    return u_node, u_gpu, counts / total if total else counts


def decode(rows: np.ndarray, st: SharesArrays, rule: int, order: np.ndarray,
           jobs: np.ndarray, start: np.ndarray, place: np.ndarray, span: int,
           fifo: bool) -> None:
    """:func:`heuristics._shares_decode.decode` under any version 3 rule (the serial decoder)."""
    kernel: Any = compiled.decode  # a numba dispatcher
    kernel(rows, st, rule, order, jobs, start, place, span, fifo, *_inputs(rows, st, jobs.shape[1]))


def find(rows: np.ndarray, st: SharesArrays, rule: int, j: int, g: int, p: int,
         lo: int, hi: int, *scratch: np.ndarray) -> tuple[int, int, int]:
    """:func:`heuristics._shares_fit.find` under a policy rule (``rule >= 3``)."""
    kernel: Any = compiled.find
    return kernel(rows, st, rule, j, g, p, lo, hi, *scratch,  # type: ignore[no-any-return]
                  *_inputs(rows, st, st.job_milli.size))


def note(rows: np.ndarray, st: SharesArrays, rule: int, j: int, g: int, s: int,
         p: int, nodes: np.ndarray) -> None:
    """After an occupy: keep a policy rule's own rows (clustering's classes) up to date."""
    if rule >= compiled.FIRST:
        compiled.note(rows, st, rule, j, g, s, p, nodes, len(nodes))
