"""The README and docs/: short enough to read, links that resolve, no file that is not shipped."""

from __future__ import annotations

import re
from pathlib import Path

import paths
import pytest

ROOT = paths.ROOT
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

LINK = re.compile(r"\]\(([^)#\s]+)(#[^)\s]*)?\)")


def test_readme_is_short() -> None:
    assert len((ROOT / "README.md").read_text()) <= 10_000


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_links_resolve(page: Path) -> None:
    text = page.read_text()
    for target, _ in LINK.findall(text):
        if "://" in target:
            continue
        path = (page.parent / target).resolve()
        assert path.exists(), f"{page.name}: broken link {target}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_file_outside_the_repository_is_cited(page: Path) -> None:
    text = page.read_text()
    assert "PROBLEM.md" not in text  # the specification is not shipped
