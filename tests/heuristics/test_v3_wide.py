"""Jobs on whole nodes that ask 62 GPUs or more, on version 3, held to the plain reference.

From :data:`heuristics._compiled.WIDE` GPUs on, the lexicographic set of whole
nodes is searched with a table that the version 3 fit keeps in its scratch
(:func:`heuristics._shares_fit.new_scratch`, the search allocating
nothing). The decoder under each rule, FIFO and the public ``fit`` give the
reference's starts, nodes and GPU indices on instances whose jobs on whole
nodes ask 62 to 68 GPUs; a table sized too small, or read as the wrong
shape, gives another set of nodes or none.
"""

from __future__ import annotations

import numpy as np
import pytest
from reference_v3 import decode_ref
from test_v3_reference import _check_fifo, _check_list, _ref_where, _where

import heuristics
from heuristics._compiled import WIDE
from heuristics.engine import new_profile
from heuristics.placement import new_place
from heuristics.rules import order_by
from instances import Instance, Job, Node, Service

SIZES = (8, 8, 8, 8, 8, 8, 4, 4, 4, 4, 2, 2)  # 68 GPUs: a set of 62 needs the 2-GPU nodes


def _wide(seed: int) -> Instance:
    rng = np.random.default_rng(seed)
    nodes = tuple(Node(f"n{k}", g, "A" if k % 3 else "B", 64000, None)
                  for k, g in enumerate(SIZES))
    T = 6
    jobs = []
    for i in range(12):
        p = int(rng.integers(1, 3))
        r = int(rng.integers(0, T - p + 1))
        kind = rng.random()
        if kind < 0.3:
            jobs.append(Job(f"j{i}", int(rng.choice([62, 64, 66, 68])), p, 3.0, release=r,
                            cpu_milli=int(rng.choice([0, 8000]))))
        elif kind < 0.6:
            jobs.append(Job(f"j{i}", 1, p, 1.0, release=r, gpu_milli=int(rng.choice([300, 500])),
                            cpu_milli=1000))
        else:
            jobs.append(Job(f"j{i}", int(rng.choice([1, 2, 4])), p, 2.0, release=r,
                            gpu_models=["A"] if rng.random() < 0.5 else None))
    return Instance(f"wide-{seed}", sum(SIZES), T, (Service("svc", 1.0, (0,) * T),),
                    tuple(jobs), nodes=nodes)


@pytest.mark.parametrize("seed", range(6))
def test_jobs_on_many_whole_nodes_equal_the_reference(seed: int) -> None:
    inst = _wide(seed)
    assert inst.jobs_use_resources and int(inst.gpus[inst.multi_node].max()) >= WIDE
    _check_fifo(inst, "curve")
    for rule in ("first-fit", "best-fit", "frag"):
        for r in ("value", "area"):
            _check_list(inst, order_by(inst, r), rule, "curve")


def test_a_wide_job_takes_the_lexicographically_smallest_set() -> None:
    """62 of 68 GPUs: every 8- and 4-GPU node would make 64, so the set must end on one
    2-GPU node after dropping a 4-GPU one: nodes 0-5, 6-8 and 10 (the reference agrees)."""
    jobs = (Job("big", 62, 1, 1.0), Job("share", 1, 1, 1.0, gpu_milli=500))
    inst = Instance("wide-one", sum(SIZES), 1, (Service("svc", 1.0, (0,)),), jobs,
                    nodes=tuple(Node(f"n{k}", g, None, None, None) for k, g in enumerate(SIZES)))
    place = new_place(inst)
    start = heuristics.listsched.list_starts(inst, np.array([0, 1]), "curve",
                                             placement="first-fit", place=place)
    where = _where(inst, start, place)
    assert where[0] == (0, [0, 1, 2, 3, 4, 5, 6, 7, 8, 10], [])
    assert where == _ref_where(*decode_ref(inst, [0, 1], "curve", "first-fit"))
    prof = new_profile(inst, "curve", "first-fit")
    s, where = prof.earliest(0, 62, 1, 0, 1)
    assert (s, where.nodes.tolist(), where.gpus.tolist()) == (0, [0, 1, 2, 3, 4, 5, 6, 7, 8, 10], [])
