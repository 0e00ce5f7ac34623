"""The benchmarks' shared command-line forms."""

from __future__ import annotations


def seed_list(spec: str) -> list[int]:
    """Seeds from ``0-11`` (a range), ``3`` (a count: seeds 0-2), ``0,5,7`` or ``none``."""
    if spec == "none":
        return []
    if "-" in spec:
        a, b = spec.split("-")
        return list(range(int(a), int(b) + 1))
    if "," in spec:
        return [int(s) for s in spec.split(",")]
    return list(range(int(spec)))
