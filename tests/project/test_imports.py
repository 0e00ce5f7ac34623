"""The layers point down: instances <- heuristics, milp <- matheuristics <- gpusched."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import paths
import pytest

ROOT = paths.ROOT

ALLOWED = {
    "instances": set(),
    "heuristics": {"instances"},
    "milp": {"instances"},
    "matheuristics": {"instances", "heuristics", "milp"},
}
"""Package -> the project's packages it may import."""

PROJECT = {"instances", "heuristics", "milp", "matheuristics", "gpusched"}


def _imports(path: Path) -> set[str]:
    """Top-level project packages a source file imports (anywhere in it, absolute imports)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found & PROJECT


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_a_package_imports_only_the_layers_below_it(package: str) -> None:
    files = sorted((ROOT / package).rglob("*.py"))
    assert files
    bad = {str(f.relative_to(ROOT)): sorted(_imports(f) - ALLOWED[package] - {package})
           for f in files}
    assert not {f: b for f, b in bad.items() if b}


@pytest.mark.parametrize(("package", "absent"), [
    ("heuristics", "milp"), ("heuristics", "matheuristics"), ("milp", "heuristics"),
    ("milp", "matheuristics"), ("instances", "heuristics"),
])
@pytest.mark.slow
def test_importing_a_package_loads_no_layer_above_or_beside_it(package: str, absent: str) -> None:
    code = (f"import sys, {package}; "
            f"assert {absent!r} not in sys.modules, sorted(m for m in sys.modules if "
            f"m.split('.')[0] == {absent!r})")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


@pytest.mark.slow
def test_the_registry_finds_the_matheuristics_through_entry_points() -> None:
    code = ("import sys, heuristics; names = list(heuristics.METHODS); "
            "assert 'lns' in names and 'best' in names, names; "
            "assert 'matheuristics' in sys.modules and 'milp' in sys.modules")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
