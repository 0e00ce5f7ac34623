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


def test_one_version_scheme_stated() -> None:
    """The package version's major is the model version; README and docs say so."""
    from gpusched.cli import version_text

    version = _pyproject()["project"]["version"]
    assert re.fullmatch(r"3\.0\.0\.dev\d+", version), version  # model version 3, in development
    text = version_text(version)
    assert text.startswith(f"gpusched {version} (model version 3, in development; "
                           "benchmark library edition ")
    from instances.library import load_library

    assert text.endswith(f"edition {load_library().version})")
    assert version_text("3.1.0") == f"gpusched 3.1.0 (model version 3; benchmark library edition " \
                                    f"{load_library().version})"
    readme = (ROOT / "README.md").read_text()
    assert f"# {version}: the major is the model version" in readme
    assert f"(a date edition of its own: {load_library().version})" in readme
    model = (ROOT / "docs" / "model.md").read_text()
    assert "## Versions" in model and f"`{version}`" in model and "date edition" in model


def test_version_flag_prints_the_scheme(capsys) -> None:
    import pytest

    from gpusched.cli import main

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert "(model version " in capsys.readouterr().out


def test_license_is_an_spdx_string() -> None:
    """setuptools >= 77 warns on every install about ``license = { text = ... }``."""
    data = _pyproject()
    assert data["project"]["license"] == "Apache-2.0"
    requires = data["build-system"]["requires"]
    floor = next(r for r in requires if r.startswith("setuptools"))
    assert tuple(int(x) for x in floor.split(">=")[1].split(".")) >= (77,)
