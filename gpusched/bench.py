"""The benchmark harness under its first name: every public name of :mod:`gpusched.sweep`.

Kept so that ``from gpusched import bench`` and ``from gpusched.bench import ...``
(notebooks, scripts) go on working; new code imports :mod:`gpusched.sweep`.
"""

from .sweep import *  # noqa: F403
from .sweep import __all__ as __all__
from .sweep.config import config_from_dict as config_from_dict  # the fuzz test's entry point
