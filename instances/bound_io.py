"""The bound certificate file ``gpusched-bound/1``: read, write, and check against an instance.

``{"format": "gpusched-bound/1", "instance": NAME, "method": "lagrangian",
"value": 4931.25, "multipliers": [...]}``: :func:`check_bound` recomputes
``L(multipliers)`` and accepts a stated ``value`` at least that (less a
relative :data:`BOUND_TOLERANCE`).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .checker import evaluate
from .io import atomic_write_text, check_format, check_keys, load_json, short_repr
from .lagrangian import check_multipliers, lagrangian_value
from .model import Instance
from .objective import report_bound, sense
from .schedule import Schedule

__all__ = [
    "BOUND_FORMAT",
    "BOUND_TOLERANCE",
    "BoundCertificate",
    "bound_from_dict",
    "bound_to_dict",
    "check_bound",
    "load_bound",
    "save_bound",
]

BOUND_FORMAT = "gpusched-bound/1"

BOUND_TOLERANCE = 1e-9
"""Relative tolerance of :func:`check_bound`: a stated value this close below the recomputed one holds."""

_KEYS = ("format", "instance", "method", "value", "multipliers")
_OPTIONAL = ("meta",)


@dataclass(frozen=True)
class BoundCertificate:
    """A stated upper bound and the multipliers that prove it (one per slot, finite and
    ``>= 0``); ``method`` says how they were found, ``meta`` holds notes outside the
    certificate.
    """

    instance: str
    method: str
    value: float
    multipliers: tuple[float, ...]
    meta: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.instance, str) or not self.instance:
            raise ValueError(f"instance: must be a non-empty string, got {self.instance!r}")
        if not isinstance(self.method, str) or not self.method:
            raise ValueError(f"method: must be a non-empty string, got {self.method!r}")
        value = self.value
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ValueError(f"value: must be a number, got {short_repr(value)}")
        if not math.isfinite(float(value)):
            raise ValueError(f"value: must be finite, got {value!r}")
        object.__setattr__(self, "value", float(value))
        mult = self.multipliers
        if isinstance(mult, (str, bytes, dict)) or not isinstance(mult, (Sequence, np.ndarray)):
            raise ValueError(f"multipliers: must be a list of numbers, got {short_repr(mult)}")
        out = []
        for t, x in enumerate(mult):
            if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
                raise ValueError(f"multipliers[{t}]: must be a number, got {short_repr(x)}")
            x = float(x)
            if not math.isfinite(x):
                raise ValueError(f"multipliers[{t}]: must be finite, got {x!r}")
            if x < 0:
                raise ValueError(f"multipliers[{t}]: must be >= 0, got {x!r}")
            out.append(x + 0.0)
        object.__setattr__(self, "multipliers", tuple(out))


def bound_from_dict(data: Any, inst: Instance | None = None) -> BoundCertificate:
    """Build a :class:`BoundCertificate` from a ``gpusched-bound/1`` object; with ``inst``,
    also check that it is for that instance (:func:`check_matches`).

    Raises
    ------
    ValueError
        Naming the field (``format``, ``instance``, ``value``, ``multipliers[3]``, ...).
    """
    check_format(data, BOUND_FORMAT)
    check_keys(data, _KEYS, _OPTIONAL)
    meta = data.get("meta")
    if meta is not None and not isinstance(meta, dict):
        raise ValueError(f"meta: must be an object, got {short_repr(meta)}")
    if not isinstance(data["multipliers"], list):
        raise ValueError(f"multipliers: must be a list of numbers, got {short_repr(data['multipliers'])}")
    cert = BoundCertificate(data["instance"], data["method"], data["value"],
                            tuple(data["multipliers"]), meta)
    if inst is not None:
        check_matches(inst, cert)
    return cert


def bound_to_dict(cert: BoundCertificate) -> dict[str, Any]:
    """The ``gpusched-bound/1`` object of a certificate (field order fixed)."""
    out: dict[str, Any] = {
        "format": BOUND_FORMAT, "instance": cert.instance, "method": cert.method,
        "value": cert.value, "multipliers": list(cert.multipliers),
    }
    if cert.meta:
        out["meta"] = dict(cert.meta)
    return out


def load_bound(path: str | os.PathLike[str], inst: Instance | None = None) -> BoundCertificate:
    """Read a certificate file; with ``inst``, also check that it is for that instance.

    Raises
    ------
    ValueError
        ``<file>: <field>: <what is wrong>``.
    """
    return load_json(path, lambda data: bound_from_dict(data, inst))


def save_bound(cert: BoundCertificate, path: str | os.PathLike[str]) -> None:
    """Write a certificate file (atomic; floats written exactly, as ``repr`` does)."""
    atomic_write_text(path, json.dumps(bound_to_dict(cert), separators=(",", ":")) + "\n")


def check_matches(inst: Instance, cert: BoundCertificate) -> np.ndarray:
    """The multipliers as an array, after checking the certificate is for ``inst``.

    Raises
    ------
    ValueError
        ``instance: ...`` for another instance, ``multipliers: ...`` for a length
        other than the horizon.
    """
    if cert.instance != inst.name:
        raise ValueError(
            f"instance: the certificate is for {cert.instance!r}, not for {inst.name!r}"
        )
    return check_multipliers(inst, list(cert.multipliers), where="multipliers")


def check_bound(
    inst: Instance, cert: BoundCertificate, schedule: Schedule | None = None
) -> tuple[bool, float]:
    """Recompute a certificate: ``(ok, recomputed)``. ``recomputed`` is ``L(multipliers)`` in
    the objective's units (:func:`instances.objective.report_bound`: an upper bound on
    ``V``, a lower bound on ``F``); ``ok`` when the stated value is on the safe side of it
    within :data:`BOUND_TOLERANCE`. With ``schedule``, a stated value on the wrong side of
    its value is refused: no valid bound can be.

    Raises
    ------
    ValueError
        A certificate for another instance, or a value past the schedule's.
    instances.InfeasibleScheduleError
        If ``schedule`` is infeasible.
    """
    lam = check_matches(inst, cert)
    sign = sense(inst.objective)
    if schedule is not None:
        v = evaluate(inst, schedule).value
        if sign * (cert.value - v) < -BOUND_TOLERANCE * abs(v):
            side, kind = ("above", "a lower") if sign < 0 else ("below", "an upper")
            raise ValueError(
                f"value: the stated bound {cert.value!r} is {side} the value {v!r} of a "
                f"feasible schedule, so it cannot be {kind} bound"
            )
    recomputed = report_bound(inst, lagrangian_value(inst, lam))
    ok = sign * (cert.value - recomputed) >= -BOUND_TOLERANCE * abs(recomputed)
    return ok, recomputed
