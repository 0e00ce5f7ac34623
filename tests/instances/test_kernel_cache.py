"""Numba caches are dropped when any source a package's kernels may reach changes."""

from __future__ import annotations

from pathlib import Path

from instances.kernel_cache import STAMP, guard


def _package(root: Path, name: str, text: str) -> Path:
    pkg = root / name
    (pkg / "__pycache__").mkdir(parents=True)
    (pkg / "__init__.py").write_text(text)
    return pkg


def _cache(pkg: Path) -> list[Path]:
    files = [pkg / "__pycache__" / "k.f-1.py311.nbi", pkg / "__pycache__" / "k.f-1.py311.1.nbc"]
    for f in files:
        f.write_bytes(b"machine code")
    return files


def test_a_changed_callee_in_another_package_drops_the_callers_cache(tmp_path):
    caller = _package(tmp_path, "caller", "x = 1\n")
    callee = _package(tmp_path, "callee", "y = 1\n")
    guard(caller, callee)  # first sight: digest written
    assert (caller / "__pycache__" / STAMP).is_file()
    kept = _cache(caller) + _cache(callee)
    assert guard(caller, callee) is False  # nothing changed: caches kept
    assert all(f.exists() for f in kept)
    (callee / "__init__.py").write_text("y = 2\n")  # only the callee changed
    assert guard(caller, callee) is True
    assert not any(f.exists() for f in kept)
    assert guard(caller, callee) is False


def test_a_new_file_counts_as_a_change(tmp_path):
    pkg = _package(tmp_path, "pkg", "")
    guard(pkg)
    files = _cache(pkg)
    (pkg / "more.py").write_text("z = 0\n")
    assert guard(pkg) is True
    assert not any(f.exists() for f in files)


def test_the_project_packages_are_guarded():
    import heuristics
    import milp

    for mod in (heuristics, milp):
        stamp = Path(mod.__file__).parent / "__pycache__" / STAMP
        assert stamp.is_file(), f"{mod.__name__} has no digest of its kernels' sources"
