"""instances.capacity.job_placements on model version 3: models, CPU and memory of the empty node.

Held to the data layer's own test (:func:`instances.resources.has_placement`: a job has a
placement exactly when it has one there) and to the checker (each placement, alone on the
empty cluster, passes it).
"""

from __future__ import annotations

import numpy as np
from brute_v3 import tiny_v3_instance
from hypothesis import given, settings
from hypothesis import strategies as st

import instances
from instances import Instance, Job, Node, Schedule
from instances.capacity import fits_alone, job_placements
from instances.resources import has_placement


@given(st.integers(0, 100_000), st.sampled_from([(2, 2), (2, 1, 1), (3, 2), (4,), (2, 2, 2)]))
@settings(max_examples=30, deadline=None)
def test_placements_agree_with_has_placement_and_the_checker(seed: int, shape: tuple) -> None:
    inst = tiny_v3_instance(seed, n=8, shape=shape, T=4)
    nodes = inst.nodes
    args = ([n.gpus for n in nodes], [n.model for n in nodes], [n.cpu_milli for n in nodes],
            [n.memory_mib for n in nodes])
    for j, (job, places) in enumerate(zip(inst.jobs, job_placements(inst))):
        assert bool(places) == has_placement(*args, job.gpus, job.gpu_models, job.cpu_milli,
                                             job.memory_mib)
        for q in places:
            on = {nodes[k].name: list(range(job.gpus if len(q) == 1 else nodes[k].gpus))
                  for k in q}
            empty = inst.replace(services=())  # the empty cluster
            instances.evaluate(empty, Schedule(inst.name, {job.name: job.release},
                                               indices={job.name: on}))
        # every node the job fits alone and has the GPUs for is offered
        if not inst.multi_node[j]:
            ok = fits_alone(inst)[j] & (inst.node_gpus >= job.gpus)
            assert sorted(q[0] for q in places) == np.flatnonzero(ok).tolist()


def test_a_multi_node_job_is_charged_in_proportion_on_each_node() -> None:
    # 6 GPUs on 4 + 2 + 2; 3000 CPU: 2000 on the 4-GPU node, 1000 on a 2-GPU one
    nodes = (Node("a", 4, cpu_milli=2000), Node("b", 2, cpu_milli=999), Node("c", 2, cpu_milli=1000))
    inst = Instance("m", 8, 1, (), (Job("big", 6, 1, cpu_milli=3000),), nodes=nodes)
    assert job_placements(inst) == [[(0, 2)]]
    assert fits_alone(inst).tolist() == [[True, False, True]]


def test_version_2_placements_are_unchanged() -> None:
    inst = instances.with_nodes(instances.generate("seed-training-heavy", seed=0), [4, 2, 2])
    sizes = inst.node_gpus
    seen = set()
    for job, places in zip(inst.jobs, job_placements(inst)):
        seen.add(job.gpus > 4)
        if job.gpus <= 4:
            assert places == [(k,) for k in range(3) if sizes[k] >= job.gpus]
        else:
            assert places == ([(0, 1, 2)] if job.gpus == 8 else [(0, 1), (0, 2)])
    assert seen == {True, False}
