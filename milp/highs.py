"""The HiGHS backend: the formulation's arrays passed to highspy in one ``passModel``."""

from __future__ import annotations

import logging
import math
import threading
import time
from typing import Any

import numpy as np

from instances import Status
from instances.objective import least_flow

from .backend import IncumbentHooks, RawSolve, Solution, as_solution
from .export import objective_scale, pass_model, silence_banner
from .formulation import Formulation
from .progress import Progress

__all__ = [
    "PRESOLVE_SECONDS_PER_NONZERO",
    "PROBE_MIN_S",
    "PROBING_SECONDS_PER_NONZERO",
    "ROOT_LP_SECONDS_PER_NONZERO",
    "ROOT_LP_SHARE",
    "STATUS",
    "cutoff_bound",
    "lp_relaxation",
    "lp_solution",
    "new_highs",
    "objective_scale",
    "pass_model",
    "presolve_rules_off",
    "root_lp_fits",
    "silence_banner",
    "solve_highs",
]

logger = logging.getLogger(__name__)

STATUS: dict[str, Status] = {
    "kOptimal": Status.OPTIMAL,
    "kTimeLimit": Status.TIME_LIMIT,
    "kInterrupt": Status.TIME_LIMIT,
    "kHighsInterrupt": Status.TIME_LIMIT,
    "kIterationLimit": Status.TIME_LIMIT,
    "kSolutionLimit": Status.TIME_LIMIT,
    "kInfeasible": Status.INFEASIBLE,
}
"""HiGHS model status name -> our status (anything else is an error)."""

ROOT_LP_SHARE = 0.5
"""Largest share of :func:`solve_highs`'s time limit the separate root LP may take."""

ROOT_LP_SECONDS_PER_NONZERO = 1.1e-5
"""The root LP's cost per nonzero (dual simplex, one thread), for deciding whether to run
it beside a Lagrangian bound. Measured on a quiet machine: large, 2,000 jobs with the
rounded rows, 1.9 million nonzeros, 20.8 s (the plain rows of 10,000 jobs, 10 million
nonzeros: 159-172 s); docs/bounds.md. The LP keeps its time cap when it is slower."""

PROBING_SECONDS_PER_NONZERO = 1e-4
"""A pessimistic cost of HiGHS's probing per nonzero (medium: 117,000 nonzeros, 8-12 s
measured on the loaded machine, docs/bounds.md)."""

PROBING_SHARE = 0.5
"""Probing runs only when its estimated cost is at most this share of the MIP's time."""

PRESOLVE_SECONDS_PER_NONZERO = 1e-5
"""A pessimistic cost of HiGHS's whole MIP presolve per nonzero, probing off (large,
10,000 jobs, 10 million nonzeros: 28-94 s measured, nothing reduced; with presolve off
HiGHS's setup took 230 s against a 30 s limit; docs/bounds.md)."""

PRESOLVE_SHARE = 0.75
"""The MIP search runs only when its presolve's estimated cost is at most this share of
the time left; otherwise HiGHS is not run and the incumbent hooks (the LNS) get the time."""

PROBING_RULES_OFF = 2**15 + 2**16
"""HiGHS ``presolve_rule_off`` bits of probing (rule 15) and enumeration (rule 16)."""


def presolve_rules_off(nnz: int, time_limit: float) -> int:
    """The ``presolve_rule_off`` mask for a MIP of ``nnz`` nonzeros given ``time_limit`` seconds.

    HiGHS's MIP presolve does not look at the time limit while it probes
    (HiGHS 1.16 says "Time limit reached in probing" long after the limit),
    so a short limit on a large model would be overrun by many seconds.
    Probing and enumeration are switched off when the estimated probing
    time (:data:`PROBING_SECONDS_PER_NONZERO` per nonzero) exceeds
    :data:`PROBING_SHARE` of the limit; ``0`` (every rule on) otherwise.
    """
    return PROBING_RULES_OFF if nnz * PROBING_SECONDS_PER_NONZERO > PROBING_SHARE * time_limit else 0


def root_lp_fits(nnz: int, time_limit: float) -> bool:
    """Whether the root LP of ``nnz`` nonzeros is expected to end within its share
    (:data:`ROOT_LP_SHARE`) of ``time_limit`` seconds, at
    :data:`ROOT_LP_SECONDS_PER_NONZERO` per nonzero."""
    return nnz * ROOT_LP_SECONDS_PER_NONZERO <= ROOT_LP_SHARE * time_limit


WATCHDOG_GRACE_S = 0.5
"""Without incumbent hooks, the search is interrupted through HiGHS's MIP callback this long
past its time limit."""

_threads_in_use: list[int] = []
_pool_lock = threading.Lock()


def new_highs(threads: int) -> Any:
    """A silent ``highspy.Highs`` on ``threads`` threads (the process-wide pool reset if needed)."""
    import highspy

    silence_banner()
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    # HiGHS's thread pool is process-wide and fixed at its first use: reset
    # it when a different count is asked for, or ``run`` fails.
    with _pool_lock:
        if _threads_in_use and _threads_in_use[-1] != threads:
            h.resetGlobalScheduler(True)
        _threads_in_use[:] = [threads]
    h.setOptionValue("threads", int(threads))
    return h


def lp_solution(
    form: Formulation, time_limit: float, threads: int = 1
) -> tuple[float, np.ndarray] | None:
    """The LP relaxation of ``form``: bound and column vector (``None`` if not solved in time)."""
    h = new_highs(threads)
    h.setOptionValue("time_limit", max(0.0, float(time_limit)))
    h.setOptionValue("solve_relaxation", True)
    scale = pass_model(h, form)
    h.run()
    if h.modelStatusToString(h.getModelStatus()) != "Optimal":
        return None
    return (float(h.getInfo().objective_function_value) / scale,
            np.asarray(h.getSolution().col_value, dtype=np.float64))


def lp_relaxation(form: Formulation, time_limit: float, threads: int = 1) -> float | None:
    """The LP-relaxation bound of ``form`` (``None`` if not solved within ``time_limit``)."""
    lp = lp_solution(form, time_limit, threads)
    return None if lp is None else lp[0]


def solve_highs(
    form: Formulation,
    *,
    time_limit: float,
    mip_gap: float,
    threads: int,
    warm_start: Solution | np.ndarray | None,
    progress: Progress | None,
    root_lp: bool = True,
    seed: int = 0,
    stop: threading.Event | None = None,
    hooks: IncumbentHooks | None = None,
    cutoff: float | None = None,
    **options: Any,
) -> RawSolve:
    """Solve with highspy (flat or on nodes: the warm start is relabelled by ``form.encode``).

    Parameters
    ----------
    root_lp
        First solve the LP relaxation (its bound is reported as ``lp_bound``;
        it may take :data:`ROOT_LP_SHARE` of ``time_limit`` and its time
        counts against it). The MIP's presolve runs without probing when the
        time left is short for the model (:func:`presolve_rules_off`), unless
        ``presolve_rule_off`` is given. When even that presolve would take
        most of the time left (:data:`PRESOLVE_SECONDS_PER_NONZERO`,
        :data:`PRESOLVE_SHARE`), HiGHS is not run: the hooks, if any, run
        until the limit (told so by their ``solver_idle()``, where they have
        one, to use HiGHS's core too), and the answer has no dual bound.
    seed
        HiGHS ``random_seed``.
    stop
        When set (by another solver of a portfolio), the search stops.
    cutoff
        Search only for schedules worth more than this value (HiGHS's
        ``objective_bound``): nodes whose bound is at most ``cutoff`` are pruned as
        if a schedule of that value were known. The dual bound returned is then
        at least :func:`cutoff_bound` (the cutoff and HiGHS's gap tolerance on it),
        valid either way; a search that ends without a schedule above it is
        ``time_limit``, not ``optimal``: it proved the bound, not the incumbent
        (with time left the plain search follows, :class:`_CutoffProbe`). Not
        used when the root LP's bound is at most the cutoff.
    hooks
        Work beside the search that trades incumbents with it
        (:class:`milp.IncumbentHooks`): HiGHS's improving solutions go to
        :meth:`~milp.IncumbentHooks.incumbent`, and what
        :meth:`~milp.IncumbentHooks.offer` returns goes to HiGHS through its
        user-solution callback (HiGHS checks every one). HiGHS then runs on
        one thread, whatever ``threads`` says: its thread pool is one per
        process, and hooks that solve MILPs of their own (the LNS helper of
        :func:`matheuristics.solve_milp`) use one thread.
    **options
        Further HiGHS options by name (``presolve="off"``, ...).
    """
    t0 = time.perf_counter()
    ws = as_solution(warm_start)
    if hooks is not None:
        threads = 1
    if progress is not None and root_lp:
        progress.set_phase("LP")
    # the root LP takes at most a share of the limit: the search needs the rest
    lp_bound = lp_relaxation(form, ROOT_LP_SHARE * time_limit, threads) if root_lp else None
    h = new_highs(threads)
    started = False
    try:
        if hooks is not None:  # started once HiGHS's thread pool is set up for one thread
            first = ws if ws is not None else _nothing_run(form)
            hooks.start(form, first[0], max(0.0, time_limit - (time.perf_counter() - t0)),
                        **_place_kw(first))
            started = True
        remaining = max(0.0, time_limit - (time.perf_counter() - t0))
        if remaining <= 0.0:
            started = False  # _no_search stops the hooks
            return _no_search(form, lp_bound, hooks, "HiGHS: time limit reached in the root LP")
        if form.nnz * PRESOLVE_SECONDS_PER_NONZERO > PRESOLVE_SHARE * remaining:
            # HiGHS's MIP presolve does not look at the clock (and without presolve its setup
            # does not either): it would outlast the limit. The hooks get the time instead.
            idle = getattr(hooks, "solver_idle", None)  # HiGHS's core to the hooks too
            if idle is not None:
                idle()
            end = time.perf_counter() + remaining - 0.3
            while (hooks is not None and time.perf_counter() < end
                   and not (stop is not None and stop.is_set())):
                time.sleep(min(0.2, max(0.0, end - time.perf_counter())))
            started = False
            return _no_search(form, lp_bound, hooks,
                              f"HiGHS: not run, its presolve of {form.nnz} nonzeros would "
                              f"outlast the {remaining:.0f} s left")
        h.setOptionValue("time_limit", remaining)
        rel, absolute = solver_gaps(form, mip_gap)
        h.setOptionValue("mip_rel_gap", rel)
        h.setOptionValue("random_seed", int(seed))
        import highspy

        if "presolve_rule_off" not in options:
            h.setOptionValue("presolve_rule_off", presolve_rules_off(form.nnz, remaining))
        if "objective_bound" in options:
            raise ValueError("params: objective_bound as a HiGHS option would leave HiGHS's dual "
                             "bound wrong (it holds only above the cutoff); give cutoff= instead")
        for key, value in options.items():
            if h.setOptionValue(key, value) != highspy.HighsStatus.kOk:
                raise ValueError(f"params: HiGHS rejects option {key}={value!r}")
        scale = pass_model(h, form)
        if absolute is not None:
            h.setOptionValue("mip_abs_gap", absolute * scale)
        if ws is not None:
            h.setSolution(form.num_cols, np.arange(form.num_cols, dtype=np.int32), form.encode(*ws))
        if progress is not None:
            progress.set_phase("search")
            h.cbMipInterrupt.subscribe(progress.highs_callback(scale))
        deadline = time.perf_counter() + remaining + WATCHDOG_GRACE_S

        def interrupt(e: Any) -> None:
            # HiGHS's own clock is coarse on large models: stop a moment past the limit
            if (stop is not None and stop.is_set()) or (
                    hooks is None and time.perf_counter() > deadline):
                e.data_in.user_interrupt = True

        if stop is not None or hooks is None:
            # not beside the hooks: a Python callback waits for the GIL their thread holds
            h.cbMipInterrupt.subscribe(interrupt)
        if hooks is not None:
            _subscribe_hooks(h, form, hooks)
        if cutoff is not None and lp_bound is not None and cutoff >= lp_bound:
            cutoff = None  # the root LP proves more than the probe could
        probe = _CutoffProbe(form, cutoff, mip_gap)
        if probe.cutoff is not None:
            # HiGHS searches the maximum as the minimum of the negated objective, and reads
            # objective_bound in that sense (tests/milp/test_milp_cutoff.py)
            h.setOptionValue("objective_bound", -probe.cutoff * scale)
        while True:
            h.run()
            left = deadline - WATCHDOG_GRACE_S - time.perf_counter()
            if stop is not None and stop.is_set():
                left = 0.0  # stopped: no search follows (the probe's proof still counts)
            nxt = probe.after(h, scale, hooks, left)
            if nxt is None:
                break
            h.setOptionValue("time_limit", left)
            h.setSolution(form.num_cols, np.arange(form.num_cols, dtype=np.int32), nxt)
    finally:
        if started and hooks is not None:
            hooks.stop()
    name = h.modelStatusToString(h.getModelStatus())
    key = str(h.getModelStatus()).rsplit(".", 1)[-1]
    status = STATUS.get(key, Status.ERROR)
    info = h.getInfo()
    start = place = gpu = None
    if info.primal_solution_status == 2:  # kSolutionStatusFeasible
        start, place, gpu = form.decode_all(np.asarray(h.getSolution().col_value))
    # the dual bound exists only once the MIP solver has run (node count >= 0)
    dual = float(info.mip_dual_bound) / scale if info.mip_node_count >= 0 else math.inf
    message = f"HiGHS: {name}" if status is not Status.ERROR else f"HiGHS model status: {name}"
    nodes = int(info.mip_node_count) if info.mip_node_count >= 0 else None
    if probe.cutoff is not None:
        status, dual, message = probe.account(status, dual, message)
        nodes = (nodes or 0) + probe.nodes
    message, alternatives = _hooks_best(hooks, message)
    return RawSolve(
        status=status,
        start=start,
        dual_bound=dual if math.isfinite(dual) else None,
        lp_bound=lp_bound,
        nodes=nodes,
        message=message,
        alternatives=alternatives,
        place=place,
        gpu=gpu,
    )


def cutoff_bound(form: Formulation, cutoff: float, mip_gap: float) -> float:
    """The bound a search under ``cutoff`` proves when it finds nothing above it.

    HiGHS prunes a node whose bound is within its relative gap (``mip_gap``) of the
    cutoff, so the cutoff raised by that gap and the comparison tolerance of the
    instance's values (:func:`milp.assemble.tolerance`).
    """
    from .assemble import tolerance

    rel, absolute = solver_gaps(form, mip_gap)
    slack = absolute if absolute is not None else rel * abs(float(cutoff))
    return float(cutoff) + slack + tolerance(form.instance, float(cutoff))


def solver_gaps(form: Formulation, mip_gap: float) -> tuple[float, float | None]:
    """HiGHS's relative gap and absolute gap (``None``: its default) for ``mip_gap``.

    HiGHS measures its gap on the worth it maximises. Under ``flow`` the gap asked for is
    on ``F``, far smaller than the worth ``C - F``: it is given as an absolute gap of
    ``mip_gap`` times the least flow any schedule has (:func:`instances.objective.least_flow`),
    so that a search that stops holds ``(F - bound) / F <= mip_gap``.
    """
    if form.instance.objective == "value":
        return float(mip_gap), None
    return 0.0, float(mip_gap) * least_flow(form.instance)


PROBE_MIN_S = 1.0
"""A closed cutoff probe is followed by the plain search only with this many seconds left."""


class _CutoffProbe:
    """The cutoff probe of :func:`solve_highs`: a search under a cutoff, then the plain one.

    When the search finds nothing above its cutoff and its tree closes, the cutoff's
    :func:`cutoff_bound` is proved; with time left HiGHS then searches again without
    the cutoff, from the best schedule known (HiGHS's or the hooks'), to find better
    schedules and prove what it can (an optimum, a smaller bound). The bound returned
    is the smaller of the proved one and the last search's (a probe's never below its
    cutoff's line: the nodes it pruned had bounds under it).
    """

    def __init__(self, form: Formulation, cutoff: float | None, mip_gap: float) -> None:
        self.form, self.mip_gap = form, float(mip_gap)
        self.cutoff = None if cutoff is None else float(cutoff)
        self.active = self.cutoff is not None  # the search running is under the cutoff
        self.proved = math.inf
        self.closed = False  # the probe's tree closed
        self.nodes = 0  # the probe's, once the plain search follows it
        self.began = time.perf_counter()
        self.took = 0.0  # seconds the probe took to close

    def after(self, h: Any, scale: float, hooks: IncumbentHooks | None,
              left: float) -> np.ndarray | None:
        """After a search: the plain search's warm start (columns), or ``None``: none follows."""
        if not self.active or self.cutoff is None:
            return None
        info = h.getInfo()
        feasible = info.primal_solution_status == 2
        found = float(info.objective_function_value) / scale if feasible else -math.inf
        line = cutoff_bound(self.form, self.cutoff, self.mip_gap)
        name = h.modelStatusToString(h.getModelStatus())
        self.closed = name in ("Optimal", "Infeasible") and found < line
        if not self.closed:
            return None
        self.proved, self.took = line, time.perf_counter() - self.began
        x = np.asarray(h.getSolution().col_value, dtype=np.float64) if feasible else None
        held = as_solution(hooks.best()) if hooks is not None else None
        if held is not None:
            cols = self.form.encode(*held)
            if x is None or float(self.form.c @ cols) > found:
                x = cols
        if x is None or left < PROBE_MIN_S:
            return None
        self.nodes, self.active = max(0, int(info.mip_node_count)), False
        h.setOptionValue("objective_bound", math.inf)
        return x

    def account(self, status: Status, dual: float, message: str) -> tuple[Status, float, str]:
        """The last search's status, dual bound and message with the probe's proof."""
        assert self.cutoff is not None
        if self.active and self.closed:  # the probe proved the bound, not the incumbent
            return (Status.TIME_LIMIT, self.proved,
                    f"HiGHS: nothing above the cutoff {self.cutoff:.6g} (its tree closed "
                    f"in {self.took:.1f} s)")
        if self.active:
            # the nodes it pruned had bounds under the line
            message += f"; searched above the cutoff {self.cutoff:.6g}"
            return status, max(dual, cutoff_bound(self.form, self.cutoff, self.mip_gap)), message
        message += (f"; after a cutoff probe at {self.cutoff:.6g} whose tree closed in "
                    f"{self.took:.1f} s (the bound {self.proved:.6g})")
        return status, min(dual, self.proved), message


def _no_search(form: Formulation, lp_bound: float | None, hooks: IncumbentHooks | None,
               message: str) -> RawSolve:
    """The answer when no time is left for the MIP search: the LP bound and the hooks' best."""
    if hooks is not None:
        hooks.stop()
    message, alternatives = _hooks_best(hooks, message)
    return RawSolve(Status.TIME_LIMIT, None, None, lp_bound, None, message, alternatives)


def _hooks_best(hooks: IncumbentHooks | None, message: str) -> tuple[str, tuple[Solution, ...]]:
    """The message with the hooks' summary, and their best solution (once they have stopped)."""
    if hooks is None:
        return message, ()
    best = as_solution(hooks.best())
    return f"{message}; {hooks.summary()}", () if best is None else (best,)


def _nothing_run(form: Formulation) -> Solution:
    inst = form.instance
    n = inst.num_jobs
    place = np.full((n, inst.max_span), -1, dtype=np.int64) if inst.has_nodes else None
    if form.has_slots:
        return np.full(n, -1, dtype=np.int64), place, np.full(n, -1, dtype=np.int64)
    return np.full(n, -1, dtype=np.int64), place


def _place_kw(sol: Solution) -> dict[str, Any]:
    """``place=`` for the hooks on an instance with nodes (and ``gpu=`` with GPU slots, model
    version 3); nothing on a flat one."""
    if sol[1] is None:
        return {}
    return {"place": sol[1]} if len(sol) < 3 else {"place": sol[1], "gpu": sol[2]}


def _subscribe_hooks(h: Any, form: Formulation, hooks: IncumbentHooks) -> None:
    """HiGHS's improving solutions to ``hooks``, and what they offer back to HiGHS."""

    def improving(e: Any) -> None:
        x = np.asarray(e.data_out.mip_solution)
        sol = form.decode_all(x) if form.has_slots else form.decode(x)
        hooks.incumbent(sol[0], **_place_kw(sol))  # type: ignore[arg-type]

    def user_solution(e: Any) -> None:
        sol = as_solution(hooks.offer())
        if sol is not None:
            e.data_in.setSolution(form.encode(*sol))

    h.cbMipImprovingSolution.subscribe(improving)
    h.cbMipUserSolution.subscribe(user_solution)
