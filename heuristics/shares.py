"""The free state of model version 3 and the methods that read it (docs/resources-heuristics.md).

On an instance whose jobs set a share, a model, CPU or memory
(:attr:`Instance.jobs_use_resources`), :func:`heuristics.engine.new_profile`
returns a :class:`SharesProfile`: the pool row (busy GPUs: a GPU shared by
several jobs counts once), each GPU's free milli per slot (the node's GPUs
numbered ``0 .. g_k - 1``; those a ``peak`` reservation withholds, the last
node's highest-indexed first, offer 0), each node's free CPU and memory, and
the jobs' eligibility (:attr:`instances.capacity.Shares.eligible`). Version 2
is the special case of whole GPUs, no CPU and no memory, where counts
suffice: its state is :class:`~heuristics.profile.Profile`; both implement
:class:`heuristics.engine.CapacityState`.

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

from typing import Any, NamedTuple

import numpy as np

from instances import Instance, Schedule

from . import shares_rules
from ._shares_decode import decode, record, start_now
from ._shares_fit import find, new_scratch
from ._shares_state import SharesArrays, new_state
from ._shares_take import take
from .placement import place_width
from .profile import check_reservation
from .schemes import parallel_loop

__all__ = [
    "SharesProfile",
    "Where",
    "new_shares_profile",
    "schedule_of",
]

_NONE = np.zeros((0, 1), dtype=np.int64)
_NO_ROWS = np.empty((0, 0), dtype=np.int64)


class Where(NamedTuple):
    """A valid placement on version 3 (what :meth:`SharesProfile.earliest` finds).

    ``nodes``: the node positions; ``gpus``: the GPU indices on the one node
    (none for a job on whole nodes, which holds them all).
    """

    nodes: np.ndarray
    gpus: np.ndarray


_NOWHERE = Where(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))


class SharesProfile:
    """The free state of a version 3 instance (module notes): one ``int64`` array of rows.

    The version 3 :class:`~heuristics.engine.CapacityState`: its
    :meth:`decode`, :meth:`earliest`, :meth:`take` and :meth:`start_now` run
    the compiled kernels of ``heuristics._shares_*``.

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
    placement
        The rule's name, as given.
    span
        Column of a placement row where the GPU indices start.
    jobs_gpus, jobs_dur
        The jobs' GPUs and durations.
    sizes
        ``(K,)`` int64: each node's GPUs.
    largest
        The largest node's GPUs: a larger job takes whole nodes.
    pool
        ``(T,)``: the pool's row, busy GPUs free per slot (a view of ``rows``).
    """

    __slots__ = ("_scratch", "jobs_dur", "jobs_gpus", "largest", "placement", "pool", "rows",
                 "rule", "sizes", "span", "st")

    def __init__(self, rows: np.ndarray, st: SharesArrays, rule: int,
                 span: int, jobs: tuple[np.ndarray, np.ndarray], placement: str = "first-fit") -> None:
        self.rows, self.st, self.rule, self.span = rows, st, rule, span
        self.jobs_gpus, self.jobs_dur = jobs
        self.placement = placement
        self.sizes = st.sizes
        self.largest = int(self.sizes.max())
        self.pool = rows[0]
        self._scratch: tuple[np.ndarray, ...] | None = None

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
        prof = object.__new__(SharesProfile)  # (EASY copies the state at every reservation)
        prof.rows, prof.st, prof.rule, prof.span = rows, self.st, self.rule, self.span
        prof.jobs_gpus, prof.jobs_dur, prof.placement = self.jobs_gpus, self.jobs_dur, self.placement
        prof.sizes, prof.largest, prof.pool, prof._scratch = self.sizes, self.largest, rows[0], None
        return prof

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

    def decode(self, order: Any, jobs: Any, start: np.ndarray | None = None,
               place: np.ndarray | None = None, *, fifo: bool = False) -> np.ndarray:
        """The serial decoder on this state, one compiled call
        (:meth:`heuristics.engine.CapacityState.decode`); ``place``, when given, a
        :func:`heuristics.placement.new_place` array (nodes, then GPU indices)."""
        jobs = np.ascontiguousarray(jobs, dtype=np.int64)
        if start is None:
            start = np.full(jobs.shape[1], -1, dtype=np.int64)
        out = _NONE if place is None else place
        tmp_start = start if _ready(start) else np.ascontiguousarray(start, dtype=np.int64).copy()
        tmp_place = out if _ready(out) or place is None else out.copy()
        run = shares_rules.decode if self.rule >= 3 else decode
        run(self.rows, self.st, self.rule, np.asarray(order, dtype=np.int64).reshape(-1),
            jobs, tmp_start, tmp_place, self.span, fifo)
        if tmp_start is not start:
            start[:] = tmp_start
        if place is not None and tmp_place is not place:
            place[:] = tmp_place
        return start

    def earliest(self, j: int, g: int, p: int, lo: int, hi: int) -> tuple[int, Where]:
        """The earliest start ``s`` in ``[lo, hi - p]`` with a valid placement of job ``j``, by
        the state's rule, and the placement (views valid until the next call)."""
        if self._scratch is None:
            scratch = new_scratch(self.st)
            width = scratch.shape[1]
            self._scratch = (np.empty(width, dtype=np.int64), np.empty(width, dtype=np.int64),
                             scratch)
        nodes, gpus, _ = self._scratch
        search = shares_rules.find if self.rule >= 3 else find
        s, nn, ngp = search(self.rows, self.st, self.rule, j, g, p, lo, hi, *self._scratch)
        if s < 0:
            return -1, _NOWHERE
        return s, Where(nodes[:nn], gpus[:ngp])

    def take(self, j: int, g: int, p: int, s: int, where: Where,
             place: np.ndarray | None = None) -> None:
        """Charge job ``j`` at ``where`` from slot ``s`` on, in place (the rule's own rows too);
        write it into row ``j`` of ``place`` (a :func:`heuristics.placement.new_place` array) when given."""
        nodes, gpus = where
        take(self.rows, self.st, j, g, s, p, nodes, nodes.size, gpus, gpus.size)
        if self.rule >= 3:
            shares_rules.note(self.rows, self.st, self.rule, j, g, s, p, nodes)
        if place is not None:
            record(place, j, self.span, nodes, nodes.size, gpus, gpus.size)

    def parallel(self, order: Any, jobs: np.ndarray, start: np.ndarray,
                 place: np.ndarray | None = None) -> np.ndarray:
        """The parallel scheme on this state (:func:`heuristics.schemes.parallel_loop`)."""
        return parallel_loop(self, order, jobs, start, place)

    def start_now(self, t: int, cand: np.ndarray, jobs: np.ndarray, start: np.ndarray,
                  place: np.ndarray | None = None, also: SharesProfile | None = None) -> int:
        """Start at ``t``, in the order of ``cand``, every job with a valid placement from ``t``
        (one compiled call); how many started.

        Raises
        ------
        ValueError
            Under a policy rule (``rule >= 3``), which runs in the serial decoder only.
        """
        if self.rule >= 3:
            raise ValueError(f"placement: {self.placement!r} runs in the serial decoder only")
        return start_now(self.rows, _NO_ROWS if also is None else also.rows, self.st,  # type: ignore[no-any-return]
                         self.rule, t, np.ascontiguousarray(cand, dtype=np.int64), jobs, start,
                         _NONE if place is None else place, self.span)


def new_shares_profile(inst: Instance, reservation: str = "curve",
                       placement: str = "first-fit") -> SharesProfile:
    """The empty :class:`SharesProfile` of a version 3 instance under ``reservation``."""
    rule, seed = shares_rules.rule_code(placement)
    check_reservation(reservation)
    rows, st = new_state(inst, reservation)
    rows = shares_rules.with_aux(rows, rule, seed, st.sizes)
    return SharesProfile(rows, st, rule, place_width(inst)[0], (inst.gpus, inst.durations),
                         str(placement))


def _ready(a: np.ndarray) -> bool:
    return a.dtype == np.int64 and a.flags.c_contiguous and a.flags.writeable


def schedule_of(inst: Instance, start: np.ndarray, place: np.ndarray) -> Schedule:
    """The :class:`~instances.Schedule` (GPU indices) of a start array and a :func:`heuristics.placement.new_place` array."""
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
