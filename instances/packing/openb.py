"""The openb packing instance, built by FGD's procedure from the shipped trace files.

Seed ``s``: the pod list (by default the shipped ``openb_pod_list_default``,
all 8,152 pods whatever their qos or phase) shuffled by ``s``; then copies
drawn uniformly with replacement from the list appended until the next one
would push the total GPU request (``gpus * gpu_milli``) above 1.3 times the
cluster's capacity; the nodes (by default the shipped 1,213 GPU nodes) in an
order shuffled by ``s``. A list whose request is already above the target
loses pods drawn at random instead, as the simulator tunes a workload down.

The paper's other pod lists (the variants of its Figs. 11-14: ``gpushare*``,
``multigpu*``, ``gpuspec*``, ``cpu*``) are shipped gzip-compressed in
``instances/data/openb/variants/`` and named by their suffix
(:data:`OPENB_VARIANTS`, e.g. ``"gpushare40"``); :func:`openb_pod_list`
resolves a name or a path, and the reader takes ``.csv``, ``.csv.gz`` and
``.csv.xz`` files alike.

The random draws come from the PCG64 bit generator's raw 64-bit stream (whose
sequence NumPy keeps fixed across versions), so the same seed gives the same
file byte for byte.
"""

from __future__ import annotations

import csv
import gzip
import io
import lzma
import os
from importlib import resources
from pathlib import Path

import numpy as np

from ..traces import shipped
from .model import GPU_MILLI, Packing, PackNode, Pod

__all__ = ["INFLATION", "OPENB_VARIANTS", "POD_LISTS", "VARIANT_GROUPS", "openb_packing",
           "openb_pod_list", "pod_list_name", "read_openb_nodes", "read_openb_pods"]

INFLATION = 1.3
"""Total GPU request of the built instance, as a multiple of the cluster's capacity."""


VARIANT_GROUPS: dict[str, tuple[str, ...]] = {
    "gpushare": ("gpushare20", "gpushare40", "gpushare60", "gpushare80", "gpushare100"),
    "multigpu": ("multigpu20", "multigpu30", "multigpu40", "multigpu50"),
    "gpuspec": ("gpuspec05", "gpuspec10", "gpuspec20", "gpuspec25", "gpuspec33"),
    "cpu": ("cpu0", "cpu037", "cpu050", "cpu072", "cpu100", "cpu200", "cpu235", "cpu250",
            "cpu300"),
}
"""The 23 shipped variants of the openb pod list, by group (FGD's Figs. 11-14): shared
pods carrying XX% of the GPU request (``gpushareXX``), multi-GPU pods carrying XX%
(``multigpuXX``), ``gpu_spec`` set on XX% of the GPU pods (``gpuspecXX``), CPU-only pods
making X.X% of the pods (``cpuXXX``)."""

OPENB_VARIANTS: tuple[str, ...] = tuple(v for vs in VARIANT_GROUPS.values() for v in vs)
"""Every shipped variant's name (``openb_pod_list_<name>.csv.gz`` in the package)."""

POD_LISTS: tuple[str, ...] = ("default", *OPENB_VARIANTS)
"""The names :func:`openb_pod_list` resolves: the default list and the variants."""


def openb_pod_list(pods: str | os.PathLike[str] | None = None) -> Path:
    """The file of an openb pod list: a shipped list by name (``"default"`` or one of
    :data:`OPENB_VARIANTS`), or a path (``None``: the default list).

    Raises
    ------
    ValueError
        For a name that is neither a known list nor an existing file, listing the
        known names.
    """
    if pods is None or os.fspath(pods) == "default":
        return shipped("openb:default")
    text = os.fspath(pods)
    if text in OPENB_VARIANTS:
        return Path(str(resources.files("instances").joinpath(
            f"data/openb/variants/openb_pod_list_{text}.csv.gz")))
    p = Path(text)
    if not p.is_file():
        raise ValueError(f"{text}: neither a pod list file nor a shipped pod list; "
                         f"known: {', '.join(POD_LISTS)}")
    return p


def pod_list_name(pods: str | os.PathLike[str] | None) -> str:
    """The short name of a pod list: its variant name, or the file's name without
    ``openb_pod_list_`` and its ``.csv`` (``.gz``, ``.xz``) suffixes."""
    if pods is None:
        return "default"
    text = os.fspath(pods)
    if text in POD_LISTS:
        return text
    name = Path(text).name
    for suffix in (".gz", ".xz", ".csv"):
        name = name.removesuffix(suffix)
    return name.removeprefix("openb_pod_list_")


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
        with _open_text(path) as f:
            reader = csv.DictReader(f)
            missing = [c for c in need if c not in (reader.fieldnames or [])]
            if missing:
                raise ValueError(f"{path}: missing column(s) {', '.join(missing)}")
            return [(i + 2, row) for i, row in enumerate(reader)]
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a UTF-8 text file") from None
    except csv.Error as e:
        raise ValueError(f"{path}: malformed CSV ({e})") from None
    except (OSError, EOFError, lzma.LZMAError) as e:  # a bad or truncated archive
        raise ValueError(f"{path}: unreadable ({e})") from None


def _open_text(path: Path) -> io.TextIOBase:
    """``path`` as text: gzip or xz by its suffix, plain otherwise."""
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="")
    if path.suffix == ".xz":
        return io.TextIOWrapper(lzma.open(path, "rb"), encoding="utf-8", newline="")
    return open(path, newline="", encoding="utf-8")


def _int(path: Path, line: int, row: dict[str, str], col: str) -> int:
    text = (row.get(col) or "").strip()
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{path}: line {line}: {col}: not an integer: {text!r}") from None


def read_openb_pods(path: str | os.PathLike[str] | None = None) -> list[Pod]:
    """The pods of an openb pod list: a file (``.csv``, ``.csv.gz``, ``.csv.xz``) or a
    shipped list's name (see :func:`openb_pod_list`; default: ``openb_pod_list_default``).

    A missing ``gpu_spec`` column (the ``multigpu`` variants) means any model; a model
    listed twice in ``gpu_spec`` (as some ``gpuspec`` variants do) counts once.

    Raises
    ------
    ValueError
        ``<file>: line <n>: <column>: ...``.
    """
    p = openb_pod_list(path)
    pods = []
    for line, row in _rows(p, ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")):
        g = _int(p, line, row, "num_gpu")
        spec = (row.get("gpu_spec") or "").strip()
        try:
            pods.append(Pod(row["name"].strip(), g, _int(p, line, row, "gpu_milli") if g else 0,
                            _int(p, line, row, "cpu_milli"), _int(p, line, row, "memory_mib"),
                            tuple(dict.fromkeys(x for x in spec.split("|") if x))))
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
    pods
        An openb pod list: a file, or a shipped list's name (``"gpushare40"``; default:
        the shipped default list).
    nodes
        An openb node CSV (default: the shipped 1,213 GPU nodes).
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
        raise ValueError(f"{openb_pod_list(pods)}: no pods")
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
    return Packing(f"openb-{pod_list_name(pods)}-s{seed}", tuple(cluster[i] for i in order),
                   tuple(arrival))
