"""gpusched: GPU pool scheduling, FIFO against constraint-aware allocation, with exact bounds.

This package holds the layer above the core packages (``instances`` at the
bottom; ``heuristics`` and ``milp`` beside each other; ``matheuristics`` above
both): one dispatch for every method by name (:mod:`gpusched.dispatch`), the
command line, the benchmark harness, tables and plots.

The public names (:func:`solve`, :func:`simulate`, ...) are imported when first
used, so that ``import gpusched`` (and the command line's start) stays cheap:
they pull in numpy, numba and the solvers.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .dispatch import EXACT_METHODS, method_names, solve
    from .simulate import SimResult, simulate

    __version__: str

__all__ = ["EXACT_METHODS", "SimResult", "__version__", "method_names", "simulate", "solve"]

_LAZY: dict[str, str] = {
    "EXACT_METHODS": ".dispatch",
    "method_names": ".dispatch",
    "solve": ".dispatch",
    "SimResult": ".simulate",
    "simulate": ".simulate",
}
"""Public name -> the module that defines it, imported on first use."""


def _version() -> str:
    """The installed distribution's version (:mod:`importlib.metadata` takes a while to import)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gpusched")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0.0.0+local"


def __getattr__(name: str) -> Any:
    """A public name of :data:`_LAZY` (or ``__version__``), imported now (and kept)."""
    if name == "__version__":
        globals()[name] = value = _version()
        return value
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | {"__version__"})


class _Package(types.ModuleType):
    """The package's module: importing the subpackage :mod:`gpusched.simulate` must not
    hide the function :func:`simulate` of the same name (the import system sets a
    loaded submodule as an attribute of its package)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "simulate" and isinstance(value, types.ModuleType):
            return  # the function stays (or is imported on first use)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
