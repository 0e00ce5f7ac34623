"""The simulator's figures pinned to those of commit 40988f1 (before the plan and the
replay were written once over the capacity model).

Each row: the instance (family, seed, node shape or flat), the method, the policy
(replan, headroom, preempt) on the lognormal scenario of seed 1 (sigma 0.5, rho 0.5),
and what 40988f1 reported: realized and planned value, preemptions, GPU-slots lost,
inference unserved, missed starts, plans, and a digest of the realized starts and
placements. Flat pools and nodes, with preemptions, unserved inference, missed
starts and re-planning with running jobs (the pseudo-service on a flat pool, nodes
less their running GPUs), all appear.
"""

from __future__ import annotations

import hashlib
import json

import pytest

import gpusched
import instances

PINNED = [
    ('seed-training-heavy', 0, None, 'list', None, 0.0, True, 58.06, 161.24999999999997, 1, 3, 0, 1, 1, 'b963ad1a309a'),
    ('seed-training-heavy', 0, None, 'list', 1, 0.2, True, 66.49999999999999, 66.49999999999999, 0, 0, 0, 2, 21, '7f9d6efe29b4'),
    ('seed-training-heavy', 0, None, 'list', 3, 0.1, False, 66.49999999999999, 66.49999999999999, 0, 0, 0, 1, 7, 'a120e0aee517'),
    ('seed-training-heavy', 0, None, 'fifo', None, 0.0, True, 5.58, 9.059999999999999, 0, 0, 0, 1, 1, 'd466d44592df'),
    ('seed-training-heavy', 0, None, 'fifo', 1, 0.2, True, 5.58, 0.0, 0, 0, 0, 0, 22, '64c16e34d5f1'),
    ('seed-training-heavy', 0, None, 'fifo', 3, 0.1, False, 5.58, 5.58, 0, 0, 0, 0, 8, 'bdbf8759d1af'),
    ('seed-training-heavy', 0, None, 'easy-curve', None, 0.0, True, 53.98, 114.89999999999999, 0, 0, 0, 2, 1, '45157519d39e'),
    ('seed-training-heavy', 0, None, 'easy-curve', 1, 0.2, True, 9.059999999999999, 66.49999999999999, 0, 0, 0, 2, 21, 'f02d3bad1b02'),
    ('seed-training-heavy', 0, None, 'easy-curve', 3, 0.1, False, 9.059999999999999, 66.49999999999999, 0, 0, 0, 1, 7, '71ec9cfe4c89'),
    ('hc-multi-service', 3, None, 'list', None, 0.0, True, 268.44, 631.7199999999999, 3, 48, 0, 4, 1, '3b415411b3a8'),
    ('hc-multi-service', 3, None, 'list', 1, 0.2, True, 375.79999999999995, 375.79999999999995, 0, 0, 0, 2, 34, 'ab045df7ad1e'),
    ('hc-multi-service', 3, None, 'list', 3, 0.1, False, 375.79999999999995, 375.79999999999995, 0, 0, 1, 2, 12, 'a18e2198d10e'),
    ('hc-multi-service', 3, None, 'fifo', None, 0.0, True, 247.84000000000003, 255.40000000000003, 1, 4, 0, 0, 1, 'dc9b170c416c'),
    ('hc-multi-service', 3, None, 'fifo', 1, 0.2, True, 0.0, 0.0, 0, 0, 0, 0, 36, 'a683096011db'),
    ('hc-multi-service', 3, None, 'fifo', 3, 0.1, False, 0.0, 0.0, 0, 0, 0, 0, 12, 'a683096011db'),
    ('hc-multi-service', 3, None, 'easy-curve', None, 0.0, True, 264.93999999999994, 588.9599999999999, 2, 5, 0, 5, 1, 'a60f0527467a'),
    ('hc-multi-service', 3, None, 'easy-curve', 1, 0.2, True, 351.79999999999984, 351.79999999999984, 0, 0, 0, 1, 34, '5fc44858c12d'),
    ('hc-multi-service', 3, None, 'easy-curve', 3, 0.1, False, 351.79999999999984, 351.79999999999984, 0, 0, 1, 1, 12, '6c5204567f69'),
    ('hc-deadlines', 1, 4, 'list', None, 0.0, True, 31.08, 458.8299999999999, 4, 27, 0, 4, 1, 'fea0dfec9b52'),
    ('hc-deadlines', 1, 4, 'list', 1, 0.2, True, 336.11999999999995, 342.00999999999993, 1, 2, 0, 4, 34, '2b648017a258'),
    ('hc-deadlines', 1, 4, 'list', 3, 0.1, False, 254.70999999999998, 343.12999999999994, 0, 0, 1, 2, 10, 'ca12827a430a'),
    ('hc-deadlines', 1, 4, 'fifo', None, 0.0, True, 41.65, 225.74999999999994, 1, 2, 0, 1, 1, 'f05884c8afd2'),
    ('hc-deadlines', 1, 4, 'fifo', 1, 0.2, True, 0.0, 0.0, 0, 0, 0, 0, 35, 'a683096011db'),
    ('hc-deadlines', 1, 4, 'fifo', 3, 0.1, False, 27.470000000000002, 27.470000000000002, 0, 0, 0, 0, 12, 'a6cf58e2a3e2'),
    ('hc-deadlines', 1, 4, 'easy-curve', None, 0.0, True, 52.67, 395.89, 2, 10, 0, 1, 1, '3aec4dae944b'),
    ('hc-deadlines', 1, 4, 'easy-curve', 1, 0.2, True, 291.2, 323.9, 1, 1, 0, 3, 32, '6965d50b5133'),
    ('hc-deadlines', 1, 4, 'easy-curve', 3, 0.1, False, 239.8, 327.09999999999997, 0, 0, 2, 1, 11, 'c9fe3b0e22c8'),
    ('seed-training-heavy', 0, [4, 2, 2], 'list', None, 0.0, True, 58.06, 161.24999999999997, 1, 3, 0, 1, 1, 'b783365e24de'),
    ('seed-training-heavy', 0, [4, 2, 2], 'list', 1, 0.2, True, 66.49999999999999, 66.49999999999999, 0, 0, 0, 2, 19, '96e430988c2b'),
    ('seed-training-heavy', 0, [4, 2, 2], 'list', 3, 0.1, False, 66.49999999999999, 66.49999999999999, 0, 0, 0, 1, 7, '224054c1c21c'),
    ('seed-training-heavy', 0, [4, 2, 2], 'fifo', None, 0.0, True, 5.58, 9.059999999999999, 0, 0, 0, 1, 1, '19212d9309c4'),
    ('seed-training-heavy', 0, [4, 2, 2], 'fifo', 1, 0.2, True, 5.58, 0.0, 0, 0, 0, 0, 22, 'a534c4719ea3'),
    ('seed-training-heavy', 0, [4, 2, 2], 'fifo', 3, 0.1, False, 5.58, 5.58, 0, 0, 0, 0, 8, 'bc05e3a05067'),
    ('seed-training-heavy', 0, [4, 2, 2], 'easy-curve', None, 0.0, True, 53.98, 114.89999999999999, 0, 0, 0, 2, 1, '2272a6f18269'),
    ('seed-training-heavy', 0, [4, 2, 2], 'easy-curve', 1, 0.2, True, 9.059999999999999, 66.49999999999999, 0, 0, 0, 2, 19, 'ecbdf97e1dbe'),
    ('seed-training-heavy', 0, [4, 2, 2], 'easy-curve', 3, 0.1, False, 9.059999999999999, 66.49999999999999, 0, 0, 0, 1, 7, '070bd46f3754'),
]


@pytest.mark.parametrize(
    "family,seed,shape,method,replan,headroom,preempt,realized,planned,preemptions,lost,"
    "unserved,missed,plans,digest",
    PINNED,
)
def test_the_replay_reports_what_40988f1_reported(
    family, seed, shape, method, replan, headroom, preempt, realized, planned, preemptions,
    lost, unserved, missed, plans, digest,
):
    inst = instances.generate(family, seed=seed)
    if shape is not None:
        inst = instances.with_nodes(inst, shape)
    sc = instances.scenario(inst, "lognormal", seed=1, sigma=0.5, rho=0.5)
    r = gpusched.simulate(inst, sc, method, replan, headroom, preempt, clairvoyant=False)
    assert r.realized_value == pytest.approx(realized, rel=1e-9)
    assert r.planned_value == pytest.approx(planned, rel=1e-9)
    assert (r.preemptions, r.lost_gpu_slots, r.unserved_gpu_slots, r.missed_starts, r.plans) == (
        preemptions, lost, unserved, missed, plans)
    starts = json.dumps([
        sorted(r.schedule.starts.items()),
        sorted((j, sorted(p.items())) for j, p in r.schedule.placement.items()),
    ])
    assert hashlib.sha256(starts.encode()).hexdigest()[:12] == digest
