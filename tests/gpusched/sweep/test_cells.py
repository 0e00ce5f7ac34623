"""gpusched.sweep.cells and .work: cell keys, the rows of run_cell and the metric columns."""

from __future__ import annotations

import dataclasses
import json

import pytest

import heuristics
import instances
from gpusched import sweep
from gpusched.sweep import cells
from instances.io import schedule_from_dict


def test_metric_columns_are_the_metrics_fields():
    names = [f.name for f in dataclasses.fields(instances.Metrics)]
    assert list(sweep.METRIC_FIELDS) == [n for n in names if n != "reservation"]
    assert sweep.METRIC_FIELDS[1:] == sweep.METRIC_COLUMNS and sweep.METRIC_FIELDS[0] == "value"


def test_cell_key_depends_on_content_method_params_and_limit():
    inst = instances.generate("small", seed=0)
    h = sweep.instance_hash(inst)
    base = sweep.Cell(inst, "small", 0, sweep.MethodSpec("fifo", "fifo"), h)
    assert base.key == sweep.Cell(inst, "small", 0, sweep.MethodSpec("fifo", "fifo"), h).key
    other = [
        sweep.Cell(inst, "small", 0, sweep.MethodSpec("fifo", "fifo", {"x": 1}), h),
        sweep.Cell(inst, "small", 0, sweep.MethodSpec("fifo", "fifo", {}, 5.0), h),
        sweep.Cell(inst, "small", 0, sweep.MethodSpec("f2", "fifo"), h),
        sweep.Cell(inst, "small", 0, sweep.MethodSpec("fifo", "fifo"), "0" * 64),
    ]
    assert len({base.key, *(c.key for c in other)}) == 5
    assert base.stem.endswith(f"--fifo--{base.key}") and "/" not in base.stem


def test_safe_name():
    assert cells.safe_name("a b/c:d") == "a_b_c_d"
    assert len(cells.safe_name("x" * 200)) == 80


def test_make_cells_pairs_every_instance_with_every_method(tmp_path):
    path = tmp_path / "i.json"
    instances.save(instances.generate("small", seed=9), path)
    cfg = sweep.make_config("small,medium", "0-1", "fifo,list", instance_files=[str(path)])
    cs = sweep.make_cells(cfg)
    assert len(cs) == (2 * 2 + 1) * 2
    assert {(c.family, c.seed) for c in cs} >= {("small", 0), ("medium", 1), ("small", 9)}
    assert len({c.key for c in cs}) == len(cs)


def test_a_family_parameter_the_generator_refuses_is_named():
    cfg = sweep.make_config("small", 1, "fifo", family_params={"small": {"bogus": 1}})
    with pytest.raises(ValueError, match=r"^family_params\.small\.bogus: not a parameter"):
        sweep.make_cells(cfg)


@pytest.mark.slow
def test_run_cell_row_is_the_checkers():
    c = sweep.make_cells(sweep.make_config("seed-training-heavy", 1, "list"))[0]
    row, sched = sweep.run_cell(c)
    m = instances.evaluate(c.instance, schedule_from_dict(sched), row["reservation"])
    assert row["value"] == m.value and row["utilization"] == m.utilization
    for k in sweep.METRIC_COLUMNS:
        assert row[k] == pytest.approx(getattr(m, k), nan_ok=True), k
    assert row["cell"] == c.key and row["method"] == "list" and row["status"] == "feasible"
    assert row["wall_s"] >= row["runtime_s"] * 0.5  # the cell's clock includes the method's
    json.dumps(row, allow_nan=False)  # JSON-safe: no NaN
    assert set(sweep.versions()) <= set(row)


def _boom(inst, **params):
    raise RuntimeError("deliberate failure in this cell")


def test_a_failing_method_gives_an_error_row(monkeypatch):
    monkeypatch.setitem(heuristics.METHODS, "boom", _boom)
    c = sweep.make_cells(sweep.make_config("small", 1, "boom"))[0]
    row, sched = sweep.run_cell(c)
    assert sched is None and row["status"] == "error" and row["value"] is None
    assert row["message"] == "RuntimeError: deliberate failure in this cell"
    assert all(row[k] is None for k in sweep.METRIC_COLUMNS)
    crashed = cells.crashed_row(c, OSError("pipe"))
    assert crashed["status"] == "error" and crashed["message"] == "worker failed: OSError: pipe"
