"""How numbers leave the library: one rounding rule, one tolerance, one spelling.

Every figure that leaves the library (the checker's metrics, result rows, the
command line's JSON, a sweep's rows) goes through :func:`rounded`, which keeps
:data:`SIGNIFICANT_DIGITS` significant digits: float noise
(``191.53999999999996``) is dropped, and since the rounding is monotone a
rounded value never exceeds a rounded bound. :func:`tolerance` is the slack of
a comparison of a value with a bound; :func:`format_value` how the command line
prints them.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "RELATIVE_TOLERANCE",
    "SIGNIFICANT_DIGITS",
    "format_value",
    "rounded",
    "rounded_all",
    "tolerance",
]

SIGNIFICANT_DIGITS = 12
"""Significant digits kept by :func:`rounded` (float noise sits in the 16th and 17th)."""

RELATIVE_TOLERANCE = 1e-6
"""Relative slack with which values and bounds are compared (:func:`tolerance`)."""


def tolerance(value: float, floor: float = 1.0) -> float:
    """Slack for comparing ``value`` with a bound: :data:`RELATIVE_TOLERANCE` times the
    larger of ``|value|`` and ``floor`` (the MILP passes its smallest job value, so
    that tiny values are held to the same relative standard).
    """
    return RELATIVE_TOLERANCE * max(abs(value), floor)


def rounded(x: float) -> float:
    """``x`` to :data:`SIGNIFICANT_DIGITS` significant digits (non-finite ``x`` as it is)."""
    if not math.isfinite(x) or x == 0:
        return float(x)
    return float(f"{x:.{SIGNIFICANT_DIGITS}g}")


def rounded_all(obj: Any) -> Any:
    """``obj`` with every float :func:`rounded`, dicts, lists and tuples walked."""
    if isinstance(obj, bool) or obj is None or isinstance(obj, (int, str)):
        return obj
    if isinstance(obj, float):
        return rounded(obj)
    if isinstance(obj, dict):
        return {k: rounded_all(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [rounded_all(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(rounded_all(v) for v in obj)
    return obj


def format_value(x: float | None) -> str:
    """A value or a bound as the command line prints it: six significant digits,
    every digit of the integer part kept (``685.75``, ``701.937``, ``1234568``)."""
    if x is None:
        return "none"
    if not math.isfinite(x):
        return str(x)
    return f"{x:.0f}" if abs(x) >= 1e6 else f"{rounded(x):.6g}"
