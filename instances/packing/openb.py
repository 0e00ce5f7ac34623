"""The openb packing instance, built by FGD's procedure from the shipped trace files.

Seed ``s``: the pod list (by default the shipped ``openb_pod_list_default``,
all 8,152 pods whatever their qos or phase) shuffled by ``s``; then copies
drawn uniformly with replacement from the list appended until the next one
would push the total GPU request (``gpus * gpu_milli``) above 1.3 times the
cluster's capacity; the nodes (by default the shipped 1,213 GPU nodes) in an
order shuffled by ``s``. A list whose request is already above the target
loses pods drawn at random instead, as the simulator tunes a workload down.

The random draws come from the PCG64 bit generator's raw 64-bit stream (whose
sequence NumPy keeps fixed across versions), so the same seed gives the same
file byte for byte.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np

from ..traces import shipped
from .model import GPU_MILLI, Packing, PackNode, Pod

__all__ = ["INFLATION", "openb_packing", "read_openb_nodes", "read_openb_pods"]

INFLATION = 1.3
"""Total GPU request of the built instance, as a multiple of the cluster's capacity."""


class _Draws:
    """Uniform integers from PCG64's raw stream (rejection sampling: exact and stable)."""

    def __init__(self, seed: int) -> None:
        self.bits = np.random.PCG64(seed)

    def below(self, n: int) -> int:
        limit = 2**64 - (2**64 % n)
        while True:
            x = int(self.bits.random_raw())
            if x < limit:
                return x % n

    def permutation(self, n: int) -> list[int]:
        out = list(range(n))
        for i in range(n - 1, 0, -1):  # Fisher-Yates
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out


def _rows(path: Path, need: tuple[str, ...]) -> list[tuple[int, dict[str, str]]]:
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            missing = [c for c in need if c not in (reader.fieldnames or [])]
            if missing:
                raise ValueError(f"{path}: missing column(s) {', '.join(missing)}")
            return [(i + 2, row) for i, row in enumerate(reader)]
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a UTF-8 text file") from None
    except csv.Error as e:
        raise ValueError(f"{path}: malformed CSV ({e})") from None


def _int(path: Path, line: int, row: dict[str, str], col: str) -> int:
    text = (row.get(col) or "").strip()
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{path}: line {line}: {col}: not an integer: {text!r}") from None


def read_openb_pods(path: str | os.PathLike[str] | None = None) -> list[Pod]:
    """The pods of an openb pod CSV (default: the shipped ``openb_pod_list_default``).

    A missing ``gpu_spec`` column (the ``multigpu`` variants) means any model.

    Raises
    ------
    ValueError
        ``<file>: line <n>: <column>: ...``.
    """
    p = Path(path) if path is not None else shipped("openb:default")
    pods = []
    for line, row in _rows(p, ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")):
        g = _int(p, line, row, "num_gpu")
        spec = (row.get("gpu_spec") or "").strip()
        try:
            pods.append(Pod(row["name"].strip(), g, _int(p, line, row, "gpu_milli") if g else 0,
                            _int(p, line, row, "cpu_milli"), _int(p, line, row, "memory_mib"),
                            tuple(x for x in spec.split("|") if x)))
        except ValueError as e:
            raise ValueError(f"{p}: line {line}: {e}") from None
    return pods


def read_openb_nodes(path: str | os.PathLike[str] | None = None) -> list[PackNode]:
    """The nodes of an openb node CSV (default: the shipped 1,213 GPU nodes).

    Raises
    ------
    ValueError
        ``<file>: line <n>: <column>: ...``.
    """
    p = Path(path) if path is not None else shipped("openb:nodes")
    nodes = []
    for line, row in _rows(p, ("sn", "cpu_milli", "memory_mib", "gpu", "model")):
        try:
            nodes.append(PackNode(row["sn"].strip(), _int(p, line, row, "gpu"),
                                  row["model"].strip(), _int(p, line, row, "cpu_milli"),
                                  _int(p, line, row, "memory_mib")))
        except ValueError as e:
            raise ValueError(f"{p}: line {line}: {e}") from None
    return nodes


def _copy(p: Pod, i: int) -> Pod:
    return Pod(f"{p.name}-copy-{i}", p.gpus, p.gpu_milli, p.cpu_milli, p.memory_mib, p.gpu_models)


def openb_packing(seed: int = 0, *, pods: str | os.PathLike[str] | None = None,
                  nodes: str | os.PathLike[str] | None = None,
                  inflation: float = INFLATION) -> Packing:
    """The openb instance of ``seed`` (see the module's docstring).

    Parameters
    ----------
    seed
        Seeds the shuffles and the draws (an integer >= 0).
    pods, nodes
        An openb pod CSV and node CSV (default: the shipped ones).
    inflation
        Target total GPU request over the capacity.

    Raises
    ------
    ValueError
        For a bad seed or inflation, or a bad CSV file.
    """
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed: must be an integer >= 0, got {seed!r}")
    if not inflation > 0:
        raise ValueError(f"inflation: must be > 0, got {inflation!r}")
    base = read_openb_pods(pods)
    cluster = read_openb_nodes(nodes)
    if not base:
        raise ValueError(f"{pods or shipped('openb:default')}: no pods")
    draws = _Draws(seed)
    arrival = [base[i] for i in draws.permutation(len(base))]
    target = inflation * float(GPU_MILLI * sum(n.gpus for n in cluster))
    total = sum(p.request_milli for p in arrival)
    copies = 0
    if total > target:
        while total > target:
            gone = arrival.pop(draws.below(len(arrival)))
            total -= gone.request_milli
    else:
        while True:
            p = base[draws.below(len(base))]
            if float(total + p.request_milli) > target:
                break
            arrival.append(_copy(p, copies))
            total += p.request_milli
            copies += 1
    order = draws.permutation(len(cluster))
    stem = Path(pods).stem.removeprefix("openb_pod_list_") if pods is not None else "default"
    return Packing(f"openb-{stem}-s{seed}", tuple(cluster[i] for i in order), tuple(arrival))
