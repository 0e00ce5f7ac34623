"""The configuration model's pieces: pod shapes, node types, and configurations (columns).

Pods are grouped by shape (GPUs, GPU milli, CPU, memory, models) and nodes by
type (GPUs, model, CPU, memory); a **configuration** is what one node of a
type holds: whole-GPU pods, and per GPU the shares on it. CPU-only pods add
no GPU milli, so the bound leaves them out. :func:`realize` turns chosen
configurations back into a placement of actual pods on actual nodes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from instances.packing import GPU_MILLI, Packing, Placement

__all__ = ["Column", "Groups", "group", "placement_columns", "realize", "single_shape_columns"]


@dataclass(frozen=True)
class Groups:
    """Shapes and node types of a packing, by index.

    Attributes
    ----------
    gpus, milli, cpu, mem, value, count
        Per shape (``value``: GPU milli of one pod; ``count``: pods of the shape).
    models
        Per shape, its ``gpu_models`` (empty: any).
    pods
        Per shape, its pods' indices in the packing, in arrival order.
    t_gpus, t_cpu, t_mem, t_count
        Per node type.
    t_model
        Per node type, its model.
    t_nodes
        Per node type, its nodes' indices in the packing's order.
    fits
        ``(types, shapes)``: whether one pod of the shape fits an empty node of the type.
    """

    gpus: np.ndarray
    milli: np.ndarray
    cpu: np.ndarray
    mem: np.ndarray
    value: np.ndarray
    count: np.ndarray
    models: tuple[tuple[str, ...], ...]
    pods: tuple[tuple[int, ...], ...]
    t_gpus: np.ndarray
    t_cpu: np.ndarray
    t_mem: np.ndarray
    t_count: np.ndarray
    t_model: tuple[str, ...]
    t_nodes: tuple[tuple[int, ...], ...]
    fits: np.ndarray

    @property
    def num_shapes(self) -> int:
        return int(self.gpus.shape[0])

    @property
    def num_types(self) -> int:
        return int(self.t_gpus.shape[0])


def group(packing: Packing) -> Groups:
    """The shapes of ``packing``'s GPU pods and the types of its nodes."""
    shapes: dict[tuple[int, int, int, int, tuple[str, ...]], list[int]] = {}
    for j, p in enumerate(packing.pods):
        if p.gpus > 0:
            shapes.setdefault((p.gpus, p.gpu_milli, p.cpu_milli, p.memory_mib, p.gpu_models),
                              []).append(j)
    types: dict[tuple[int, str, int, int], list[int]] = {}
    for i, n in enumerate(packing.nodes):
        types.setdefault((n.gpus, n.model, n.cpu_milli, n.memory_mib), []).append(i)
    sk, tk = list(shapes), list(types)

    def col(keys: list, i: int) -> np.ndarray:
        return np.array([k[i] for k in keys], dtype=np.int64).reshape(len(keys))

    g, m, c, me = col(sk, 0), col(sk, 1), col(sk, 2), col(sk, 3)
    tg, tc, tm = col(tk, 0), col(tk, 2), col(tk, 3)
    fits = np.zeros((len(tk), len(sk)), dtype=np.bool_)
    for t, (gpus, model, cpu, mem) in enumerate(tk):
        for s, key in enumerate(sk):
            fits[t, s] = (key[0] <= gpus and key[2] <= cpu and key[3] <= mem
                          and (not key[4] or model in key[4]))
    return Groups(
        gpus=g, milli=m, cpu=c, mem=me, value=g * m,
        count=np.array([len(v) for v in shapes.values()], dtype=np.int64).reshape(len(sk)),
        models=tuple(k[4] for k in sk), pods=tuple(tuple(v) for v in shapes.values()),
        t_gpus=tg, t_cpu=tc, t_mem=tm,
        t_count=np.array([len(v) for v in types.values()], dtype=np.int64),
        t_model=tuple(k[1] for k in tk), t_nodes=tuple(tuple(v) for v in types.values()),
        fits=fits,
    )


@dataclass(frozen=True)
class Column:
    """One configuration of a node type.

    Attributes
    ----------
    node_type
        The type's index.
    whole
        Shapes of the whole-GPU pods (one entry per pod).
    shared
        Per GPU holding shares, the shapes of its shares.
    """

    node_type: int
    whole: tuple[int, ...]
    shared: tuple[tuple[int, ...], ...]

    def counts(self, num_shapes: int) -> np.ndarray:
        """Pods of each shape the configuration holds."""
        out = np.zeros(num_shapes, dtype=np.int64)
        for s in self.whole:
            out[s] += 1
        for gpu in self.shared:
            for s in gpu:
                out[s] += 1
        return out

    def key(self) -> tuple[int, tuple[int, ...], tuple[tuple[int, ...], ...]]:
        """A canonical identity (sorted), so that a configuration is added once."""
        return (self.node_type, tuple(sorted(self.whole)),
                tuple(sorted(tuple(sorted(g)) for g in self.shared)))


def single_shape_columns(gr: Groups) -> list[Column]:
    """For each node type and shape that fits it: as many pods of the shape as fit alone."""
    out = []
    for t in range(gr.num_types):
        for s in map(int, np.flatnonzero(gr.fits[t])):
            cap = int(gr.count[s])
            for res, tcap in ((gr.cpu[s], gr.t_cpu[t]), (gr.mem[s], gr.t_mem[t])):
                if res > 0:
                    cap = min(cap, int(tcap // res))
            if gr.milli[s] == GPU_MILLI:
                cap = min(cap, int(gr.t_gpus[t] // gr.gpus[s]))
                if cap > 0:
                    out.append(Column(t, (s,) * cap, ()))
            else:
                per = GPU_MILLI // int(gr.milli[s])
                cap = min(cap, per * int(gr.t_gpus[t]))
                if cap > 0:
                    gpus = [per] * (cap // per) + ([cap % per] if cap % per else [])
                    out.append(Column(t, (), tuple((s,) * k for k in gpus)))
    return out


def realize(packing: Packing, gr: Groups, columns: list[Column], x: np.ndarray) -> Placement:
    """Place actual pods by ``x[c]`` copies of each column (integers; pods taken in arrival
    order per shape, nodes in the packing's order per type).

    Raises
    ------
    ValueError
        If ``x`` asks for more nodes of a type or more pods of a shape than there are.
    """
    next_pod = [0] * gr.num_shapes
    next_node = [0] * gr.num_types
    assign: dict[str, tuple[str, tuple[int, ...]]] = {}

    def take(s: int) -> str:
        if next_pod[s] >= len(gr.pods[s]):
            raise ValueError(f"realize: more pods of shape {s} than the packing has")
        j = gr.pods[s][next_pod[s]]
        next_pod[s] += 1
        return packing.pods[j].name

    for c, col in enumerate(columns):
        for _ in range(round(x[c])):
            t = col.node_type
            if next_node[t] >= len(gr.t_nodes[t]):
                raise ValueError(f"realize: more nodes of type {t} than the packing has")
            node = packing.nodes[gr.t_nodes[t][next_node[t]]].name
            next_node[t] += 1
            k = 0
            for gpu in col.shared:
                for s in gpu:
                    assign[take(s)] = (node, (k,))
                k += 1
            for s in col.whole:
                g = int(gr.gpus[s])
                assign[take(s)] = (node, tuple(range(k, k + g)))
                k += g
    return Placement(packing.name, assign)


def placement_columns(packing: Packing, gr: Groups, placement: Placement) -> dict[Column, int]:
    """The configurations a placement uses, counted (CPU-only pods dropped)."""
    shape_of = {j: s for s, pods in enumerate(gr.pods) for j in pods}
    type_of = {i: t for t, nodes in enumerate(gr.t_nodes) for i in nodes}
    per_node: dict[str, tuple[list[int], dict[int, list[int]]]] = {}
    for name, (node, gpus) in placement.assign.items():
        j = packing.pod_index[name]
        if j not in shape_of:
            continue
        whole, shared = per_node.setdefault(node, ([], {}))
        s = shape_of[j]
        if gr.milli[s] == GPU_MILLI:
            whole.append(s)
        else:
            shared.setdefault(gpus[0], []).append(s)
    out: dict[tuple, int] = {}
    cols: dict[tuple, Column] = {}
    for node, (whole, shared) in per_node.items():
        col = Column(type_of[packing.node_index[node]], tuple(whole),
                     tuple(tuple(v) for v in shared.values()))
        cols[col.key()] = col
        out[col.key()] = out.get(col.key(), 0) + 1
    return {cols[k]: v for k, v in out.items()}
