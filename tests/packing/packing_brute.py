"""Exact optima of tiny packings, two independent ways, for the bound's tests.

- :func:`brute_optimum`: depth-first search over every pod's choice (a node and GPUs,
  or left out), pruned by the GPU milli still to come;
- :func:`config_optimum`: every configuration of every node type enumerated, then the
  configuration model solved as an integer program (exact, since with all configurations
  the model is the problem itself); for the tiniest packings only;
- :func:`mip_optimum`: the problem itself as an integer program, pod by node by GPU.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import lil_matrix

from instances.packing import Packing

GPU = 1000


def brute_optimum(packing: Packing) -> int:
    """Most GPU milli any placement of a subset of the pods holds (exhaustive)."""
    pods = [p for p in packing.pods if p.gpus > 0]
    pods.sort(key=lambda p: -p.gpus * p.gpu_milli)
    nodes = packing.nodes
    left = [[GPU] * n.gpus for n in nodes]
    cpu = [n.cpu_milli for n in nodes]
    mem = [n.memory_mib for n in nodes]
    rest = [*np.cumsum([p.gpus * p.gpu_milli for p in pods][::-1])[::-1].tolist(), 0]
    best = 0

    def go(i: int, value: int) -> None:
        nonlocal best
        best = max(best, value)
        if i == len(pods) or value + rest[i] <= best:
            return
        p = pods[i]
        seen = set()
        for n, node in enumerate(nodes):
            if p.gpu_models and node.model not in p.gpu_models:
                continue
            if cpu[n] < p.cpu_milli or mem[n] < p.memory_mib:
                continue
            state = (node.gpus, node.model, cpu[n], mem[n], tuple(sorted(left[n])))
            if state in seen:  # an identical node: the same subtree
                continue
            seen.add(state)
            cpu[n] -= p.cpu_milli
            mem[n] -= p.memory_mib
            if p.shared:
                tried = set()
                for k, x in enumerate(left[n]):
                    if x >= p.gpu_milli and x not in tried:
                        tried.add(x)
                        left[n][k] -= p.gpu_milli
                        go(i + 1, value + p.gpu_milli)
                        left[n][k] += p.gpu_milli
            else:
                free = [k for k, x in enumerate(left[n]) if x == GPU][:p.gpus]
                if len(free) == p.gpus:
                    for k in free:
                        left[n][k] = 0
                    go(i + 1, value + p.gpus * GPU)
                    for k in free:
                        left[n][k] = GPU
            cpu[n] += p.cpu_milli
            mem[n] += p.memory_mib
        go(i + 1, value)

    go(0, 0)
    return best


def _configs(gpus: int, cpu: int, mem: int, model: str, shapes: list[tuple],
             counts: list[int]) -> list[tuple[int, ...]]:
    """Every multiset of shapes (as counts) that fits one node, GPU by GPU."""
    out = set()
    n = len(shapes)

    def fits_gpus(take: list[int]) -> bool:
        whole = sum(take[s] * shapes[s][0] for s in range(n) if shapes[s][1] == GPU)
        shares = sorted((shapes[s][1] for s in range(n) if shapes[s][1] < GPU
                         for _ in range(take[s])), reverse=True)
        room = gpus - whole
        if room < 0:
            return False
        bins: list[int] = []

        def place(i: int) -> bool:  # exact bin packing of the shares into `room` GPUs
            if i == len(shares):
                return True
            tried = set()
            for b in range(len(bins)):
                if bins[b] + shares[i] <= GPU and bins[b] not in tried:
                    tried.add(bins[b])
                    bins[b] += shares[i]
                    if place(i + 1):
                        return True
                    bins[b] -= shares[i]
            if len(bins) < room:
                bins.append(shares[i])
                if place(i + 1):
                    return True
                bins.pop()
            return False

        return place(0)

    def grow(s: int, take: list[int], c: int, m: int) -> None:
        if s == n:
            if fits_gpus(take):
                out.add(tuple(take))
            return
        g, _milli, sc, sm, models = shapes[s]
        ok = g <= gpus and (not models or model in models)
        k = 0
        while True:
            if not fits_gpus(take):
                break
            grow(s + 1, take, c, m)
            if not ok or k >= counts[s] or c + sc > cpu or m + sm > mem:
                break
            take[s] += 1
            k += 1
            c += sc
            m += sm
        take[s] -= k

    grow(0, [0] * n, 0, 0)
    return [t for t in out if any(t)]


def config_optimum(packing: Packing) -> int:
    """The same optimum through every configuration and an integer program."""
    shapes_count: dict[tuple, int] = {}
    for p in packing.pods:
        if p.gpus > 0:
            key = (p.gpus, p.gpu_milli, p.cpu_milli, p.memory_mib, p.gpu_models)
            shapes_count[key] = shapes_count.get(key, 0) + 1
    shapes, counts = list(shapes_count), list(shapes_count.values())
    types: dict[tuple, int] = {}
    for node in packing.nodes:
        key = (node.gpus, node.cpu_milli, node.memory_mib, node.model)
        types[key] = types.get(key, 0) + 1
    cols, col_type = [], []
    for t, (gpus, cpu, mem, model) in enumerate(types):
        for cfg in _configs(gpus, cpu, mem, model, shapes, counts):
            cols.append(cfg)
            col_type.append(t)
    if not cols:
        return 0
    value = np.array([sum(k * s[0] * s[1] for k, s in zip(c, shapes)) for c in cols], float)
    A = np.zeros((len(types) + len(shapes), len(cols)))
    for j, (c, t) in enumerate(zip(cols, col_type)):
        A[t, j] = 1
        A[len(types):, j] = c
    limit = np.array(list(types.values()) + counts, dtype=float)
    res = milp(-value, integrality=np.ones(len(cols)),
               bounds=Bounds(np.zeros(len(cols)), np.full(len(cols), np.inf)),
               constraints=LinearConstraint(A, -np.inf, limit))
    assert res.status == 0
    return round(-res.fun)


def mip_optimum(packing: Packing, time_limit: float = 120.0) -> int:
    """The optimum as a direct integer program: ``x_jn`` pod ``j`` on node ``n``, ``e_jnk``
    it uses GPU ``k`` there, ``h_nk`` GPU ``k`` of node ``n`` holds shares."""
    pods = [p for p in packing.pods if p.gpus > 0]
    nodes = packing.nodes
    xs, es, hs = {}, {}, {}
    for j, p in enumerate(pods):
        for n, node in enumerate(nodes):
            if (p.gpus <= node.gpus and p.cpu_milli <= node.cpu_milli
                    and p.memory_mib <= node.memory_mib
                    and (not p.gpu_models or node.model in p.gpu_models)):
                xs[j, n] = len(xs)
    nx = len(xs)
    for (j, n) in xs:
        for k in range(nodes[n].gpus):
            es[j, n, k] = nx + len(es)
    ne = len(es)
    for n, node in enumerate(nodes):
        for k in range(node.gpus):
            hs[n, k] = nx + ne + len(hs)
    nv = nx + ne + len(hs)
    rows: list[tuple[dict[int, float], float, float]] = []
    for j in range(len(pods)):
        rows.append(({xs[j, n]: 1.0 for n in range(len(nodes)) if (j, n) in xs}, -np.inf, 1.0))
    for (j, n), x in xs.items():
        g = pods[j].gpus
        rows.append(({**{es[j, n, k]: 1.0 for k in range(nodes[n].gpus)}, x: -float(g)},
                     0.0, 0.0))
    for n, node in enumerate(nodes):
        for k in range(node.gpus):
            whole = {es[j, n, k]: 1.0 for j, p in enumerate(pods)
                     if (j, n, k) in es and not p.shared}
            rows.append(({**whole, hs[n, k]: 1.0}, -np.inf, 1.0))
            share = {es[j, n, k]: float(p.gpu_milli) for j, p in enumerate(pods)
                     if (j, n, k) in es and p.shared}
            rows.append(({**share, hs[n, k]: -float(GPU)}, -np.inf, 0.0))
        for res, cap in (("cpu_milli", node.cpu_milli), ("memory_mib", node.memory_mib)):
            rows.append(({xs[j, n]: float(getattr(p, res)) for j, p in enumerate(pods)
                          if (j, n) in xs}, -np.inf, float(cap)))
    A = lil_matrix((len(rows), nv))
    for r, (coef, _, _) in enumerate(rows):
        for v, a in coef.items():
            A[r, v] = a
    c = np.zeros(nv)
    for (j, _), x in xs.items():
        c[x] = -pods[j].gpus * pods[j].gpu_milli
    res = milp(c, integrality=np.ones(nv), bounds=Bounds(np.zeros(nv), np.ones(nv)),
               constraints=LinearConstraint(A.tocsr(), [r[1] for r in rows],
                                            [r[2] for r in rows]),
               options={"time_limit": time_limit, "mip_rel_gap": 0.0})
    assert res.status == 0, res.message
    return round(-res.fun)
