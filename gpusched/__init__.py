"""gpusched: GPU pool scheduling, FIFO against constraint-aware allocation, with exact bounds.

This package holds the layer above the core packages (``instances`` at the
bottom; ``heuristics`` and ``milp`` beside each other; ``matheuristics`` above
both): one dispatch for every method by name (:mod:`gpusched.dispatch`), the
command line, the benchmark harness, tables and plots.
"""

from importlib.metadata import PackageNotFoundError, version

from .dispatch import EXACT_METHODS, method_names, solve
from .simulate import SimResult, simulate

try:
    __version__ = version("gpusched")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+local"

__all__ = ["EXACT_METHODS", "SimResult", "__version__", "method_names", "simulate", "solve"]
