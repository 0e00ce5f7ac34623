"""``guided``: an online placement rule beyond FGD (section 17 of the specification).

Each pod goes, at once and for good, to the node (and for a share the GPU)
whose move scores highest, ties to the earliest node. The score of a move
is, in milli-GPUs,

``(F_before - F_after) - w_cpu (X_after - X_before) - w_res L``

- ``F``: FGD's fragmentation of the node for its target workload (Weng et
  al., "Beware of Fragmentation", USENIX ATC 2023; :func:`instances.packing.node_frag`),
  as a real number: FGD's plugin turns the same difference into an integer
  0..100 through a sigmoid and so ties most nodes;
- ``X``: the node's **stranded** GPU milli, the idle milli its free CPU
  cannot serve at the workload's CPU per GPU milli ``r`` (the expected CPU
  milli of a pod over its expected GPU milli, CPU-only pods included):
  ``max(0, idle - cpu_free / r)``;
- ``L``: the **scarce capacity** the move takes: for each reserved shape
  (multi-GPU pods and pods bound to GPU models, from the pod-shape
  frequencies) the pods of that shape the node can no longer host, each
  weighted by the shape's GPU request times ``min(1, D_s / A_s)``, its
  expected demand until the cluster is full (``D_s = freq_s x free milli /
  expected GPU milli per pod``) over the pods of that shape the cluster can
  host now (``A_s``).

The rule reads the nodes (a :class:`~heuristics.view.NodeView`) and the
pod-shape frequencies (:class:`GuidedWorkload`); nothing of the pods still
to come. In the packing experiment the frequencies are the packing's own,
as FGD's target workload is (:func:`guided_workload`); in time, where a
rule sees only the view and the job, they are those of the shipped openb
pod list (:func:`openb_workload`), unless the rule is built with a workload
(:meth:`Guided.for_packing`). :mod:`heuristics.packing.guided` is the same
rule in one compiled loop over a packing (what ``place(packing,
"guided")`` runs); docs/beyond-fgd.md measures it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numba import njit

from instances.packing import GPU_MILLI, Packing, PackNode, Pod, TargetWorkload, target_workload
from instances.packing.frag import moved_frag, node_frag_shapes

from .view import JobView, NodeView

if TYPE_CHECKING:
    from instances import Instance

__all__ = [
    "GUIDED",
    "W_CPU",
    "W_FRAG",
    "W_RES",
    "Guided",
    "GuidedState",
    "GuidedWorkload",
    "guided_workload",
    "openb_workload",
]

W_FRAG = 1.0
"""Weight of FGD's fragmentation difference."""

W_CPU = 1.0
"""Weight of the stranded GPU milli (idle GPUs the node's CPU cannot serve)."""

W_RES = 0.3
"""Weight of the scarce capacity a move takes from the reserved shapes."""


@dataclass(frozen=True)
class GuidedWorkload:
    """What ``guided`` knows of the workload: pod-shape frequencies and what follows from them.

    Attributes
    ----------
    frag
        FGD's target workload (the shapes covering 95% of the pods), for ``F``.
    gpus, milli, cpu, freq
        The reserved shapes (multi-GPU pods and pods bound to GPU models):
        GPUs, GPU milli per GPU, CPU milli, frequency among all pods.
    shape_models
        Each reserved shape's GPU models (empty: any).
    cpu_per_milli
        Expected CPU milli per expected GPU milli of a pod (``r``).
    mean_request
        Expected GPU milli of a pod (CPU-only pods count 0).
    """

    frag: TargetWorkload
    gpus: np.ndarray
    milli: np.ndarray
    cpu: np.ndarray
    freq: np.ndarray
    shape_models: tuple[tuple[str, ...], ...]
    cpu_per_milli: float
    mean_request: float

    def allowed(self, models: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
        """``(frag shapes, models + 1)`` and ``(reserved shapes, models + 1)`` booleans over
        ``models`` and, last, a node without a model (which only a shape without models takes)."""
        return _allowed(self.frag.models, models), _allowed(self.shape_models, models)


def _allowed(shape_models: tuple[tuple[str, ...], ...], models: tuple[str, ...]) -> np.ndarray:
    out = np.ones((len(shape_models), len(models) + 1), dtype=np.bool_)
    for s, names in enumerate(shape_models):
        if names:
            out[s] = [m in names for m in models] + [False]
    return out


def guided_workload(packing: Packing, frag: TargetWorkload | None = None) -> GuidedWorkload:
    """``guided``'s workload from the pod-shape frequencies of ``packing`` (its pods' order unused).

    Parameters
    ----------
    packing
        Nodes and pods; only the multiset of the pods' shapes is read.
    frag
        FGD's target workload to use for ``F`` (default: the packing's own).

    Raises
    ------
    ValueError
        If the packing has no pods.
    """
    every = target_workload(packing, 1.0)
    keep = [s for s in range(len(every)) if every.gpus[s] >= 2 or (every.models[s] and every.gpus[s] > 0)]
    a = packing.arrays
    request = a.pod_request.sum()
    return GuidedWorkload(
        frag=frag if frag is not None else target_workload(packing),
        gpus=every.gpus[keep].astype(np.int64), milli=every.milli[keep].astype(np.int64),
        cpu=every.cpu[keep].astype(np.int64),
        freq=(every.count[keep] / every.count.sum()).astype(np.float64),
        shape_models=tuple(every.models[s] for s in keep),
        cpu_per_milli=float(a.pod_cpu.sum() / request) if request > 0 else 1.0,
        mean_request=max(float(request / len(packing.pods)), 1.0),
    )


@functools.lru_cache(maxsize=8)
def instance_workload(inst: Instance) -> GuidedWorkload:
    """``guided``'s workload from a version 3 instance: its jobs' shapes as pods on its nodes
    (a node without CPU or memory limits, and a job without a share, as the packing reads them)."""
    big = 10**9
    nodes = tuple(PackNode(n.name, n.gpus, n.model or "any", n.cpu_milli if n.cpu_milli is not None
                           else big, n.memory_mib if n.memory_mib is not None else big)
                  for n in inst.nodes or ())
    pods = tuple(Pod(j.name, j.gpus, j.gpu_milli if j.gpus else 0, j.cpu_milli or 0,
                     j.memory_mib or 0, tuple(j.gpu_models or ())) for j in inst.jobs)
    return guided_workload(Packing(inst.name, nodes, pods))


@functools.cache
def openb_workload() -> GuidedWorkload:
    """``guided``'s workload of the shipped openb pod list on the shipped openb nodes."""
    from instances.packing import read_openb_nodes, read_openb_pods

    return guided_workload(Packing("openb", tuple(read_openb_nodes()), tuple(read_openb_pods())))


class GuidedState(NamedTuple):
    """The cluster as ``guided`` keeps it (one row per node; every array its own copy).

    ``left``: each GPU's free milli (-1 past a node's GPUs); ``cpu``, ``mem``:
    free CPU and memory; ``full``: wholly free GPUs; ``idle``: free GPU milli;
    ``frag``, ``room``, ``short``: FGD's fragmentation and its per-shape counts
    (:func:`instances.packing.frag.node_frag_shapes`); ``slots``: pods of each
    reserved shape the node's GPUs can hold, ``host``: those it can host with
    its CPU too, ``able``: their sum over the nodes (``A_s``); ``free``: the
    cluster's free GPU milli (one element).
    """

    left: np.ndarray
    cpu: np.ndarray
    mem: np.ndarray
    full: np.ndarray
    idle: np.ndarray
    frag: np.ndarray
    room: np.ndarray
    short: np.ndarray
    slots: np.ndarray
    host: np.ndarray
    able: np.ndarray
    free: np.ndarray


class Shapes(NamedTuple):
    """A :class:`GuidedWorkload` as compiled code reads it (``*_allowed`` over the node models)."""

    t_cpu: np.ndarray
    t_milli: np.ndarray
    t_gpus: np.ndarray
    t_allowed: np.ndarray
    t_freq: np.ndarray
    r_gpus: np.ndarray
    r_milli: np.ndarray
    r_cpu: np.ndarray
    r_allowed: np.ndarray
    r_freq: np.ndarray
    cpu_per_milli: float
    mean_request: float
    w_frag: float
    w_cpu: float
    w_res: float


def shapes_of(w: GuidedWorkload, models: tuple[str, ...], weights: tuple[float, float, float]) -> Shapes:
    """The compiled form of ``w`` over the node ``models`` with the rule's ``weights``."""
    t_allowed, r_allowed = w.allowed(models)
    f = w.frag
    return Shapes(f.cpu, f.milli, f.gpus, t_allowed, f.freq, w.gpus, w.milli, w.cpu, r_allowed,
                  w.freq, w.cpu_per_milli, w.mean_request, *weights)


@njit(cache=True, inline="always")
def _gpu_slots(row: np.ndarray, full: int, g: int, m: int) -> int:  # pragma: no cover
    """Pods of ``g`` GPUs of ``m`` milli the GPUs ``row`` can hold (``full`` of them wholly free)."""
    if g == 1 and m < GPU_MILLI:
        k = 0
        for i in range(row.shape[0]):
            k += max(row[i], 0) // m
        return k
    return full // g


@njit(cache=True, inline="always")
def _host(slots: int, cpu: int, allowed: bool, c: int) -> int:  # pragma: no cover
    """Pods of a shape a node hosts: its GPU ``slots``, limited by its free ``cpu``."""
    if not allowed or cpu < c:
        return 0
    return min(slots, cpu // c) if c > 0 else slots


@njit(cache=True, inline="always")
def _stranded(idle: int, cpu: int, r: float) -> float:  # pragma: no cover
    """Idle GPU milli that free ``cpu`` cannot serve at ``r`` CPU milli per GPU milli."""
    x = idle - cpu / r
    return x if x > 0.0 else 0.0


@njit(cache=True)
def new_state(left: np.ndarray, cpu: np.ndarray, mem: np.ndarray, node_gpus: np.ndarray,
              node_model: np.ndarray, sh: Shapes) -> GuidedState:  # pragma: no cover
    """The state of nodes whose GPUs have ``left`` milli free and ``cpu``, ``mem`` free."""
    n_nodes = node_gpus.shape[0]
    left = left.copy()
    full = np.zeros(n_nodes, dtype=np.int64)
    idle = np.zeros(n_nodes, dtype=np.int64)
    frag = np.zeros(n_nodes)
    room = np.zeros((n_nodes, sh.t_cpu.shape[0]), dtype=np.int64)
    short = np.zeros((n_nodes, sh.t_cpu.shape[0]), dtype=np.int64)
    slots = np.zeros((n_nodes, sh.r_gpus.shape[0]), dtype=np.int64)
    host = np.zeros((n_nodes, sh.r_gpus.shape[0]), dtype=np.int64)
    st = GuidedState(left, cpu.copy(), mem.copy(), full, idle, frag, room, short, slots, host,
                     np.zeros(sh.r_gpus.shape[0]), np.zeros(1))
    for n in range(n_nodes):
        refresh(st, n, node_gpus, node_model, sh)
    return st


@njit(cache=True)
def refresh(st: GuidedState, n: int, node_gpus: np.ndarray, node_model: np.ndarray,
            sh: Shapes) -> None:  # pragma: no cover
    """Recompute node ``n``'s figures (and the cluster's sums) after its free amounts changed."""
    row = st.left[n, : node_gpus[n]]
    st.free[0] -= st.idle[n]
    count, idle = 0, 0
    for i in range(row.shape[0]):
        count += row[i] == GPU_MILLI
        idle += max(row[i], 0)
    st.full[n], st.idle[n] = count, idle
    st.free[0] += idle
    model = node_model[n]
    st.frag[n] = node_frag_shapes(st.cpu[n], row, model, sh.t_cpu, sh.t_milli, sh.t_gpus,
                                  sh.t_allowed, sh.t_freq, st.room[n], st.short[n])
    for s in range(sh.r_gpus.shape[0]):
        st.slots[n, s] = _gpu_slots(row, count, sh.r_gpus[s], sh.r_milli[s])
        h = _host(st.slots[n, s], st.cpu[n], sh.r_allowed[s, model], sh.r_cpu[s])
        st.able[s] += h - st.host[n, s]
        st.host[n, s] = h


@njit(cache=True)
def scarcity(st: GuidedState, sh: Shapes) -> np.ndarray:  # pragma: no cover
    """Per reserved shape: its GPU request times ``min(1, D_s / A_s)`` (the ``L`` weights)."""
    expected = st.free[0] / sh.mean_request
    out = np.zeros(sh.r_gpus.shape[0])
    for s in range(out.shape[0]):
        share = sh.r_freq[s] * expected / max(st.able[s], 1.0)
        out[s] = min(1.0, share) * sh.r_gpus[s] * sh.r_milli[s]
    return out


@njit(cache=True)
def local_score(st: GuidedState, sh: Shapes, n: int, model: int, cnt: int, old: int, new: int,
                milli: int, cpu_after: int) -> float:  # pragma: no cover
    """``F`` and ``X`` of ``cnt`` GPUs of node ``n`` going from ``old`` to ``new`` free milli, its
    free CPU to ``cpu_after`` (``milli``: the GPU milli the move takes): what depends on the node only."""
    row = st.left[n]
    ng = 0
    while ng < row.shape[0] and row[ng] >= 0:
        ng += 1
    after = moved_frag(cpu_after, row[:ng], cnt, old, new, model, sh.t_cpu, sh.t_milli,
                       sh.t_gpus, sh.t_allowed, sh.t_freq, st.room[n], st.short[n])
    r = sh.cpu_per_milli
    return sh.w_frag * (st.frag[n] - after) - sh.w_cpu * (
        _stranded(st.idle[n] - milli, cpu_after, r) - _stranded(st.idle[n], st.cpu[n], r))


@njit(cache=True, inline="always")
def scarce_loss(st: GuidedState, sh: Shapes, rho: np.ndarray, n: int, model: int, cnt: int,
                old: int, new: int, cpu_after: int) -> float:  # pragma: no cover
    """``L`` of the same move: the reserved shapes' pods node ``n`` could host and no longer can,
    weighted by ``rho`` (:func:`scarcity`)."""
    full_after = st.full[n] - (cnt if old == GPU_MILLI and new < GPU_MILLI else 0)
    loss = 0.0
    for s in range(sh.r_gpus.shape[0]):
        g, m = sh.r_gpus[s], sh.r_milli[s]
        if g == 1 and m < GPU_MILLI:
            sl = st.slots[n, s] + cnt * (new // m - old // m)
        else:
            sl = full_after // g
        loss += rho[s] * (st.host[n, s] - _host(sl, cpu_after, sh.r_allowed[s, model],
                                                sh.r_cpu[s]))
    return loss


@njit(cache=True, inline="always")
def move_score(local: float, st: GuidedState, sh: Shapes, rho: np.ndarray, n: int, model: int,
               cnt: int, old: int, new: int, cpu_after: int) -> float:  # pragma: no cover
    """The move's whole score from its :func:`local_score`."""
    if sh.w_res == 0.0:
        return local
    return local - sh.w_res * scarce_loss(st, sh, rho, n, model, cnt, old, new, cpu_after)


@njit(cache=True)
def node_score(st: GuidedState, sh: Shapes, rho: np.ndarray, n: int, model: int, g: int, m: int,
               c: int) -> tuple[float, int]:  # pragma: no cover
    """The score of a pod (``g`` GPUs of ``m`` milli, ``c`` CPU milli) on node ``n``, where it
    fits, and for a share the GPU that scores best (the first of equals; -1 otherwise)."""
    cpu_after = st.cpu[n] - c
    if not (g == 1 and m < GPU_MILLI):
        cnt, new = (0, GPU_MILLI) if g == 0 else (g, 0)
        local = local_score(st, sh, n, model, cnt, GPU_MILLI, new, g * m, cpu_after)
        return move_score(local, st, sh, rho, n, model, cnt, GPU_MILLI, new, cpu_after), -1
    row = st.left[n]
    best, best_gpu = -np.inf, -1
    for i in range(row.shape[0]):
        if row[i] < m:
            continue
        dup = False  # a GPU before it with the same free milli scores the same and wins
        for k in range(i):
            dup |= row[k] == row[i]
        if dup:
            continue
        local = local_score(st, sh, n, model, 1, row[i], row[i] - m, m, cpu_after)
        s = move_score(local, st, sh, rho, n, model, 1, row[i], row[i] - m, cpu_after)
        if best_gpu < 0 or s > best:
            best, best_gpu = s, i
    return best, best_gpu


@njit(cache=True)
def view_scores(st: GuidedState, sh: Shapes, fits: np.ndarray, node_model: np.ndarray, g: int,
                m: int, c: int) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
    """Every node's score (``-inf`` where the pod does not fit) and chosen GPU."""
    rho = scarcity(st, sh)
    scores = np.full(fits.shape[0], -np.inf)
    gpus = np.full(fits.shape[0], -1, dtype=np.int64)
    for n in range(fits.shape[0]):
        if fits[n]:
            scores[n], gpus[n] = node_score(st, sh, rho, n, node_model[n], g, m, c)
    return scores, gpus


class Guided:
    """The ``guided`` placement rule (section 14's interface: ``score`` and ``gpus``).

    Parameters
    ----------
    workload
        The pod-shape frequencies it follows (default: :func:`openb_workload`;
        the packing experiment passes the packing's own, :meth:`for_packing`).
    w_frag, w_cpu, w_res
        The weights of the score's three terms (:data:`W_FRAG`, :data:`W_CPU`, :data:`W_RES`).
    """

    description = "guided: FGD's fragmentation, CPU left for the idle GPUs, scarce shapes reserved"

    def __init__(self, workload: GuidedWorkload | None = None, *, w_frag: float = W_FRAG,
                 w_cpu: float = W_CPU, w_res: float = W_RES) -> None:
        self.workload = workload
        self.weights = (float(w_frag), float(w_cpu), float(w_res))
        self._shapes: dict[tuple[str, ...], Shapes] = {}

    def for_packing(self, packing: Packing, frag: TargetWorkload | None = None) -> Guided:
        """The same rule following ``packing``'s pod-shape frequencies (this one if it has its own)."""
        if self.workload is not None:
            return self
        return Guided(guided_workload(packing, frag), w_frag=self.weights[0],
                      w_cpu=self.weights[1], w_res=self.weights[2])

    def for_instance(self, inst: Instance) -> Guided:
        """The same rule following the pod-shape frequencies of a version 3 instance's jobs
        (:func:`instance_workload`; this one if it has its own, or on another version)."""
        if self.workload is not None or not inst.jobs_use_resources or not inst.jobs:
            return self
        return Guided(instance_workload(inst), w_frag=self.weights[0], w_cpu=self.weights[1],
                      w_res=self.weights[2])

    def shapes(self, models: tuple[str, ...]) -> Shapes:
        """The workload in compiled form over the node ``models`` (kept per model tuple)."""
        if models not in self._shapes:
            w = self.workload if self.workload is not None else openb_workload()
            self._shapes[models] = shapes_of(w, models, self.weights)
        return self._shapes[models]

    def _scores(self, view: NodeView, job: JobView) -> tuple[np.ndarray, np.ndarray]:
        sh = self.shapes(tuple(view.models))
        model = np.asarray(view.model, dtype=np.int64)
        model = np.where(model < 0, len(view.models), model)  # no model: the last column
        st = new_state(np.asarray(view.gpu_free_milli, dtype=np.int64),
                       np.asarray(view.cpu_free_milli, dtype=np.int64),
                       np.asarray(view.memory_free_mib, dtype=np.int64),
                       np.asarray(view.gpus, dtype=np.int64), model, sh)
        fits = np.asarray(view.fits, dtype=np.bool_)
        return view_scores(st, sh, fits, model, int(job.gpus), int(job.gpu_milli),
                           int(job.cpu_milli))  # type: ignore[no-any-return]

    def score(self, view: NodeView, job: JobView) -> np.ndarray:
        """One score per node (``-inf`` where the job does not fit)."""
        return self._scores(view, job)[0]

    def gpus(self, view: NodeView, job: JobView, node: int) -> list[int]:
        """A share: the GPU of ``node`` whose move scores best; whole GPUs: the lowest-indexed free."""
        if job.gpus == 1 and job.gpu_milli < GPU_MILLI:
            return [int(self._scores(view, job)[1][node])]
        free = np.asarray(view.gpu_free_milli[node])
        return [int(i) for i in np.flatnonzero(free >= GPU_MILLI)[: job.gpus]]


GUIDED = Guided()
"""The registered ``guided`` rule (``--policy guided``)."""
