"""gpusched: GPU pool scheduling, FIFO against constraint-aware allocation, with exact bounds.

This package holds the layer above the three core packages (``instances``,
``heuristics``, ``milp``): one dispatch for every method, the command line,
and (as they land) the benchmark harness, tables and plots.
"""

from importlib.metadata import PackageNotFoundError, version

from .simulate import SimResult, simulate
from .solvers import EXACT_METHODS, method_names, solve

try:
    __version__ = version("gpusched")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+local"

__all__ = ["EXACT_METHODS", "SimResult", "__version__", "method_names", "simulate", "solve"]
