"""The packing experiment (the openb fragmentation benchmark): pods arrive and never leave.

The vocabulary (:class:`Packing`, :class:`Pod`, :class:`PackNode`,
:class:`Placement`), its files (``gpusched-packing/1``,
``gpusched-placement/1``), the independent checker
(:func:`evaluate_placement`), the openb instance of FGD's procedure
(:func:`openb_packing`), FGD's fragmentation measure (:func:`node_frag`,
:func:`target_workload`), the curves after every pod (:func:`packing_curve`)
and the independent check of the bound's dual certificate
(:func:`check_packing_bound`).
"""

from .certificate import PackingCertificate, check_packing_bound, node_types, pod_shapes
from .checker import (
    InvalidPlacementError,
    PackingMetrics,
    Violation,
    evaluate_placement,
    placement_violations,
)
from .frag import COVERAGE, TargetWorkload, node_frag, nodes_frag, target_workload
from .io import (
    PACKING_FORMAT,
    PLACEMENT_FORMAT,
    dumps_packing,
    load_packing,
    load_placement,
    packing_from_dict,
    packing_to_dict,
    placement_from_dict,
    save_packing,
    save_placement,
)
from .metrics import ARRIVED_BINS, PackingCurve, bin_curve, packing_curve, placement_arrays
from .model import (
    GPU_MILLI,
    MAX_NODE_GPUS,
    MAX_PODS,
    Packing,
    PackingArrays,
    PackNode,
    Placement,
    Pod,
)
from .openb import (
    INFLATION,
    OPENB_VARIANTS,
    POD_LISTS,
    VARIANT_GROUPS,
    openb_packing,
    openb_pod_list,
    pod_list_name,
    read_openb_nodes,
    read_openb_pods,
)

__all__ = [
    "ARRIVED_BINS",
    "COVERAGE",
    "GPU_MILLI",
    "INFLATION",
    "MAX_NODE_GPUS",
    "MAX_PODS",
    "OPENB_VARIANTS",
    "PACKING_FORMAT",
    "PLACEMENT_FORMAT",
    "POD_LISTS",
    "VARIANT_GROUPS",
    "InvalidPlacementError",
    "PackNode",
    "Packing",
    "PackingArrays",
    "PackingCertificate",
    "PackingCurve",
    "PackingMetrics",
    "Placement",
    "Pod",
    "TargetWorkload",
    "Violation",
    "bin_curve",
    "check_packing_bound",
    "dumps_packing",
    "evaluate_placement",
    "load_packing",
    "load_placement",
    "node_frag",
    "node_types",
    "nodes_frag",
    "openb_packing",
    "openb_pod_list",
    "packing_curve",
    "packing_from_dict",
    "packing_to_dict",
    "placement_arrays",
    "placement_from_dict",
    "placement_violations",
    "pod_list_name",
    "pod_shapes",
    "read_openb_nodes",
    "read_openb_pods",
    "save_packing",
    "save_placement",
    "target_workload",
]
