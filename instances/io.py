"""Reading and writing instance and schedule files (JSON).

Formats: ``gpusched-instance/1`` and ``gpusched-schedule/1``; their JSON Schemas
ship in ``instances/schema/``. Every problem with a file raises
:class:`ValueError` whose message starts with the file and names the field.
"""

from __future__ import annotations

import json
import os
import tempfile
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from .model import MAX_HORIZON, MAX_JOBS, Instance, Job, Service
from .schedule import Schedule

__all__ = [
    "INSTANCE_FORMAT",
    "SCHEDULE_FORMAT",
    "atomic_write_text",
    "dumps",
    "instance_from_dict",
    "instance_to_dict",
    "load",
    "load_schedule",
    "read_json",
    "save",
    "save_schedule",
    "schedule_from_dict",
    "schema",
]

INSTANCE_FORMAT = "gpusched-instance/1"
SCHEDULE_FORMAT = "gpusched-schedule/1"


@cache
def schema(kind: str = "instance") -> dict[str, Any]:
    """The shipped JSON Schema (``"instance"`` or ``"schedule"``)."""
    text = resources.files("instances").joinpath(f"schema/{kind}.schema.json").read_text()
    return json.loads(text)


def _reject_constant(token: str) -> float:
    raise ValueError(f"{token} is not a valid JSON number (NaN and infinity are not allowed)")


def _path(error: jsonschema.ValidationError) -> str:
    out = ""
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _schema_check(data: Any, kind: str) -> None:
    validator = jsonschema.Draft202012Validator(schema(kind))
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is not None:
        raise ValueError(f"{_path(error)}: {error.message}")


def _format_check(data: Any, expected: str) -> None:
    if not isinstance(data, dict):
        raise ValueError(f"(top level): must be a JSON object, got {type(data).__name__}")
    if "format" not in data:
        raise ValueError(f"format: missing; expected {expected!r}")
    if data["format"] != expected:
        raise ValueError(f"format: expected {expected!r}, got {data['format']!r}")


def instance_from_dict(data: Any) -> Instance:
    """Build and validate an :class:`Instance` from a ``gpusched-instance/1`` object.

    Raises
    ------
    ValueError
        Naming the field (``jobs[3].gpus``, ``services[0].demand``, ...).
    """
    _format_check(data, INSTANCE_FORMAT)
    # Size limits first: refuse a huge file before validating every item of it.
    horizon = data.get("horizon")
    if isinstance(horizon, int) and not isinstance(horizon, bool) and horizon > MAX_HORIZON:
        raise ValueError(f"horizon: must be <= {MAX_HORIZON}, got {horizon}")
    jobs = data.get("jobs")
    if isinstance(jobs, list) and len(jobs) > MAX_JOBS:
        raise ValueError(f"jobs: at most {MAX_JOBS} jobs are accepted, got {len(jobs)}")
    _schema_check(data, "instance")
    services = []
    for i, s in enumerate(data.get("services", [])):
        try:
            services.append(Service(s["name"], s.get("priority", 1.0), tuple(s["demand"])))
        except ValueError as e:
            raise ValueError(f"services[{i}]: {e}") from None
    job_list = []
    for i, j in enumerate(data["jobs"]):
        try:
            job_list.append(
                Job(
                    name=j["name"],
                    gpus=j["gpus"],
                    duration=j["duration"],
                    priority=j.get("priority", 1.0),
                    kind=j.get("kind", "other"),
                    release=j.get("release", 0),
                    deadline=j.get("deadline"),
                )
            )
        except ValueError as e:
            raise ValueError(f"jobs[{i}]: {e}") from None
    return Instance(
        name=data["name"],
        num_gpus=data["num_gpus"],
        horizon=data["horizon"],
        services=tuple(services),
        jobs=tuple(job_list),
        slot_hours=data.get("slot_hours", 1.0),
        meta=dict(data.get("meta", {})),
    )


def instance_to_dict(inst: Instance) -> dict[str, Any]:
    """The ``gpusched-instance/1`` object of an instance (field order fixed)."""
    out: dict[str, Any] = {
        "format": INSTANCE_FORMAT,
        "name": inst.name,
        "num_gpus": inst.num_gpus,
        "horizon": inst.horizon,
        "slot_hours": inst.slot_hours,
        "services": [
            {"name": s.name, "priority": s.priority, "demand": list(s.demand)}
            for s in inst.services
        ],
        "jobs": [
            {
                "name": j.name,
                "kind": j.kind,
                "gpus": j.gpus,
                "duration": j.duration,
                "release": j.release,
                "deadline": j.deadline,
                "priority": j.priority,
            }
            for j in inst.jobs
        ],
    }
    if inst.meta:
        out["meta"] = dict(inst.meta)
    return out


def dumps(inst: Instance) -> str:
    """Serialize an instance deterministically: one job or service per line."""
    d = instance_to_dict(inst)
    head = {k: v for k, v in d.items() if k not in ("services", "jobs", "meta")}
    lines = ["{"]
    for k, v in head.items():
        lines.append(f"  {json.dumps(k)}: {json.dumps(v)},")
    if "meta" in d:
        lines.append(f'  "meta": {json.dumps(d["meta"], sort_keys=True)},')
    for key in ("services", "jobs"):
        items = d[key]
        if not items:
            lines.append(f'  "{key}": []' + ("," if key == "services" else ""))
            continue
        lines.append(f'  "{key}": [')
        lines.extend(
            f"    {json.dumps(item)}{',' if i < len(items) - 1 else ''}" for i, item in enumerate(items)
        )
        lines.append("  ]" + ("," if key == "services" else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


def read_json(path: str | os.PathLike[str]) -> Any:
    """Read a JSON file, refusing NaN and infinity.

    Raises
    ------
    ValueError
        ``<file>: ...`` for unreadable text or malformed JSON.
    OSError
        If the file cannot be opened.
    """
    raw = Path(path).read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a UTF-8 text file") from None
    if not text.strip():
        raise ValueError(f"{path}: the file is empty")
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: malformed JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
    except RecursionError:
        raise ValueError(f"{path}: JSON nested too deeply") from None


def load(path: str | os.PathLike[str]) -> Instance:
    """Load and validate an instance file.

    Raises
    ------
    ValueError
        ``<file>: <field>: <what is wrong>``.
    """
    data = read_json(path)
    try:
        return instance_from_dict(data)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write a file atomically: a temporary file in the same folder, then rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def save(inst: Instance, path: str | os.PathLike[str]) -> None:
    """Write an instance file (deterministic bytes, atomic)."""
    atomic_write_text(path, dumps(inst))


def schedule_from_dict(data: Any) -> Schedule:
    """Build a :class:`Schedule` from a ``gpusched-schedule/1`` object.

    Raises
    ------
    ValueError
        Naming the field (``starts.train-7``, ``format``, ...).
    """
    _format_check(data, SCHEDULE_FORMAT)
    _schema_check(data, "schedule")
    return Schedule(data["instance"], data["starts"])


def load_schedule(path: str | os.PathLike[str]) -> Schedule:
    """Load a schedule file.

    Raises
    ------
    ValueError
        ``<file>: <field>: <what is wrong>``.
    """
    data = read_json(path)
    try:
        return schedule_from_dict(data)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


def save_schedule(schedule: Schedule, path: str | os.PathLike[str]) -> None:
    """Write a schedule file (atomic)."""
    atomic_write_text(path, json.dumps(schedule.to_dict(), indent=1) + "\n")
