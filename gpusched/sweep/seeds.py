"""The seeds of a sweep: ``5``, ``"0-4"``, ``"1,3,7"`` or a list, read once for
the families (:mod:`.config`) and the scenarios (:mod:`.scenarios`).

A bare number is a count (``5``: seeds 0 to 4), as scripts use it; one seed is
the range ``"5-5"`` or the list ``[5]`` (``--seed 5`` on the command line).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

__all__ = ["MAX_SEEDS", "describe_seeds", "parse_seeds"]

MAX_SEEDS = 100_000
"""Most seeds a sweep accepts (checked before any list of them is built)."""


def parse_seeds(spec: Any) -> tuple[int, ...]:
    """Seeds from ``5`` (a count: 0..4), ``"0-4"``, ``"1,3,7"`` or a list of integers.

    Raises
    ------
    ValueError
        For anything else, or a negative seed; for the count 0, saying how to ask for
        seed 0 (``--seed 0`` or ``--seeds 0-0``).
    """
    if isinstance(spec, bool):
        raise ValueError(f"seeds: expected N, A-B, a comma list or a list, got {spec!r}")
    if isinstance(spec, int):
        if spec == 0:
            raise ValueError("seeds: 0 is a count of seeds (N runs seeds 0 to N-1), and a "
                             "count must be at least 1; for seed 0 alone give --seed 0 or "
                             "--seeds 0-0 (in a sweep file: seeds = [0])")
        if not 1 <= spec <= MAX_SEEDS:
            raise ValueError(f"seeds: a count (N runs seeds 0 to N-1) must be in "
                             f"[1, {MAX_SEEDS}], got {spec}")
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


def describe_seeds(seeds: Sequence[int]) -> str:
    """``seed 5``, ``seeds 0-4 (5 seeds)``, ``seeds 3, 7``: which seeds, runs of three or more
    consecutive ones as ``A-B``."""
    seeds = list(seeds)
    if not seeds:
        return "no seeds"
    if len(seeds) == 1:
        return f"seed {seeds[0]}"
    parts: list[str] = []
    i = 0
    while i < len(seeds):
        j = i
        while j + 1 < len(seeds) and seeds[j + 1] == seeds[j] + 1:
            j += 1
        if j - i >= 2:
            parts.append(f"{seeds[i]}-{seeds[j]}")
        else:
            parts.extend(str(x) for x in seeds[i:j + 1])
        i = j + 1
    return f"seeds {', '.join(parts)} ({len(seeds)} seeds)"
