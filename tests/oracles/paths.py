"""Where the tests find the repository and their shared data, whatever folder they sit in."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository's root (pyproject.toml, docs/, the packages)."""

DATA = ROOT / "tests" / "data"
"""The files the tests share: the broken corpus, trace samples, node files."""
