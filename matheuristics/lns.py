"""Large-neighbourhood search: free a time window, re-solve it exactly with the MILP.

Each round picks a window ``[a, b)`` of the horizon. The jobs that run entirely
inside it, and the jobs not run that could fit inside it, are freed; every
other job keeps its start, and its GPUs are taken out of the capacity. The
window becomes a small instance of its own (the capacity left appears as one
inference service, the freed jobs with release and deadline clipped to the
window), whose formulation :func:`milp.solve_arrays` solves from the current
placement, so a round never loses value. The search stays on start arrays:
no :class:`~instances.Schedule` and no run of the checker inside it (a
window's answer is tested against its formulation's rows,
:meth:`milp.Formulation.feasible`); :func:`lns` checks what it returns with
:func:`instances.evaluate`, once.

On an instance with nodes the search carries the placement array beside the
start array (``Schedule.to_placement_array``'s form). A window keeps the
nodes (:func:`node_window`): the fixed jobs' GPUs leave the pool as above
and, on the nodes they run on, are withheld per node and slot (the
``reserved`` option of :func:`milp.nodes.build_nodes`), and the window is
solved with the node model, its answer tested against that model's rows.

Over 500 lines because the flat and the node windows share the round loop, the window choice and the array fast path, and are read against each other.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import milp
from heuristics._core import finish, start_value
from heuristics.placement import PLACEMENTS, check_placement, lexicographic_subset, new_place
from heuristics.rules import order_by
from heuristics.search import local_search_order, sampling_order
from instances import Instance, Job, Result, Service, Status
from milp.highs import lp_solution
from milp.nodes import NodeFormulation, build_nodes, solve_highs_nodes

__all__ = [
    "guided_instance", "lns", "lns_improve", "lp_guide", "nearby_jobs", "node_rows_hold",
    "node_window", "place_window", "sub_instance", "window_jobs",
]

logger = logging.getLogger(__name__)


def sub_instance(
    inst: Instance, start: np.ndarray, a: int, b: int, freed: np.ndarray
) -> tuple[Instance, np.ndarray]:
    """The instance left to decide when only the jobs ``freed`` may move, in window ``[a, b)``.

    Every other job keeps its start and its GPUs leave the capacity, which
    becomes one inference service ``rest`` of the sub-instance (horizon
    ``b - a``); the freed jobs keep their size and priority, with release and
    deadline clipped to the window. Returns it with the warm start, a start
    array of the sub-instance: the freed jobs' current starts, shifted by
    ``a`` (each freed job that runs must lie inside the window; each one not
    run must fit in it).
    """
    gpus, dur, rel, dl = inst.gpus, inst.durations, inst.releases, inst.deadlines
    run = start >= 0
    keep = run.copy()
    keep[freed] = False
    fixed = np.flatnonzero(keep)
    usage = np.zeros(inst.horizon + 1, dtype=np.int64)
    np.add.at(usage, start[fixed], gpus[fixed])
    np.add.at(usage, start[fixed] + dur[fixed], -gpus[fixed])
    cap = inst.batch_capacity("curve") - np.cumsum(usage)[: inst.horizon]
    lo, hi = np.maximum(rel, a), np.minimum(dl, b)
    jobs = tuple(
        Job(inst.jobs[j].name, int(gpus[j]), int(dur[j]), float(inst.priorities[j]),
            inst.jobs[j].kind, int(lo[j] - a), int(hi[j] - a))
        for j in freed.tolist()
    )
    sub = Instance(f"{inst.name}[{a}:{b}]", inst.num_gpus, b - a,
                   (Service("rest", 1.0, tuple((inst.num_gpus - cap[a:b]).tolist())),),
                   jobs, inst.slot_hours)
    warm = np.where(run[freed], start[freed] - a, -1).astype(np.int64)
    return sub, warm


def node_window(
    inst: Instance, start: np.ndarray, place: np.ndarray, a: int, b: int, freed: np.ndarray
) -> tuple[Instance, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`sub_instance` on nodes: the window keeps the nodes, the fixed jobs hold theirs.

    ``place`` is the placement array of ``start``. The sub-instance is the
    one of :func:`sub_instance` (the fixed jobs' GPUs out of the pool) with
    ``inst``'s nodes; ``reserved[k, t - a]`` is what the fixed jobs running
    at ``t`` hold on node ``k`` (a one-node job its ``g_j``, a multi-node
    job each of its nodes in full), for :func:`milp.nodes.build_nodes`.

    Returns
    -------
    tuple
        ``(sub, warm, warm_place, reserved)``: the sub-instance, the freed
        jobs' current starts and placements (shifted by ``a``; arrays of
        the sub-instance) and the ``(num_nodes, b - a)`` withheld GPUs.
    """
    flat, warm = sub_instance(inst, start, a, b, freed)
    sub = flat.replace(nodes=inst.nodes)
    keep = start >= 0
    keep[freed] = False
    fixed = np.flatnonzero(keep)
    rows, cols = np.nonzero(place[fixed] >= 0)
    job = fixed[rows]
    node = place[job, cols]
    held = np.where(inst.multi_node[job], inst.node_gpus[node], inst.gpus[job])
    K, T = inst.num_nodes, inst.horizon
    diff = np.zeros((K, T + 1), dtype=np.int64)
    np.add.at(diff, (node, start[job]), held)
    np.add.at(diff, (node, start[job] + inst.durations[job]), -held)
    reserved = np.cumsum(diff, axis=1)[:, a:b]
    warm_place = np.where(warm[:, None] >= 0, place[freed, : sub.max_span], -1)
    return sub, warm, warm_place.astype(np.int64), reserved


def window_jobs(
    inst: Instance, start: np.ndarray, a: int, b: int, max_jobs: int, rng: np.random.Generator,
    share: float = 0.5,
) -> np.ndarray:
    """Jobs freed by window ``[a, b)``: those running inside it, and not-run jobs that fit in it.

    At most ``max_jobs`` in all, of which a ``share`` (rounded; more when
    the running ones leave more room) is kept for the not-run jobs: a window
    that only re-packs the jobs it holds can never add one. When there are
    more candidates than room, the running ones are a uniform random choice
    and the not-run ones a random choice weighted by value density
    ``v_j / (g_j p_j)`` (the priority times ``slot_hours``), the jobs most
    worth adding (the measurements behind ``share`` are in ``docs/milp.md``).
    """
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share: must be in [0, 1], got {share!r}")
    run = start >= 0
    dur = inst.durations
    inside = np.flatnonzero(run & (start >= a) & (start + dur <= b))
    could = np.flatnonzero(~run & (np.maximum(inst.releases, a) + dur <= np.minimum(inst.deadlines, b)))
    n_could = min(could.size, max(max_jobs - inside.size, round(share * max_jobs)))
    n_inside = min(inside.size, max_jobs - n_could)
    if inside.size > n_inside:
        inside = np.sort(rng.choice(inside, size=n_inside, replace=False))
    if could.size > n_could:
        w = inst.priorities[could] / inst.priorities[could].max()  # density, up to slot_hours
        w = np.maximum(w, 1e-12)  # each job keeps a chance, whatever the spread of priorities
        could = np.sort(rng.choice(could, size=n_could, replace=False, p=w / w.sum()))
    return np.concatenate([inside, could])


def nearby_jobs(
    inst: Instance, start: np.ndarray, center: float, max_jobs: int, rng: np.random.Generator
) -> np.ndarray:
    """Jobs freed around slot ``center``, to move over the whole horizon.

    The ``max_jobs // 2`` running jobs whose midpoints lie nearest to
    ``center`` (ties by index), and a random choice of the not-run jobs that
    fit in the horizon for the rest.
    """
    run = np.flatnonzero(start >= 0)
    mid = start[run] + inst.durations[run] / 2.0
    near = run[np.argsort(np.abs(mid - center), kind="stable")[: max_jobs // 2]]
    could = np.flatnonzero((start < 0) & (inst.releases + inst.durations <= inst.deadlines))
    room = max_jobs - near.size
    if could.size > room:
        could = rng.choice(could, size=room, replace=False)
    return np.sort(np.concatenate([near, could]))


def lp_guide(inst: Instance, time_limit: float | None = None) -> np.ndarray | None:
    """How much of each job the LP relaxation of :func:`milp.build`'s model runs, in ``[0, 1]``.

    The ``guide`` of :func:`lns_improve`. ``None`` when the LP is not solved
    within ``time_limit`` seconds (``None``: no limit), or the model cannot
    be built (over its column cap).
    """
    try:
        form = milp.build(inst)
    except ValueError as e:
        logger.info("lns: no LP guide: %s", e)
        return None
    lp = lp_solution(form, np.inf if time_limit is None else time_limit)
    return None if lp is None else form.run_mass(lp[1])


def guided_instance(
    inst: Instance, start: np.ndarray, guide: np.ndarray, weight: float = 0.5
) -> Instance | None:
    """``inst`` where each running job that ``guide`` runs less than half is worth less.

    Such a job's priority (so its value) is multiplied by ``weight``.

    ``guide`` is a per-job run mass in ``[0, 1]``, e.g. how much of each job
    an LP relaxation runs (:meth:`milp.Formulation.run_mass`); the jobs the
    schedule ``start`` runs and the LP mostly does not are the ones an
    escape of :func:`lns_improve` asks to give way. ``None`` when there is
    no such job. Only priorities change: every schedule of one instance is
    a schedule of the other.
    """
    if not 0.0 < weight <= 1.0:
        raise ValueError(f"weight: must be in (0, 1], got {weight!r}")
    sel = np.flatnonzero((np.asarray(start) >= 0) & (np.asarray(guide) < 0.5))
    if sel.size == 0:
        return None
    jobs = list(inst.jobs)
    for j in sel.tolist():
        jobs[j] = dataclasses.replace(jobs[j], priority=jobs[j].priority * weight)
    return inst.replace(jobs=tuple(jobs))


def lns_improve(
    inst: Instance,
    start: np.ndarray,
    *,
    time_limit: float | None = 5.0,
    rounds: int = 50,
    window: int | None = None,
    max_jobs: int = 40,
    sub_time_limit: float = 1.0,
    seed: int = 0,
    exchange: Callable[[np.ndarray, float], np.ndarray | None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    stall_rounds: int | None = 40,
    share: float = 0.5,
    guide: np.ndarray | None = None,
    escape_rounds: int = 120,
    escape_weight: float = 0.5,
    place: np.ndarray | None = None,
) -> tuple[np.ndarray, int, int]:
    """Improve a feasible ``curve`` start array by window re-solves.

    Returns ``(start, rounds_done, rounds_improved)``. On an instance with
    nodes, ``place`` is required: the placement array of ``start``
    (``Schedule.to_placement_array``'s form), overwritten with the placement
    of the returned start array; each window is then solved by the node
    model (:func:`node_window`), and ``exchange`` is refused (the node
    model takes no incumbent hooks). Two rounds in three
    free the jobs of a time window (:func:`window_jobs`, keeping a ``share``
    of the room for not-run jobs) of ``window`` slots
    (by default drawn each round: a quarter or a third of the horizon, never
    less than the longest job) at a random offset; every third round frees
    the running jobs nearest to a random slot and some not-run jobs, to move
    anywhere in the horizon (:func:`nearby_jobs`: long jobs, which a window
    seldom holds, move too). At most ``max_jobs`` jobs are freed (outside a
    widened round, below); that cap shrinks by a quarter (not below 8) after
    each round whose MILP is not solved to optimality in time, and grows
    back by one after each that is.
    An instance of at most ``max_jobs`` jobs is first re-solved whole; when
    that MILP is solved to optimality, the schedule is optimal and the
    search stops. A window MILP gets ``sub_time_limit`` seconds, cut to the
    time left less 0.2 s; HiGHS may overrun a limit by a little (it checks the
    clock between phases).

    After ``stall_rounds`` rounds without an improvement, the search widens:
    windows, freed jobs and the window MILP's time limit are doubled (tripled
    after twice as many), until the next improvement (``None``: never).

    ``guide``, when given, is a per-job run mass in ``[0, 1]`` (how much
    of each job an LP relaxation runs: :func:`lp_guide`). Then a stalled
    search first *escapes* instead of widening (:func:`guided_instance`):
    for ``escape_rounds`` rounds its windows see an instance where each
    running job that the LP runs less than half is worth ``escape_weight``
    of its value, so that they give way to jobs the LP prefers; then, for
    half as many rounds, the real instance again. If the schedule then
    beats the one it left (in real value), the search goes on from it (at
    once, as soon as it does), else it goes back to the one it left, to
    escape again at its next stall. A schedule worse than the one an
    escape left is never returned, nor handed to ``exchange`` (not called
    during an escape). Without a running job that the LP runs less than
    half, a stalled search widens as above. The LNS helper beside HiGHS
    (:class:`matheuristics.LNSHelper`) runs without a guide. The
    measurements behind the widening and the escapes are in ``docs/milp.md``.

    ``exchange``, when given, is called before every round with the current
    start array and its value; it may return a better feasible start array
    (found elsewhere, e.g. by a MILP running beside this search), which the
    search then continues from. :class:`matheuristics.LNSHelper` uses it to
    run this search next to HiGHS and trade incumbents with it.
    ``should_stop``, when given, is asked before every round; the search ends
    when it returns true.

    Every window stays on arrays: its formulation is solved by
    :func:`milp.solve_arrays` from the freed jobs' starts, and its answer is
    kept only if it satisfies the formulation (:meth:`milp.Formulation.feasible`);
    on nodes, :func:`milp.nodes.solve_highs_nodes` from their starts and
    placements, the answer kept only if it satisfies the node model's rows.
    The returned start array is not checked here (the caller checks what it
    reports, e.g. :func:`lns` through ``finish``).
    """
    t0 = time.perf_counter()
    T = inst.horizon
    on_nodes = inst.has_nodes
    cur_place = np.zeros((inst.num_jobs, 0), dtype=np.int64)  # the placement (nodes only)
    if on_nodes:
        if place is None:
            raise ValueError(f"place: required for instance {inst.name!r}, which has nodes")
        if np.shape(place) != (inst.num_jobs, inst.max_span):
            raise ValueError(f"place: expected shape {(inst.num_jobs, inst.max_span)}, "
                             f"got {np.shape(place)}")
        if exchange is not None:
            raise ValueError("exchange: not available on an instance with nodes "
                             "(the node model takes no incumbent hooks)")
        cur_place = np.array(place, dtype=np.int64)
    if inst.num_jobs == 0:
        return start, 0, 0
    pmax = int(inst.durations.max())
    sizes = [window] if window else [max(T // 4, pmax), max(T // 3, pmax)]
    rng = np.random.default_rng(seed)
    can_run = int((inst.releases + inst.durations <= inst.deadlines).sum())
    start = start.copy()
    done = improved = 0
    size = max_jobs  # freed jobs per window: shrinks after a window MILP is not solved
    stall = 0  # rounds since the last improvement
    if guide is not None:
        guide = np.asarray(guide, dtype=np.float64)
        if guide.shape != (inst.num_jobs,):
            raise ValueError(f"guide: expected {inst.num_jobs} values, got shape {guide.shape}")
        if escape_rounds < 2:
            raise ValueError(f"escape_rounds: must be at least 2, got {escape_rounds!r}")
        if not 0.0 < escape_weight <= 1.0:
            raise ValueError(f"escape_weight: must be in (0, 1], got {escape_weight!r}")
    work = inst  # the instance the windows see: ``inst``, or a guided one during an escape
    escape = 0  # rounds left in an escape (its guided part, then its real part); 0: none
    left_at: tuple[np.ndarray, float, np.ndarray] | None = None  # an escape left: start, value, place
    for k in range(rounds):
        left = None if time_limit is None else time_limit - (time.perf_counter() - t0)
        if left is not None and left <= 0.25:  # keep room for the last solve's overhead
            break
        if should_stop is not None and should_stop():
            break
        if left_at is not None:  # in an escape
            escape -= 1
            if escape == escape_rounds // 2:
                work, stall = inst, 0  # the guided part ends
            now = start_value(inst, start)
            if now > left_at[1] + 1e-9 or escape == 0:
                logger.debug("lns: escape ends at round %d with %.6g (left %.6g)",
                             k, now, left_at[1])
                if now <= left_at[1] + 1e-9:
                    start, cur_place = left_at[0], left_at[2]
                work, escape, left_at, stall = inst, 0, None, 0
        elif guide is not None and stall_rounds and stall >= stall_rounds:
            guided = guided_instance(inst, start, guide, escape_weight)
            if guided is not None:
                work, left_at = guided, (start.copy(), start_value(inst, start), cur_place.copy())
                escape, stall = escape_rounds + escape_rounds // 2, 0
                logger.debug("lns: escape at round %d from %.6g", k, left_at[1])
        if exchange is not None and left_at is None:
            other = exchange(start, start_value(inst, start))
            if other is not None:
                start = np.asarray(other, dtype=np.int64).copy()
        boost = 1 if not stall_rounds else min(3, 1 + stall // stall_rounds)
        W = min(max(int(sizes[int(rng.integers(len(sizes)))]) * boost, 1), T)
        if k == 0 and inst.num_jobs <= size:
            W = T  # a small instance: first re-solve it whole
        if k % 3 == 2 and W < T:
            a, b = 0, T
            freed = nearby_jobs(inst, start, float(rng.uniform(0, T)), size * boost, rng)
        else:
            a = int(rng.integers(0, T - W + 1))
            b = a + W
            freed = window_jobs(inst, start, a, b, size * boost, rng, share=share)
        done += 1
        if freed.size == 0:
            continue
        tl = sub_time_limit * boost if left is None else min(sub_time_limit * boost, left - 0.2)
        if on_nodes:
            sub, warm, warm_place, reserved = node_window(work, start, cur_place, a, b, freed)
            status, new, new_place, note = _solve_node_window(
                sub, reserved, warm, warm_place, tl,
                float(work.job_values[freed][start[freed] >= 0].sum()))
        else:
            sub, warm = sub_instance(work, start, a, b, freed)
            status, new, note = _solve_window(sub, warm, tl)
            new_place = None
        if status is None:
            logger.info("lns: window [%d, %d) skipped: %s", a, b, note)
            continue
        before = float(work.job_values[freed][start[freed] >= 0].sum())
        value = before if new is None else start_value(sub, new)
        if new is not None and value >= before - 1e-9:  # ties too: a new placement of equal value
            start[freed] = np.where(new >= 0, new + a, -1)
            if on_nodes:
                assert new_place is not None
                rows = np.full((freed.size, cur_place.shape[1]), -1, dtype=np.int64)
                rows[:, : new_place.shape[1]] = np.where(new[:, None] >= 0, new_place, -1)
                cur_place[freed] = rows
            better = value > before + 1e-9
            improved += better
            stall = 0 if better else stall + 1
        else:
            stall += 1
        if boost == 1:  # a widened round is meant to be hard: its outcome leaves the size alone
            size = max(8, (3 * size) // 4) if status != Status.OPTIMAL else min(max_jobs, size + 1)
        if (a == 0 and b == T and sub.num_jobs == can_run and status == Status.OPTIMAL
                and work is inst):
            break
    if left_at is not None and start_value(inst, start) <= left_at[1] + 1e-9:
        start, cur_place = left_at[0], left_at[2]  # an escape still under way: the one it left
    if on_nodes:
        assert place is not None
        place[:] = cur_place
    return start, done, improved


def _solve_window(
    sub: Instance, warm: np.ndarray, time_limit: float
) -> tuple[Status | None, np.ndarray | None, str]:
    """Solve a window's MILP from ``warm`` within ``time_limit`` s, on arrays.

    Returns ``(status, start, note)``: the status (``optimal``,
    ``time_limit``) and HiGHS's incumbent as a start array of ``sub``
    (``None`` if it has none); the status is ``None`` when the window is to
    be skipped (a model over the column cap, a solver error, an answer
    outside the formulation), and ``note`` says why.
    """
    t0 = time.perf_counter()
    try:
        form = milp.build(sub)
    except ValueError as e:  # e.g. a model over the column cap
        return None, None, str(e)
    raw = milp.solve_arrays(form, time_limit=max(0.0, time_limit - (time.perf_counter() - t0)),
                            warm_start=warm, threads=1, root_lp=False)
    if raw.status in (Status.ERROR, Status.INFEASIBLE):
        return None, None, raw.message
    if raw.start is not None and not form.feasible(raw.start):
        logger.warning("lns: window %s: the solver's answer violates its model", sub.name)
        return None, None, "the solver's answer violates the window's model"
    if raw.start is None and form.num_cols == 0:
        return raw.status, warm, ""  # no freed job can run in the window: nothing changes
    return raw.status, raw.start, ""


def place_window(
    sub: Instance, reserved: np.ndarray, start: np.ndarray, keep: np.ndarray | None = None,
) -> np.ndarray | None:
    """A placement of every run job of ``start`` on what ``reserved`` leaves of the nodes, or ``None``.

    Greedy, in order of start (larger jobs first at equal starts): a job keeps
    its row of ``keep`` (a placement array) when it is there and still has
    room, else a one-node job takes the node with the least room left over
    its run (best fit), a multi-node job the lexicographically smallest set
    of nodes wholly free over its run. ``None`` when some job finds no room
    (the greedy is not complete: a placement may exist all the same). The
    pool is not looked at (the start array must respect it already).
    """
    sizes = sub.node_gpus
    free = sizes[:, None] - np.asarray(reserved, dtype=np.int64)
    place = np.full((sub.num_jobs, sub.max_span), -1, dtype=np.int64)
    g, p = sub.gpus, sub.durations
    run = np.flatnonzero(start >= 0)
    for j in run[np.lexsort((run, -g[run], start[run]))].tolist():
        w = slice(int(start[j]), int(start[j] + p[j]))
        room = free[:, w].min(axis=1)
        if sub.multi_node[j]:
            whole = np.flatnonzero(room == sizes)
            old = [] if keep is None else [int(k) for k in keep[j] if k >= 0]
            if old and set(old) <= set(whole.tolist()) and int(sizes[old].sum()) == g[j]:
                nodes = old
            else:
                pick = lexicographic_subset(sizes[whole].tolist(), int(g[j]))
                if not pick:
                    return None
                nodes = whole[pick].tolist()
            free[nodes, w] -= sizes[nodes][:, None]
        else:
            k = -1 if keep is None else int(keep[j, 0])
            if k < 0 or room[k] < g[j]:
                ok = np.flatnonzero(room >= g[j])
                if ok.size == 0:
                    return None
                k = int(ok[np.argmin(room[ok])])
            nodes = [k]
            free[k, w] -= g[j]
        place[j, : len(nodes)] = nodes
    return place


def _solve_node_window(
    sub: Instance, reserved: np.ndarray, warm: np.ndarray, warm_place: np.ndarray,
    time_limit: float, before: float,
) -> tuple[Status | None, np.ndarray | None, np.ndarray | None, str]:
    """:func:`_solve_window` on nodes, on arrays; ``before`` is the value of ``warm``.

    The window's flat model (its nodes dropped: a relaxation) is solved
    first, within half of ``time_limit``; when its answer can be placed on
    the nodes (:func:`place_window`) it is the answer, and it is optimal for
    the node window when it is for the flat one. When it cannot be placed,
    and the flat optimum does not beat ``before`` (so neither can the node
    one), the window is left as it is; otherwise the node model with
    ``reserved`` withheld is solved from ``warm`` with the time left.

    Returns ``(status, start, place, note)``, ``place`` the placement array
    of ``start`` (both of ``sub``).
    """
    t0 = time.perf_counter()
    status, new, _ = _solve_window(sub.replace(nodes=None), warm, 0.5 * time_limit)
    if status is not None and new is not None:
        value = start_value(sub, new)
        if value >= before - 1e-9:
            placed = place_window(sub, reserved, new, warm_place)
            if placed is not None:
                return status, new, placed, ""
            if status == Status.OPTIMAL and value <= before + 1e-9:
                return status, warm, warm_place, ""
    time_limit = max(0.0, time_limit - (time.perf_counter() - t0))
    try:
        form = build_nodes(sub, reserved=reserved)
    except ValueError as e:  # e.g. a model over the column cap
        return None, None, None, str(e)
    if form.num_x == 0:  # no freed job can run in the window: nothing changes
        return Status.OPTIMAL, warm, warm_place, ""
    try:
        raw = solve_highs_nodes(form, time_limit=max(0.0, time_limit - (time.perf_counter() - t0)),
                                mip_gap=1e-4, threads=1, warm_start=(warm, warm_place),
                                root_lp=False)
    except ValueError as e:  # a warm start the model has no column for (a bug upstream)
        logger.warning("lns: window %s: %s", sub.name, e)
        return None, None, None, str(e)
    if raw.status in (Status.ERROR, Status.INFEASIBLE):
        return None, None, None, raw.message
    if raw.start is None or raw.place is None:
        return raw.status, None, None, ""
    if not node_rows_hold(form, raw.start, raw.place):
        logger.warning("lns: window %s: the solver's answer violates its model", sub.name)
        return None, None, None, "the solver's answer violates the window's model"
    return raw.status, raw.start, raw.place, ""


def node_rows_hold(form: NodeFormulation, start: np.ndarray, place: np.ndarray) -> bool:
    """Whether a schedule's arrays are a point of the node model: columns exist, rows hold."""
    try:
        x = form.encode(start, place)
    except ValueError:
        return False
    ax = form.A @ x
    tol = 1e-6
    return bool(np.all(ax <= form.row_upper + tol) and np.all(ax >= form.row_lower - tol))


def lns(
    inst: Instance,
    *,
    time_limit: float | None = 10.0,
    rounds: int = 50,
    window: int | None = None,
    max_jobs: int = 40,
    sub_time_limit: float = 1.0,
    passes: int = 100,
    iterations: int = 1000,
    seed: int = 0,
    guided: bool = True,
    placement: str | None = None,
) -> Result:
    """LNS with exact window re-solves, from a sampled and locally improved list.

    The start: :func:`~heuristics.search.sampling_order` (``passes``), then
    :func:`~heuristics.search.local_search_order` (``iterations``), each with
    at most a quarter of ``time_limit``; then :func:`lns_improve` with the
    rest (``rounds`` windows of ``window`` slots, at most ``max_jobs`` freed
    jobs, ``sub_time_limit`` seconds each). Deterministic for a seed when
    every window MILP is solved to optimality within its limit.

    On an instance with nodes, sampling and local search place jobs by
    ``placement`` (:data:`heuristics.placement.PLACEMENTS`); ``None``
    (default) samples with each rule in turn (``passes`` each, the quarter of
    the time shared) and goes on with the best one's rule. The windows are
    solved by the node model (see :func:`lns_improve`). Ignored on a flat
    instance (a known rule name is still required).

    ``guided`` (default): when ``rounds`` leaves room for a stall and a
    whole escape after it (more than 40 + 120 + 60 = 220; not with the
    default 50), the LNS gets the LP relaxation's run masses as ``guide``
    (:func:`lp_guide`, solved in at most a tenth of the time left) and
    escapes from a stall as :func:`lns_improve` says.
    """
    t0 = time.perf_counter()
    if placement is not None:
        check_placement(placement)
    q = None if time_limit is None else 0.25 * time_limit
    rules = (placement or "first-fit",) if not inst.has_nodes or placement else PLACEMENTS
    order, rule = order_by(inst, "priority"), rules[0]
    if passes > 0:
        best_val = -1.0
        for r in rules:
            o, st, _ = sampling_order(inst, passes=passes, time_limit=None if q is None
                                      else q / len(rules), seed=seed, placement=r)
            if start_value(inst, st) > best_val:
                order, rule, best_val = o, r, start_value(inst, st)
    place = new_place(inst) if inst.has_nodes else None
    _, start, _ = local_search_order(inst, order, iterations=iterations, time_limit=q, seed=seed,
                                     placement=rule, place=place)
    guide = None
    if guided and rounds > 220:  # a stall (40 rounds) and a whole escape (120 + 60)
        left = None if time_limit is None else max(0.0, time_limit - (time.perf_counter() - t0))
        guide = lp_guide(inst, None if left is None else 0.1 * left)
    left = None if time_limit is None else max(0.0, time_limit - (time.perf_counter() - t0))
    start, done, improved = lns_improve(
        inst, start, time_limit=left, rounds=rounds, window=window, max_jobs=max_jobs,
        sub_time_limit=sub_time_limit, seed=seed, guide=guide, place=place,
    )
    params: dict[str, Any] = {
        "time_limit": time_limit, "rounds": rounds, "window": window, "max_jobs": max_jobs,
        "sub_time_limit": sub_time_limit, "passes": passes, "iterations": iterations,
        "seed": seed, "guided": guided,
    }
    if inst.has_nodes:
        params["placement"] = placement
    return finish(
        inst, "lns", start, reservation="curve", started_at=t0, params=params, place=place,
        message=(f"{done} window{'s' * (done != 1)}, {improved} improved" + ("" if guide is None else ", LP-guided")
                 + (f", placement {rule}" if inst.has_nodes else "")),
    )
