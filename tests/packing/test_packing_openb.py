"""The openb builder (FGD's procedure): the same seed gives the same bytes, the draws and
the stop rule are as documented, bad CSV files are named."""

from __future__ import annotations

import numpy as np
import pytest

from instances.packing import dumps_packing, openb_packing, save_packing

NODES = ("sn,cpu_milli,memory_mib,gpu,model\n"
         "nA,32000,65536,2,A\nnB,64000,131072,4,B\nnC,8000,16384,1,A\n")  # 7 GPUs, 7000 milli
PODS = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase\n"
        "p0,1000,1024,1,500,,LS,Running\np1,2000,2048,2,1000,,BE,Failed\n"
        "p2,500,512,0,0,,LS,Pending\np3,1000,1024,1,1000,A|B,LS,Running\n")  # 3500 milli


@pytest.fixture
def files(tmp_path):
    (tmp_path / "nodes.csv").write_text(NODES)
    (tmp_path / "openb_pod_list_tiny.csv").write_text(PODS)
    return str(tmp_path / "openb_pod_list_tiny.csv"), str(tmp_path / "nodes.csv")


class _Stream:
    """The documented draws: PCG64's raw 64-bit outputs, rejection to a uniform below n."""

    def __init__(self, seed):
        self.bits = np.random.PCG64(seed)

    def below(self, n):
        while True:
            x = int(self.bits.random_raw())
            if x < 2**64 - 2**64 % n:
                return x % n

    def permutation(self, n):
        out = list(range(n))
        for i in range(n - 1, 0, -1):
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out


def test_same_seed_same_bytes(files, tmp_path):
    pods, nodes = files
    a, b = openb_packing(3, pods=pods, nodes=nodes), openb_packing(3, pods=pods, nodes=nodes)
    assert dumps_packing(a) == dumps_packing(b)
    save_packing(a, tmp_path / "a.json")
    save_packing(b, tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert dumps_packing(openb_packing(4, pods=pods, nodes=nodes)) != dumps_packing(a)
    assert a.name == "openb-tiny-s3"


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_shuffle_then_copies_until_the_next_would_pass_the_target(files, seed):
    pods, nodes = files
    p = openb_packing(seed, pods=pods, nodes=nodes)
    base = ["p0", "p1", "p2", "p3"]
    req = {"p0": 500, "p1": 2000, "p2": 0, "p3": 1000}
    s = _Stream(seed)
    assert [x.name for x in p.pods[:4]] == [base[i] for i in s.permutation(4)]
    total, target, copies = 3500, 1.3 * 7000, []
    while True:
        nxt = base[s.below(4)]
        if total + req[nxt] > target:
            break
        copies.append(nxt)
        total += req[nxt]
    assert [x.name for x in p.pods[4:]] == [f"{n}-copy-{i}" for i, n in enumerate(copies)]
    assert p.request_milli == total <= target
    names = ["nA", "nB", "nC"]
    assert [n.name for n in p.nodes] == [names[i] for i in s.permutation(3)]
    copied = {x.name: x for x in p.pods[:4]}
    for x in p.pods[4:]:
        src = copied[x.name.split("-copy-")[0]]
        assert (x.gpus, x.gpu_milli, x.cpu_milli, x.memory_mib, x.gpu_models) == \
            (src.gpus, src.gpu_milli, src.cpu_milli, src.memory_mib, src.gpu_models)
    assert copied["p3"].gpu_models == ("A", "B")
    assert copied["p2"].gpus == 0 and copied["p2"].gpu_milli == 0


def test_a_list_above_the_target_loses_pods(files):
    pods, nodes = files
    p = openb_packing(2, pods=pods, nodes=nodes, inflation=0.3)  # target 2100 < 3500
    assert p.request_milli <= 0.3 * 7000
    assert len(p.pods) < 4 and all("copy" not in x.name for x in p.pods)


def test_bad_input(files, tmp_path):
    pods, nodes = files
    with pytest.raises(ValueError, match="seed"):
        openb_packing(-1, pods=pods, nodes=nodes)
    with pytest.raises(ValueError, match="inflation"):
        openb_packing(0, pods=pods, nodes=nodes, inflation=0)
    bad = tmp_path / "bad.csv"
    bad.write_text(PODS.replace("p1,2000,", "p1,2k,"))
    with pytest.raises(ValueError, match=r"bad.csv: line 3: cpu_milli: not an integer: '2k'"):
        openb_packing(0, pods=str(bad), nodes=nodes)
    bad.write_text(PODS.replace("num_gpu", "gpus"))
    with pytest.raises(ValueError, match="missing column"):
        openb_packing(0, pods=str(bad), nodes=nodes)
    bad.write_text(PODS.replace("p0,1000,1024,1,500", "p0,1000,1024,2,500"))
    with pytest.raises(ValueError, match=r"line 2: .*gpu_milli"):
        openb_packing(0, pods=str(bad), nodes=nodes)


@pytest.mark.slow
def test_the_openb_instance_and_the_policies_on_it():
    """The one test on the full openb instance: FGD's procedure, and four policies' order."""
    from heuristics.packing import place
    from instances.packing import packing_curve

    p = openb_packing(0)
    assert dumps_packing(p) == dumps_packing(openb_packing(0))
    assert len(p.nodes) == 1213 and p.capacity_milli == 6_212_000
    assert {x.name for x in p.pods[:8152]} == {f"openb-pod-{i:04d}" for i in range(8152)}
    assert all("-copy-" in x.name for x in p.pods[8152:])
    assert 1.3 * 6_212_000 - 8000 < p.request_milli <= 1.3 * 6_212_000
    unalloc = {}
    for policy in ("random", "dotprod", "bestfit", "fgd"):
        run = place(p, policy)
        b = packing_curve(p, run.placement).binned().set_index("arrived_pct")
        unalloc[policy] = b.loc[100, "unallocated_pct"]
    assert unalloc["fgd"] < unalloc["bestfit"] < unalloc["dotprod"] < unalloc["random"]
    assert 3.5 < unalloc["fgd"] < 6.0  # FGD's published median: 4.77
