"""Search over job orders with the serial decoder: biased sampling and local search.

Both explore priority lists and decode each with the serial scheme of
:func:`heuristics._core.serial_starts` (earliest fit, ``curve`` reservation by
default). Both are deterministic for a given ``seed`` as long as their count
budget (``passes``, ``iterations``) ends the run before ``time_limit`` does.

On an instance with nodes the decoder places each job on nodes by the
``placement`` rule (:data:`heuristics.placement.PLACEMENTS`), and the best
order's placement is written into ``place`` when the caller passes one.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from instances import Instance, Result

from ._core import check_reservation, finish, hinted_fit, job_arrays, serial_starts, start_value
from .placement import NodeProfile, check_placement, new_place, node_profile
from .rules import RULES, order_by

__all__ = [
    "NodeOrderSearch", "OrderSearch", "local_search", "local_search_order", "sampling",
    "sampling_order",
]

logger = logging.getLogger(__name__)


def sampling_order(
    inst: Instance,
    *,
    passes: int = 200,
    time_limit: float | None = None,
    seed: int = 0,
    reservation: str = "curve",
    placement: str = "first-fit",
    place: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Best ``(order, start, passes_done)`` of multi-pass biased random sampling.

    The first passes decode every rule of :data:`heuristics.rules.RULES` as
    it is. Each later pass picks a rule (in turn) and a noise level
    ``sigma`` log-uniform in ``[0.02, 2]``, and sorts the jobs by
    ``rank_rule(j) / n + sigma * u_j`` with ``u_j`` uniform in ``[0, 1)``:
    orders stay close to the rule, more or less so from pass to pass.

    On an instance with nodes, jobs are placed by ``placement`` and the best
    pass's placement is copied into ``place`` when given.
    """
    if passes < 1:
        raise ValueError(f"passes: must be >= 1, got {passes}")
    t0 = time.perf_counter()
    cap = inst.batch_capacity(check_reservation(reservation))  # type: ignore[arg-type]
    check_placement(placement)
    nodes = node_profile(inst, reservation, placement) if inst.has_nodes else None
    best_place = scratch = new_place(inst) if nodes is not None else None
    jobs = job_arrays(inst)
    n = inst.num_jobs
    rng = np.random.default_rng(seed)
    bases = [order_by(inst, r) for r in RULES]
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
        if nodes is None:
            start = serial_starts(cap.copy(), order, jobs)
        else:
            assert scratch is not None
            scratch.fill(-1)
            start = serial_starts(cap.copy(), order, jobs, nodes=nodes.copy(), place=scratch)
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
    placement: str = "first-fit",
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
        params["placement"] = placement
    return finish(
        inst, "sampling", start, reservation=reservation, started_at=t0, params=params,
        message=f"{done} passes", place=place,
    )


class OrderSearch:
    """Incremental serial decoding of a job order, for moves that change a suffix.

    Keeps the free profile before each list position, so re-decoding after a
    move that changes positions ``>= i`` starts from position ``i``.
    """

    def __init__(self, inst: Instance, order: np.ndarray, reservation: str = "curve") -> None:
        self.inst = inst
        self.jobs = job_arrays(inst)
        self.values = inst.job_values.tolist()
        self.n = inst.num_jobs
        cap = inst.batch_capacity(check_reservation(reservation))  # type: ignore[arg-type]
        self.order = np.array(order, dtype=np.int64)
        self.snap = np.empty((self.n + 1, inst.horizon), dtype=np.int64)
        self.snap[0] = cap
        self.cum = np.zeros(self.n + 1)  # value placed before each position
        self.start = np.full(self.n, -1, dtype=np.int64)
        self._decode(self.order, 0, cap, self.snap, self.cum, self.start)
        self._snap = np.empty_like(self.snap)  # scratch of try_order
        self._cum = self.cum.copy()
        self._start = self.start.copy()
        self._tried: tuple[np.ndarray, int, int] = (self.order, 0, self.n)

    def _decode(
        self, order: np.ndarray, i: int, free: np.ndarray, snap: np.ndarray,
        cum: np.ndarray, start: np.ndarray, k: int | None = None,
    ) -> int:
        """Decode ``order[i:]`` from profile ``free``; fill ``snap``, ``cum``, ``start``.

        With ``k`` (the last position the move changed), stop at the first
        position ``c > k`` whose profile equals the current order's: from
        there on both orders place the same jobs on the same profile, so the
        rest is copied. Returns ``c`` (``n`` when decoded to the end).
        """
        gpus, dur, rel, dl = self.jobs
        vals = self.values
        free = free.copy()
        v = float(cum[i])
        order_l = order.tolist()
        hint: dict[tuple[int, int], tuple[int, int]] = {}
        for pos in range(i, self.n):
            j = order_l[pos]
            g, p = gpus[j], dur[j]
            s = hinted_fit(free, g, p, rel[j], dl[j], hint)
            start[j] = s
            if s >= 0:
                free[s : s + p] -= g
                v += vals[j]
            snap[pos + 1] = free
            cum[pos + 1] = v
            if k is not None and pos >= k and pos + 1 < self.n and (free == self.snap[pos + 1]).all():
                c = pos + 1
                cum[c:] = self.cum[c:] + (v - self.cum[c])
                return c
        return self.n

    @property
    def value(self) -> float:
        """Value of the current order's schedule."""
        return float(self.cum[self.n])

    def try_order(self, order: np.ndarray, i: int, k: int) -> float:
        """Decode ``order``, equal to the current one outside positions ``i .. k``.

        Returns the value of the tried order; :meth:`commit` makes it current.
        """
        self._cum[: i + 1] = self.cum[: i + 1]
        self._start[:] = self.start
        c = self._decode(order, i, self.snap[i], self._snap, self._cum, self._start, k)
        self._tried = (order, i, c)
        return float(self._cum[self.n])

    def commit(self) -> None:
        """Make the last tried order the current one."""
        order, i, c = self._tried
        self.order = order
        self.snap[i + 1 : c + 1] = self._snap[i + 1 : c + 1]
        self.cum, self._cum = self._cum, self.cum
        self.start, self._start = self._start, self.start


class NodeOrderSearch:
    """:class:`OrderSearch` on nodes: the same interface, profiles kept every ``stride`` positions.

    A profile on nodes is ``K + 1`` rows of ``T`` slots, too large to keep
    before every list position of a large instance; snapshots every
    ``stride`` positions (within about 64 MB) let a move at position ``i``
    re-decode from the snapshot at or before ``i``, chunk by chunk, with the
    compiled decoder.
    """

    MEMORY = 64 * 2**20
    """Bytes the snapshots may take (sets ``stride``)."""

    def __init__(
        self, inst: Instance, order: np.ndarray, reservation: str = "curve",
        placement: str = "first-fit",
    ) -> None:
        self.inst = inst
        self.jobs = job_arrays(inst)
        self.values = inst.job_values
        self.n = inst.num_jobs
        self.cap = inst.batch_capacity(check_reservation(reservation))  # type: ignore[arg-type]
        self.nodes0 = node_profile(inst, reservation, placement)
        per = (inst.num_nodes + 3) * inst.horizon * 8
        self.stride = max(1, -(-(self.n + 1) * per // self.MEMORY))
        self.order = np.array(order, dtype=np.int64)
        self.start = np.full(self.n, -1, dtype=np.int64)
        self.place = new_place(inst)
        self.snaps: list[tuple[np.ndarray, NodeProfile]] = []
        self._value = self._decode(self.order, 0, self.start, self.place, self.snaps)
        self._tried: tuple[np.ndarray, np.ndarray, np.ndarray, list[tuple[np.ndarray, NodeProfile]], float] = (
            self.order, self.start, self.place, self.snaps, self._value)

    def _decode(
        self, order: np.ndarray, b: int, start: np.ndarray, place: np.ndarray,
        snaps: list[tuple[np.ndarray, NodeProfile]],
    ) -> float:
        """Decode ``order`` from snapshot ``b`` on (``snaps[b:]`` replaced); returns the value."""
        if b == 0:
            free, nodes = self.cap.copy(), self.nodes0.copy()
        else:
            free, nodes = self.snaps[b][0].copy(), self.snaps[b][1].copy()
        del snaps[b:]
        tail = order[b * self.stride :]
        start[tail] = -1
        place[tail] = -1
        for c in range(b * self.stride, self.n, self.stride):
            snaps.append((free.copy(), nodes.copy()))
            serial_starts(free, order[c : c + self.stride], self.jobs, start, nodes=nodes,
                          place=place)
        if not snaps:
            snaps.append((free.copy(), nodes.copy()))
        return float(self.values[start >= 0].sum())

    @property
    def value(self) -> float:
        """Value of the current order's schedule."""
        return self._value

    def try_order(self, order: np.ndarray, i: int, k: int) -> float:
        """Decode ``order``, equal to the current one before position ``i``; :meth:`commit` keeps it."""
        b = i // self.stride
        start, place = self.start.copy(), self.place.copy()
        snaps = list(self.snaps[:b])
        value = self._decode(order, b, start, place, snaps)
        self._tried = (order, start, place, snaps, value)
        return value

    def commit(self) -> None:
        """Make the last tried order the current one."""
        self.order, self.start, self.place, self.snaps, self._value = self._tried


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
    (:class:`NodeOrderSearch`) and the final placement is copied into
    ``place`` when given.
    """
    if iterations < 0:
        raise ValueError(f"iterations: must be >= 0, got {iterations}")
    check_placement(placement)
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    st: OrderSearch | NodeOrderSearch
    if inst.has_nodes:
        st = NodeOrderSearch(inst, order, reservation, placement)
    else:
        st = OrderSearch(inst, order, reservation)
    n = inst.num_jobs
    done = 0
    if n < 2:
        if place is not None and isinstance(st, NodeOrderSearch):
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
    if place is not None and isinstance(st, NodeOrderSearch):
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
