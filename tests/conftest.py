"""Hypothesis profiles: the test suite draws the same examples every run.

``make test`` (and CI) loads ``repeatable``: every property test runs a fixed,
derandomized set of examples, so a run that passes once passes again and a
failure is the code's, not the draw's. ``make fuzz`` loads ``explore``: fresh
random examples each run (kept in the local example database), to look for
new bugs; a failure it finds becomes a regression test.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("GPUSCHED_HYPOTHESIS", "repeatable"))
