"""Hypothesis strategies for instances with nodes."""

from __future__ import annotations

from hypothesis import strategies as st

from instances import Instance, Job, Node, Service


@st.composite
def node_instances(
    draw: st.DrawFn, max_nodes: int = 4, max_jobs: int = 8, max_horizon: int = 10
) -> Instance:
    """A valid random instance on nodes of 1, 2, 3, 4 or 8 GPUs: up to 2 services,
    jobs of at most the largest node's GPUs or (multi-node) the GPUs of a set of
    nodes, releases, some deadlines."""
    sizes = draw(st.lists(st.sampled_from([1, 2, 3, 4, 8]), min_size=1, max_size=max_nodes))
    G = sum(sizes)
    T = draw(st.integers(1, max_horizon))
    services = []
    left = [G] * T
    for k in range(draw(st.integers(0, 2))):
        demand = [draw(st.integers(0, min(left[t], 3))) for t in range(T)]
        left = [left[t] - demand[t] for t in range(T)]
        services.append(Service(f"s{k}", 1.0, tuple(demand)))
    jobs = []
    for i in range(draw(st.integers(0, max_jobs))):
        if len(sizes) > 1 and draw(st.integers(0, 3)) == 0:
            pick = draw(st.lists(st.integers(0, len(sizes) - 1), min_size=2, unique=True))
            g = max(sum(sizes[k] for k in pick), 1)
            if g <= max(sizes):
                g = draw(st.integers(1, max(sizes)))
        else:
            g = draw(st.integers(1, max(sizes)))
        p = draw(st.integers(1, T))
        r = draw(st.integers(0, T - 1))
        deadline = None
        if r + p <= T and draw(st.booleans()):
            deadline = draw(st.integers(r + p, T))
        w = draw(st.sampled_from([0.5, 1.0, 2.0, 4.0]))
        jobs.append(Job(f"j{i}", g, p, priority=w, release=r, deadline=deadline))
    nodes = tuple(Node(f"n{k}", s) for k, s in enumerate(sizes))
    return Instance("rand-nodes", G, T, tuple(services), tuple(jobs), nodes=nodes)
