"""The rounded capacity rows: the mixed-integer rounding of a capacity row divided by ``d``.

Valid for every integer schedule, they tighten the LP relaxation (measured
in docs/milp.md); :func:`milp.build` adds them per binding capacity row.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["check_rounding", "rounded_coefficients"]


def check_rounding(rounding: Any) -> tuple[int, ...]:
    """The divisors of the rounded capacity rows, checked (integers >= 2).

    Raises
    ------
    ValueError
        ``rounding: must be a sequence of integers >= 2, got ...``.
    """
    divisors = tuple(rounding) if isinstance(rounding, (tuple, list, np.ndarray)) else None
    if divisors is None or not all(
        isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 2 for d in divisors
    ):
        raise ValueError(f"rounding: must be a sequence of integers >= 2, got {rounding!r}")
    return divisors


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

