"""instances.library and gpusched.library: the format, the shipped library, the broken corpus, compare."""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import paths
import pytest

import instances
from gpusched import library
from instances.families import RESOURCE_FAMILIES
from instances.library import (
    LIBRARY_FORMAT,
    check_entry,
    content_hash,
    default_library_dir,
    load_library,
    verify,
)

BROKEN = paths.DATA / "broken" / "library"
EXPECTED: dict[str, dict] = json.loads((BROKEN / "expected.json").read_text())
BASE = BROKEN / "base"


@pytest.mark.slow
def test_shipped_library_verifies_fast():
    t0 = time.perf_counter()
    report = verify()
    seconds = time.perf_counter() - t0
    assert report.ok, report.problems
    assert len(report.checks) >= 55
    assert sum(c.recomputed is not None for c in report.checks) >= 1
    assert seconds < 30  # a few seconds on an idle machine; generous for a loaded one


@pytest.mark.slow
def test_shipped_library_covers_every_family_nodes_and_traces():
    lib = load_library()
    assert lib.version == "2026.12"
    # every family (a family added later needs `build_library.py --resume`), and trace imports
    assert {*instances.FAMILIES, "openb"} - set(RESOURCE_FAMILIES) <= {e.family for e in lib.entries}
    insts = {e.name: e.load_instance() for e in lib.entries}
    with_nodes = [n for n, i in insts.items() if i.nodes is not None]
    assert len(with_nodes) >= 10
    assert any(n.startswith("openb-") for n in with_nodes)
    assert any(len({nd.gpus for nd in i.nodes}) > 1 for i in insts.values() if i.nodes)  # a mix
    assert max(i.num_jobs for i in insts.values()) >= 2000
    for e in lib.entries:  # every proof is one of the two kinds, and the value is at most it
        assert (e.bound.certificate is None) != (e.bound.solver is None)
        assert e.best_value <= e.bound.value * (1 + 1e-9)


@pytest.mark.slow
def test_shipped_bounds_hold_independently():
    """Every certificate recomputed here; every solver-proved bound at least the Lagrangian at 0."""
    for e in load_library().entries:
        inst = e.load_instance()
        zero = instances.lagrangian_value(inst, np.zeros(inst.horizon))  # the sum of values that fit
        assert e.best_value <= zero * (1 + 1e-9)
        if e.bound.certificate is not None:
            ok, recomputed = instances.check_bound(inst, instances.load_bound(e.bound.certificate, inst))
            assert ok and recomputed >= e.best_value * (1 - 1e-9)


def test_entries_get_and_hash():
    es = library.entries()
    e = es[0]
    inst = library.get(e.name)
    assert inst.name == e.name and content_hash(inst) == e.instance_sha256
    # the instance a family generates is the library's, by content
    fam = inst.meta["family"]
    assert content_hash(instances.generate(fam, seed=inst.meta["seed"], **inst.meta["params"])) == e.instance_sha256
    with pytest.raises(ValueError, match="no instance 'nope'"):
        library.get("nope")


def test_base_corpus_is_valid():
    report = verify(BASE)
    assert report.ok and len(report.checks) == 2
    assert [c.recomputed is not None for c in report.checks] == [True, False]


def test_every_broken_case_has_an_expectation():
    on_disk = {p.name for p in BROKEN.iterdir() if p.is_dir()} - {"base"}
    assert on_disk == set(EXPECTED)


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_broken_library(case):
    path = BROKEN / case
    exp = EXPECTED[case]
    if exp["exit"] == 2:  # the library cannot be read
        with pytest.raises(ValueError) as err:
            load_library(path)
        msg = str(err.value)
        assert msg.startswith(f"{path / 'index.json'}: ")
    else:  # read, and exactly one entry does not hold
        report = verify(path)
        assert not report.ok and len(report.problems) == 1
        msg = report.problems[0]
        lib = load_library(path)
        bad = next(e for e in lib.entries if not next(c for c in report.checks if c.name == e.name).ok)
        with pytest.raises(ValueError) as err:
            check_entry(bad)
        assert " ".join(str(err.value).split()) == msg
    for frag in exp["fragments"]:
        assert frag in msg, f"{case}: {frag!r} not in {msg}"


def test_wrong_inputs(tmp_path):
    with pytest.raises(ValueError, match="not found"):
        load_library(tmp_path)
    d = tmp_path / "lib"
    shutil.copytree(BASE, d)
    data = json.loads((d / "index.json").read_text())
    data["entries"].append(dict(data["entries"][0]))
    (d / "index.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"entries\[2\]\.name: 'small-s0' is named twice"):
        load_library(d)
    data["entries"] = data["entries"][:2]
    data["entries"][0]["instance"] = "../base/instances/small-s0.json"
    (d / "index.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match="inside the library folder"):
        load_library(d)
    data["entries"][0]["instance"] = "instances/small-s0.json"
    data["entries"][1]["bound"]["solver"]["status"] = "feasible"
    (d / "index.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"entries\[1\]\.bound\.solver\.status"):
        load_library(d)
    data["entries"][1]["bound"]["solver"]["status"] = "optimal"
    data["format"] = LIBRARY_FORMAT
    data["entries"][1]["best_known"]["date"] = "1 Dec 2026"
    (d / "index.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"best_known\.date"):
        load_library(d)


def test_a_certificate_value_other_than_the_index_is_refused(tmp_path):
    d = tmp_path / "lib"
    shutil.copytree(BASE, d)
    data = json.loads((d / "index.json").read_text())
    data["entries"][0]["bound"]["value"] += 1.0  # still above the value: valid, but not the certificate's
    (d / "index.json").write_text(json.dumps(data))
    report = verify(d)
    assert not report.ok and "the certificate small-s0.json states" in report.problems[0]


def _rows(lib_dir: Path) -> pd.DataFrame:
    lib = load_library(lib_dir)
    rows = []
    for e in lib.entries:
        rows.append({"instance": e.name, "instance_hash": e.instance_sha256, "method": "m",
                     "status": "feasible", "value": e.best_value, "upper_bound": None})
    return pd.DataFrame(rows)


def test_compare_flags(tmp_path):
    df = _rows(BASE)
    a, b = load_library(BASE).entries
    extra = [
        # above the best known value, below the bound: new best known (no schedule to check)
        {**df.iloc[0].to_dict(), "method": "new", "value": (a.best_value + a.bound.value) / 2},
        # above the bound: a bug somewhere
        {**df.iloc[1].to_dict(), "method": "bug", "value": b.bound.value + 1.0},
        # a reported bound below the best known value: a bug
        {**df.iloc[1].to_dict(), "method": "lowbound", "value": 1.0, "upper_bound": b.best_value - 1},
        # the same name, other content: left out
        {**df.iloc[1].to_dict(), "method": "other", "instance_hash": "0" * 64},
        # not a library instance
        {"instance": "elsewhere", "instance_hash": "1" * 64, "method": "m", "value": 3.0},
        # a failed cell: no value
        {**df.iloc[0].to_dict(), "method": "err", "status": "error", "value": float("nan")},
    ]
    pd.concat([df, pd.DataFrame(extra)]).to_csv(tmp_path / "results.csv", index=False)
    out = library.compare(tmp_path / "results.csv", BASE)
    assert out.attrs["other_content"] == 1
    flags = dict(zip(out["method"] + "/" + out["instance"], out["flags"]))
    assert flags == {
        "m/small-s0": "", "m/seed-training-heavy-s0": "",
        "new/small-s0": "new best known (schedule not in the results)",
        "bug/seed-training-heavy-s0": "exceeds best known bound",
        "lowbound/seed-training-heavy-s0": "bound below best known value",
        "err/small-s0": "",
    }
    row = out[out["method"] == "m"].iloc[0]
    assert row["gap_to_best"] == 0.0
    assert row["gap_to_bound"] == pytest.approx((a.bound.value - a.best_value) / a.bound.value)
    text = library.compare_view(out).render("md")
    assert "exceeds best known bound" in text and "1 rows have a library instance's name" in text


def test_compare_by_name_without_hashes(tmp_path):
    df = _rows(BASE).drop(columns="instance_hash")
    df.to_csv(tmp_path / "results.csv", index=False)
    out = library.compare(tmp_path / "results.csv", BASE)
    assert list(out["instance"]) == ["small-s0", "seed-training-heavy-s0"]


def test_table_of_best_known_values():
    view = library.table(BASE)
    md = view.render("md")
    assert "| small-s0 " in md and "Lagrangian certificate (bounds/small-s0.json)" in md
    assert "highs 1.16.0, optimal" in md
    assert list(view.frame["name"]) == ["small-s0", "seed-training-heavy-s0"]


@pytest.mark.slow
def test_docs_table_is_the_commands_output():
    """docs/library.md holds exactly what `gpusched library list --format md` prints."""
    doc = (paths.ROOT / "docs" / "library.md").read_text()
    assert library.table().render("md") in doc
    assert default_library_dir().is_dir()


def test_the_library_is_package_data():
    """Every file the shipped index names is matched by pyproject.toml's package data."""
    import glob
    import tomllib

    root = paths.ROOT
    globs = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["instances"]
    shipped = {Path(p) for g in globs for p in glob.glob(str(root / "instances" / g))}
    lib = load_library(root / "instances" / "data" / "library")
    for e in lib.entries:
        for p in (e.instance, e.best_schedule, e.bound.certificate):
            assert p is None or p in shipped, p
    assert lib.index in shipped


def _build_library_module():
    import importlib.util

    path = paths.ROOT / "benchmarks" / "build_library.py"
    spec = importlib.util.spec_from_file_location("build_library", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
def test_a_rebuilt_entry_never_loses_its_best_known_value_or_bound(tmp_path):
    """``build_library.py`` keeps an entry's old schedule and bound when a (short) rebuild
    does not beat them; the rebuilt entry still verifies."""
    bl = _build_library_module()
    root = tmp_path / "lib"
    shutil.copytree(instances.library.default_library_dir(), root)
    index = json.loads((root / "index.json").read_text())
    keep = next(e for e in index["entries"] if e["name"] == "medium-s9")
    spec = next(s for s in bl.plan() if s.source == keep["source"])
    inst = spec.make()
    assert instances.library.content_hash(inst) == keep["instance_sha256"]
    # a better old schedule than a 0.3 s best can find: the MILP's, kept under another name
    sched = instances.load_schedule(root / keep["best_known"]["schedule"])
    old_value = instances.evaluate(inst, sched).value
    entry = bl.build_entry(spec, inst, root, 0.01, "2099-01-01", keep)
    assert entry["best_known"]["value"] >= old_value - 1e-9
    assert entry["bound"]["value"] <= keep["bound"]["value"] + 1e-9
    if entry["best_known"]["value"] <= old_value + 1e-9:  # not beaten: the old one stays
        assert entry["best_known"]["method"] == keep["best_known"]["method"]
        assert entry["best_known"]["date"] == keep["best_known"]["date"]
    index["entries"] = [entry if e["name"] == entry["name"] else e for e in index["entries"]]
    (root / "index.json").write_text(json.dumps(index))
    report = library.verify(root)
    assert report.ok, report.problems
