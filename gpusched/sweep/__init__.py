"""The benchmark harness: families x seeds x methods, in parallel, crash-safe and resumable.

:mod:`.config` (flags or a TOML file), :mod:`.seeds`, :mod:`.cells` (a cell,
its key and its row), :mod:`.work` (make and run cells), :mod:`.store` (the
results folder), :mod:`.runner` (this process, a pool or Dask), and
:mod:`.scenarios` with :mod:`.simulation` (replays against actual days).
"""

from . import cells, config, runner, scenarios, seeds, simulation, store, work
from .cells import *  # noqa: F403
from .config import *  # noqa: F403
from .runner import *  # noqa: F403
from .scenarios import *  # noqa: F403
from .seeds import *  # noqa: F403
from .simulation import *  # noqa: F403
from .store import *  # noqa: F403
from .work import *  # noqa: F403

__all__ = (cells.__all__ + config.__all__ + runner.__all__ + scenarios.__all__ + seeds.__all__
           + simulation.__all__ + store.__all__ + work.__all__)
