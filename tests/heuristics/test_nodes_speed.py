"""The fast node decoder gives the schedules it gave before it was made fast, at scale.

The property tests (``test_nodes_heuristics.py``) hold the compiled decoder to
the plain reference on small instances. Here, on the benchmark's instance
(``large``, 2,000 jobs, 256 GPUs) for three seeds, in 8-GPU nodes and the
openb node mix, under both reservations, for every rule and two orders, the
starts and placements must be those of the decoder before its scan was
rewritten for speed: ``PREVIOUS`` holds the first 16 hex digits of
the SHA-256 of ``json.dumps([start.tolist(), place.tolist()])`` that the
earlier decoder produced. Jobs of 64 GPUs and more (the subset search's
other path) are held to the numpy decoder.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

import instances
from heuristics.decoder import job_arrays, serial_starts, serial_starts_numpy
from heuristics.engine import new_profile
from heuristics.placement import PLACEMENTS, new_place
from heuristics.rules import order_by
from instances import Instance, Job, Node, Schedule, Service, evaluate

PREVIOUS: dict[str, str] = {
    "0 8 curve first-fit priority": "19b3aa17cfb3aec1",
    "0 8 curve first-fit random": "7f5df35492f6d033",
    "0 8 curve best-fit priority": "bc9a675a66607f2f",
    "0 8 curve best-fit random": "0cb7b6ee9c28cd2b",
    "0 8 curve frag priority": "f804b4eda9777093",
    "0 8 curve frag random": "64109c31046a06d7",
    "0 8 peak first-fit priority": "2da387e2c5da152a",
    "0 8 peak first-fit random": "39011484acb38dd2",
    "0 8 peak best-fit priority": "296a15b6f3865658",
    "0 8 peak best-fit random": "8ee086f462d51020",
    "0 8 peak frag priority": "eda656ef1ea32ba8",
    "0 8 peak frag random": "d7255b65a8980ba4",
    "0 openb curve first-fit priority": "b03c2dcb5669d4fe",
    "0 openb curve first-fit random": "e376f8a4900ae4ae",
    "0 openb curve best-fit priority": "7b8882c5423ead6a",
    "0 openb curve best-fit random": "860b9dd1d82783a8",
    "0 openb curve frag priority": "52a84a78da5215b3",
    "0 openb curve frag random": "79de0f56c24dd1b2",
    "0 openb peak first-fit priority": "fcbfcee2ecf63014",
    "0 openb peak first-fit random": "50393af7daef6dd5",
    "0 openb peak best-fit priority": "058edda4eed43ed4",
    "0 openb peak best-fit random": "e97314876916cac3",
    "0 openb peak frag priority": "9709ceb3346f5280",
    "0 openb peak frag random": "520f658d99d7038f",
    "1 8 curve first-fit priority": "137f24424b8afd85",
    "1 8 curve first-fit random": "d917d81d5497af61",
    "1 8 curve best-fit priority": "387d90b6f1ef2c1a",
    "1 8 curve best-fit random": "b66f2f0758a314e6",
    "1 8 curve frag priority": "7ae145c6951e604a",
    "1 8 curve frag random": "82d47cb0bb944be9",
    "1 8 peak first-fit priority": "37dbf1f8232f3c5a",
    "1 8 peak first-fit random": "253f873302242916",
    "1 8 peak best-fit priority": "0201a7d1f6e66017",
    "1 8 peak best-fit random": "f8e6048ed4f6d295",
    "1 8 peak frag priority": "a4fcc0550fd9f4fb",
    "1 8 peak frag random": "d05688341a1553d2",
    "1 openb curve first-fit priority": "74ce239568147efc",
    "1 openb curve first-fit random": "ba1065acb5d27d5e",
    "1 openb curve best-fit priority": "cdc50abd50bad507",
    "1 openb curve best-fit random": "2eb030cda4253579",
    "1 openb curve frag priority": "0e252a25a3f82434",
    "1 openb curve frag random": "82b41ec0ed1d949b",
    "1 openb peak first-fit priority": "debfa63e5fa00951",
    "1 openb peak first-fit random": "3d4bfa4eeaefcda5",
    "1 openb peak best-fit priority": "32b8f954dc838718",
    "1 openb peak best-fit random": "dbc8575be7aedb72",
    "1 openb peak frag priority": "8c8c0f0c7f0cd53b",
    "1 openb peak frag random": "9321940b0a87a7f9",
    "2 8 curve first-fit priority": "139c4d1fd082bc16",
    "2 8 curve first-fit random": "f78a6c6307435468",
    "2 8 curve best-fit priority": "1d2f60298e89b3b2",
    "2 8 curve best-fit random": "b3f58daa68a9e798",
    "2 8 curve frag priority": "06d2ea2dfc4b8bde",
    "2 8 curve frag random": "ac75659a444fd34b",
    "2 8 peak first-fit priority": "acff3e77bfcf2ef9",
    "2 8 peak first-fit random": "3da0353ab1eeb9ef",
    "2 8 peak best-fit priority": "4ca365d069357c6b",
    "2 8 peak best-fit random": "c9cf2ac78d77eaa8",
    "2 8 peak frag priority": "69dc7ca2c612a358",
    "2 8 peak frag random": "4058e2b29366aa44",
    "2 openb curve first-fit priority": "ec32546a140da60f",
    "2 openb curve first-fit random": "84edb080fb4d2100",
    "2 openb curve best-fit priority": "71bf95c0bf77c134",
    "2 openb curve best-fit random": "c16a5c1680d69a96",
    "2 openb curve frag priority": "c266eb1ddd0b1117",
    "2 openb curve frag random": "9e099059234533ee",
    "2 openb peak first-fit priority": "559ab3eb58350960",
    "2 openb peak first-fit random": "ab99291e32119f14",
    "2 openb peak best-fit priority": "5bf0b8756c0f8263",
    "2 openb peak best-fit random": "b9877294ae25ebc0",
    "2 openb peak frag priority": "e05c2d2e28aad97e",
    "2 openb peak frag random": "0f3b53b9c8e7d311",
}


def _digest(start: np.ndarray, place: np.ndarray) -> str:
    return hashlib.sha256(json.dumps([start.tolist(), place.tolist()]).encode()).hexdigest()[:16]


def _cases(seed: int) -> dict[str, str]:
    """Digest of every (shape, reservation, rule, order) pass of the compiled decoder."""
    flat = instances.generate("large", seed=seed, num_jobs=2000, num_gpus=256)
    jobs = job_arrays(flat)
    orders = {"priority": order_by(flat, "priority"),
              "random": np.random.default_rng(seed).permutation(flat.num_jobs)}
    shapes = {"8": instances.with_nodes(flat, 8),
              "openb": instances.with_nodes(flat, instances.openb_node_mix(256, seed=seed))}
    out = {}
    for shape, inst in shapes.items():
        for res in ("curve", "peak"):
            for rule in PLACEMENTS:
                for name, order in orders.items():
                    place = new_place(inst)
                    start = serial_starts(new_profile(inst, res, rule), order, jobs, None, place)
                    out[f"{seed} {shape} {res} {rule} {name}"] = _digest(start, place)
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_same_schedules_as_before_on_large(seed: int) -> None:
    got = _cases(seed)
    expect = {k: v for k, v in PREVIOUS.items() if k.startswith(f"{seed} ")}
    assert len(expect) == len(got) == 24
    assert got == expect


def _big_jobs(sizes: list[int], seed: int) -> Instance:
    """256 GPUs on ``sizes``; jobs of 1 to 8 GPUs and multi-node jobs of 16 to 192 GPUs."""
    rng = np.random.default_rng(seed)
    T = 40
    jobs = []
    for i in range(90):
        g = int(rng.choice([1, 2, 4, 8, 16, 64, 72, 128, 192]))
        p = int(rng.integers(1, 9))
        r = int(rng.integers(0, T - p))
        jobs.append(Job(f"j{i}", g, p, float(rng.choice([1, 2, 4])), release=r))
    demand = tuple(int(x) for x in 20 + 15 * np.sin(np.arange(T) / 4))
    return Instance("big", 256, T, (Service("chat", 1.0, demand),), tuple(jobs),
                    nodes=tuple(Node(f"n{k}", s) for k, s in enumerate(sizes)))


@pytest.mark.parametrize("shape", ["8", "openb"])
@pytest.mark.parametrize("rule", PLACEMENTS)
def test_jobs_of_many_nodes_match_the_numpy_decoder(shape: str, rule: str) -> None:
    sizes = [8] * 32 if shape == "8" else instances.openb_node_mix(256, seed=3)
    inst = _big_jobs(sizes, seed=len(rule))
    assert int(inst.gpus[inst.multi_node].max()) >= 64
    order = np.random.default_rng(7).permutation(inst.num_jobs)
    got = []
    for decode in (serial_starts, serial_starts_numpy):
        place = new_place(inst)
        start = decode(new_profile(inst, "curve", rule), order, job_arrays(inst), None, place)
        got.append((start.tolist(), place.tolist()))
    assert got[0] == got[1]
    start, place = (np.array(a) for a in got[0])
    big = inst.multi_node & (inst.gpus >= 64) & (start >= 0)
    assert big.any()  # the path for targets of 62 GPUs and more ran
    evaluate(inst, Schedule.from_array(inst, start, place), "curve", enforce_reservation=True)


@pytest.mark.parametrize("rule", PLACEMENTS)
def test_job_sizes_that_are_no_level_match_the_numpy_decoder(rule: str) -> None:
    """Jobs of sizes the profile keeps no level of: below the lowest (1 GPU) and between two."""
    flat = instances.generate("large", seed=0, num_jobs=2000, num_gpus=256)  # jobs of 2 to 16 GPUs
    inst = instances.with_nodes(flat, 8)
    prof = new_profile(inst, "curve", rule)
    jobs = job_arrays(inst)
    rng = np.random.default_rng(5)
    jobs[0] = np.where(jobs[0] <= 8, rng.choice([1, 3, 5, 7], size=jobs.shape[1]), jobs[0])
    assert not np.isin(jobs[0], prof.levels).all() and jobs[0].min() < prof.levels.min()
    order = rng.permutation(inst.num_jobs)[:500]
    got = []
    for decode in (serial_starts, serial_starts_numpy):
        place = new_place(inst)
        start = decode(new_profile(inst, "curve", rule), order, jobs, None, place)
        got.append((start.tolist(), place.tolist()))
    assert got[0] == got[1]
    assert sum(s >= 0 for s in got[0][0]) > 50


@pytest.mark.parametrize("rule", PLACEMENTS)
def test_more_than_64_nodes_match_the_numpy_decoder(rule: str) -> None:
    """80 nodes of 4 GPUs: node sets of two words (the kernel compiled for any number of words)."""
    inst = instances.with_nodes(instances.generate("large", seed=1, num_jobs=800, num_gpus=320), 4)
    assert inst.num_nodes == 80 and (inst.gpus > 4).any()
    order = np.random.default_rng(2).permutation(inst.num_jobs)
    got = []
    for decode in (serial_starts, serial_starts_numpy):
        place = new_place(inst)
        start = decode(new_profile(inst, "curve", rule), order, job_arrays(inst), None, place)
        got.append((start.tolist(), place.tolist()))
    assert got[0] == got[1]
    start, place = (np.array(a) for a in got[0])
    assert (place[start >= 0] >= 64).any()  # nodes of the second word were placed on
    evaluate(inst, Schedule.from_array(inst, start, place), "curve", enforce_reservation=True)
