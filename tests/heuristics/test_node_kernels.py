"""The compiled decoder's two kernels on several nodes (``heuristics._compiled``): the one
compiled for node sets of one word (at most 64 nodes, its loops over words gone at compile
time) and the one for any number of words give the same starts, placements and rows on the
same profile; the dispatch picks the first up to 64 nodes, so only this test runs the second
there (its private names read for that)."""

from __future__ import annotations

import numpy as np
import pytest

import instances
from heuristics.decoder import job_arrays
from heuristics.engine import new_profile
from heuristics.placement import PLACEMENTS, new_place
from heuristics.profile import Profile
from heuristics.rules import order_by

compiled = pytest.importorskip("heuristics._compiled")

SHAPES: dict[str, int | str | list[int]] = {"32 x 8": 8, "openb": "openb", "64 x 4": 4, "62 x 4 + 8": [4] * 62 + [8],
          "(8, 4, 2, 2) x 16": [8, 4, 2, 2] * 16}


@pytest.mark.parametrize("shape", list(SHAPES), ids=list(SHAPES))
@pytest.mark.parametrize("rule", PLACEMENTS)
@pytest.mark.parametrize("reservation", ["peak", "curve"])
def test_the_one_word_kernel_equals_the_any_words_kernel(shape: str, rule: str,
                                                         reservation: str) -> None:
    inst = instances.generate("large", seed=3, num_gpus=256, num_jobs=1500,
                              node_gpus=SHAPES[shape])
    assert 1 < inst.num_nodes <= 64
    order = np.asarray(order_by(inst, "priority"), dtype=np.int64)
    jobs = job_arrays(inst)
    out = []
    for kernel in (compiled._NODES_ONE_WORD, compiled._NODES):
        prof = new_profile(inst, reservation, rule)
        assert isinstance(prof, Profile) and not prof.stale
        start, place = np.full(inst.num_jobs, -1, dtype=np.int64), new_place(inst)
        kernel(prof.rows, prof.sizes, prof.levels, prof.frag, prof.rule, order, jobs, start,
               place)
        out.append((start, place, prof.rows))
    (s1, p1, r1), (s2, p2, r2) = out
    assert (s1 >= 0).sum() > inst.num_jobs // 10
    assert (p1 >= 0).sum(axis=1).max() > 1  # (some job on several whole nodes)
    assert np.array_equal(s1, s2) and np.array_equal(p1, p2) and np.array_equal(r1, r2)
