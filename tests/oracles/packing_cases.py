"""Small packings for the tests: hand-built helpers and seeded random ones."""

from __future__ import annotations

import numpy as np

from instances.packing import Packing, PackNode, Pod

MODELS = ("A", "B", "C")


def node(name: str, gpus: int, cpu: int = 32000, mem: int = 65536, model: str = "A") -> PackNode:
    return PackNode(name, gpus, model, cpu, mem)


def pod(name: str, gpus: int = 1, milli: int = 1000, cpu: int = 1000, mem: int = 1024,
        models: tuple[str, ...] = ()) -> Pod:
    return Pod(name, gpus, milli if gpus else 0, cpu, mem, models)


def random_packing(seed: int, nodes: int = 6, pods: int = 40) -> Packing:
    """A small packing drawn from ``seed``: every kind of pod and node, many ties."""
    rng = np.random.default_rng(seed)
    ns = []
    for i in range(nodes):
        g = int(rng.choice([1, 2, 4, 8]))
        ns.append(PackNode(f"n{i}", g, str(rng.choice(MODELS[:2])),
                           int(rng.choice([4000, 8000, 16000, 64000])),
                           int(rng.choice([8192, 32768, 131072]))))
    ps = []
    for j in range(pods):
        kind = rng.random()
        cpu = int(rng.choice([0, 500, 1000, 2000, 4000, 8000]))
        mem = int(rng.choice([0, 1024, 4096, 16384]))
        models = tuple(rng.choice(MODELS, size=int(rng.integers(1, 3)), replace=False)) \
            if rng.random() < 0.2 else ()
        if kind < 0.15:
            ps.append(Pod(f"p{j}", 0, 0, cpu, mem, models))
        elif kind < 0.6:
            ps.append(Pod(f"p{j}", 1, int(rng.choice([100, 250, 300, 500, 700])), cpu, mem,
                          models))
        else:
            ps.append(Pod(f"p{j}", int(rng.choice([1, 1, 2, 4, 8])), 1000, cpu, mem, models))
    return Packing(f"rand-{seed}", tuple(ns), tuple(ps))


OPENB_NODES_CSV = ("sn,cpu_milli,memory_mib,gpu,model\n"
                   + "".join(f"n{i},{16000 * (1 + i % 3)},65536,{(1, 2, 4, 8)[i % 4]},{'AB'[i % 2]}\n"
                             for i in range(8)))
"""Eight openb-format nodes of 1, 2, 4 and 8 GPUs, models A and B (a small `pack openb --nodes`)."""

OPENB_PODS_CSV = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"
                  "p0,1000,1024,1,500,\np1,2000,2048,2,1000,\np2,500,512,0,0,\np3,1000,1024,1,1000,A\n"
                  "p4,3000,4096,1,250,\np5,6000,8192,4,1000,\np6,1000,1024,1,700,B\n")
"""Seven openb-format pods: shares, whole GPUs, a CPU-only pod, model-bound pods."""
