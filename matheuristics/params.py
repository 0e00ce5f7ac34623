"""The parameters of the large-neighbourhood search, as one typed, checked object."""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral

__all__ = ["LNSParams"]


@dataclass(frozen=True)
class LNSParams:
    """How :func:`matheuristics.search.lns_improve` picks and solves its windows.

    When the search ends is not a parameter here but a stopping criterion
    (:mod:`heuristics.stop`); change a field with :func:`dataclasses.replace`.

    Attributes
    ----------
    window
        Slots of a time window; ``None`` (default): drawn each round, a
        quarter or a third of the horizon, never less than the longest job.
    max_jobs
        Most jobs freed by a window (default 40). The cap shrinks by a quarter
        (not below 8) after a window MILP not solved to optimality in time,
        and grows back by one after each that is.
    sub_time_limit
        Seconds of a window MILP (default 1), cut to the time the stopping
        criterion leaves less :data:`~matheuristics.search.SOLVE_MARGIN_S`.
    seed
        Seed of the window choice.
    stall_rounds
        Rounds without an improvement after which the search widens (windows,
        freed jobs and the window's time limit doubled, tripled after twice
        as many) or, with a guide, escapes; ``None`` or 0: never (default 40).
    share
        Share of a window's room kept for jobs not run (default 0.5, in ``[0, 1]``).
    escape_rounds
        Rounds of the guided part of an escape (default 120, at least 2);
        half as many on the real instance follow.
    escape_weight
        Factor on the value of the jobs an escape asks to give way (default
        0.5, in ``(0, 1]``).

    Raises
    ------
    ValueError
        For a field out of its range, naming it.
    """

    window: int | None = None
    max_jobs: int = 40
    sub_time_limit: float = 1.0
    seed: int = 0
    stall_rounds: int | None = 40
    share: float = 0.5
    escape_rounds: int = 120
    escape_weight: float = 0.5

    def __post_init__(self) -> None:
        def whole(name: str, low: int, none: bool = False) -> None:
            v = getattr(self, name)
            if not ((none and v is None) or (isinstance(v, Integral) and int(v) >= low)):
                raise ValueError(f"{name}: must be an integer >= {low}"
                                 f"{' or None' if none else ''}, got {v!r}")

        whole("window", 1, none=True)
        whole("max_jobs", 1)
        whole("seed", 0)
        whole("stall_rounds", 0, none=True)
        whole("escape_rounds", 2)
        if not (isinstance(self.sub_time_limit, (int, float)) and self.sub_time_limit > 0
                and math.isfinite(self.sub_time_limit)):
            raise ValueError(f"sub_time_limit: must be a number > 0, got {self.sub_time_limit!r}")
        if not 0.0 <= self.share <= 1.0:
            raise ValueError(f"share: must be in [0, 1], got {self.share!r}")
        if not 0.0 < self.escape_weight <= 1.0:
            raise ValueError(f"escape_weight: must be in (0, 1], got {self.escape_weight!r}")

    @property
    def stall(self) -> int:
        """``stall_rounds`` as a count, 0 for never."""
        return self.stall_rounds or 0
