"""The version 3 kernel's node test: the first slot a node refuses a job, GPUs and host alike.

``_search`` uses the slot to skip a node's later starts, so a slot past the
first refusal would let a start through that the node cannot hold.
"""

from __future__ import annotations

import numpy as np
import pytest

from heuristics._shares_fit import host_fail, node_fail

T = 8


def _rows(wf: list[int], cpu: list[int]) -> np.ndarray:
    """One node (K=1): pool, wholly free GPUs, most free milli, CPU, memory rows."""
    rows = np.zeros((5, T), np.int64)
    rows[0] = 8
    rows[1] = wf
    rows[2] = 0
    rows[3] = cpu
    rows[4] = 4096
    return rows


@pytest.mark.parametrize(("wf", "cpu", "cj", "want"), [
    ([2] * 8, [4000] * 8, 1000, -1),                                 # room throughout
    ([2, 2, 2, 1, 2, 2, 2, 2], [4000] * 8, 1000, 3),                 # the GPUs only
    ([2] * 8, [4000, 4000, 500, 4000, 4000, 4000, 4000, 4000], 1000, 2),  # the CPU only
    ([2, 2, 2, 2, 1, 2, 2, 2], [4000, 500, 4000, 4000, 4000, 4000, 4000, 4000], 1000, 1),
    ([2, 1, 2, 2, 2, 2, 2, 2], [4000, 4000, 4000, 4000, 4000, 500, 4000, 4000], 1000, 1),
    ([2, 2, 2, 1, 2, 2, 2, 2], [0] * 8, 0, 3),                       # a job asking no CPU
])
def test_the_first_refused_slot(wf: list[int], cpu: list[int], cj: int, want: int) -> None:
    rows = _rows(wf, cpu)
    assert node_fail(rows, 1, 0, 0, T, True, 2, 1000, cj, 0) == want
    host = host_fail(rows, 1, 0, 0, T, cj, 0)
    cpu_fail = [u for u in range(T) if cpu[u] < cj]
    assert host == (cpu_fail[0] if cpu_fail else -1)


def test_the_host_read_from_the_run_start() -> None:
    rows = _rows([2] * 8, [500, 4000, 4000, 4000, 500, 4000, 4000, 4000])
    assert host_fail(rows, 1, 0, 1, 3, 1000, 0) == -1
    assert host_fail(rows, 1, 0, 1, 4, 1000, 0) == 4
    assert host_fail(rows, 1, 0, 1, 4, 0, 5000) == 1  # memory
