"""gpusched's problem vocabulary: instances, schedules, families and the checker.

The path of the data reads one way: a family or a file gives an
:class:`Instance`; a method returns a :class:`Result` holding a
:class:`Schedule`; :func:`evaluate` checks it and computes every figure.
"""

from .bound_io import BoundCertificate, check_bound, load_bound, save_bound
from .checker import InfeasibleScheduleError, Metrics, evaluate, gain, gap
from .families import FAMILIES, generate
from .io import (
    dumps,
    instance_from_dict,
    instance_to_dict,
    load,
    load_schedule,
    save,
    save_schedule,
    schedule_from_dict,
    schema,
)
from .lagrangian import lagrangian_value
from .model import JOB_KINDS, Instance, Job, Service
from .result import Result, Status
from .schedule import Schedule

__all__ = [
    "FAMILIES",
    "JOB_KINDS",
    "BoundCertificate",
    "InfeasibleScheduleError",
    "Instance",
    "Job",
    "Metrics",
    "Result",
    "Schedule",
    "Service",
    "Status",
    "check_bound",
    "dumps",
    "evaluate",
    "gain",
    "gap",
    "generate",
    "instance_from_dict",
    "instance_to_dict",
    "lagrangian_value",
    "load",
    "load_bound",
    "load_schedule",
    "save",
    "save_bound",
    "save_schedule",
    "schedule_from_dict",
    "schema",
]
