"""What ``make`` installs: every package shipped, the notebook tools in the install."""

from __future__ import annotations

import re
import tomllib

import paths

ROOT = paths.ROOT


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_package_is_shipped() -> None:
    from setuptools import find_packages

    include = _pyproject()["tool"]["setuptools"]["packages"]["find"]["include"]
    shipped = set(find_packages(where=str(ROOT), include=include))
    for top in ("instances", "heuristics", "milp", "matheuristics", "gpusched"):
        for init in (ROOT / top).rglob("__init__.py"):
            pkg = ".".join(init.parent.relative_to(ROOT).parts)
            assert pkg in shipped, f"pyproject.toml packages.find: {pkg} is not shipped"
    assert not any(p.split(".")[0] in ("tests", "benchmarks", "notebooks") for p in shipped)


def test_make_installs_what_the_notebooks_are_opened_with() -> None:
    extras = _pyproject()["project"]["optional-dependencies"]
    names = {re.split(r"[<>=\[ ]", r, maxsplit=1)[0] for r in extras["notebooks"]}
    assert {"jupyterlab", "nbconvert", "ipykernel"} <= names
    assert any(r.startswith("gpusched[") and "notebooks" in r for r in extras["dev"])
    makefile = (ROOT / "Makefile").read_text()
    install = [line for line in makefile.splitlines() if "pip install" in line and "-e" in line]
    assert install and all("notebooks" in line or "dev" in line for line in install)
