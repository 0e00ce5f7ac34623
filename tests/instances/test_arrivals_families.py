"""The ``itp`` and ``philly`` families (section 16): windows of the shipped logs, the
same per seed, the pool sized at load 1, ``load`` scaling the submit times, the
objective passed through, and FIFO's schedule passing the checker."""

from __future__ import annotations

import csv
import gzip
import math
from datetime import UTC, datetime

import pytest

import heuristics
import instances
from instances.families.arrivals import ITP_DAYS, PHILLY_BUSY_DAYS, PHILLY_DAY0, PHILLY_DAYS
from instances.traces import from_trace, shipped

FAMILY_ITP = "itp"
FAMILY_PHILLY = "philly"


@pytest.mark.parametrize("family", [FAMILY_ITP, FAMILY_PHILLY])
def test_the_same_seed_gives_the_same_file(family) -> None:
    a = instances.dumps(instances.generate(family, seed=3))
    assert a == instances.dumps(instances.generate(family, seed=3))
    assert a != instances.dumps(instances.generate(family, seed=4))


def test_itp_defaults_as_stated() -> None:
    inst = instances.generate(FAMILY_ITP, seed=0)
    meta = inst.meta
    assert (inst.slot_hours, inst.horizon) == (0.25, (3 * 24 + 72) * 4)
    assert meta["cluster"] == 4 and meta["days"] == 3 and meta["load"] == 1.0
    assert ITP_DAYS[4][0] <= meta["start_day"] <= ITP_DAYS[4][1] - 2
    assert inst.objective == "value" and inst.services == ()
    assert meta["import"]["file"] == "cluster04.csv.gz"
    assert meta["import"]["start"] == 86400 * meta["start_day"]
    assert meta["import"]["drain"] == 72.0
    # the pool: the smallest with the window's GPU-slots at most the window's (contention 1)
    work = sum(j.gpus * j.duration for j in inst.jobs)
    window = 3 * 24 * 4
    assert work <= inst.num_gpus * window and work > (inst.num_gpus - 1) * window
    assert 0.99 < meta["window_contention"] <= 1.0
    assert meta["import"]["kept"] + sum(meta["import"]["skipped"].values()) == 15_802


def test_philly_defaults_as_stated() -> None:
    inst = instances.generate(FAMILY_PHILLY, seed=0)
    meta = inst.meta
    lo, hi = PHILLY_BUSY_DAYS
    assert lo <= meta["start_day"] <= hi - 2 and meta["cluster"] is None
    assert meta["import"]["start"] == PHILLY_DAY0 + 86400 * meta["start_day"]
    assert meta["import"]["records"] == 82_247 and inst.horizon == 576
    assert 0.99 < meta["window_contention"] <= 1.0


def test_the_family_is_the_import_of_its_window() -> None:
    inst = instances.generate(FAMILY_ITP, seed=5, num_gpus=300, start_day=10, days=2,
                              slot_minutes=30, drain_hours=24)
    direct = from_trace("itp", "itp:cluster04", start=86400 * 10, hours=48, slot_minutes=30,
                        drain=24, num_gpus=300)
    assert inst.jobs == direct.jobs and inst.num_gpus == 300 and inst.horizon == 144
    assert inst.meta["pool"] == "num_gpus"


@pytest.mark.parametrize("family", [FAMILY_ITP, FAMILY_PHILLY])
def test_load_divides_the_submit_times_on_the_same_pool(family) -> None:
    one = instances.generate(family, seed=1)
    two = instances.generate(family, seed=1, load=2)
    assert two.num_gpus == one.num_gpus and two.horizon == one.horizon
    assert two.meta["start_day"] == one.meta["start_day"] and two.meta["load"] == 2.0
    assert two.meta["import"]["load"] == 2
    # a job of the first half-window at load 1 is at half its release at load 2
    by_name = {j.name: j for j in two.jobs}
    half = 3 * 24 * 4 // 2
    early = [j for j in one.jobs if j.release < half]
    assert early
    for j in early:
        k = by_name[j.name]
        assert (k.release, k.duration, k.gpus) == (j.release // 2, j.duration, j.gpus)
    assert two.num_jobs > one.num_jobs
    # the arrival rate doubles: twice the jobs submitted per slot over the first half
    assert sum(j.release < half // 2 for j in two.jobs) == len(
        [j for j in one.jobs if j.release < half])


def test_objective_and_inference_pass_through() -> None:
    inst = instances.generate(FAMILY_ITP, seed=2, objective="flow", inference_share=0.3)
    assert inst.objective == "flow"
    (svc,) = inst.services
    assert svc.peak == math.ceil(0.3 * inst.num_gpus)
    assert inst.meta["import"]["service"] == "servegen:0.3"
    # the pool leaves the window's jobs as many GPU-slots as they ask
    assert 0.99 < inst.meta["window_contention"] <= 1.0
    back = instances.instance_from_dict(instances.instance_to_dict(inst))
    assert back == inst and back.objective == "flow"


def test_philly_one_virtual_cluster() -> None:
    inst = instances.generate(FAMILY_PHILLY, seed=0, cluster="6c71a0", start_day=40)
    sk = inst.meta["import"]["skipped"]
    assert inst.meta["cluster"] == "6c71a0" and inst.meta["import"]["cluster"] == "6c71a0"
    assert sk["other_cluster"] == 82_247 - 9_953
    # ids that read as numbers, as `gpusched generate -p cluster=6214e9` parses them
    a = instances.generate(FAMILY_PHILLY, seed=0, cluster=6214e9, start_day=40, num_gpus=64)
    assert a.meta["cluster"] == "6214e9" and a.meta["import"]["cluster"] == "6214e9"
    assert a.name == "philly-s0-cluster6214e9-num_gpus64-start_day40"  # named as spelt
    assert a.meta["params"]["cluster"] == "6214e9" and "resolved_params" not in a.meta


@pytest.mark.parametrize(("family", "params", "field"), [
    (FAMILY_ITP, {"cluster": 11}, "cluster"),
    (FAMILY_ITP, {"days": 0}, "days"),
    (FAMILY_ITP, {"days": 61}, "days"),
    (FAMILY_ITP, {"start_day": 58}, "start_day"),
    (FAMILY_ITP, {"num_gpus": 0}, "num_gpus"),
    (FAMILY_ITP, {"num_gpus": 64, "contention": 1.0}, "contention"),
    (FAMILY_ITP, {"contention": 0}, "contention"),
    (FAMILY_ITP, {"load": 0}, "load"),
    (FAMILY_ITP, {"slot_minutes": -15}, "slot_minutes"),
    (FAMILY_ITP, {"drain_hours": -1}, "drain_hours"),
    (FAMILY_ITP, {"inference_share": 1.5}, "inference_share"),
    (FAMILY_ITP, {"objective": "jct"}, "objective"),
    (FAMILY_PHILLY, {"cluster": "nope"}, "cluster"),
    (FAMILY_PHILLY, {"start_day": 108}, "start_day"),
])
def test_bad_parameters_name_the_field(family, params, field) -> None:
    with pytest.raises(ValueError, match=f"^{field}: "):
        instances.generate(family, seed=0, **params)


def test_stated_day_ranges_hold() -> None:
    for cluster, (first, last) in ITP_DAYS.items():
        with gzip.open(shipped(f"itp:cluster{cluster:02d}"), "rt") as f:
            submits = [int(r["submission_time"]) for r in csv.DictReader(f)]
        assert (min(submits) // 86400, max(submits) // 86400) == (first, last)
    days: dict[str | None, list[int]] = {}
    with gzip.open(shipped("philly-csv:default"), "rt") as f:
        for r in csv.DictReader(f):
            t = datetime.fromisoformat(r["timestamp"]).replace(tzinfo=UTC).timestamp()
            d = int((t - PHILLY_DAY0) // 86400)
            for key in (None, r["cluster"]):
                days.setdefault(key, []).append(d)
    assert {k: (min(v), max(v)) for k, v in days.items()} == PHILLY_DAYS
    lo, hi = PHILLY_BUSY_DAYS
    assert sum(lo <= d <= hi for d in days[None]) == 80_702
    assert sum(d < lo for d in days[None]) == 69


@pytest.mark.parametrize("family", [FAMILY_ITP, FAMILY_PHILLY])
def test_fifo_passes_the_checker(family) -> None:
    inst = instances.generate(family, seed=7, days=1)
    res = heuristics.solve(inst, "fifo")
    m = instances.evaluate(inst, res.schedule, res.reservation, enforce_reservation=True)
    assert m.value == res.value
