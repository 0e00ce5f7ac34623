"""The time-indexed formulation as arrays (the specification (docs/model.md)), built by :func:`milp.build`.

One integer column per usable (job group, placement, start): ``x = 1`` (or
the number of copies, for a group of identical jobs) when the group starts
there on those nodes. A flat pool is one node of ``G`` GPUs (its one
placement, ``(0,)``, is internal): its model has no node row, so it is the
flat model. Rows: each group at most its size; the pool row per slot; node
rows per node and slot where they can bind; and the rows valid for every
integer schedule that tighten the relaxation (rounded, clique, symmetry).
What each option does to the bounds and the search, as measured, is in
``docs/milp.md`` and ``docs/nodes-milp.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import scipy.sparse as sp

from instances import Instance

from .export import pulp_model, unique_names, write_model
from .shares import canonical_gpu

__all__ = [
    "DEFAULT_MAX_COLUMNS", "DEFAULT_ROUNDING", "ROW_ASSIGN", "ROW_CAPACITY", "ROW_CLIQUE",
    "ROW_CPU", "ROW_GPU", "ROW_MEMORY", "ROW_ROUNDED", "ROW_SYM", "ROW_SYM_SUM", "Formulation",
]

DEFAULT_MAX_COLUMNS = 5_000_000
"""Largest number of columns :func:`milp.build` accepts unless told otherwise."""

ROW_ASSIGN, ROW_CAPACITY, ROW_CLIQUE, ROW_ROUNDED, ROW_SYM_SUM, ROW_SYM = 0, 1, 2, 3, 4, 5
"""Row kinds in :attr:`Formulation.row_kind`: assignment, capacity (pool and nodes), clique,
rounded capacity, and the running sums and order rows of the ``rows`` symmetry mode."""

ROW_GPU, ROW_CPU, ROW_MEMORY = 6, 7, 8
"""Row kinds of model version 3: per GPU slot and slot of time (the shares' ``gpu_milli``),
and CPU and memory per node and slot (:mod:`milp.shares`)."""

DEFAULT_ROUNDING = (2, 4)
"""Divisors of the rounded capacity rows :func:`milp.build` adds unless told otherwise."""


@dataclass(frozen=True, eq=False)
class Formulation:
    """The MILP ``max c x  s.t.  row_lower <= A x <= row_upper, col bounds, integrality``.

    Every array is read-only. The first :attr:`num_x` columns are the
    integer ``x``, sorted by group (a single job, or several identical jobs
    when aggregated), then placement, then start; then the continuous
    running sums of the ``rows`` symmetry mode; then, on model version 3
    with shared jobs, the binary busy columns (:mod:`milp.shares`). A
    shared job's placement is a GPU slot of a node: its node in
    :attr:`placements`, its label in :attr:`place_gpu`.

    Attributes
    ----------
    instance
        The instance the model is for.
    c
        Objective coefficients (maximize): the value of one run of the job.
    A
        Constraint matrix, ``scipy.sparse.csc_matrix`` of shape (rows, columns).
    row_lower, row_upper, col_lower, col_upper
        Bounds (``-inf`` / ``inf`` where absent).
    integrality
        1 for an integer column (binary when its upper bound is 1), 0 for a running sum.
    col_job
        Representative job index of each ``x`` column (the group's first job).
    col_start
        Start slot of each ``x`` column.
    col_group
        Group index of each ``x`` column.
    col_place
        Placement index of each ``x`` column (into :attr:`placements`).
    groups
        Job indices of each group, in instance order.
    placements
        Node positions of each placement index (ascending); a flat pool has ``((0,),)``.
    place_nodes
        :attr:`placements` as an int64 array, ``-1`` padded.
    node_free
        ``(K, T)`` GPUs each node offers batch work per slot (a flat pool: one node of ``G``).
    classes
        Node positions of each class of identical nodes (:func:`milp.symmetry.node_classes`).
    symmetry
        The symmetry handling the model was built with (:data:`milp.symmetry.SYMMETRY`).
    row_kind
        Kind of each row (``ROW_*`` of this module).
    row_ref
        Group index (assignment rows), ``resource * horizon + slot`` (capacity,
        clique and rounded rows; resource 0 is the pool, ``1 + k`` node ``k``),
        ``node * num_jobs + job`` (symmetry rows), the busy column's index
        (per-GPU rows) or ``node * horizon + slot`` (CPU and memory rows).
    sym_pairs
        For each running-sum column ``num_x + i``: ``(job, node)``.
    stats
        Build figures: seconds, rows kept and dropped, columns dropped.
    place_gpu
        Per placement, its GPU slot's label on its node, or ``-1`` (not a slot).
    busy
        ``(nb, 2)``: per busy column, its slot's placement index and time slot (ascending).
    relax
        The model (:data:`milp.shares.RELAXATIONS`): ``"exact"`` or a relaxation.
    gpu_fixed
        The slot labels are the GPU indices themselves (a model built with fixed use,
        :mod:`milp.fixed`): :meth:`encode` does not relabel them.
    """

    instance: Instance
    c: np.ndarray
    A: sp.csc_matrix
    row_lower: np.ndarray
    row_upper: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    integrality: np.ndarray
    col_job: np.ndarray
    col_start: np.ndarray
    col_group: np.ndarray
    col_place: np.ndarray
    groups: tuple[np.ndarray, ...]
    placements: tuple[tuple[int, ...], ...]
    place_nodes: np.ndarray
    node_free: np.ndarray
    classes: tuple[np.ndarray, ...]
    symmetry: str
    row_kind: np.ndarray
    row_ref: np.ndarray
    sym_pairs: np.ndarray
    stats: dict[str, Any] = field(default_factory=dict)
    place_gpu: np.ndarray | None = None
    busy: np.ndarray | None = None
    relax: str = "exact"
    gpu_fixed: bool = False

    # ----------------------------------------------------------------- sizes
    @property
    def num_cols(self) -> int:
        """Number of columns (``x`` and running sums)."""
        return int(self.c.shape[0])

    @property
    def num_x(self) -> int:
        """Number of integer ``x`` columns."""
        return int(self.col_job.shape[0])

    @property
    def num_rows(self) -> int:
        """Number of rows."""
        return int(self.A.shape[0])

    @property
    def nnz(self) -> int:
        """Nonzeros of :attr:`A`."""
        return int(self.A.nnz)

    @property
    def num_busy(self) -> int:
        """Number of busy columns (the last ones)."""
        return 0 if self.busy is None else int(self.busy.shape[0])

    @cached_property
    def has_slots(self) -> bool:
        """Whether shared jobs sit on GPU slots (model version 3 with shared jobs, exact model)."""
        return self.place_gpu is not None and bool((self.place_gpu >= 0).any())

    @property
    def has_nodes(self) -> bool:
        """Whether the model places jobs on the instance's nodes (not a flat pool or relaxation)."""
        return self.instance.has_nodes and self.relax != "flat"

    @property
    def columns(self) -> tuple[np.ndarray, np.ndarray]:
        """``(job index, start)`` of every ``x`` column (the group's first job when aggregated)."""
        return self.col_job, self.col_start

    @property
    def trivial_bound(self) -> float:
        """Worth of running every job that has a column at its best column: a crude upper bound."""
        if self.num_x == 0:
            return 0.0
        has = np.unique(self.col_group)
        if self.instance.objective == "value":  # one worth per job: its value
            return float(sum(float(self.instance.job_values[self.groups[k]].sum()) for k in has))
        best = np.full(len(self.groups), -np.inf)
        np.maximum.at(best, self.col_group, self.c[: self.num_x])
        return float(sum(best[k] * len(self.groups[k]) for k in has))

    @cached_property
    def reduced(self) -> bool:
        """Whether a symmetry reduction drops schedules (so placements are relabelled first)."""
        return self.symmetry != "none" and any(c.size > 1 for c in self.classes)

    @cached_property
    def bound_nodes(self) -> np.ndarray:
        """Positions of the nodes that have a capacity row (none for a flat pool)."""
        T = self.instance.horizon
        refs = self.row_ref[(self.row_kind == ROW_CAPACITY) & (self.row_ref >= T)]
        return np.unique(refs // T - 1)

    # ------------------------------------------------------- x <-> schedules
    def canonical(self, start: np.ndarray, place: np.ndarray) -> np.ndarray:
        """The placement array relabelled within each class so that the symmetry reduction keeps it.

        The nodes of a class are reordered by the first run job placed on
        them (instance order; unused nodes last, ties by position), which
        maps a feasible schedule to a feasible one of the same value. Rows
        come back ascending, ``-1`` padded.
        """
        start = np.asarray(start, dtype=np.int64)
        place = np.asarray(place, dtype=np.int64)
        K, n = self.node_free.shape[0], self.instance.num_jobs
        first = np.full(K, n, dtype=np.int64)
        for j in np.flatnonzero(start >= 0).tolist():
            for k in place[j][place[j] >= 0].tolist():
                first[k] = min(first[k], j)
        relabel = np.arange(K, dtype=np.int64)
        for members in self.classes:
            order = members[np.lexsort((members, first[members]))]
            relabel[order] = members  # the node of rank r takes the r-th position
        out = np.where(place >= 0, relabel[np.maximum(place, 0)], -1)
        out = np.sort(np.where(out >= 0, out, K), axis=1)
        return np.where(out < K, out, -1)

    def encode(
        self, start: np.ndarray, place: np.ndarray | None = None, gpu: np.ndarray | None = None,
        *, relabel: bool = True,
    ) -> np.ndarray:
        """Column vector of a schedule's arrays (``Schedule.from_array``'s; running sums included).

        ``place`` is needed on an instance with nodes and ignored on a flat
        one. Under a symmetry reduction the placement is first relabelled
        to the form the reduction keeps (:meth:`canonical`), unless ``relabel``
        is false. With GPU slots (:attr:`has_slots`), ``gpu`` gives each
        shared job's GPU on its node (``-1`` for the others); the GPUs of a
        node are relabelled as the reduction keeps them
        (:func:`milp.shares.canonical_gpu`) unless ``relabel`` is false,
        and the busy columns follow.

        Raises
        ------
        ValueError
            If a run job has no column for its start (and placement): the
            start is infeasible for the job on its own, or dropped by a
            reduction.
        """
        inst = self.instance
        start = np.asarray(start, dtype=np.int64)
        x = np.zeros(self.num_cols)
        run = np.flatnonzero(start >= 0)
        if self.num_x == 0:
            if run.size:
                raise ValueError("start: the model has no column, the schedule runs a job")
            return x
        if run.size == 0:
            return x
        group_of = self._group_of
        pid = np.zeros(run.size, dtype=np.int64)
        if not self.has_nodes:
            place = None
        else:
            if place is None:
                raise ValueError(f"place: instance {inst.name!r} has nodes, the placement is needed")
            place = np.asarray(place, dtype=np.int64)
            if relabel and self.reduced:
                place = self.canonical(start, place)
            labels = np.full(inst.num_jobs, -1, dtype=np.int64)
            if self.has_slots:
                if gpu is None:
                    raise ValueError(f"gpu: instance {inst.name!r} has shared jobs, the GPU of "
                                     "each is needed")
                labels = np.asarray(gpu, dtype=np.int64)
                if relabel and not self.gpu_fixed:
                    labels = canonical_gpu(start, place, labels, self.node_free.shape[0])
            index = self.place_index
            pid = np.array([index.get((tuple(k for k in place[j].tolist() if k >= 0),
                                       int(labels[j])), -1)
                            for j in run.tolist()], dtype=np.int64)
        # columns are sorted by (group, placement, start): search the triple as one key
        T, P = inst.horizon + 1, len(self.placements)
        keys = self._keys
        want = (group_of[run] * P + pid) * T + start[run]
        pos = np.minimum(np.searchsorted(keys, want), keys.size - 1)
        bad = (group_of[run] < 0) | (pid < 0) | (keys[pos] != want)
        if np.any(bad):
            j = int(run[np.flatnonzero(bad)[0]])
            where = "" if place is None else f" on nodes {[int(k) for k in place[j] if k >= 0]}"
            raise ValueError(
                f"start: job {inst.jobs[j].name!r} at slot {int(start[j])}{where} has no column"
            )
        np.add.at(x, pos, 1.0)
        if self.sym_pairs.size:
            on = np.zeros((inst.num_jobs, self.node_free.shape[0]))
            for j in run.tolist():
                on[j, place[j][place[j] >= 0]] = 1.0  # type: ignore[index]
            x[self.num_x : self.num_x + self.sym_pairs.shape[0]] = np.cumsum(on, axis=0)[
                self.sym_pairs[:, 0], self.sym_pairs[:, 1]]
        if self.num_busy:
            slot = self.place_gpu[pid] >= 0  # type: ignore[index]
            jobs, q = run[slot], pid[slot]
            idx = np.repeat(np.arange(jobs.size), inst.durations[jobs])
            t = np.arange(idx.size) - np.repeat(np.cumsum(inst.durations[jobs])
                                                - inst.durations[jobs], inst.durations[jobs])
            want = np.unique(q[idx] * inst.horizon + start[jobs][idx] + t)
            have = self.busy[:, 0] * inst.horizon + self.busy[:, 1]  # type: ignore[index]
            at = self.num_cols - self.num_busy + np.searchsorted(have, want)
            x[at] = self.col_upper[at]  # 0 on a GPU that fixed jobs keep busy (milp.fixed)
        return x

    def decode(self, x: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Start and placement arrays of a column vector (rounded); the placement is ``None`` when flat."""
        start, place, _ = self.decode_all(x)
        return start, place

    def decode_all(
        self, x: Sequence[float] | np.ndarray
    ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """:meth:`decode`, and with GPU slots each shared job's slot label (``-1``: not shared).

        The third array is ``None`` without GPU slots.
        """
        inst = self.instance
        counts = np.rint(np.asarray(x, dtype=np.float64)[: self.num_x]).astype(np.int64)
        start = np.full(inst.num_jobs, -1, dtype=np.int64)
        place = np.full((inst.num_jobs, inst.max_span), -1, dtype=np.int64) if self.has_nodes else None
        gpu = np.full(inst.num_jobs, -1, dtype=np.int64) if self.has_slots else None
        used = np.zeros(len(self.groups), dtype=np.int64)
        for col in np.flatnonzero(counts > 0):
            k = int(self.col_group[col])
            members = self.groups[k]
            n = min(int(counts[col]), members.size - int(used[k]))
            jobs = members[used[k] : used[k] + n]
            start[jobs] = self.col_start[col]
            if place is not None:
                place[jobs] = self.place_nodes[self.col_place[col]][: inst.max_span]
            if gpu is not None:
                gpu[jobs] = self.place_gpu[self.col_place[col]]  # type: ignore[index]
            used[k] += n
        return start, place, gpu

    def run_mass(self, x: Sequence[float] | np.ndarray) -> np.ndarray:
        """How much of each job a (fractional) column vector runs, in ``[0, 1]``.

        A group of identical jobs shares its columns' sum equally among its
        members; a job with no column gets 0. Of an LP solution, this is
        the ``guide`` of :func:`matheuristics.lns.lns_improve`.
        """
        x = np.asarray(x, dtype=np.float64)
        if x.shape != (self.num_cols,):
            raise ValueError(f"x: expected {self.num_cols} values, got shape {x.shape}")
        sizes = np.array([g.size for g in self.groups], dtype=np.int64)
        per_group = np.bincount(self.col_group, weights=x[: self.num_x], minlength=sizes.size)
        mass = np.zeros(self.instance.num_jobs)
        if sizes.size:
            mass[np.concatenate(self.groups)] = np.repeat(per_group / sizes, sizes)
        return np.clip(mass, 0.0, 1.0)

    @cached_property
    def _group_of(self) -> np.ndarray:
        group_of = np.full(self.instance.num_jobs, -1, dtype=np.int64)
        for k, members in enumerate(self.groups):
            group_of[members] = k
        return group_of

    @cached_property
    def place_index(self) -> dict[tuple[tuple[int, ...], int], int]:
        """Placement index of each (node positions, slot label or ``-1``)."""
        labels = ([-1] * len(self.placements) if self.place_gpu is None
                  else self.place_gpu.tolist())
        return {(q, int(v)): i for i, (q, v) in enumerate(zip(self.placements, labels))}

    @cached_property
    def _keys(self) -> np.ndarray:
        """``(group, placement, start)`` of each ``x`` column as one ascending key."""
        T, P = self.instance.horizon + 1, len(self.placements)
        return (self.col_group * P + self.col_place) * T + self.col_start

    @cached_property
    def _has_lower(self) -> bool:
        return bool(np.isfinite(self.row_lower).any())

    def feasible(self, start: np.ndarray, place: np.ndarray | None = None,
                 gpu: np.ndarray | None = None) -> bool:
        """Whether a schedule's arrays satisfy every row and bound of the model.

        One sparse product (``A @ encode(start, place)`` within the row
        bounds): the test of a schedule on the hot path of a search, where
        :func:`instances.evaluate` (plain loops, run at the public boundary)
        would cost more than the window it checks. Every column is a start
        that fits alone and every row holds for each feasible schedule, so
        this is feasibility under ``curve`` reservation (or the build's
        ``reservation``; of a relaxation: its relaxed rows). With GPU slots,
        ``gpu`` gives the shared jobs' GPUs (:meth:`encode`).
        """
        try:
            x = self.encode(start, place, gpu)
        except ValueError:
            return False
        if self.num_rows == 0:
            return bool(np.all(x <= self.col_upper))
        load = self.A @ x
        return bool(np.all(load <= self.row_upper + 1e-9) and np.all(x <= self.col_upper)
                    and (not self._has_lower or np.all(load >= self.row_lower - 1e-9)))

    # --------------------------------------------------------------- export
    def col_names(self) -> list[str]:
        """Readable, unique column names, ``x_<job>_s<start>``.

        An aggregated group's column is named after its first job with the
        group size, ``x_<job>+<n-1>_s<start>``; on nodes the placement follows
        the job, ``x_<job>@<node>+<node>_s<start>``, and a running sum of the
        ``rows`` symmetry mode is ``z_<job>@<node>``. Names that would collide
        once an LP writer replaces its special characters get a ``_c<col>`` suffix.
        """
        inst = self.instance
        nodes = [n.name for n in inst.nodes] if self.has_nodes and inst.nodes else ["pool"]
        names = []
        for col in range(self.num_x):
            k = int(self.col_group[col])
            job = inst.jobs[int(self.col_job[col])].name
            extra = f"+{self.groups[k].size - 1}" if self.groups[k].size > 1 else ""
            if self.has_nodes:
                q = int(self.col_place[col])
                extra += "@" + "+".join(nodes[i] for i in self.placements[q]) + self._slot_tag(q)
            names.append(f"x_{job}{extra}_s{int(self.col_start[col])}")
        names += [f"z_{inst.jobs[j].name}@{nodes[k]}" for j, k in self.sym_pairs.tolist()]
        names += [f"b_{nodes[self.placements[q][0]]}{self._slot_tag(q)}_t{t}"
                  for q, t in ([] if self.busy is None else self.busy.tolist())]
        return unique_names(names)

    def _slot_tag(self, q: int) -> str:
        """``#<label>`` for a GPU slot placement, else nothing."""
        v = -1 if self.place_gpu is None else int(self.place_gpu[q])
        return f"#{v}" if v >= 0 else ""

    def row_names(self) -> list[str]:
        """Readable, unique row names: ``assign_<job>``, ``cap_t<slot>``, ``clique_t<slot>``,
        ``round_t<slot>`` (node rows: ``cap_<node>_t<slot>``, ...), ``symsum_<job>@<node>`` and
        ``sym_<job>@<node>``; on version 3 ``gpu_<node>#<label>_t<slot>``, ``cpu_<node>_t<slot>``
        and ``mem_<node>_t<slot>``."""
        inst = self.instance
        nodes = [n.name for n in inst.nodes] if self.has_nodes and inst.nodes else ["pool"]
        T, n = inst.horizon, inst.num_jobs
        prefix = {ROW_CAPACITY: "cap", ROW_CLIQUE: "clique", ROW_ROUNDED: "round"}
        names = []
        for kind, ref in zip(self.row_kind.tolist(), self.row_ref.tolist()):
            if kind == ROW_ASSIGN:
                names.append(f"assign_{inst.jobs[int(self.groups[ref][0])].name}")
            elif kind in prefix:
                node = "" if ref < T else f"_{nodes[ref // T - 1]}"
                names.append(f"{prefix[kind]}{node}_t{ref % T}")
            elif kind == ROW_GPU:
                q, t = self.busy[ref].tolist()  # type: ignore[index]
                names.append(f"gpu_{nodes[self.placements[q][0]]}{self._slot_tag(q)}_t{t}")
            elif kind in (ROW_CPU, ROW_MEMORY):
                tag = "cpu" if kind == ROW_CPU else "mem"
                names.append(f"{tag}_{nodes[ref // T]}_t{ref % T}")
            else:
                tag = "symsum" if kind == ROW_SYM_SUM else "sym"
                names.append(f"{tag}_{inst.jobs[ref % n].name}@{nodes[ref // n]}")
        return unique_names(names)

    def to_pulp(self) -> Any:
        """The same model as a ``pulp.LpProblem`` (maximize), with readable names."""
        return pulp_model(self)[0]

    def pulp_model(self) -> tuple[Any, list[Any]]:
        """The PuLP problem and its variables in column order (:func:`milp.export.pulp_model`)."""
        return pulp_model(self)

    def write_mps(self, path: str) -> None:
        """Write the model as an MPS file with HiGHS's writer (:func:`milp.export.write_model`)."""
        write_model(self, path, ".mps")

    def write_lp(self, path: str) -> None:
        """Write the model in CPLEX LP format with HiGHS's writer (names kept)."""
        write_model(self, path, ".lp")

    def summary(self) -> str:
        """One line: sizes (on nodes: placements and symmetry handling) and build time."""
        nodes = (f" ({self.num_x} on {len(self.placements)} placements, symmetry {self.symmetry})"
                 if self.has_nodes else "")
        if self.num_busy:
            nodes += f" ({self.num_busy} busy GPU columns)"
        if self.relax != "exact":
            nodes += f" ({self.relax} relaxation)"
        return (
            f"{self.instance.name}: {self.num_cols} columns{nodes}, {self.num_rows} rows, "
            f"{self.nnz} nonzeros, built in {self.stats.get('build_s', 0.0):.3f} s"
        )
