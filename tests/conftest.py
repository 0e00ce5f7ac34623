"""The oracles on the path, and the Hypothesis profiles: the same examples every run.

The tests mirror the packages (``tests/instances/``, ``tests/heuristics/``, ...);
what several of them hold the code to (the plain references, brute force, the
instance strategies, hand-made rows, the repository's paths) lives once in
``tests/oracles/``, put on ``sys.path`` here so a test imports ``brute`` or
``reference`` from any folder.

``make test`` (and CI) loads ``repeatable``: every property test runs a fixed,
derandomized set of examples, so a run that passes once passes again and a
failure is the code's, not the draw's. ``make fuzz`` loads ``explore``: fresh
random examples each run (kept in the local example database), to look for
new bugs; a failure it finds becomes a regression test.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from hypothesis import settings

sys.path.insert(0, str(Path(__file__).resolve().parent / "oracles"))

settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("GPUSCHED_HYPOTHESIS", "repeatable"))
