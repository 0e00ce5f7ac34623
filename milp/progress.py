"""A progress bar over a solve's time limit: seconds spent, phase, incumbent, bound, gap."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import IO, Any

from instances import gap

__all__ = ["Progress"]

BAR_FORMAT = "{desc}: {percentage:3.0f}%|{bar}| {n:.1f}/{total:.1f} s{postfix}"
"""Seconds to one decimal against the limit; no rate or estimate (a solve has neither)."""


class Progress:
    """A tqdm bar counting the seconds of a whole solve against its time limit.

    The bar starts when the object is made (so it covers a warm start, the
    model build and the LP relaxation, not only the search) and is moved by
    :meth:`refresh`: from a background thread every ``interval`` seconds and
    from HiGHS's interrupt callback (:meth:`highs_callback`), which also
    brings the incumbent and bound. It never passes 100%, and its gap is
    :func:`instances.gap`, ``(UB - V) / UB``, as in :attr:`instances.Result.gap`.

    Parameters
    ----------
    time_limit
        Seconds the solve may take (the bar's 100%).
    desc
        Label in front of the bar.
    file
        Stream to write to (default: standard error).
    clock
        Seconds now (default :func:`time.perf_counter`); a test passes a fake one.
    interval
        Seconds between background refreshes; 0 for none (the caller refreshes).
    """

    def __init__(
        self, time_limit: float, desc: str = "milp", *, file: IO[str] | None = None,
        clock: Callable[[], float] = time.perf_counter, interval: float = 0.5,
    ) -> None:
        from tqdm.auto import tqdm

        self.total = max(0.1, round(float(time_limit), 1))
        self.clock = clock
        self.t0 = clock()
        self.phase = ""
        self.incumbent: float | None = None
        self.bound: float | None = None
        self._lock = threading.Lock()
        self._closed = False
        self.bar = tqdm(total=self.total, desc=desc, file=file, bar_format=BAR_FORMAT,
                        mininterval=0, leave=True, dynamic_ncols=True)
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        if interval > 0:
            self._ticker = threading.Thread(target=self._tick, args=(interval,), daemon=True)
            self._ticker.start()

    def _tick(self, interval: float) -> None:
        while not self._stop.wait(interval):
            self.refresh()

    @property
    def elapsed(self) -> float:
        """Seconds since the bar was made, rounded to 0.1 and at most the limit."""
        return min(self.total, round(max(0.0, self.clock() - self.t0), 1))

    @property
    def gap(self) -> float | None:
        """``(bound - incumbent) / bound`` (:func:`instances.gap`), or ``None`` without both."""
        if self.incumbent is None or self.bound is None:
            return None
        return gap(self.incumbent, self.bound)

    def set_phase(self, phase: str) -> None:
        """Name what the solve is doing now (``warm start``, ``LP``, ``search``)."""
        with self._lock:
            self.phase = phase
        self.refresh()

    def set_figures(self, incumbent: float | None, bound: float | None) -> None:
        """The incumbent's value and the bound (``None`` or not finite: unknown)."""
        with self._lock:
            if incumbent is not None and math.isfinite(incumbent):
                self.incumbent = float(incumbent)
            if bound is not None and math.isfinite(bound):
                self.bound = float(bound)
        self.refresh()

    def postfix(self) -> str:
        """The text after the bar: phase, incumbent, bound, gap."""
        parts = [self.phase] if self.phase else []
        if self.incumbent is not None:
            parts.append(f"incumbent={self.incumbent:.6g}")
        if self.bound is not None:
            parts.append(f"bound={self.bound:.6g}")
        g = self.gap
        if g is not None and math.isfinite(g):
            parts.append(f"gap={100 * g:.2f}%")
        return ", ".join(parts)

    def refresh(self) -> None:
        """Redraw the bar at the seconds spent so far."""
        with self._lock:
            if self._closed:
                return
            self.bar.n = self.elapsed
            self.bar.set_postfix_str(self.postfix(), refresh=False)
            self.bar.refresh()

    def highs_callback(self, scale: float = 1.0) -> Callable[[Any], None]:
        """A ``cbMipInterrupt`` callback: HiGHS's incumbent and bound (divided by ``scale``)."""

        def callback(e: Any) -> None:
            out = e.data_out
            self.set_figures(out.mip_primal_bound / scale, out.mip_dual_bound / scale)

        return callback

    def close(self) -> None:
        """Stop the background refresh, draw the last state and end the bar."""
        self._stop.set()
        if self._ticker is not None and self._ticker is not threading.current_thread():
            self._ticker.join()
        self.refresh()
        with self._lock:
            if not self._closed:
                self._closed = True
                self.bar.close()
