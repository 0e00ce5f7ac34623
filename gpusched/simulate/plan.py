"""The plan instance: what a method sees when it plans at slot ``t0``.

The same horizon; the actual demand before ``t0`` and the scaled forecast from
it on (:func:`scaled_forecast`); the jobs not yet started. The running jobs are
held on the capacity model (:func:`instances.capacity`): each node less what
they hold on it at ``t0``, the rest as the pseudo-service ``running-batch``.
The construction, flat and on nodes, is in docs/simulation.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from instances import Instance, Job, Node, Scenario, Service
from instances.capacity import capacity
from instances.model import subset_sums
from instances.resources import refuse_resources

__all__ = ["RUNNING_SERVICE", "Planner", "node_counts", "plan_instance", "scaled_forecast"]

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
        refuse_resources(inst, "simulate")  # (capacity reads version 3; the replay does not yet)
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

    def _running_profile(self, t0: int, running: list[int], end: np.ndarray) -> np.ndarray:
        """GPUs of the running jobs at each slot (0 before ``t0``), length ``T``."""
        T = self.inst.horizon
        held = np.zeros(T + 1, dtype=np.int64)
        for j in running:
            held[t0] += self.gpus[j]
            held[end[j]] -= self.gpus[j]
        return np.cumsum(held[:T])

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

    def build(
        self, t0: int, waiting: np.ndarray, running: list[int], end: np.ndarray,
        held: np.ndarray,
    ) -> tuple[Instance | None, np.ndarray]:
        """The plan instance at slot ``t0`` and the original indices of its jobs.

        ``held``: GPUs the running jobs hold on each node of the capacity model at
        ``t0``. The plan is ``None`` when they fill every node.
        """
        inst, T = self.inst, self.inst.horizon
        # the one internal node of a flat pool is the pool row: nothing is held
        # on it for the whole horizon, the pseudo-service follows the running jobs
        fixed = np.zeros_like(held) if self.cap.flat else held
        free = self.cap.sizes - fixed
        keep = np.flatnonzero(free > 0)
        G = int(free.sum())
        if G == 0:
            return None, np.zeros(0, dtype=np.int64)
        demand = np.concatenate([self.actual[:, :t0], self.future[:, t0:]], axis=1)
        # the running GPUs beyond those held on nodes: > 0 the pool holds them
        # (the pseudo-service), < 0 they are freed, and inference may take them
        beyond = np.zeros(T, dtype=np.int64)
        if running:
            beyond[t0:] = self._running_profile(t0, running, end)[t0:] - int(fixed.sum())
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
        if fixed.any():  # only on nodes: a flat pool holds nothing fixed
            idx = idx[self._placeable(self.gpus[idx], free[keep], fixed[keep] > 0)]
            listed = inst.nodes or ()
            nodes = tuple(
                Node(listed[k].name, int(free[k])) if fixed[k] else listed[k]
                for k in keep.tolist()
            )
        plan = Instance(inst.name, G, T, tuple(services), self._jobs(t0, idx), inst.slot_hours,
                        nodes=nodes)
        self._cache(plan, t0, idx)
        return plan, idx

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
    placement: Mapping[str, Mapping[str, int]] | None = None,
) -> Instance | None:
    """The plan instance of slot ``t0``, for inspection.

    Parameters
    ----------
    running
        Jobs running at ``t0``, by name, with the slot of their start.
    started
        Jobs completed or running: they are not in the plan.
    placement
        On nodes, the placement of every running job (node name -> GPUs).

    Returns
    -------
    Instance or None
        ``None`` on nodes when the running jobs fill every node.

    Raises
    ------
    ValueError
        On nodes, for a running job without a placement of its GPUs or with one
        naming an unknown node.
    """
    scenario.validate(inst)
    planner = Planner(inst, scenario.demand(inst), headroom)
    running = dict(running or {})
    index = inst.job_index
    waiting = np.ones(inst.num_jobs, dtype=bool)
    end = np.full(inst.num_jobs, -1, dtype=np.int64)
    for name in set(started) | set(running):
        waiting[index[name]] = False
    held = np.zeros(planner.cap.num_nodes, dtype=np.int64)
    placement = placement or {}
    for name, s in running.items():
        job = inst.jobs[index[name]]
        end[index[name]] = s + job.duration
        where = node_counts(inst, job, placement.get(name))
        if where is None:
            raise ValueError(
                f"placement: running job {name!r} has no placement of its {job.gpus} GPUs"
            )
        for k, c in where:
            held[k] += c
    return planner.build(t0, waiting, [index[n] for n in running], end, held)[0]
