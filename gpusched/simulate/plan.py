"""The plan instance: what a method sees when it plans at slot ``t0``.

The same horizon and objective; the actual demand before ``t0`` and the scaled
forecast from it on (:func:`scaled_forecast`); the jobs not yet started. The
running jobs are held on the capacity model (:func:`instances.capacity`): each
node less what they hold on it at ``t0`` (:class:`Held`: GPUs, and on model
version 3 their GPU indices, CPU and memory), the rest as the pseudo-service
``running-batch``. The construction, flat, on nodes and on version 3, is in
docs/simulation.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple, cast

import numpy as np

from instances import Instance, Job, Node, Scenario, Service
from instances.capacity import capacity
from instances.model import subset_sums
from instances.objective import CENSOR_KEY
from instances.resources import has_placement

__all__ = [
    "RUNNING_SERVICE", "Held", "Plan", "Planner", "Where", "node_counts", "plan_instance",
    "scaled_forecast", "where_of",
]

RUNNING_SERVICE = "running-batch"
"""Name of the plan instance's pseudo-service holding the running jobs' GPUs."""


def scaled_forecast(inst: Instance, headroom: float) -> np.ndarray:
    """``min(ceil((1 + H) f_s[t] - 1e-9), G)`` per service, the total then capped at ``G``
    (the last service lowered first); shape ``(num_services, horizon)``.

    The ``1e-9`` removes float noise: ``(1 + 0.1) * 10`` is 11, not 12.
    """
    G = inst.num_gpus
    f = np.ceil((1.0 + headroom) * inst.demand - 1e-9).astype(np.int64)
    f = np.clip(f, 0, G)
    _lower_last_first(f, f.sum(axis=0) - G)
    return f


def _lower_last_first(demand: np.ndarray, excess: np.ndarray) -> None:
    """Lower ``demand`` (services x slots) in place by ``excess`` per slot, the last service
    first, never below 0.
    """
    left = np.maximum(excess, 0)
    for k in range(demand.shape[0] - 1, -1, -1):
        if not left.any():
            break
        cut = np.minimum(demand[k], left)
        demand[k] -= cut
        left = left - cut


class Where(NamedTuple):
    """Where a job runs, on the capacity model of an instance.

    Attributes
    ----------
    nodes
        ``(node position, GPUs)`` pairs, ascending (a flat pool: its one internal node).
    gpus
        Model version 3, a job on one node: the GPU indices it holds there. Empty for a
        job on whole nodes (it holds every GPU of them) and before version 3.
    """

    nodes: tuple[tuple[int, int], ...]
    gpus: tuple[int, ...] = ()


def node_counts(
    inst: Instance, job: Job, counts: Mapping[str, int] | None
) -> list[tuple[int, int]] | None:
    """A job's ``(node position, GPUs)`` on the capacity model of ``inst``, ascending.

    ``counts`` is its placement (node name -> GPUs); a flat instance has the one
    internal node. ``None`` when ``counts`` does not place the job's GPUs.

    Raises
    ------
    ValueError
        For a node the instance does not have.
    """
    if not inst.has_nodes:
        return [(0, job.gpus)]
    index = inst.node_index
    for node in counts or ():
        if node not in index:
            raise ValueError(f"placement[{job.name!r}]: unknown node {node!r}")
    if not counts or sum(counts.values()) != job.gpus:
        return None
    return sorted((index[node], int(c)) for node, c in counts.items() if c > 0)


def where_of(
    inst: Instance, job: Job, on: Mapping[str, int | Sequence[int]] | None
) -> Where | None:
    """A job's :class:`Where` from its placement as a schedule gives it: node name -> GPUs,
    a count or (model version 3) the GPU indices. ``None`` when it does not place the
    job's GPUs.

    Raises
    ------
    ValueError
        For a node the instance does not have; on version 3, for a job on one node
        whose placement does not list its GPU indices, or lists one the node lacks.
    """
    on = dict(on or {})
    counts = {n: len(v) if isinstance(v, (list, tuple)) else int(cast(int, v))
              for n, v in on.items()}
    pairs = node_counts(inst, job, counts)
    if pairs is None:
        return None
    if not inst.jobs_use_resources or len(pairs) > 1:
        return Where(tuple(pairs))
    node = (inst.nodes or ())[pairs[0][0]]
    listed = on[node.name]
    where = f"placement[{job.name!r}][{node.name!r}]"
    if not isinstance(listed, (list, tuple)):
        raise ValueError(f"{where}: on a version 3 instance, the list of GPU indices the job "
                         f"holds, got {listed!r}")
    gpus = tuple(sorted(int(i) for i in listed))
    if len(set(gpus)) != len(gpus) or not all(0 <= i < node.gpus for i in gpus):
        raise ValueError(f"{where}: GPU indices must be distinct, in 0..{node.gpus - 1}, "
                         f"got {list(listed)}")
    return Where(tuple(pairs), gpus)


@dataclass(frozen=True)
class Held:
    """What the running jobs hold when a plan is made at slot ``t0`` (:meth:`Planner.held`).

    Attributes
    ----------
    gpus
        ``(K,)``: GPUs held on each node of the capacity model at ``t0`` (a GPU that
        several shared jobs use counts once).
    busy
        ``(T,)``: GPUs the running jobs keep busy at each slot, 0 before ``t0``.
    indices
        Model version 3: per node, the GPU indices held at ``t0``; ``None`` before.
    cpu, memory
        Model version 3: per node, the CPU milli and memory MiB the running jobs use at
        ``t0``; ``None`` before.
    """

    gpus: np.ndarray
    busy: np.ndarray
    indices: tuple[frozenset[int], ...] | None = None
    cpu: np.ndarray | None = None
    memory: np.ndarray | None = None


class Plan(NamedTuple):
    """A plan instance and how it maps back to the instance.

    Attributes
    ----------
    instance
        The plan instance, or ``None`` when the running jobs fill every node.
    jobs
        The original index of each of its jobs.
    gpu_map
        Model version 3: for each node the plan holds less of, its GPU indices on the
        instance, by the plan's index (a node not listed keeps its indices).
    """

    instance: Instance | None
    jobs: np.ndarray
    gpu_map: Mapping[str, tuple[int, ...]]


def _released_at(job: Job, t: int) -> Job:
    """``job`` with release ``t``, not validated again (this runs for every job at every
    plan; the caller guarantees ``t + duration <= min(deadline, T)``).
    """
    if not hasattr(job, "__dict__"):  # pragma: no cover - a slotted Job
        return replace(job, release=t)
    new = object.__new__(type(job))
    new.__dict__.update(job.__dict__)
    new.__dict__["release"] = t
    return new


def _service(name: str, priority: float, demand: tuple[int, ...]) -> Service:
    """A :class:`Service` of values known valid, not checked again (a plan carries ``S x T``)."""
    new = object.__new__(Service)
    new.__dict__.update(name=name, priority=priority, demand=demand)
    return new


class Planner:
    """Builds the plan instances of one simulation (the arrays computed once)."""

    def __init__(self, inst: Instance, actual: np.ndarray, headroom: float) -> None:
        self.inst = inst
        self.cap = capacity(inst)
        self.largest = int(self.cap.sizes.max())
        self.actual = actual
        self.future = scaled_forecast(inst, headroom)
        self.names = [s.name for s in inst.services]
        self.prios = [s.priority for s in inst.services]
        name = RUNNING_SERVICE
        while name in self.names:
            name = "_" + name
        self.running_name = name
        self.jobs = inst.jobs
        self.rel = inst.releases
        self.dur = inst.durations
        self.dl = inst.deadlines
        self.gpus = inst.gpus
        self.prio = inst.priorities
        self.values = inst.job_values
        self.meta: dict[str, Any] = (
            {CENSOR_KEY: inst.meta[CENSOR_KEY]} if CENSOR_KEY in inst.meta else {}
        )

    def _running_profile(self, t0: int, running: Sequence[int], end: np.ndarray) -> np.ndarray:
        """GPUs of the running jobs at each slot (0 before ``t0``), length ``T``."""
        T = self.inst.horizon
        held = np.zeros(T + 1, dtype=np.int64)
        for j in running:
            held[t0] += self.gpus[j]
            held[end[j]] -= self.gpus[j]
        return np.cumsum(held[:T])

    def held(
        self, t0: int, running: Sequence[int], end: np.ndarray, where: Mapping[int, Where]
    ) -> Held:
        """What the jobs ``running`` at ``t0`` hold (``end``: each one's end, ``where``: its
        placement), counted on the capacity model.
        """
        K, T = self.cap.num_nodes, self.inst.horizon
        gpus = np.zeros(K, dtype=np.int64)
        sh = self.cap.shares
        if sh is None:
            for j in running:
                for k, c in where[j].nodes:
                    gpus[k] += c
            return Held(gpus, self._running_profile(t0, running, end))
        cpu = np.zeros(K, dtype=np.int64)
        memory = np.zeros(K, dtype=np.int64)
        until: dict[tuple[int, int], int] = {}  # (node, GPU index) -> the slot it is free
        for j in running:
            w, e = where[j], int(end[j])
            if len(w.nodes) == 1:
                k = w.nodes[0][0]
                cpu[k] += sh.job_cpu[j]
                memory[k] += sh.job_memory[j]
                taken = [(k, i) for i in w.gpus]
            else:  # whole nodes: every GPU, nothing of their CPU and memory left to others
                taken = [(k, i) for k, _ in w.nodes for i in range(int(self.cap.sizes[k]))]
            for key in taken:
                until[key] = max(until.get(key, 0), e)
        indices: list[set[int]] = [set() for _ in range(K)]
        change = np.zeros(T + 1, dtype=np.int64)
        for (k, i), e in until.items():
            indices[k].add(i)
            change[t0] += 1
            change[e] -= 1
        gpus[:] = [len(x) for x in indices]
        return Held(gpus, np.cumsum(change[:T]), tuple(frozenset(x) for x in indices),
                    cpu, memory)

    def _jobs(self, t0: int, idx: np.ndarray) -> tuple[Job, ...]:
        """The plan's jobs ``idx``: a job released before ``t0`` gets release ``t0``."""
        jobs = self.jobs
        late = (self.rel[idx] < t0).tolist()
        return tuple(
            _released_at(jobs[j], t0) if is_late else jobs[j]
            for j, is_late in zip(idx.tolist(), late)
        )

    def _cache(self, plan: Instance, t0: int, idx: np.ndarray) -> None:
        """The plan's per-job arrays, taken from the arrays at hand (same values, read-only)."""
        lo = np.maximum(self.rel, t0)
        cached = plan.__dict__
        for key, arr in (
            ("gpus", self.gpus[idx]), ("durations", self.dur[idx]),
            ("releases", lo[idx]), ("deadlines", self.dl[idx]),
            ("priorities", self.prio[idx]), ("job_values", self.values[idx]),
        ):
            arr.setflags(write=False)
            cached[key] = arr

    def _candidates(self, t0: int, waiting: np.ndarray) -> np.ndarray:
        # a job released later is kept as it is (at slot 0: the offline instance,
        # job for job); one released before t0 only if it can still end in time
        return np.flatnonzero(waiting & ((self.rel >= t0) | (t0 + self.dur <= self.dl)))

    def build(self, t0: int, waiting: np.ndarray, held: Held) -> Plan:
        """The plan of slot ``t0`` for the ``waiting`` jobs beside what the running jobs hold.

        Its instance is ``None`` when they fill every node.
        """
        inst, T = self.inst, self.inst.horizon
        # the one internal node of a flat pool is the pool row: nothing is held
        # on it for the whole horizon, the pseudo-service follows the running jobs
        fixed = np.zeros_like(held.gpus) if self.cap.flat else held.gpus
        free = self.cap.sizes - fixed
        keep = np.flatnonzero(free > 0)
        G = int(free.sum())
        if G == 0:
            return Plan(None, np.zeros(0, dtype=np.int64), {})
        demand = np.concatenate([self.actual[:, :t0], self.future[:, t0:]], axis=1)
        # the running GPUs beyond those held on nodes: > 0 the pool holds them
        # (the pseudo-service), < 0 they are freed, and inference may take them
        beyond = np.zeros(T, dtype=np.int64)
        beyond[t0:] = held.busy[t0:] - int(fixed.sum())
        _lower_last_first(demand, -beyond)
        _lower_last_first(demand, demand.sum(axis=0) - G)
        services = [
            _service(n, p, tuple(row)) for n, p, row in zip(self.names, self.prios, demand.tolist())
        ]
        pseudo = np.minimum(np.maximum(beyond, 0), G - demand.sum(axis=0))
        if pseudo.any():
            services.append(_service(self.running_name, 1.0, tuple(pseudo.tolist())))
        idx = self._candidates(t0, waiting)
        nodes = inst.nodes
        gpu_map: dict[str, tuple[int, ...]] = {}
        if fixed.any():  # only on nodes: a flat pool holds nothing fixed
            idx = idx[self._placeable(self.gpus[idx], free[keep], fixed[keep] > 0)]
            listed = inst.nodes or ()
            nodes = tuple(
                self._less_held(k, int(free[k]), held, gpu_map) if fixed[k] else listed[k]
                for k in keep.tolist()
            )
            if self.cap.shares is not None:
                idx = idx[self._fits_alone(idx, nodes)]
        plan = Instance(inst.name, G, T, tuple(services), self._jobs(t0, idx), inst.slot_hours,
                        meta=self.meta, nodes=nodes, objective=inst.objective)
        self._cache(plan, t0, idx)
        return Plan(plan, idx, gpu_map)

    def _less_held(self, k: int, free: int, held: Held, gpu_map: dict[str, tuple[int, ...]]
                   ) -> Node:
        """Node ``k`` less what the running jobs hold on it: ``free`` GPUs and, on version 3,
        its CPU and memory less theirs (its GPUs left, by index, into ``gpu_map``).
        """
        node = (self.inst.nodes or ())[k]
        if held.indices is None:
            return Node(node.name, free)
        assert held.cpu is not None and held.memory is not None
        gpu_map[node.name] = tuple(i for i in range(node.gpus) if i not in held.indices[k])
        cpu = None if node.cpu_milli is None else node.cpu_milli - int(held.cpu[k])
        memory = None if node.memory_mib is None else node.memory_mib - int(held.memory[k])
        return replace(node, gpus=free, cpu_milli=cpu, memory_mib=memory)

    def _fits_alone(self, idx: np.ndarray, nodes: tuple[Node, ...]) -> np.ndarray:
        """Per job of ``idx``: whether it has a valid placement on the empty ``nodes`` (version
        3: model, CPU and memory as well as GPUs; the plan instance refuses one without).
        """
        sizes = [n.gpus for n in nodes]
        models = [n.model for n in nodes]
        cpu = [n.cpu_milli for n in nodes]
        memory = [n.memory_mib for n in nodes]
        seen: dict[tuple[Any, ...], bool] = {}
        out = np.zeros(idx.size, dtype=bool)
        for m, j in enumerate(idx.tolist()):
            job = self.jobs[j]
            shape = (job.gpus, job.gpu_models, job.cpu_milli, job.memory_mib)
            if shape not in seen:
                seen[shape] = has_placement(sizes, models, cpu, memory, *shape)
            out[m] = seen[shape]
        return out

    def _placeable(self, g: np.ndarray, free: np.ndarray, touched: np.ndarray) -> np.ndarray:
        """Per job of ``g`` GPUs: whether every valid placement on the plan's nodes is valid
        beside the running jobs (docs/simulation.md, the plan instance on nodes).
        """
        out = g <= int(free.max())
        multi = g > self.largest
        if multi.any():
            limit = int(free.sum())
            sizes = free.tolist()
            whole = subset_sums([s for s, t in zip(sizes, touched.tolist()) if not t], limit)
            bad = 0
            for v in sorted({s for s, t in zip(sizes, touched.tolist()) if t}):
                rest = list(sizes)
                rest.remove(v)
                bad |= subset_sums(rest, limit) << v
            for k in np.flatnonzero(multi).tolist():
                gk = int(g[k])
                out[k] = bool((whole >> gk) & 1) and not (bad >> gk) & 1
        return out


def plan_instance(
    inst: Instance, scenario: Scenario, t0: int, *, headroom: float = 0.0,
    running: Mapping[str, int] | None = None, started: frozenset[str] | set[str] = frozenset(),
    placement: Mapping[str, Mapping[str, int | Sequence[int]]] | None = None,
) -> Instance | None:
    """The plan instance of slot ``t0``, for inspection.

    Parameters
    ----------
    running
        Jobs running at ``t0``, by name, with the slot of their start.
    started
        Jobs completed or running: they are not in the plan.
    placement
        On nodes, the placement of every running job (node name -> GPUs; on model
        version 3, a one-node job lists its GPU indices, as a schedule file does).

    Returns
    -------
    Instance or None
        ``None`` on nodes when the running jobs fill every node.

    Raises
    ------
    ValueError
        On nodes, for a running job without a placement of its GPUs, with one naming an
        unknown node, or (version 3) without its GPU indices.
    """
    scenario.validate(inst)
    planner = Planner(inst, scenario.demand(inst), headroom)
    running = dict(running or {})
    index = inst.job_index
    waiting = np.ones(inst.num_jobs, dtype=bool)
    end = np.full(inst.num_jobs, -1, dtype=np.int64)
    for name in set(started) | set(running):
        waiting[index[name]] = False
    placement = placement or {}
    where: dict[int, Where] = {}
    for name, s in running.items():
        job = inst.jobs[index[name]]
        end[index[name]] = s + job.duration
        w = where_of(inst, job, placement.get(name))
        if w is None:
            raise ValueError(
                f"placement: running job {name!r} has no placement of its {job.gpus} GPUs"
            )
        where[index[name]] = w
    on = [index[n] for n in running]
    return planner.build(t0, waiting, planner.held(t0, on, end, where)).instance
