"""milp.progress: the bar of a solve, driven with a fake clock and stream."""

from __future__ import annotations

import io
import re
import time
from types import SimpleNamespace

import pytest

import instances
import matheuristics
from milp.progress import Progress


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _frames(stream: io.StringIO) -> list[str]:
    """Every state the bar drew (tqdm redraws on one line after a carriage return)."""
    return [f.strip() for f in re.split(r"[\r\n]", stream.getvalue()) if f.strip()]


def _event(running_time: float, incumbent: float, bound: float, highs_gap: float) -> object:
    return SimpleNamespace(data_out=SimpleNamespace(
        running_time=running_time, mip_primal_bound=incumbent, mip_dual_bound=bound,
        mip_gap=highs_gap))


def _bar(limit: float = 17.1) -> tuple[Progress, Clock, io.StringIO]:
    clock, stream = Clock(), io.StringIO()
    return Progress(limit, "milp", file=stream, clock=clock, interval=0), clock, stream


def test_seconds_are_shown_to_one_decimal() -> None:
    bar, clock, stream = _bar()
    callback = bar.highs_callback()
    t0 = clock.now
    for k in range(1, 87):  # 0.1 s steps: 8.600000000000001 in floating point
        clock.now = t0 + k * 0.1
        callback(_event(k * 0.1, 4845.2, 4977.3, 0.027))
    bar.close()
    counts = [re.search(r"\| (\S+)/(\S+) s", f) for f in _frames(stream)]
    shown = [m.group(1) for m in counts if m]
    assert shown and all(re.fullmatch(r"\d+\.\d", n) for n in shown), shown
    assert shown[-1] == "8.6" and all(m.group(2) == "17.1" for m in counts if m)


def test_the_bar_never_passes_its_limit() -> None:
    bar, clock, stream = _bar(5.0)
    clock.now += 5.3  # HiGHS overran its limit a little
    bar.set_figures(10.0, 11.0)
    bar.close()
    frames = _frames(stream)
    percents = [int(m.group(1)) for f in frames if (m := re.match(r"milp:\s+(\d+)%", f))]
    assert percents and max(percents) == 100
    assert "5.0/5.0 s" in frames[-1]
    assert "<" not in stream.getvalue()  # no negative time left ("<-00:00")


def test_the_gap_is_that_of_the_result() -> None:
    bar, _, stream = _bar()
    # HiGHS's own gap divides by the incumbent: 2.73% here; the project's by the bound
    bar.highs_callback(scale=2.0)(_event(1.0, 2 * 4845.2, 2 * 4977.3, 0.0273))
    bar.close()
    want = instances.gap(4845.2, 4977.3)
    assert want is not None
    assert f"gap={100 * want:.2f}%" in _frames(stream)[-1]
    assert "gap=2.65%" in _frames(stream)[-1] and "2.73" not in stream.getvalue()
    assert bar.gap == pytest.approx(want)


def test_the_bar_moves_before_the_search_starts() -> None:
    bar, clock, stream = _bar(20.0)
    bar.set_phase("warm start")
    clock.now += 2.0
    bar.refresh()  # what the background thread does every interval
    bar.set_phase("LP")
    clock.now += 4.0
    bar.refresh()
    bar.close()
    frames = _frames(stream)
    assert any("2.0/20.0 s" in f and "warm start" in f for f in frames)
    assert "6.0/20.0 s" in frames[-1] and "LP" in frames[-1]


def test_the_background_thread_refreshes_the_bar() -> None:
    stream = io.StringIO()
    bar = Progress(10.0, "milp", file=stream, interval=0.02)
    time.sleep(0.3)
    bar.close()
    seconds = [float(m.group(1)) for f in _frames(stream) if (m := re.search(r"\| (\S+)/", f))]
    assert max(seconds) >= 0.2


def test_the_milp_bar_covers_the_warm_start(capsys: pytest.CaptureFixture[str]) -> None:
    inst = instances.generate("small", seed=0)
    res = matheuristics.solve_milp(inst, time_limit=10, progress=True)
    err = capsys.readouterr().err
    assert "warm start" in err and "/10.0 s" in err
    assert res.params["warm_start"] == "best"
