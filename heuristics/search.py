"""Search over job orders with the serial decoder: biased sampling and local search.

Both explore priority lists and decode each with the serial scheme of
:func:`heuristics.decoder.serial_starts` (earliest fit, ``curve`` reservation by
default). Both are deterministic for a given ``seed`` as long as their count
budget (``passes``, ``iterations``) ends the run before ``time_limit`` does.

On an instance with nodes the decoder places each job on nodes by the
``placement`` rule (:data:`heuristics.placement.PLACEMENTS`), and the best
order's placement is written into ``place`` when the caller passes one.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np

from instances import Instance, Result

from . import user_decode
from .decoder import job_arrays, serial_starts
from .engine import new_profile
from .placement import new_place
from .placement_rules import resolve_placement
from .results import finish, start_value
from .rules import order_by, start_rules

__all__ = ["OrderSearch", "local_search", "local_search_order", "sampling", "sampling_order"]

logger = logging.getLogger(__name__)


def sampling_order(
    inst: Instance, *, passes: int = 200, time_limit: float | None = None, seed: int = 0,
    reservation: str = "curve", placement: Any = "first-fit", place: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Best ``(order, start, passes_done)`` of multi-pass biased random sampling.

    The first passes decode every rule of :data:`heuristics.rules.RULES` as
    it is. Each later pass picks a rule (in turn) and a noise level
    ``sigma`` log-uniform in ``[0.02, 2]``, and sorts the jobs by
    ``rank_rule(j) / n + sigma * u_j`` with ``u_j`` uniform in ``[0, 1)``:
    orders stay close to the rule, more or less so from pass to pass.

    On an instance with nodes, jobs are placed by ``placement`` (a user's
    rule too, through :mod:`heuristics.user_decode`) and the best pass's
    placement is copied into ``place`` when given.
    """
    if passes < 1:
        raise ValueError(f"passes: must be >= 1, got {passes}")
    t0 = time.perf_counter()
    entry = resolve_placement(placement)
    user = None if entry.builtin else entry
    prof = None if user is not None else new_profile(inst, reservation, placement)
    best_place = scratch = new_place(inst) if inst.has_nodes else None
    jobs = job_arrays(inst)
    n = inst.num_jobs
    rng = np.random.default_rng(seed)
    bases = [order_by(inst, r) for r in start_rules(inst)]
    ranks = []
    for o in bases:
        rank = np.empty(n, dtype=np.float64)
        rank[o] = np.arange(n) / max(n, 1)
        ranks.append(rank)
    best_order, best_start, best_val = bases[0], None, -1.0
    done = 0
    for k in range(passes):
        if time_limit is not None and done > 0 and time.perf_counter() - t0 >= time_limit:
            break
        if k < len(bases):
            order = bases[k]
        else:
            sigma = float(np.exp(rng.uniform(np.log(0.02), np.log(2.0))))
            order = np.argsort(ranks[k % len(ranks)] + sigma * rng.random(n), kind="stable")
        if prof is not None:
            start = serial_starts(prof.copy(), order, jobs, None, scratch)
        else:  # a user's rule (no built-in profile)
            assert user is not None
            start = user_decode.serial_starts(inst, order, user, reservation, scratch)
        val = start_value(inst, start)
        done += 1
        if val > best_val:
            best_order, best_start, best_val = order, start, val
            if scratch is not None:
                best_place, scratch = scratch, (new_place(inst) if scratch is best_place else best_place)
    assert best_start is not None
    if place is not None and best_place is not None:
        place[:] = best_place
    return best_order, best_start, done


def sampling(
    inst: Instance,
    *,
    passes: int = 200,
    time_limit: float | None = 5.0,
    seed: int = 0,
    reservation: str = "curve",
    placement: Any = "first-fit",
) -> Result:
    """Multi-pass randomized biased sampling of priority lists (serial decoder).

    Parameters
    ----------
    passes
        Number of decoded lists (default 200); the rules first, then random
        perturbations of them (see :func:`sampling_order`).
    time_limit
        Seconds; stops early after the pass that crosses it (default 5).
    seed
        Seed of the noise.
    reservation
        ``curve`` (default) or ``peak``.
    placement
        On nodes: ``first-fit`` (default), ``best-fit`` or ``frag``.
    """
    t0 = time.perf_counter()
    place = new_place(inst) if inst.has_nodes else None
    _, start, done = sampling_order(
        inst, passes=passes, time_limit=time_limit, seed=seed, reservation=reservation,
        placement=placement, place=place,
    )
    params: dict[str, object] = {"passes": passes, "time_limit": time_limit, "seed": seed}
    if inst.has_nodes:
        params["placement"] = resolve_placement(placement).name
    return finish(
        inst, "sampling", start, reservation=reservation, started_at=t0, params=params,
        message=f"{done} passes", place=place,
    )


class OrderSearch:
    """Incremental serial decoding of a job order, for moves that change a stretch of it.

    Keeps the profile before every ``stride``-th list position but the first (the chunks
    the compiled decoder places in one call; before the first, the empty profile
    ``prof0``), so re-decoding after a move
    that changes positions ``i .. k`` starts from the snapshot at or before
    ``i``; and it stops at the first snapshot past ``k`` whose profile equals
    the current order's: from there on both orders place the same jobs on the
    same profile, so the rest is kept. On an instance with nodes the jobs are
    placed by ``placement`` and :attr:`place` holds the current placement.
    """

    STRIDE = 16
    """Positions per chunk at least (a call of the compiled decoder costs some tens of jobs)."""
    MEMORY = 64 * 2**20
    """Bytes the snapshots may take (a larger ``stride`` keeps them within it)."""

    def __init__(
        self, inst: Instance, order: np.ndarray, reservation: str = "curve",
        placement: str = "first-fit",
    ) -> None:
        self.inst = inst
        self.jobs = job_arrays(inst)
        self.n = inst.num_jobs
        self.prof0 = new_profile(inst, reservation, placement)
        per = 2 * self.prof0.rows.nbytes  # the current snapshots and those of a tried order
        self.stride = max(self.STRIDE, -(-(self.n + 1) * per // self.MEMORY))
        self.chunks = max(1, -(-self.n // self.stride))
        self.order = np.array(order, dtype=np.int64)
        # snaps[c - 1]: the profile before chunk c (none when one chunk holds every job)
        self.snaps = np.empty((self.chunks - 1, *self.prof0.rows.shape), dtype=np.int64)
        self.start = np.full(self.n, -1, dtype=np.int64)
        self.place = new_place(inst) if inst.has_nodes else None
        self._decode(self.order, 0, None, self.snaps, self.start, self.place)
        self.value = start_value(inst, self.start)  # of the current order's schedule
        self._snaps = np.empty_like(self.snaps)  # scratch of try_order
        self._start = self.start.copy()
        self._place = None if self.place is None else self.place.copy()
        self._tried: tuple[np.ndarray, int, int, float] = (self.order, 0, 0, self.value)

    def _decode(
        self, order: np.ndarray, b: int, k: int | None, snaps: np.ndarray, start: np.ndarray,
        place: np.ndarray | None,
    ) -> int:
        """Decode ``order`` from chunk ``b`` on, filling ``snaps``, ``start`` and ``place``.

        With ``k`` (the last position the move changed), stop at the first
        chunk ``c`` starting past ``k`` whose profile equals the current
        order's, and return ``c`` (the number of chunks when decoded to the end).
        """
        prof = self.prof0.like((self.prof0.rows if b == 0 else self.snaps[b - 1]).copy())
        for c in range(b, self.chunks):
            a = c * self.stride
            if c > 0:
                if k is not None and a > k and np.array_equal(prof.rows, self.snaps[c - 1]):
                    return c
                snaps[c - 1] = prof.rows
            chunk = order[a : a + self.stride]
            start[chunk] = -1
            if place is not None:
                place[chunk] = -1
            serial_starts(prof, chunk, self.jobs, start, place)
        return self.chunks

    def try_order(self, order: np.ndarray, i: int, k: int) -> float:
        """Decode ``order``, equal to the current one outside positions ``i .. k``.

        Returns the value of the tried order; :meth:`commit` makes it current.
        """
        b = i // self.stride
        self._start[:] = self.start
        if self._place is not None:
            self._place[:] = self.place
        c = self._decode(order, b, k, self._snaps, self._start, self._place)
        value = start_value(self.inst, self._start)
        self._tried = (order, b, c, value)
        return value

    def commit(self) -> None:
        """Make the last tried order the current one."""
        self.order, b, c, self.value = self._tried
        # the states before chunks b + 1 .. c - 1 (before chunk b the tried order left it as it was)
        self.snaps[b : c - 1] = self._snaps[b : c - 1]
        self.start, self._start = self._start, self.start
        self.place, self._place = self._place, self.place


def local_search_order(
    inst: Instance,
    order: np.ndarray,
    *,
    iterations: int = 2000,
    time_limit: float | None = None,
    seed: int = 0,
    reservation: str = "curve",
    placement: str = "first-fit",
    place: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Improve a job order by insert and swap moves; returns ``(order, start, moves)``.

    Each move picks a position ``k`` (half the time one holding a job that is
    not run, when there is one) and a position ``i < k``, then either moves
    the job at ``k`` to ``i`` (insert) or swaps the two (swap), with equal
    probability. The new order is decoded from position ``i`` on and kept if
    its value is not lower (equal values are accepted, to cross plateaus).

    On an instance with nodes, jobs are placed by ``placement``
    (:class:`OrderSearch`) and the final placement is copied into
    ``place`` when given.
    """
    if iterations < 0:
        raise ValueError(f"iterations: must be >= 0, got {iterations}")
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    st = OrderSearch(inst, order, reservation, placement)
    n = inst.num_jobs
    done = 0
    if n < 2:
        if place is not None and st.place is not None:
            place[:] = st.place
        return st.order, st.start, 0
    for _ in range(iterations):
        if time_limit is not None and time.perf_counter() - t0 >= time_limit:
            break
        done += 1
        unrun = np.flatnonzero(st.start[st.order] < 0)
        if unrun.size and rng.random() < 0.5:
            k = int(unrun[rng.integers(unrun.size)])
            if k == 0:
                continue
        else:
            k = int(rng.integers(1, n))
        i = int(rng.integers(0, k))
        new = st.order.copy()
        if rng.random() < 0.5:
            new[i + 1 : k + 1] = st.order[i:k]
            new[i] = st.order[k]
        else:
            new[i], new[k] = st.order[k], st.order[i]
        if st.try_order(new, i, k) >= st.value - 1e-9:
            st.commit()
    logger.debug("local search: %d moves, value %.6g", done, st.value)
    if place is not None and st.place is not None:
        place[:] = st.place
    return st.order, st.start, done


def local_search(
    inst: Instance,
    *,
    iterations: int = 2000,
    time_limit: float | None = 5.0,
    seed: int = 0,
    rule: str = "priority",
    passes: int = 0,
    reservation: str = "curve",
    placement: str = "first-fit",
) -> Result:
    """Local search over the priority list with the serial decoder.

    Starts from the order of ``rule`` (or, with ``passes > 0``, from the best
    order of :func:`sampling_order` with that many passes) and applies
    :func:`local_search_order`.

    Parameters
    ----------
    iterations
        Number of moves tried (default 2000).
    time_limit
        Seconds for the whole method; the search stops at the first move
        after it (default 5).
    seed
        Seed of the move choice (and of the sampling).
    rule
        Rule of the starting order (default ``priority``).
    passes
        Sampling passes for the starting order (default 0: just ``rule``).
    reservation
        ``curve`` (default) or ``peak``.
    placement
        On nodes: ``first-fit`` (default), ``best-fit`` or ``frag``.
    """
    t0 = time.perf_counter()
    if passes > 0:
        order, _, _ = sampling_order(
            inst, passes=passes, time_limit=time_limit, seed=seed, reservation=reservation,
            placement=placement,
        )
    else:
        order = order_by(inst, rule)
    left = None if time_limit is None else max(0.0, time_limit - (time.perf_counter() - t0))
    place = new_place(inst) if inst.has_nodes else None
    _, start, moves = local_search_order(
        inst, order, iterations=iterations, time_limit=left, seed=seed, reservation=reservation,
        placement=placement, place=place,
    )
    params: dict[str, object] = {"iterations": iterations, "time_limit": time_limit,
                                 "seed": seed, "rule": rule, "passes": passes}
    if inst.has_nodes:
        params["placement"] = placement
    return finish(
        inst, "local-search", start, reservation=reservation, started_at=t0, params=params,
        message=f"{moves} moves", place=place,
    )
