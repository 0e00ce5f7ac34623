"""The seeds of a sweep: ``5``, ``"0-4"``, ``"1,3,7"`` or a list, read once for
the families (:mod:`.config`) and the scenarios (:mod:`.scenarios`)."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["MAX_SEEDS", "parse_seeds"]

MAX_SEEDS = 100_000
"""Most seeds a sweep accepts (checked before any list of them is built)."""


def parse_seeds(spec: Any) -> tuple[int, ...]:
    """Seeds from ``5`` (0..4), ``"0-4"``, ``"1,3,7"`` or a list of integers.

    Raises
    ------
    ValueError
        For anything else, or a negative seed.
    """
    if isinstance(spec, bool):
        raise ValueError(f"seeds: expected N, A-B, a comma list or a list, got {spec!r}")
    if isinstance(spec, int):
        if not 1 <= spec <= MAX_SEEDS:
            raise ValueError(f"seeds: a count must be in [1, {MAX_SEEDS}], got {spec}")
        return tuple(range(spec))
    if isinstance(spec, (list, tuple)):
        out = []
        for s in spec:
            if isinstance(s, bool) or not isinstance(s, int) or s < 0:
                raise ValueError(f"seeds: must be non-negative integers, got {s!r}")
            out.append(s)
        if not out:
            raise ValueError("seeds: the list is empty")
        if len(out) > MAX_SEEDS:
            raise ValueError(f"seeds: at most {MAX_SEEDS} seeds, got {len(out)}")
        return tuple(dict.fromkeys(out))
    if isinstance(spec, str):
        text = spec.strip()
        if re.fullmatch(r"\d+", text):
            return parse_seeds(int(text))
        m = re.fullmatch(r"(\d+)\s*-\s*(\d+)", text)
        if m:
            a, b = int(m.group(1)), int(m.group(2))
            if b < a:
                raise ValueError(f"seeds: empty range {text!r}")
            if b - a + 1 > MAX_SEEDS:
                raise ValueError(f"seeds: at most {MAX_SEEDS} seeds, got the range {text!r}")
            return tuple(range(a, b + 1))
        if re.fullmatch(r"\d+(\s*,\s*\d+)+", text):
            return parse_seeds([int(x) for x in text.split(",")])
    raise ValueError(f"seeds: expected N, A-B, a comma list or a list, got {spec!r}")
