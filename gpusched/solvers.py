"""Former name of :mod:`gpusched.dispatch`, kept so that ``from .solvers import ...`` still works."""

from .dispatch import EXACT_METHODS, method_names, solve

__all__ = ["EXACT_METHODS", "method_names", "solve"]
