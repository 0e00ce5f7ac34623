"""``best`` skips its later phases once a candidate runs every job, and returns the same schedule."""

from __future__ import annotations

import instances
import matheuristics.best as best_module
from matheuristics.best import best


def _roomy(gpus: int = 2, horizon: int = 10) -> instances.Instance:
    """Four jobs of ``gpus`` GPUs for 3 slots on 8 GPUs (with 2 GPUs, FIFO runs them all)."""
    jobs = tuple(instances.Job(f"j{i}", gpus=gpus, duration=3, priority=1.0 + i) for i in range(4))
    return instances.Instance("roomy", num_gpus=8, horizon=horizon, jobs=jobs)


def test_once_every_job_runs_no_later_phase_runs(monkeypatch):
    inst = _roomy()
    calls = []
    monkeypatch.setattr(best_module, "sampling_order",
                        lambda *a, **k: calls.append("sampling") or (_ for _ in ()).throw(AssertionError))
    monkeypatch.setattr(best_module, "local_search_order",
                        lambda *a, **k: calls.append("local") or (_ for _ in ()).throw(AssertionError))
    res = best(inst, time_limit=None, passes=5, iterations=5, lns_rounds=5)
    assert calls == []
    assert instances.evaluate(inst, res.schedule).jobs_run == inst.num_jobs
    assert res.message.startswith("fifo") or "fifo" in res.message


def test_a_contended_instance_still_runs_every_phase(monkeypatch):
    inst = _roomy(gpus=4, horizon=5)  # two at a time, one start each: two of the four run
    seen = []
    real = best_module.sampling_order

    def spy(*a, **k):
        seen.append("sampling")
        return real(*a, **k)

    monkeypatch.setattr(best_module, "sampling_order", spy)
    res = best(inst, time_limit=None, passes=5, iterations=5, lns_rounds=0)
    assert seen == ["sampling"]
    assert instances.evaluate(inst, res.schedule).jobs_run < inst.num_jobs
