"""Reading and writing instance and schedule files (JSON).

Formats ``gpusched-instance/1`` and ``gpusched-schedule/1``, their JSON Schemas
in ``instances/schema/``. Model versions 2 and 3 add optional fields, written
only where they differ from their defaults, so an older file is written byte
for byte as before. Every problem with a file raises a :class:`ValueError`
starting with the file and naming the field.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import secrets
import sys
from collections.abc import Callable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .model import MAX_HORIZON, MAX_JOBS, Instance, Job, Node, Service
from .resources import JOB_FIELDS, NODE_FIELDS, flat_fields, job_fields_to_dict, node_fields_to_dict
from .schedule import Schedule

if TYPE_CHECKING:
    import jsonschema  # imported where a file is validated: it takes a while to import

T = TypeVar("T")

__all__ = [
    "INSTANCE_FORMAT",
    "MAX_FILE_BYTES",
    "SCHEDULE_FORMAT",
    "atomic_write_text",
    "check_format",
    "check_keys",
    "dumps",
    "instance_from_dict",
    "instance_to_dict",
    "json_error_text",
    "load",
    "load_json",
    "load_schedule",
    "read_json",
    "save",
    "save_schedule",
    "schedule_from_dict",
    "schema",
    "short_repr",
]

INSTANCE_FORMAT = "gpusched-instance/1"
SCHEDULE_FORMAT = "gpusched-schedule/1"

MAX_FILE_BYTES = 256 * 2**20
"""Largest file :func:`read_json` reads (256 MiB, room for ``MAX_JOBS`` jobs).

A larger file is refused from its size alone, before a byte of it is parsed:
parsing ten million jobs would take gigabytes of memory.
"""


@cache
def schema(kind: str = "instance") -> dict[str, Any]:
    """The shipped JSON Schema (``"instance"`` or ``"schedule"``)."""
    text = resources.files("instances").joinpath(f"schema/{kind}.schema.json").read_text()
    return json.loads(text)


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _format_path(parts: Any) -> str:
    """``jobs[3].gpus``, ``starts["train-7"]``: the field at a JSON path."""
    out = ""
    keyed = False  # under starts or placement, every key is a job or node name
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif keyed or not _IDENTIFIER.fullmatch(part):
            out += f"[{json.dumps(part)}]"
        else:
            out += f".{part}" if out else part
        keyed = keyed or (out in ("starts", "placement"))
    return out or "(top level)"


def _path(error: jsonschema.ValidationError) -> str:
    return _format_path(error.absolute_path)


class _Refused:
    """Left by the parser where a value is not allowed; :func:`_find_refused` reports it."""

    __slots__ = ("why",)

    def __init__(self, why: str) -> None:
        self.why = why


class _DuplicateKeys(dict):  # type: ignore[type-arg]
    """A JSON object that named a key twice (JSON parsers silently keep the last)."""

    __slots__ = ("why",)
    why: str


def _find_refused(data: Any) -> tuple[str, str] | None:
    """Path and reason of the first refused value (depth first, document order)."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(data, ())]
    while stack:
        node, where = stack.pop()
        if isinstance(node, (_Refused, _DuplicateKeys)):
            return _format_path(where), node.why
        if isinstance(node, dict):
            stack.extend((v, (*where, k)) for k, v in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((v, (*where, i)) for i, v in reversed(list(enumerate(node))))
    return None


def _parse(text: str) -> Any:
    """``json.loads`` that refuses NaN, infinity, float overflow and duplicate keys.

    Raises
    ------
    ValueError
        ``<field>: <why>`` naming where the refused value sits.
    json.JSONDecodeError
        For malformed JSON.
    """
    refused = False

    def constant(token: str) -> _Refused:
        nonlocal refused
        refused = True
        return _Refused(f"{token} is not a valid JSON number (NaN and infinity are not allowed)")

    def number(token: str) -> float | _Refused:
        nonlocal refused
        x = float(token)
        if math.isfinite(x):
            return x
        refused = True
        return _Refused(f"{token} is not a finite number (it overflows a 64-bit float)")

    def obj(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal refused
        d = dict(pairs)
        if len(d) == len(pairs):
            return d
        refused = True
        seen: set[str] = set()
        key = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        dup = _DuplicateKeys(d)
        dup.why = f"duplicate key {json.dumps(key)} in one object"
        return dup

    data = json.loads(text, parse_constant=constant, parse_float=number, object_pairs_hook=obj)
    if refused:
        found = _find_refused(data)
        if found is not None:
            raise ValueError(f"{found[0]}: {found[1]}")
    return data


def _schema_check(data: Any, kind: str) -> None:
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema(kind))
    errors = list(validator.iter_errors(data))
    error = jsonschema.exceptions.best_match(errors)
    if error is not None:
        message = error.message
        if len(message) > 200:  # the offending value may be a whole list of jobs
            message = f"{message[:120]} ... {message[-60:]}"
        if error.validator in ("required", "additionalProperties"):
            message = _key_problems(errors, error)
        raise ValueError(f"{_path(error)}: {message}")


def _key_problems(errors: list[jsonschema.ValidationError], error: jsonschema.ValidationError) -> str:
    """Every missing and unknown key of the object ``error`` is about, in one message:
    a misspelt key (``gpu`` for ``gpus``) is both, and says so
    (``'gpus' is a required property; unknown key 'gpu' (did you mean 'gpus'?)``).
    """
    import difflib

    here = [e for e in errors if e.absolute_path == error.absolute_path
            and e.validator in ("required", "additionalProperties")]
    obj, spec = error.instance, error.schema
    if not isinstance(obj, dict) or not isinstance(spec, dict):  # pragma: no cover - by the schema
        return error.message
    known = list(spec.get("properties", {}))
    missing = [k for k in spec.get("required", ()) if k not in obj]
    unknown = ([k for k in obj if k not in known]
               if any(e.validator == "additionalProperties" for e in here) else [])
    parts = [f"{k!r} is a required property" for k in missing]
    for k in unknown:
        near = difflib.get_close_matches(str(k), missing or known, n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else f" (known: {', '.join(known)})"
        parts.append(f"unknown key {short_repr(k, 40)}{hint}")
    return "; ".join(parts) or error.message


def short_repr(x: Any, most: int = 60) -> str:
    """``repr(x)``, cut to ``most`` characters (a refused value may be a whole list)."""
    text = repr(x)
    return text if len(text) <= most else text[: most - 3] + "..."


def check_format(data: Any, expected: str) -> None:
    """Refuse anything but a JSON object whose ``format`` is ``expected``."""
    if not isinstance(data, dict):
        raise ValueError(f"(top level): must be a JSON object, got {type(data).__name__}")
    if "format" not in data:
        raise ValueError(f"format: missing; expected {expected!r}")
    if data["format"] != expected:
        raise ValueError(f"format: expected {expected!r}, got {short_repr(data['format'])}")


def check_keys(data: Any, keys: tuple[str, ...], optional: tuple[str, ...] = (),
               where: str = "") -> None:
    """Refuse a non-object, a missing key of ``keys`` or a key outside ``keys`` and ``optional``.

    Raises
    ------
    ValueError
        ``<where>.<key>: missing`` (with a misspelt key beside it named:
        ``; unknown field 'gpu' beside it (misspelt?)``) or ``<where>.<key>: unknown
        field (expected ...)`` (``; did you mean ...?`` when one is close).
    """
    import difflib

    if not isinstance(data, dict):
        raise ValueError(f"{where or '(top level)'}: must be a JSON object, got {type(data).__name__}")

    at = f"{where}." if where else ""
    extra = sorted(set(data) - set(keys) - set(optional))
    for k in keys:
        if k not in data:
            # a misspelt key is both missing and unknown: say the unknown one beside it
            near = difflib.get_close_matches(k, [str(x) for x in extra], n=1)
            beside = f"; unknown field {near[0]!r} beside it (misspelt?)" if near else ""
            raise ValueError(f"{at}{k}: missing{beside}")
    if extra:
        near = difflib.get_close_matches(str(extra[0]), keys + optional, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise ValueError(f"{at}{extra[0]}: unknown field (expected {', '.join(keys + optional)}"
                         f"){hint}")


def _items(data: Any, key: str, noun: str, build: Callable[[Any], T]) -> tuple[T, ...]:
    """``build`` of each item of ``data[key]``; the model's ``job 'x'.gpus: ...`` becomes
    ``jobs[3].gpus: ... (job 'x')``."""
    out = []
    for i, item in enumerate(data.get(key) or ()):
        try:
            out.append(build(item))
        except ValueError as e:
            msg, prefix = str(e), f"{noun} {item['name']!r}."
            if msg.startswith(prefix):
                raise ValueError(f"{key}[{i}].{msg[len(prefix):]} ({noun} {item['name']!r})") from None
            raise ValueError(f"{key}[{i}]: {msg}") from None
    return tuple(out)


def instance_from_dict(data: Any) -> Instance:
    """Build and validate an :class:`Instance` from a ``gpusched-instance/1`` object.

    Raises
    ------
    ValueError
        Naming the field (``jobs[3].gpus``, ``services[0].demand``, ...).
    """
    check_format(data, INSTANCE_FORMAT)
    # Size limits first: refuse a huge file before validating every item of it.
    horizon = data.get("horizon")
    if isinstance(horizon, int) and not isinstance(horizon, bool) and horizon > MAX_HORIZON:
        raise ValueError(f"horizon: must be <= {MAX_HORIZON}, got {horizon}")
    jobs = data.get("jobs")
    if isinstance(jobs, list) and len(jobs) > MAX_JOBS:
        raise ValueError(f"jobs: at most {MAX_JOBS} jobs are accepted, got {len(jobs)}")
    _schema_check(data, "instance")
    services = _items(data, "services", "service",
                      lambda s: Service(s["name"], s.get("priority", 1.0), tuple(s["demand"])))
    nodes = _items(data, "nodes", "node",
                   lambda n: Node(n["name"], n["gpus"], *(n.get(k) for k in NODE_FIELDS)))
    if data.get("nodes") is None:
        flat_fields(data["jobs"])
    job_list = _items(data, "jobs", "job", lambda j: Job(
        name=j["name"], gpus=j["gpus"], duration=j["duration"], priority=j.get("priority", 1.0),
        kind=j.get("kind", "other"), release=j.get("release", 0), deadline=j.get("deadline"),
        **{k: j[k] for k in JOB_FIELDS if k in j},
    ))
    return Instance(
        name=data["name"],
        num_gpus=data["num_gpus"],
        horizon=data["horizon"],
        services=services,
        jobs=job_list,
        slot_hours=data.get("slot_hours", 1.0),
        meta=dict(data.get("meta", {})),
        nodes=None if data.get("nodes") is None else nodes,
        objective=data.get("objective", "value"),
    )


def instance_to_dict(inst: Instance) -> dict[str, Any]:
    """The ``gpusched-instance/1`` object of an instance (field order fixed; ``nodes`` if any)."""
    out: dict[str, Any] = {
        "format": INSTANCE_FORMAT,
        "name": inst.name,
        "num_gpus": inst.num_gpus,
        "horizon": inst.horizon,
        "slot_hours": inst.slot_hours,
        **({"objective": inst.objective} if inst.objective != "value" else {}),
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
                **job_fields_to_dict(j),
            }
            for j in inst.jobs
        ],
    }
    if inst.meta:
        out["meta"] = dict(inst.meta)
    if inst.nodes is not None:
        out["nodes"] = [{"name": n.name, "gpus": n.gpus, **node_fields_to_dict(n)} for n in inst.nodes]
    return out


def dumps(inst: Instance) -> str:
    """Serialize an instance deterministically: one node, job or service per line."""
    d = instance_to_dict(inst)
    head = {k: v for k, v in d.items() if k not in ("services", "jobs", "meta", "nodes")}
    lines = ["{"]
    for k, v in head.items():
        lines.append(f"  {json.dumps(k)}: {json.dumps(v)},")
    if "meta" in d:
        lines.append(f'  "meta": {json.dumps(d["meta"], sort_keys=True)},')
    for key in ("nodes", "services", "jobs"):
        items, comma = d.get(key), "," if key != "jobs" else ""
        if items is None:
            continue
        if not items:
            lines.append(f'  "{key}": []{comma}')
            continue
        lines.append(f'  "{key}": [')
        lines.extend(f"    {json.dumps(x)}{',' if i < len(items) - 1 else ''}" for i, x in enumerate(items))
        lines.append(f"  ]{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def json_error_text(e: json.JSONDecodeError) -> str:
    """A complete sentence for malformed JSON, naming the line and the column.

    :mod:`json`'s own messages end in ``at`` when the position completes them
    (``Unterminated string starting at``); the position is written there, so that
    the message never stops mid-sentence. A file that ends too soon says so.
    """
    where = f"line {e.lineno} column {e.colno}"
    text = f"{e.msg} {where}" if e.msg.endswith(" at") else f"{e.msg} at {where}"
    end = len(e.doc.rstrip())
    if e.msg.startswith("Unterminated string"):
        text += " (the file ends before it closes: was the file cut short?)"
    elif e.pos >= end and e.msg.startswith("Expecting"):
        text += " (the end of the file: was the file cut short?)"
    return f"malformed JSON: {text}"


def read_json(path: str | os.PathLike[str]) -> Any:
    """Read a JSON file, refusing NaN, infinity and keys named twice.

    Raises
    ------
    ValueError
        ``<file>: ...`` for a file over :data:`MAX_FILE_BYTES`, text that is not
        UTF-8, malformed JSON, or a refused value (naming its field).
    OSError
        If the file cannot be opened.
    """
    size = os.stat(path).st_size
    if size > MAX_FILE_BYTES:
        raise ValueError(
            f"{path}: file size {size} bytes is over the limit of {MAX_FILE_BYTES} bytes"
        )
    raw = Path(path).read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a UTF-8 text file") from None
    if not text.strip():
        raise ValueError(f"{path}: the file is empty")
    try:
        return _parse(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: {json_error_text(e)}") from None
    except RecursionError:
        raise ValueError(f"{path}: JSON nested too deeply") from None
    except ValueError as e:
        if "integer string conversion" in str(e):
            raise ValueError(
                f"{path}: an integer literal has more than {sys.get_int_max_str_digits()} digits"
            ) from None
        raise ValueError(f"{path}: {e}") from None


def load(path: str | os.PathLike[str]) -> Instance:
    """Load and validate an instance file.

    Raises
    ------
    ValueError
        ``<file>: <field>: <what is wrong>``.
    """
    return load_json(path, instance_from_dict)


def load_json(path: str | os.PathLike[str], from_dict: Callable[[Any], T]) -> T:
    """Read a JSON file (:func:`read_json`) and build from it, any error prefixed with the path."""
    data = read_json(path)
    try:
        return from_dict(data)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write a file atomically (a temporary file in the same folder, then rename), with the
    permissions of an ordinary new file, not a temporary file's ``0o600``.
    """
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a directory, not a file", str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = str(path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(6)}.tmp"))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
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
    check_format(data, SCHEDULE_FORMAT)
    _schema_check(data, "schedule")
    return Schedule(data["instance"], data["starts"], data.get("placement", {}))


def load_schedule(path: str | os.PathLike[str]) -> Schedule:
    """Load a schedule file.

    Raises
    ------
    ValueError
        ``<file>: <field>: <what is wrong>``.
    """
    return load_json(path, schedule_from_dict)


def save_schedule(schedule: Schedule, path: str | os.PathLike[str]) -> None:
    """Write a schedule file (atomic)."""
    atomic_write_text(path, json.dumps(schedule.to_dict(), indent=1) + "\n")
