"""Numba's on-disk caches dropped when the sources they were compiled from changed.

The compiled kernels are cached beside their sources (``__pycache__/*.nbi``,
``*.nbc``). Numba checks a kernel's own file, not the files of the kernels it
calls, so after an edit to a callee in another module (or package) a cached
caller can run the old machine code, silently. :func:`guard` keeps one digest
of every source a package's kernels may reach (its own package and those it
calls) and removes the caches of those packages when the digest changes.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

__all__ = ["guard", "source_digest"]

logger = logging.getLogger(__name__)

STAMP = "numba-sources.sha256"
"""The digest's file, in the first package's ``__pycache__``."""


def source_digest(packages: list[Path]) -> str:
    """SHA-256 over the relative paths and contents of every ``.py`` file of ``packages``."""
    h = hashlib.sha256()
    for root in packages:
        for path in sorted(root.rglob("*.py")):
            h.update(f"{root.name}/{path.relative_to(root).as_posix()}\0".encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def guard(*packages: str | Path) -> bool:
    """Remove the numba caches of ``packages`` if their sources changed since the last call.

    ``packages`` are package folders (the caller's first). Returns whether
    caches were removed. Does nothing where the folder cannot be written (an
    installed, read-only copy: numba then caches elsewhere, by its own rules).
    """
    roots = [Path(p).resolve() for p in packages]
    stamp = roots[0] / "__pycache__" / STAMP
    try:
        digest = source_digest(roots)
        if stamp.is_file() and stamp.read_text().strip() == digest:
            return False
        stale = [f for root in roots for pattern in ("*.nbi", "*.nbc")
                 for f in root.rglob(f"__pycache__/{pattern}")]
        for f in stale:
            f.unlink(missing_ok=True)
        stamp.parent.mkdir(exist_ok=True)
        stamp.write_text(digest + "\n")
    except OSError as exc:  # read-only or racing writers: leave numba's rules alone
        logger.debug("numba cache guard skipped (%s)", exc)
        return False
    if stale:
        logger.info("sources changed: %d numba cache files removed", len(stale))
    return True
