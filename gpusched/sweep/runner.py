"""Run the cells of a sweep that are not done yet: in this process, a process pool or Dask.

Each row is stored as soon as its cell ends, in this (the parent) process, so a
run killed with SIGKILL loses at most the cells in flight. The pool and Dask go
through one loop (:func:`_execute`). A worker that dies breaks the whole pool;
the cells in flight then run again one by one, each in a pool of its own, so
that only the one that killed its worker is recorded as an error.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from .cells import Cell, crashed_row, error_row
from .config import BenchConfig
from .store import consolidate, done_keys, save_instances, store_row
from .work import make_cells, run_cell

__all__ = ["CONSOLIDATE_EVERY_S", "BenchSummary", "run_bench"]

logger = logging.getLogger(__name__)

CONSOLIDATE_EVERY_S = 5.0
"""At most this many seconds between two rebuilds of ``results.csv`` during a run."""

CellOutput = tuple[dict[str, Any], "dict[str, Any] | None"]
StoreFn = Callable[[Cell, dict[str, Any], "dict[str, Any] | None"], None]


@dataclass
class BenchSummary:
    """What a run did: cells in the sweep (``total``), already done (``skipped``), run and
    stored (``ran``, of which ``errors`` failed), whether it was interrupted, the
    results folder and the wall-clock seconds.
    """

    total: int
    skipped: int
    ran: int = 0
    errors: int = 0
    interrupted: bool = False
    out: Path = Path(".")
    elapsed_s: float = 0.0

    @property
    def pending(self) -> int:
        """Cells still to run."""
        return self.total - self.skipped - self.ran


def run_bench(
    cells: Sequence[Cell] | BenchConfig,
    out: str | os.PathLike[str],
    *,
    workers: int | None = None,
    scheduler: str | Any | None = None,
    progress: bool = True,
    retry_errors: bool = False,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> BenchSummary:
    """Run the cells not yet done in ``out`` and store their rows (``on_row`` is called
    with each).

    Parameters
    ----------
    cells
        The sweep (or a :class:`BenchConfig`, expanded by :func:`make_cells`).
    workers
        Worker processes (default ``os.cpu_count()``); ``1`` runs in this process.
    scheduler
        A Dask scheduler address (or a ``distributed.Client``); ``workers`` is then ignored.
    retry_errors
        Run again the cells whose stored status is ``error``.

    Raises
    ------
    KeyboardInterrupt
        On SIGINT, after the finished rows are stored and ``results.csv`` rebuilt:
        running the same sweep again resumes it.
    """
    if isinstance(cells, BenchConfig):
        cells = make_cells(cells)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    keys = done_keys(out, retry_errors=retry_errors)
    todo = [c for c in cells if c.key not in keys]
    # A key appearing twice in the sweep (the same instance twice) runs once.
    todo = list({c.key: c for c in todo}.values())
    summary = BenchSummary(total=len(cells), skipped=len(cells) - len(todo), out=out)
    logger.info("%d cells, %d done already, %d to run", len(cells), summary.skipped, len(todo))
    save_instances(out, todo)

    bar = None
    if progress and todo:
        from tqdm import tqdm

        bar = tqdm(total=len(todo), file=sys.stderr, unit="cell", dynamic_ncols=True,
                   desc="bench")
    last_consolidate = time.monotonic()

    def store(cell: Cell, row: dict[str, Any], schedule: dict[str, Any] | None) -> None:
        nonlocal last_consolidate
        store_row(out, cell, row, schedule)
        summary.ran += 1
        if row["status"] == "error":
            summary.errors += 1
        if bar is not None:
            bar.update(1)
            if summary.errors:
                bar.set_postfix(errors=summary.errors)
        if on_row is not None:
            on_row(row)
        if time.monotonic() - last_consolidate > CONSOLIDATE_EVERY_S:
            consolidate(out)
            last_consolidate = time.monotonic()

    try:
        if not todo:
            pass
        elif scheduler is not None:
            _execute(todo, _DaskExecutor(scheduler), store)
        elif (workers or os.cpu_count() or 1) <= 1:
            for cell in todo:
                store(cell, *run_cell(cell))
        else:
            _execute(todo, _PoolExecutor(min(workers or os.cpu_count() or 1, len(todo))), store)
    except KeyboardInterrupt:
        summary.interrupted = True
        raise
    finally:
        if bar is not None:
            bar.close()
        consolidate(out)
        summary.elapsed_s = time.perf_counter() - t0
        logger.info("stored %d rows (%d errors) in %.1f s", summary.ran, summary.errors,
                    summary.elapsed_s)
    return summary


# ---------------------------------------------------------------- the executor loop
class _Executor(Protocol):
    """What :func:`_execute` needs of a process pool or a Dask client."""

    def in_flight(self) -> int:
        """Most cells submitted and not finished (instances travel with the cells)."""
        ...

    def submit(self, cell: Cell) -> Any:
        """A future of :func:`run_cell` on ``cell``."""
        ...

    def wait(self, futures: Iterable[Any]) -> Iterable[Any]:
        """Block until at least one of ``futures`` is done; the done ones."""
        ...

    def broken(self, e: BaseException) -> bool:
        """Whether ``e`` (from a result or a submit) means the executor lost every cell
        in flight."""
        ...

    def recover(self, lost: Sequence[Cell]) -> Iterable[tuple[Cell, CellOutput]]:
        """After :meth:`broken`: the rows of the lost cells; the executor works again."""
        ...

    def close(self, *, abort: bool, futures: Iterable[Any] = ()) -> None:
        """Release the executor; ``abort`` drops the cells in flight (``futures``)."""
        ...


def _execute(todo: Sequence[Cell], ex: _Executor, store: StoreFn) -> None:
    """Run ``todo`` on ``ex``, storing each row as its cell ends (any order)."""
    pending: dict[Any, Cell] = {}
    queue = deque(todo)

    def refill() -> None:
        while queue and len(pending) < ex.in_flight():
            pending[ex.submit(queue[0])] = queue[0]  # the cell leaves the queue once submitted
            queue.popleft()

    try:
        refill()
        while pending:
            broken = False
            for fut in ex.wait(list(pending)):
                cell = pending[fut]
                try:
                    row, sched = fut.result()
                except Exception as e:
                    if ex.broken(e):  # every cell in flight is lost
                        broken = True
                        continue
                    row, sched = crashed_row(cell, e), None
                del pending[fut]
                store(cell, row, sched)
            if not broken:
                try:
                    refill()
                except Exception as e:
                    if not ex.broken(e):
                        raise
                    broken = True
            if broken:
                lost = list(pending.values())
                pending.clear()
                for cell, (row, sched) in ex.recover(lost):
                    store(cell, row, sched)
                refill()
    except BaseException:
        ex.close(abort=True, futures=list(pending))
        raise
    ex.close(abort=False)


# ---------------------------------------------------------------- process pool
def _ignore_sigint() -> None:  # pragma: no cover - runs in worker processes
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _exit_with_parent()


def _exit_with_parent(poll_s: float = 0.5) -> None:  # pragma: no cover - in worker processes
    """End this worker when its parent dies (a parent killed with SIGKILL leaves its pool
    workers blocked on their queue forever, each holding its memory).
    """
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="exit-with-parent").start()


def _new_pool(workers: int) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(max_workers=workers, initializer=_ignore_sigint)


def _run_alone(cell: Cell) -> CellOutput:
    """Run one cell in a pool of its own: if the worker dies, this cell killed it."""
    with _new_pool(1) as one:
        try:
            return one.submit(run_cell, cell).result()
        except BrokenProcessPool:
            return error_row(cell, "worker failed: the worker process died while running "
                                   "this cell (killed by the system, e.g. out of memory?)"), None


class _PoolExecutor:
    """Worker processes on this machine (:class:`~concurrent.futures.ProcessPoolExecutor`)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.pool = _new_pool(workers)

    def in_flight(self) -> int:
        return 2 * self.workers

    def submit(self, cell: Cell) -> Any:
        return self.pool.submit(run_cell, cell)

    def wait(self, futures: Iterable[Any]) -> Iterable[Any]:
        return wait(list(futures), return_when=FIRST_COMPLETED).done

    def broken(self, e: BaseException) -> bool:
        return isinstance(e, BrokenProcessPool)

    def recover(self, lost: Sequence[Cell]) -> Iterable[tuple[Cell, CellOutput]]:
        # Which cell killed its worker is unknown: run each one that was in flight
        # alone, so that only the culprit gets an error row; go on in a new pool.
        self.pool.shutdown(wait=True, cancel_futures=True)
        for cell in lost:
            yield cell, _run_alone(cell)
        self.pool = _new_pool(self.workers)

    def close(self, *, abort: bool, futures: Iterable[Any] = ()) -> None:
        if not abort:
            self.pool.shutdown(wait=True)
            return
        for fut in futures:
            fut.cancel()
        # Cells in flight are lost by design: end their workers first, then let the
        # pool's manager thread see them gone and stop. (Shutting down without waiting
        # leaves that thread to the interpreter's exit, which can trip over the closed
        # pipes and print "Bad file descriptor" from threading's atexit hook.)
        procs = getattr(self.pool, "_processes", None) or {}
        for p in list(procs.values()):
            p.terminate()
        self.pool.shutdown(wait=True, cancel_futures=True)


# ---------------------------------------------------------------- Dask
class _DaskExecutor:
    """A Dask cluster, by scheduler address or ``distributed.Client``.

    Every cell is submitted at once (Dask balances them, also as workers join); a
    worker lost mid-cell is Dask's to retry. Finished futures come from one
    ``distributed.as_completed``, O(1) each however many are pending.
    """

    def __init__(self, scheduler: str | Any) -> None:
        from distributed import Client, as_completed

        self.own = isinstance(scheduler, str)
        self.client: Any = Client(scheduler) if self.own else scheduler
        self.done = as_completed()

    def in_flight(self) -> int:
        return sys.maxsize

    def submit(self, cell: Cell) -> Any:
        fut = self.client.submit(run_cell, cell, pure=False, key=f"cell-{cell.key}")
        self.done.add(fut)
        return fut

    def wait(self, futures: Iterable[Any]) -> Iterable[Any]:
        return self.done.next_batch(block=True)

    def broken(self, e: BaseException) -> bool:
        return False

    def recover(self, lost: Sequence[Cell]) -> Iterable[tuple[Cell, CellOutput]]:  # pragma: no cover
        raise AssertionError("a Dask cluster is never broken as a whole")

    def close(self, *, abort: bool, futures: Iterable[Any] = ()) -> None:
        try:
            if abort:
                self.client.cancel(list(futures))
        finally:
            if self.own:
                self.client.close()
