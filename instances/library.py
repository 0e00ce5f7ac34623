"""The benchmark library ``gpusched-lib/1``: instances with their best known schedules and bounds.

A folder holds ``index.json`` and the files it names (the format is in
docs/library.md). A bound is proved by a ``gpusched-bound/1`` certificate or
by the solver run that proved it. Two failures are kept apart: a library that
cannot be read (:func:`load_library` raises) and an entry that does not hold
(:func:`check_entry` raises, :func:`verify` collects); both name the file and
the field.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from .bound_io import BOUND_TOLERANCE, check_bound, load_bound
from .checker import evaluate
from .io import check_format, check_keys, dumps, load, load_json, load_schedule
from .model import Instance

__all__ = [
    "LIBRARY_FORMAT",
    "BoundProof",
    "EntryCheck",
    "Library",
    "LibraryEntry",
    "VerifyReport",
    "check_entry",
    "content_hash",
    "default_library_dir",
    "load_library",
    "verify",
]

LIBRARY_FORMAT = "gpusched-lib/1"

_TOP_KEYS = ("format", "version", "entries")
_ENTRY_KEYS = ("name", "family", "source", "instance", "instance_sha256", "best_known", "bound")
_BEST_KEYS = ("value", "schedule", "method", "date")
_BOUND_KEYS = ("value", "date")
_SOLVER_KEYS = ("name", "version", "time_limit", "status", "bound_method")
_SOLVER_STATUSES = ("optimal", "time_limit")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def default_library_dir() -> Path:
    """The folder of the library shipped in the package (``instances/data/library``)."""
    return Path(str(resources.files("instances").joinpath("data", "library")))


def content_hash(inst: Instance) -> str:
    """SHA-256 of the instance file's bytes (:func:`instances.dumps`), as a sweep records it."""
    return hashlib.sha256(dumps(inst).encode()).hexdigest()


@dataclass(frozen=True)
class BoundProof:
    """The best known upper bound (``value``, found on ``date``) and what proves it: a
    certificate file, or the solver run (``name``, ``version``, ``time_limit``,
    ``status``, ``bound_method``).
    """

    value: float
    date: str
    certificate: Path | None = None
    solver: dict[str, Any] | None = None


@dataclass(frozen=True)
class LibraryEntry:
    """One instance of the library with its best known schedule and bound; ``where``
    (``<index file>: entries[i]``) prefixes this entry's messages.
    """

    name: str
    family: str
    source: str
    instance: Path
    instance_sha256: str
    best_value: float
    best_schedule: Path
    best_method: str
    best_date: str
    bound: BoundProof
    where: str = ""

    @property
    def gap(self) -> float:
        """``(bound - best) / bound`` (0 when the bound is 0)."""
        b = self.bound.value
        return 0.0 if b == 0 else (b - self.best_value) / abs(b)

    def load_instance(self, check_hash: bool = True) -> Instance:
        """The instance; with ``check_hash``, refused when its content is not the indexed one.

        Raises
        ------
        ValueError
            For an invalid instance file, or one whose content or name changed.
        """
        inst = load(self.instance)
        if check_hash:
            h = content_hash(inst)
            if h != self.instance_sha256:
                raise ValueError(
                    f"{self.where}: instance_sha256: {self.instance} has content hash {h}, "
                    f"the index states {self.instance_sha256}"
                )
        if inst.name != self.name:
            raise ValueError(
                f"{self.where}: name: the index names {self.name!r}, {self.instance} holds "
                f"instance {inst.name!r}"
            )
        return inst


@dataclass(frozen=True)
class Library:
    """A read library: its folder, version and entries (in index order)."""

    root: Path
    version: str
    entries: tuple[LibraryEntry, ...]

    @property
    def index(self) -> Path:
        """The index file."""
        return self.root / "index.json"

    def get(self, name: str) -> LibraryEntry:
        """The entry named ``name``.

        Raises
        ------
        ValueError
            For a name the library does not hold.
        """
        for e in self.entries:
            if e.name == name:
                return e
        raise ValueError(
            f"name: the library {self.version} has no instance {name!r} "
            f"({len(self.entries)} entries; `gpusched library list` names them)"
        )


def _string(x: Any, where: str) -> str:
    if not isinstance(x, str) or not x:
        raise ValueError(f"{where}: must be a non-empty string, got {x!r}")
    return x


def _number(x: Any, where: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(float(x)):
        raise ValueError(f"{where}: must be a finite number, got {x!r}")
    return float(x)


def _date(x: Any, where: str) -> str:
    if not isinstance(x, str) or not _DATE.match(x):
        raise ValueError(f"{where}: must be a date YYYY-MM-DD, got {x!r}")
    return x


def _file(root: Path, x: Any, where: str) -> Path:
    rel = _string(x, where)
    p = Path(rel)
    if p.is_absolute() or ".." in p.parts:
        raise ValueError(f"{where}: must be a path inside the library folder, got {rel!r}")
    path = root / p
    if not path.is_file():
        raise ValueError(f"{where}: file not found: {path}")
    return path


def _bound(root: Path, data: Any, where: str) -> BoundProof:
    check_keys(data, _BOUND_KEYS, ("certificate", "solver"), where)
    value = _number(data["value"], f"{where}.value")
    date = _date(data["date"], f"{where}.date")
    has_cert, has_solver = "certificate" in data, "solver" in data
    if has_cert == has_solver:
        raise ValueError(f"{where}: must hold exactly one of certificate and solver (the bound's proof)")
    if has_cert:
        return BoundProof(value, date, certificate=_file(root, data["certificate"], f"{where}.certificate"))
    s = data["solver"]
    sw = f"{where}.solver"
    check_keys(s, _SOLVER_KEYS, where=sw)
    _string(s["name"], f"{sw}.name")
    _string(s["version"], f"{sw}.version")
    limit = _number(s["time_limit"], f"{sw}.time_limit")
    if limit < 0:
        raise ValueError(f"{sw}.time_limit: must be >= 0, got {limit!r}")
    if s["status"] not in _SOLVER_STATUSES:
        raise ValueError(f"{sw}.status: must be one of {list(_SOLVER_STATUSES)}, got {s['status']!r}")
    if s["bound_method"] is not None:
        _string(s["bound_method"], f"{sw}.bound_method")
    return BoundProof(value, date, solver=dict(s))


def _entry(root: Path, data: Any, where: str) -> LibraryEntry:
    check_keys(data, _ENTRY_KEYS, where=where)
    name = _string(data["name"], f"{where}.name")
    sha = data["instance_sha256"]
    if not isinstance(sha, str) or not _SHA256.match(sha):
        raise ValueError(f"{where}.instance_sha256: must be 64 lowercase hex digits, got {sha!r}")
    best = data["best_known"]
    bw = f"{where}.best_known"
    check_keys(best, _BEST_KEYS, where=bw)
    return LibraryEntry(
        name=name,
        family=_string(data["family"], f"{where}.family"),
        source=_string(data["source"], f"{where}.source"),
        instance=_file(root, data["instance"], f"{where}.instance"),
        instance_sha256=sha,
        best_value=_number(best["value"], f"{bw}.value"),
        best_schedule=_file(root, best["schedule"], f"{bw}.schedule"),
        best_method=_string(best["method"], f"{bw}.method"),
        best_date=_date(best["date"], f"{bw}.date"),
        bound=_bound(root, data["bound"], f"{where}.bound"),
        where=f"{root / 'index.json'}: entries[{name}]",
    )


def load_library(path: str | os.PathLike[str] | None = None) -> Library:
    """Read a library's index (the folder or its ``index.json``; default the shipped
    library) and check that every file it names exists.

    Raises
    ------
    ValueError
        ``<index file>: <field>: ...`` for malformed JSON, an unknown format, a
        missing, unknown or mistyped field, two entries of one name, a missing file.
    """
    p = Path(path) if path is not None else default_library_dir()
    root = p.parent if p.name == "index.json" else p
    index = root / "index.json"
    if not index.is_file():
        raise ValueError(f"{index}: not found (a library folder holds index.json)")
    return load_json(index, lambda data: _library(root, data))


def _library(root: Path, data: Any) -> Library:
    check_format(data, LIBRARY_FORMAT)
    check_keys(data, _TOP_KEYS)
    version = _string(data["version"], "version")
    raw = data["entries"]
    if not isinstance(raw, list):
        raise ValueError(f"entries: must be a list, got {type(raw).__name__}")
    entries = [_entry(root, e, f"entries[{i}]") for i, e in enumerate(raw)]
    seen: set[str] = set()
    for i, e in enumerate(entries):
        if e.name in seen:
            raise ValueError(f"entries[{i}].name: {e.name!r} is named twice")
        seen.add(e.name)
    return Library(root, version, tuple(entries))


def _rel_close(a: float, b: float) -> bool:
    return abs(a - b) <= BOUND_TOLERANCE * max(1.0, abs(a), abs(b))


def check_entry(entry: LibraryEntry, inst: Instance | None = None) -> tuple[float, float | None]:
    """Check one entry: the instance is the indexed one, the schedule is feasible and
    has the stated value, the bound is not below it and a certificate holds.

    Returns ``(value, recomputed)``: the checked value and ``L(multipliers)``
    (``None`` for a solver's proof).

    Raises
    ------
    ValueError
        Naming the file and the field at fault.
    """
    if inst is None:
        inst = entry.load_instance()
    sched = load_schedule(entry.best_schedule)
    if sched.instance != inst.name:
        raise ValueError(
            f"{entry.best_schedule}: instance: the schedule is for {sched.instance!r}, "
            f"not for {inst.name!r}"
        )
    try:
        value = evaluate(inst, sched).value
    except ValueError as e:
        raise ValueError(f"{entry.best_schedule}: infeasible: {e}") from None
    if not _rel_close(value, entry.best_value):
        raise ValueError(
            f"{entry.where}: best_known.value: stated {entry.best_value!r}, the checker gives "
            f"{value!r} for {entry.best_schedule.name}"
        )
    b = entry.bound
    if b.value < value - BOUND_TOLERANCE * max(1.0, abs(value)):
        raise ValueError(
            f"{entry.where}: bound.value: the stated bound {b.value!r} is below the value "
            f"{value!r} of the best known schedule, so it cannot be an upper bound"
        )
    if b.certificate is None:
        return value, None
    cert = load_bound(b.certificate, inst)
    if cert.value != b.value:
        raise ValueError(
            f"{entry.where}: bound.value: stated {b.value!r}, the certificate "
            f"{b.certificate.name} states {cert.value!r}"
        )
    ok, recomputed = check_bound(inst, cert)
    if not ok:
        raise ValueError(
            f"{b.certificate}: value: the bound does not hold: stated {cert.value!r}, "
            f"recomputed L(multipliers) = {recomputed!r}"
        )
    return value, recomputed


@dataclass(frozen=True)
class EntryCheck:
    """What :func:`verify` found for one entry: the checked value (``None`` when it could
    not be checked), the stated bound, the certificate's ``L(multipliers)``, the
    problem (``""`` when the entry holds) and the seconds taken.
    """

    name: str
    value: float | None
    bound: float
    recomputed: float | None
    problem: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """Whether the entry holds."""
        return not self.problem


@dataclass(frozen=True)
class VerifyReport:
    """Every entry's check, in index order."""

    version: str
    checks: tuple[EntryCheck, ...] = field(default=())

    @property
    def ok(self) -> bool:
        """Whether every entry holds."""
        return all(c.ok for c in self.checks)

    @property
    def problems(self) -> list[str]:
        """The messages of the entries that do not hold."""
        return [c.problem for c in self.checks if not c.ok]


def verify(path: str | os.PathLike[str] | Library | None = None) -> VerifyReport:
    """Check every entry of a library (:func:`check_entry`), collecting what does not hold.

    Raises
    ------
    ValueError
        Only when the library itself cannot be read.
    """
    lib = path if isinstance(path, Library) else load_library(path)
    checks = []
    for e in lib.entries:
        t0 = time.perf_counter()
        try:
            value, recomputed = check_entry(e)
            checks.append(EntryCheck(e.name, value, e.bound.value, recomputed,
                                     seconds=time.perf_counter() - t0))
        except ValueError as err:
            checks.append(EntryCheck(e.name, None, e.bound.value, None, " ".join(str(err).split()),
                                     time.perf_counter() - t0))
    return VerifyReport(lib.version, tuple(checks))
