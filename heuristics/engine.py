"""The one capacity engine: the state every time method places jobs on, and where it is made.

A state is the free capacity of an instance under one reservation while jobs
are placed. Two models implement :class:`CapacityState`: GPU counts
(:class:`heuristics.profile.Profile`, model versions 1 and 2) and per-GPU
shares with CPU and memory (:class:`heuristics.shares.SharesProfile`,
version 3). FIFO, EASY and conservative backfilling, the serial and parallel
decoders and the order search are written once against the interface
(:mod:`heuristics.fifo`, :mod:`heuristics.backfill`,
:mod:`heuristics.decoder`, :mod:`heuristics.listsched`,
:mod:`heuristics.search`); :func:`new_profile` is the one place the model
version picks the state.
"""

from __future__ import annotations

from typing import Any, Protocol, Self

import numpy as np

from instances import Instance

from .profile import new_counts_profile
from .shares import new_shares_profile

__all__ = ["CapacityState", "Fit", "new_profile"]

Fit = tuple[int, Any]
"""What :meth:`CapacityState.earliest` returns: the start (``-1``: none) and the placement
it found, in the state's own form (node positions; on version 3, nodes and GPU indices),
valid until the state's next :meth:`~CapacityState.earliest`."""


class CapacityState(Protocol):
    """The free capacity of any model version while jobs are placed (module notes).

    Attributes
    ----------
    rows
        ``(R, T)`` int64: the whole state, row 0 the pool's free batch GPUs
        (one copy copies it all; equal rows, equal states).
    pool
        ``(T,)``: row 0.
    """

    rows: np.ndarray
    pool: np.ndarray

    @property
    def free(self) -> np.ndarray:
        """``(K, T)``: each node's free (on version 3: wholly free) GPUs per slot."""
        ...

    @property
    def num_nodes(self) -> int:
        """``K``: the nodes (1 for a flat pool)."""
        ...

    def like(self, rows: np.ndarray) -> Self:
        """A state of these ``rows`` with this one's instance data and rule."""
        ...

    def copy(self) -> Self:
        """A copy whose rows can be changed independently."""
        ...

    def decode(self, order: Any, jobs: Any, start: np.ndarray | None = None,
               place: np.ndarray | None = None, *, fifo: bool = False) -> np.ndarray:
        """The serial decoder (:func:`heuristics.decoder.serial_starts`): each job of ``order``
        at its earliest valid start, by the state's rule; with ``fifo``, none before the
        start of the last one placed. Fills and returns ``start``."""
        ...

    def earliest(self, j: int, g: int, p: int, lo: int, hi: int) -> Fit:
        """The earliest start in ``[lo, hi - p]`` of job ``j`` (``g`` GPUs, ``p`` slots) with a
        valid placement, by the state's rule, and that placement."""
        ...

    def take(self, j: int, g: int, p: int, s: int, where: Any,
             place: np.ndarray | None = None) -> None:
        """Charge job ``j`` from slot ``s`` on at ``where`` (an :meth:`earliest` placement);
        write it into row ``j`` of ``place`` when given."""
        ...

    def parallel(self, order: Any, jobs: np.ndarray, start: np.ndarray,
                 place: np.ndarray | None = None) -> np.ndarray:
        """The parallel scheme (:func:`heuristics.schemes.parallel_loop`): at each slot the
        released jobs of ``order`` that fit start there. Fills and returns ``start``."""
        ...

    def start_now(self, t: int, cand: np.ndarray, jobs: np.ndarray, start: np.ndarray,
                  place: np.ndarray | None = None, also: Self | None = None) -> int:
        """Start at ``t``, in the order of ``cand``, every job with a valid placement from
        ``t`` (each in what the earlier ones left), charging ``also`` too when given; how
        many started (their starts are in ``start``)."""
        ...


def new_profile(inst: Instance, reservation: str = "curve",
                placement: str = "first-fit") -> CapacityState:
    """The empty state of ``inst`` (nothing placed yet) under ``reservation``, placing by
    ``placement``: GPU counts on versions 1 and 2, per-GPU shares on version 3.

    Raises
    ------
    ValueError
        For an unknown reservation or placement rule (named).
    """
    if inst.jobs_use_resources:  # model version 3 (section 12 of the specification)
        return new_shares_profile(inst, reservation, placement)
    return new_counts_profile(inst, reservation, placement)
