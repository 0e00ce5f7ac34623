"""A readable reference of the packing policies: plain Python, one pod and one node at a time.

Written from the rules (docs/packing.md) without the compiled code, so that the
tests can hold :func:`heuristics.packing.place` to it on small packings.
"""

from __future__ import annotations

import math

import numpy as np

from instances.packing import Packing, Pod, TargetWorkload

GPU = 1000


def frag_of(cpu_left: int, left: list[int], model: str, w: TargetWorkload,
            node_models: tuple[str, ...]) -> float:
    """FGD's fragmentation of one node, shape by shape."""
    idle = sum(left)
    total = 0.0
    for s in range(len(w)):
        m, g, c = int(w.milli[s]), int(w.gpus[s]), int(w.cpu[s])
        allowed = not w.models[s] or model in w.models[s]
        if m == 0 or not allowed or cpu_left < c:
            total += w.freq[s] * idle
            continue
        room = [x for x in left if x >= m]
        if len(room) >= g:
            total += w.freq[s] * sum(x for x in left if x < m)
        else:
            total += w.freq[s] * idle
    return total


def _go_div(a: int, b: int) -> int:
    q = abs(a) // b
    return q if a >= 0 else -q


class _State:
    """Free GPU milli, CPU, memory and the pod classes held, per node."""

    def __init__(self, packing: Packing) -> None:
        self.nodes = packing.nodes
        self.left = [[GPU] * n.gpus for n in packing.nodes]
        self.cpu = [n.cpu_milli for n in packing.nodes]
        self.mem = [n.memory_mib for n in packing.nodes]
        self.classes: list[dict[int, int]] = [{} for _ in packing.nodes]
        self.models = tuple(dict.fromkeys(n.model for n in packing.nodes))


def _fits(st: _State, pod: Pod, n: int) -> bool:
    if pod.gpu_models and st.nodes[n].model not in pod.gpu_models:
        return False
    if st.cpu[n] < pod.cpu_milli or st.mem[n] < pod.memory_mib:
        return False
    if pod.gpus == 0:
        return True
    if pod.shared:
        return any(x >= pod.gpu_milli for x in st.left[n])
    return sum(x == GPU for x in st.left[n]) >= pod.gpus


def _score(st: _State, pod: Pod, n: int, policy: str,
           w: TargetWorkload | None) -> tuple[int, int]:
    """The node's score and, for FGD and a share, the GPU it would take (-1 otherwise)."""
    g, m, c, left = pod.gpus, pod.gpu_milli, pod.cpu_milli, st.left[n]
    free, req = sum(left), g * m
    if policy == "dotprod":
        dot = (st.cpu[n] / 128000) * (c / 128000) + (free / 8000) * (req / 8000)
        return int(100 * (1 - dot / 2)), -1
    if policy == "bestfit":
        s = (st.cpu[n] - c) / 128000 * 0.5 + (free - req) / 8000 * 0.5
        return int((1 - s) * 100), -1
    if policy == "clustering":
        if g == 0:
            return 0, -1
        k = 0 if pod.shared else g
        base = _go_div(25 * (8000 - free), 8000)
        if st.classes[n].get(k, 0) > 0:
            return base + (75 if len(st.classes[n]) == 1 else 50), -1
        return base + (25 if not st.classes[n] else 0), -1
    if policy == "packing":
        if g == 0:
            return 0, -1
        full = sum(x == GPU for x in left)
        if full == len(left):
            return max(33 - full, full), -1
        ranked = sorted(range(len(left)), key=lambda i: left[i])
        use = [i for i in ranked if left[i] >= m][:g]
        whole = sum(left[i] == GPU for i in use)
        if whole > 0:
            return max(50 - whole, 33), -1
        return max(100 - sum(left[i] * 100 // GPU for i in use) // 10, 50), -1
    assert policy == "fgd" and w is not None
    model = st.nodes[n].model
    before = frag_of(st.cpu[n], left, model, w, st.models)

    def sig(after: float) -> int:
        return int(1 / (1 + math.exp(-(before - after) / 1000)) * 100)

    if pod.shared:
        best, gpu = -1, -1
        for i, x in enumerate(left):
            if x >= m:
                trial = list(left)
                trial[i] -= m
                s = sig(frag_of(st.cpu[n] - c, trial, model, w, st.models))
                if s > best:
                    best, gpu = s, i
        return best, gpu
    trial = list(left)
    taken = 0
    for i, x in enumerate(trial):
        if taken < g and x == GPU:
            trial[i] = 0
            taken += 1
    return sig(frag_of(st.cpu[n] - c, trial, model, w, st.models)), -1


def place_reference(packing: Packing, policy: str, order: list[int],
                    w: TargetWorkload | None, u_node: np.ndarray,
                    u_gpu: np.ndarray) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Pod name -> (node name, GPUs), placing the pods of ``order`` with ``policy``."""
    st = _State(packing)
    out = {}
    for j in order:
        pod = packing.pods[j]
        feasible = [n for n in range(len(st.nodes)) if _fits(st, pod, n)]
        if not feasible:
            continue
        fgd_gpu = -1
        if policy == "random":
            n = feasible[min(int(u_node[j] * len(feasible)), len(feasible) - 1)]
        elif policy == "first-fit":
            n = feasible[0]
        else:
            scored = [_score(st, pod, x, policy, w) for x in feasible]
            best = max(s for s, _ in scored)
            at = [s for s, _ in scored].index(best)  # the first of the highest
            n, fgd_gpu = feasible[at], scored[at][1]
        left, m = st.left[n], pod.gpu_milli
        if pod.shared:
            room = [i for i, x in enumerate(left) if x >= m]
            if policy == "fgd":
                i = fgd_gpu
            elif policy == "random":
                i = room[min(int(u_gpu[j] * len(room)), len(room) - 1)]
            elif policy == "first-fit":
                i = room[0]
            else:
                i = min(room, key=lambda k: (left[k], k))
            left[i] -= m
            gpus: tuple[int, ...] = (i,)
        else:
            gpus = tuple([i for i, x in enumerate(left) if x == GPU][:pod.gpus])
            for i in gpus:
                left[i] = 0
        st.cpu[n] -= pod.cpu_milli
        st.mem[n] -= pod.memory_mib
        if pod.gpus > 0:
            k = 0 if pod.shared else pod.gpus
            st.classes[n][k] = st.classes[n].get(k, 0) + 1
        out[pod.name] = (st.nodes[n].name, gpus)
    return out
