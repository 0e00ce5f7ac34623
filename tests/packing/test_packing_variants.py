"""The openb pod-list variants of FGD's Figs. 11-14: shipped files, names, the sweep's cells.

Each shipped ``.csv.gz`` must decompress to the bytes of its source file (the
SHA-256 sums recorded beside them, taken from the source files) and read row for
row as the plain CSV parse of those bytes. With ``GPUSCHED_OPENB_VARIANTS_SOURCE``
set to a folder holding the source CSVs, each is compared with its source too.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import os
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from gpusched.cli import main
from gpusched.sweep.packing import PackCell, load_pack_rows, run_pack_cells
from gpusched.tables.packing import PAPER_VARIANTS, variant_frame, variant_view
from instances.packing import (
    INFLATION,
    OPENB_VARIANTS,
    POD_LISTS,
    VARIANT_GROUPS,
    evaluate_placement,
    load_packing,
    load_placement,
    openb_packing,
    openb_pod_list,
    pod_list_name,
    read_openb_nodes,
    read_openb_pods,
)
from instances.traces import shipped

ROWS = {"cpu0": 7064, "cpu037": 7336, "cpu050": 7439, "cpu072": 7608, "cpu100": 7853,
        "cpu200": 8832, "cpu235": 9240, "cpu250": 9420, "cpu300": 10094, "gpushare20": 8152,
        "gpushare40": 8152, "gpushare60": 8152, "gpushare80": 8152, "gpushare100": 8152,
        "gpuspec05": 8152, "gpuspec10": 8152, "gpuspec20": 8152, "gpuspec25": 8152,
        "gpuspec33": 8152, "multigpu20": 8324, "multigpu30": 8508, "multigpu40": 8746,
        "multigpu50": 9061}
"""Data rows of each source file (its line count minus the header)."""

SOURCE = os.environ.get("GPUSCHED_OPENB_VARIANTS_SOURCE")


def _sums() -> dict[str, str]:
    text = (openb_pod_list("gpushare40").parent / "SHA256SUMS").read_text()
    return {name: digest for digest, name in (line.split() for line in text.splitlines())}


def test_the_23_variants_are_shipped_in_their_groups():
    assert len(OPENB_VARIANTS) == 23 == len(set(OPENB_VARIANTS))
    assert set(OPENB_VARIANTS) == set(ROWS)
    assert sorted(v for vs in VARIANT_GROUPS.values() for v in vs) == sorted(OPENB_VARIANTS)
    assert all(v.startswith(g) for g, vs in VARIANT_GROUPS.items() for v in vs)
    folder = openb_pod_list("cpu0").parent
    assert sorted(p.name for p in folder.glob("*.csv.gz")) == sorted(
        f"openb_pod_list_{v}.csv.gz" for v in OPENB_VARIANTS)
    assert set(_sums()) == {f"openb_pod_list_{v}.csv" for v in OPENB_VARIANTS}


@pytest.mark.parametrize("variant", OPENB_VARIANTS)
def test_each_variant_is_its_source_row_for_row(variant):
    path = openb_pod_list(variant)
    raw = gzip.decompress(path.read_bytes())
    assert hashlib.sha256(raw).hexdigest() == _sums()[f"openb_pod_list_{variant}.csv"]
    rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8"), newline="")))
    assert len(rows) == ROWS[variant]
    pods = read_openb_pods(variant)
    assert len(pods) == len(rows)
    for pod, row in zip(pods, rows):
        spec = [m for m in (row.get("gpu_spec") or "").split("|") if m]
        assert (pod.name, pod.gpus, pod.cpu_milli, pod.memory_mib) == (
            row["name"], int(row["num_gpu"]), int(row["cpu_milli"]), int(row["memory_mib"]))
        assert pod.gpu_milli == (int(row["gpu_milli"]) if pod.gpus else 0)
        assert pod.gpu_models == tuple(dict.fromkeys(spec))
    if SOURCE is not None:
        assert raw == (Path(SOURCE) / f"openb_pod_list_{variant}.csv").read_bytes()


def test_what_the_groups_change():
    """Each group changes what its name says against the default list, and no more."""
    default = read_openb_pods()
    spec = read_openb_pods("gpuspec33")
    assert [(p.name, p.gpus, p.gpu_milli, p.cpu_milli) for p in spec] == [
        (p.name, p.gpus, p.gpu_milli, p.cpu_milli) for p in default]
    gpu_pods = [p for p in spec if p.gpus]
    assert 0.30 < sum(bool(p.gpu_models) for p in gpu_pods) / len(gpu_pods) < 0.36
    # a gpuspec instance is the default's instance of the same seed with models added
    base, constrained = openb_packing(3), openb_packing(3, pods="gpuspec33")
    assert base.nodes == constrained.nodes and len(base.pods) == len(constrained.pods)
    assert [(p.name, p.gpus, p.gpu_milli, p.cpu_milli, p.memory_mib) for p in base.pods] == [
        (p.name, p.gpus, p.gpu_milli, p.cpu_milli, p.memory_mib) for p in constrained.pods]
    assert any(p.gpu_models for p in constrained.pods) and not any(p.gpu_models for p in base.pods)
    assert not any(p.gpu_models for p in read_openb_pods("multigpu50"))  # no gpu_spec column
    def gpu_pods(pods):
        return Counter((p.gpus, p.gpu_milli, p.cpu_milli, p.memory_mib) for p in pods if p.gpus)

    for variant, share in (("cpu0", 0.0), ("cpu250", 0.25), ("cpu300", 0.30)):
        cpu = read_openb_pods(variant)
        assert abs(sum(p.gpus == 0 for p in cpu) / len(cpu) - share) < 0.001
        assert gpu_pods(cpu) == gpu_pods(default)  # the GPU pods kept, CPU-only ones resampled
    share = read_openb_pods("gpushare80")
    total = sum(p.request_milli for p in share)
    assert abs(sum(p.request_milli for p in share if p.gpu_milli < 1000) / total - 0.80) < 0.01


def test_a_model_listed_twice_counts_once():
    pod = next(p for p in read_openb_pods("gpuspec05") if p.name == "openb-pod-2182")
    assert pod.gpu_models == ("V100M16", "V100M32")


def test_multigpu_lists_above_the_target_are_tuned_down():
    capacity = 1000 * sum(n.gpus for n in read_openb_nodes())
    target = INFLATION * capacity
    for variant in ("multigpu30", "multigpu40", "multigpu50"):
        base = read_openb_pods(variant)
        assert sum(p.request_milli for p in base) > target
        p = openb_packing(2, pods=variant)
        total = sum(x.request_milli for x in p.pods)
        assert target - 8000 < total <= target
        assert len(p.pods) < len(base)
        assert not any("-copy-" in x.name for x in p.pods)
        assert len({x.name for x in p.pods}) == len(p.pods)
    p = openb_packing(2, pods="multigpu20")  # 114% of the capacity: tuned up
    assert any("-copy-" in x.name for x in p.pods)
    assert target - 8000 < sum(x.request_milli for x in p.pods) <= target


def test_names_resolve_and_bad_names_list_the_known_ones(tmp_path):
    assert openb_pod_list("default") == openb_pod_list(None) == shipped("openb:default")
    assert openb_pod_list("gpushare40").name == "openb_pod_list_gpushare40.csv.gz"
    assert POD_LISTS[0] == "default" and POD_LISTS[1:] == OPENB_VARIANTS
    p = openb_packing(0, pods="gpushare40")
    assert p.name == "openb-gpushare40-s0"
    # the same list as a plain file and as a gzip file: the same instance
    plain = tmp_path / "openb_pod_list_mine.csv"
    plain.write_bytes(gzip.decompress(openb_pod_list("gpushare40").read_bytes()))
    packed = tmp_path / "openb_pod_list_mine.csv.gz"
    packed.write_bytes(openb_pod_list("gpushare40").read_bytes())
    a, b = openb_packing(0, pods=plain), openb_packing(0, pods=packed)
    assert a.name == b.name == "openb-mine-s0" == f"openb-{pod_list_name(packed)}-s0"
    assert a.pods == b.pods == p.pods and a.nodes == p.nodes
    with pytest.raises(ValueError, match=r"gpushare41: .*known: default, gpushare20, "):
        openb_pod_list("gpushare41")
    truncated = tmp_path / "cut.csv.gz"
    truncated.write_bytes(openb_pod_list("cpu0").read_bytes()[:5000])
    with pytest.raises(ValueError, match=r"cut\.csv\.gz: unreadable"):
        read_openb_pods(truncated)


@pytest.mark.parametrize("argv,needle", [
    (["--pods", "gpushare41"], "--pods: gpushare41: neither a pod list file nor a shipped "
                               "pod list; known: default, gpushare20,"),
    (["--variants", "gpushare,bogus"], "--variants: unknown group or variant 'bogus'; known: "
                                       "all, gpushare, multigpu, gpuspec, cpu, gpushare20,"),
    (["--variants", "cpu", "--bound"], "--bound applies to one pod list"),
    (["--variants", "cpu", "--pods", "gpushare40"], "--pods applies to one pod list"),
])
def test_bad_names_exit_2_with_one_line(tmp_path, capsys, argv, needle):
    assert main(["pack", "openb", *argv, "-o", str(tmp_path / "r"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err


def test_a_variant_cell_runs_through_the_sweep(tmp_path, capsys):
    out = tmp_path / "res"
    cells = [PackCell("dotprod", 0, pods="multigpu50")]
    summary = run_pack_cells(cells, out, workers=1, progress=False)
    assert (summary.ran, summary.errors) == (1, 0)
    [row] = load_pack_rows(out)
    assert row["pods"] == "multigpu50" and row["packing"] == "openb-multigpu50-s0"
    assert cells[0].stem.startswith("multigpu50-dotprod-arrival-s0--")
    packing = load_packing(out / "packings" / "openb-multigpu50-s0.json")
    assert packing.pods == openb_packing(0, pods="multigpu50").pods
    placement = load_placement(out / "placements" / f"{cells[0].stem}.json")
    assert evaluate_placement(packing, placement).allocated_milli == row["allocated_milli"]
    df = variant_frame([row])
    assert set(df["variant"]) == {"multigpu50"}
    at100 = float(df.loc[df["arrived_pct"] == 100, "unallocated_pct"].iloc[0])
    view = variant_view(df, "multigpu", VARIANT_GROUPS["multigpu"])
    assert list(view.frame["variant"]) == ["multigpu50"]
    assert view.frame["unallocated_pct"].iloc[0] == pytest.approx(at100)
    md = view.render("markdown")
    assert f"{at100:.2f}" in md and "fgd (paper)" in md and "2.9" in md
    assert PAPER_VARIANTS[("multigpu50", "fgd")] == 2.9
    # the same cell from the command line: nothing runs again; the table per group is written
    argv = ["pack", "openb", "--variants", "multigpu50", "--policies", "dotprod",
            "--seeds", "1", "-o", str(out), "--workers", "1", "--no-progress"]  # seed 0
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "0 cells run" in captured.err and f"{at100:.2f}" in captured.out
    csv_df = pd.read_csv(out / "variants.csv")
    assert list(csv_df.columns[:3]) == ["variant", "policy", "seed"]
    assert (out / "variants-multigpu.md").read_text().count(f"{at100:.2f}") == 1
    assert "\\toprule" in (out / "variants-multigpu.tex").read_text()
    assert json.loads((out / "cells" / f"{cells[0].stem}.json").read_text())["status"] == "ok"
