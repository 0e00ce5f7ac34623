"""The free state of model version 3 and the methods that read it (docs/resources-heuristics.md).

On an instance whose jobs set a share, a model, CPU or memory
(:attr:`Instance.jobs_use_resources`), :func:`heuristics.profile.new_profile`
returns a :class:`SharesProfile`: the pool row (busy GPUs: a GPU shared by
several jobs counts once), each GPU's free milli per slot (the node's GPUs
numbered ``0 .. g_k - 1``; those a ``peak`` reservation withholds, the last
node's highest-indexed first, offer 0), each node's free CPU and memory, and
the jobs' eligibility (:attr:`instances.capacity.Shares.eligible`). Version 2
is the special case of whole GPUs, no CPU and no memory, where counts
suffice: it keeps its own fast path (:class:`~heuristics.profile.Profile`).

A valid placement for a job's whole run, as section 12 of the specification
defines it: a whole-GPU job takes ``g_j`` GPUs of one node, each wholly free
over the run, so all of them become busy (the pool must have them); a
shared job one GPU with room for its ``gpu_milli`` at every slot of the run,
partly used or free alike (where it is free, it becomes busy: the pool must
have a GPU there); the node has a model the job accepts and its CPU and
memory over the run; a job larger than the largest node takes whole nodes,
each wholly free over the run, the lexicographically smallest set whose GPUs
sum to ``g_j``, and is eligible on a node only when its share of the CPU and
memory (in proportion to the node's GPUs) fits the node; holding every GPU of
them, it leaves nothing of their CPU and memory to anyone else, so nothing is
charged there.

The placement rules (:data:`heuristics.placement.PLACEMENTS`) on version 3,
at the earliest start with a valid placement:

- ``first-fit`` (FIFO's): the first node in list order with room; a
  whole-GPU job takes its lowest-indexed GPUs free for the whole run, a
  shared job the lowest-indexed GPU with room for its share;
- ``best-fit``: the node left with the least room (the least free milli of
  its GPUs, summed per slot, over the run, after the job), ties by node
  order; on it a shared job takes the GPU left with the least room (its
  least free milli over the run less the share), ties by index;
- ``frag``: FGD's rule (Weng et al., "Beware of Fragmentation", USENIX ATC
  2023): the node whose fragmentation grows least when the job is placed,
  and for a share the GPU on it that adds least, with FGD's measure
  :func:`instances.packing.node_frag` for the workload of the jobs still to
  place (the shapes ``(cpu_milli, gpu_milli, gpus, models)`` of the later
  jobs of the order, one-node jobs, the most frequent covering 95% as in
  FGD). Over a run of slots the node is measured in what it has free
  throughout (each GPU's least free milli over the run, the least free CPU),
  before and after the job. Ties by best-fit, then node order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from instances import Instance, Schedule

from . import shares_rules
from ._easy import easy_queue
from ._shares_decode import decode, record, start_now
from ._shares_fit import find, new_scratch
from ._shares_state import SharesArrays, new_state
from ._shares_take import take
from .profile import check_reservation
from .rules import fifo_order

__all__ = [
    "SharesProfile",
    "easy_starts",
    "fifo_starts",
    "fit",
    "new_place",
    "new_shares_profile",
    "occupy",
    "parallel_starts",
    "place_width",
    "schedule_of",
    "serial_starts",
]

_NONE = np.zeros((0, 1), dtype=np.int64)


class SharesProfile:
    """The free state of a version 3 instance (module notes): one ``int64`` array of rows.

    Not a :class:`~heuristics.profile.Profile` (whose fit and occupy count
    GPUs): an :class:`~heuristics.profile.AnyProfile`, placed by :func:`fit`
    and :func:`occupy` here, decoded by :func:`serial_starts`.

    Attributes
    ----------
    rows
        ``(R, T)``: the layout of :mod:`heuristics._shares_state`; row 0 the
        pool, rows ``1 .. K`` each node's wholly free GPUs (what
        :attr:`free` shows), then the rest.
    st
        The read-only arrays of the instance the kernel reads (nodes, GPUs,
        eligibility, the jobs' shares, CPU and memory, the frag workload), by
        name (:class:`~heuristics._shares_state.SharesArrays`).
    rule
        Code of the placement rule (:func:`heuristics.shares_rules.rule_code`).
    span
        Column of a placement row where the GPU indices start.
    jobs_gpus, jobs_dur
        The jobs' GPUs and durations (what :func:`fit` and :func:`occupy` read).
    sizes
        ``(K,)`` int64: each node's GPUs.
    largest
        The largest node's GPUs: a larger job takes whole nodes.
    pool
        ``(T,)``: the pool's row, busy GPUs free per slot (a view of ``rows``).
    """

    __slots__ = ("jobs_dur", "jobs_gpus", "largest", "pool", "rows", "rule", "sizes", "span", "st")

    def __init__(self, rows: np.ndarray, st: SharesArrays, rule: int,
                 span: int, jobs: tuple[np.ndarray, np.ndarray]) -> None:
        self.rows, self.st, self.rule, self.span = rows, st, rule, span
        self.jobs_gpus, self.jobs_dur = jobs
        self.sizes = st.sizes
        self.largest = int(self.sizes.max())
        self.pool = rows[0]

    @property
    def free(self) -> np.ndarray:
        """``(K, T)``: each node's wholly free GPUs per slot."""
        return self.rows[1 : self.num_nodes + 1]

    @property
    def num_nodes(self) -> int:
        """``K``: the nodes."""
        return int(self.sizes.shape[0])

    def like(self, rows: np.ndarray) -> SharesProfile:
        """A profile of these ``rows`` with this one's instance data and rule."""
        return SharesProfile(rows, self.st, self.rule, self.span, (self.jobs_gpus, self.jobs_dur))

    def copy(self) -> SharesProfile:
        """A copy whose rows can be changed independently."""
        return self.like(self.rows.copy())

    def gpu_rows(self) -> np.ndarray:
        """``(sum g_k, T)``: each GPU's free milli per slot (node by node, index by index)."""
        K, NG = self.num_nodes, int(self.st.gpu_offset[-1])
        return self.rows[1 + 5 * K : 1 + 5 * K + NG]

    def node_rows(self) -> tuple[np.ndarray, ...]:
        """``(K, T)`` each: wholly free GPUs, most free milli on one partly used GPU, free CPU,
        free memory, free milli summed over the node's GPUs."""
        K = self.num_nodes
        return tuple(self.rows[1 + i * K : 1 + (i + 1) * K] for i in range(5))


def place_width(inst: Instance) -> tuple[int, int]:
    """``(span, width)`` of a version 3 placement row: nodes in ``[0, span)``, GPU indices after.

    ``span`` is :attr:`Instance.max_span`; the GPU columns hold the indices
    a one-node job takes on its node (ascending, ``-1`` padded), as many as
    the largest one-node job's GPUs. A job on whole nodes lists none (it
    holds them all).
    """
    one = inst.gpus[~inst.multi_node]
    return inst.max_span, inst.max_span + int(one.max(initial=1))


def new_place(inst: Instance) -> np.ndarray:
    """An empty version 3 placement array ``(num_jobs, width)`` of ``-1`` (:func:`place_width`)."""
    return np.full((inst.num_jobs, place_width(inst)[1]), -1, dtype=np.int64)


def new_shares_profile(inst: Instance, reservation: str = "curve",
                       placement: str = "first-fit") -> SharesProfile:
    """The empty :class:`SharesProfile` of a version 3 instance under ``reservation``."""
    rule, seed = shares_rules.rule_code(placement)
    check_reservation(reservation)
    rows, st = new_state(inst, reservation)
    rows = shares_rules.with_aux(rows, rule, seed, st.sizes)
    return SharesProfile(rows, st, rule, place_width(inst)[0], (inst.gpus, inst.durations))


def serial_starts(prof: SharesProfile, order: Any, jobs: Any, start: np.ndarray | None = None,
                  place: np.ndarray | None = None, *, fifo: bool = False) -> np.ndarray:
    """:func:`heuristics.decoder.serial_starts` on a version 3 state (one compiled call).

    ``place``, when given, is a :func:`new_place` array (nodes, then GPU
    indices). ``fifo``: each start at or after the last one placed.
    """
    jobs = np.ascontiguousarray(jobs, dtype=np.int64)
    if start is None:
        start = np.full(jobs.shape[1], -1, dtype=np.int64)
    out = _NONE if place is None else place
    tmp_start = start if _ready(start) else np.ascontiguousarray(start, dtype=np.int64).copy()
    tmp_place = out if _ready(out) or place is None else out.copy()
    run = shares_rules.decode if prof.rule >= 3 else decode
    run(prof.rows, prof.st, prof.rule, np.asarray(order, dtype=np.int64).reshape(-1),
        jobs, tmp_start, tmp_place, prof.span, fifo)
    if tmp_start is not start:
        start[:] = tmp_start
    if place is not None and tmp_place is not place:
        place[:] = tmp_place
    return start


def _ready(a: np.ndarray) -> bool:
    return a.dtype == np.int64 and a.flags.c_contiguous and a.flags.writeable


def _jobs(inst: Instance) -> np.ndarray:
    return np.array([inst.gpus, inst.durations, inst.releases, inst.deadlines], dtype=np.int64)


def fifo_starts(inst: Instance, reservation: str = "peak", *,
                place: np.ndarray | None = None) -> np.ndarray:
    """FIFO on version 3 (section 12): :func:`heuristics.fifo.fifo_starts` with first-fit
    placements by GPU index (module notes)."""
    prof = new_shares_profile(inst, reservation, "first-fit")
    return serial_starts(prof, fifo_order(inst), _jobs(inst), None, place, fifo=True)


def fit(prof: SharesProfile, j: int, lo: int, hi: int) -> tuple[int, list[int], list[int]]:
    """Earliest start ``s`` in ``[lo, hi - p_j]`` with a valid placement of job ``j``, by the
    profile's rule: ``(s, nodes, GPU indices on the one node)``, or ``(-1, [], [])``.

    The version 3 :func:`heuristics.profile.fit` (a job is more than its GPU count here).
    """
    g, p = int(prof.jobs_gpus[j]), int(prof.jobs_dur[j])
    nodes, gpus, scratch = _scratch(prof)
    s, nn, ngp = _find(prof, j, g, p, lo, hi, (nodes, gpus, scratch))
    if s < 0:
        return -1, [], []
    return s, nodes[:nn].tolist(), gpus[:ngp].tolist()


def occupy(prof: SharesProfile, j: int, s: int, nodes: list[int], gpus: list[int],
           place: np.ndarray | None = None) -> None:
    """Take job ``j``'s placement (as :func:`fit` gives it) from slot ``s`` on, in place; write
    it into row ``j`` of ``place`` (a :func:`new_place` array) when given."""
    nn, gg = np.array(nodes, dtype=np.int64), np.array(gpus or [0], dtype=np.int64)
    take(prof.rows, prof.st, j, int(prof.jobs_gpus[j]), s, int(prof.jobs_dur[j]), nn, len(nodes),
         gg, len(gpus))
    shares_rules.note(prof.rows, prof.st, prof.rule, j, int(prof.jobs_gpus[j]), s,
                      int(prof.jobs_dur[j]), nn[: len(nodes)])
    if place is not None:
        record(place, j, prof.span, nn, len(nodes), gg, len(gpus))


def _find(prof: SharesProfile, j: int, g: int, p: int, lo: int, hi: int,
          scratch: tuple[np.ndarray, ...]) -> tuple[int, int, int]:
    search = shares_rules.find if prof.rule >= 3 else find
    return search(prof.rows, prof.st, prof.rule, j, g, p, lo, hi, *scratch)  # type: ignore[no-any-return]


def _scratch(prof: SharesProfile) -> tuple[np.ndarray, ...]:
    scratch = new_scratch(prof.st)
    width = scratch.shape[1]
    return np.empty(width, dtype=np.int64), np.empty(width, dtype=np.int64), scratch


def easy_starts(inst: Instance, reservation: str = "peak",
                log: list[tuple[int, int, int]] | None = None, *,
                place: np.ndarray | None = None) -> np.ndarray:
    """EASY backfilling on version 3: :func:`heuristics.backfill.easy_starts`, the same rule,
    with the fit and the placements of this module (first-fit)."""
    prof = new_shares_profile(inst, reservation, "first-fit")
    jobs = _jobs(inst)
    g_, p_, d_ = (c.tolist() for c in (inst.gpus, inst.durations, inst.deadlines))
    out = _NONE if place is None else place
    nodes, gpus, _ = sc = _scratch(prof)
    nn = ngp = 0  # the placement of the last fit, in nodes and gpus

    def fit_head(h: int, t: int) -> int:
        nonlocal nn, ngp
        r, nn, ngp = _find(prof, h, g_[h], p_[h], t, d_[h], sc)
        return r

    def start_head(h: int, t: int) -> None:
        take(prof.rows, prof.st, h, g_[h], t, p_[h], nodes, nn, gpus, ngp)
        if place is not None:
            record(out, h, prof.span, nodes, nn, gpus, ngp)

    def backfill(h: int, r: int, t: int, q: np.ndarray, start: np.ndarray) -> np.ndarray:
        shadow = prof.rows.copy()
        take(shadow, prof.st, h, g_[h], r, p_[h], nodes, nn, gpus, ngp)
        rest = np.ascontiguousarray(q)
        if not rest.size:
            return rest
        start_now(shadow, prof.rows, prof.st, 0, t, rest, jobs, start, out, prof.span)
        return rest[start[rest] >= 0]

    return easy_queue(inst, fit_head, start_head, backfill, log)


def parallel_starts(inst: Instance, order: np.ndarray, reservation: str = "curve", *,
                    placement: str = "first-fit", place: np.ndarray | None = None) -> np.ndarray:
    """The parallel scheme on version 3 (:func:`heuristics.listsched.parallel_starts`'s rule)."""
    prof = new_shares_profile(inst, reservation, placement)
    if prof.rule >= 3:
        raise ValueError(f"placement: {placement!r} runs in the serial decoder only")
    jobs = _jobs(inst)
    n, T = inst.num_jobs, inst.horizon
    start = np.full(n, -1, dtype=np.int64)
    order = np.asarray(order, dtype=np.int64)
    pending = np.ones(order.size, dtype=bool)
    o_rel, o_last = inst.releases[order], (inst.deadlines - inst.durations)[order]
    out = _NONE if place is None else place
    empty = np.empty((0, 0), dtype=np.int64)
    for t in range(T):
        cand = np.ascontiguousarray(order[pending & (o_rel <= t) & (o_last >= t)])
        if cand.size and start_now(prof.rows, empty, prof.st, prof.rule, t, cand, jobs, start, out,
                                   prof.span):
            pending[start[order] >= 0] = False
    return start


def schedule_of(inst: Instance, start: np.ndarray, place: np.ndarray) -> Schedule:
    """The :class:`~instances.Schedule` (GPU indices) of a start array and a :func:`new_place` array."""
    span = place_width(inst)[0]
    nodes = inst.nodes or ()
    starts: dict[str, int] = {}
    indices: dict[str, dict[str, tuple[int, ...]]] = {}
    for j in np.flatnonzero(np.asarray(start) >= 0).tolist():
        name = inst.jobs[j].name
        starts[name] = int(start[j])
        ks = [int(k) for k in place[j, :span] if k >= 0]
        if len(ks) == 1:
            indices[name] = {nodes[ks[0]].name: tuple(int(g) for g in place[j, span:] if g >= 0)}
        else:
            indices[name] = {nodes[k].name: tuple(range(nodes[k].gpus)) for k in ks}
    return Schedule(inst.name, starts, indices=indices)
