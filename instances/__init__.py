"""gpusched's problem vocabulary: instances, schedules, families and the checker.

The path of the data reads one way: a family or a file gives an
:class:`Instance`; a method returns a :class:`Result` holding a
:class:`Schedule`; :func:`evaluate` checks it and computes every figure.
"""

from pathlib import Path as _Path

from .bound_io import BoundCertificate, check_bound, load_bound, save_bound
from .checker import InfeasibleScheduleError, Metrics, evaluate, stranded_gpus
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
from .kernel_cache import guard as _guard
from .lagrangian import lagrangian_value
from .model import JOB_KINDS, Instance, Job, Node, Service
from .nodes import openb_node_mix, price_of_topology, with_nodes
from .objective import gain, gap
from .result import Result, Status
from .rounding import format_value, rounded, rounded_all, tolerance
from .scenario import (
    Scenario,
    actual_instance,
    load_scenario,
    save_scenario,
    scenario,
    scenario_from_dict,
    trace_scenario,
)
from .schedule import Schedule
from .traces import from_trace

_guard(_Path(__file__).parent)  # numba: caches of changed sources dropped before any kernel runs

__all__ = [
    "FAMILIES",
    "JOB_KINDS",
    "BoundCertificate",
    "InfeasibleScheduleError",
    "Instance",
    "Job",
    "Metrics",
    "Node",
    "Result",
    "Scenario",
    "Schedule",
    "Service",
    "Status",
    "actual_instance",
    "check_bound",
    "dumps",
    "evaluate",
    "format_value",
    "from_trace",
    "gain",
    "gap",
    "generate",
    "instance_from_dict",
    "instance_to_dict",
    "lagrangian_value",
    "load",
    "load_bound",
    "load_scenario",
    "load_schedule",
    "openb_node_mix",
    "price_of_topology",
    "rounded",
    "rounded_all",
    "save",
    "save_bound",
    "save_scenario",
    "save_schedule",
    "scenario",
    "scenario_from_dict",
    "schedule_from_dict",
    "schema",
    "stranded_gpus",
    "tolerance",
    "trace_scenario",
    "with_nodes",
]
