"""The local search's incremental decoding keeps what it would find without its snapshots.

:class:`heuristics.search.OrderSearch` keeps the state before every chunk of
the order but the first (whose state is the empty one), within
``OrderSearch.MEMORY`` bytes: a state larger than that leaves one chunk and no
snapshot at all (the whole openb cluster's version 3 state is 0.34 GB). The
search's moves, values, starts and placements are the same for any memory,
on flat, node and version 3 instances.
"""

from __future__ import annotations

import numpy as np
import pytest

import instances
from heuristics.placement import new_place
from heuristics.search import OrderSearch, local_search_order


def _cases() -> list[tuple[str, instances.Instance]]:
    flat = instances.generate("medium", seed=1)
    return [("flat", flat), ("nodes", instances.with_nodes(flat, 4)),
            ("v3", instances.generate("openb-shares", seed=2, num_gpus=16, horizon=24,
                                      num_jobs=60))]


@pytest.mark.parametrize("case", range(3))
def test_the_search_is_the_same_with_and_without_snapshots(case: int, monkeypatch) -> None:
    name, inst = _cases()[case]
    order = np.arange(inst.num_jobs)
    runs = []
    for memory in (OrderSearch.MEMORY, 1):  # (1 byte: one chunk, no snapshot)
        monkeypatch.setattr(OrderSearch, "MEMORY", memory)
        search = OrderSearch(inst, order)
        runs.append((search.stride, search.snaps.shape[0]))
        place = new_place(inst) if inst.has_nodes else None
        got = local_search_order(inst, order, iterations=300, seed=4, place=place)
        runs.append((got[0].tolist(), got[1].tolist(), got[2],
                     None if place is None else place.tolist()))
    (stride, snaps), snapped, (one, none), unsnapped = runs
    assert snaps > 0 and stride < inst.num_jobs, name  # the default keeps snapshots here
    assert none == 0 and one > inst.num_jobs, name
    assert snapped == unsnapped, name
    assert snapped[2] > 0, name  # some move was kept, so the decoding from a chunk was used
