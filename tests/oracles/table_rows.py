"""A tiny hand-made results set for the table tests (figures worked out by hand)."""

from __future__ import annotations

import math

import pandas as pd


def row(instance, method, value, util, *, family="fam", status="feasible", ub=None,
         reservation="curve", seed=0):
    return {
        "cell": f"{instance}-{method}", "instance": instance, "instance_hash": f"h-{instance}",
        "family": family, "seed": seed, "method": method, "status": status,
        "value": value, "upper_bound": ub, "utilization": util, "reserved_idle": 0,
        "jobs_run": 1, "jobs_rejected": 0, "weighted_mean_wait": 0.0,
        "total_value": value, "inference_gpu_slots": 0, "batch_gpu_slots": 0,
        "capacity_gpu_slots": 100, "reservation": reservation, "runtime_s": 1.0,
        "message": "",
    }


def hand_rows() -> pd.DataFrame:
    """Eight rows over two instances; the comments give the figures."""
    # Instance A: fifo 10 (U 0.50), best 15 (U 0.70), milp 16 with bound 20, cpsat 17 proven
    # optimal at 18 -> best known bound 18. Instance B: fifo value 0 (gain in % undefined).
    return pd.DataFrame([
        row("A", "fifo", 10.0, 0.50, reservation="peak"),
        row("A", "best", 15.0, 0.70),
        row("A", "milp", 16.0, 0.72, status="time_limit", ub=20.0),
        row("A", "cpsat", 18.0, 0.75, status="optimal", ub=18.0),
        row("B", "fifo", 0.0, 0.30, reservation="peak", seed=1),
        row("B", "best", 5.0, 0.40, seed=1),
        row("B", "milp", 5.0, 0.40, status="optimal", ub=5.0, seed=1),
        row("B", "cpsat", math.nan, math.nan, status="error", seed=1),
    ])
