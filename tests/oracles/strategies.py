"""Hypothesis strategies shared by the property tests."""

from __future__ import annotations

from hypothesis import strategies as st

from instances import Instance, Job, Service


@st.composite
def random_instances(
    draw: st.DrawFn, max_gpus: int = 6, max_jobs: int = 8, max_horizon: int = 12
) -> Instance:
    """A valid random instance: up to 2 services, up to ``max_jobs`` jobs with
    releases, some deadlines and a few priority levels."""
    G = draw(st.integers(1, max_gpus))
    T = draw(st.integers(1, max_horizon))
    services = []
    left = [G] * T
    for k in range(draw(st.integers(0, 2))):
        demand = [draw(st.integers(0, left[t])) for t in range(T)]
        left = [left[t] - demand[t] for t in range(T)]
        services.append(Service(f"s{k}", draw(st.sampled_from([0.5, 1.0, 3.0])), tuple(demand)))
    jobs = []
    for i in range(draw(st.integers(0, max_jobs))):
        g = draw(st.integers(1, G))
        p = draw(st.integers(1, T))
        r = draw(st.integers(0, T - 1))
        deadline = None
        if r + p <= T and draw(st.booleans()):
            deadline = draw(st.integers(r + p, T))
        w = draw(st.sampled_from([0.5, 1.0, 1.5, 2.0, 4.0]))
        jobs.append(Job(f"j{i}", g, p, priority=w, release=r, deadline=deadline))
    return Instance("rand", G, T, tuple(services), tuple(jobs))
