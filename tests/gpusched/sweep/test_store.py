"""gpusched.sweep.store: row files written whole, what reads them, results.csv."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from gpusched import sweep
from gpusched.sweep import store


def _stored(tmp_path, methods="fifo,list", seeds="0-1"):
    cells = sweep.make_cells(sweep.make_config("small", seeds, methods))
    store.save_instances(tmp_path, cells)
    for c in cells:
        store.store_row(tmp_path, c, *sweep.run_cell(c))
    return cells


def test_store_row_writes_the_row_schedule_and_instance(tmp_path):
    cells = _stored(tmp_path)
    files = sorted((tmp_path / "cells").glob("*.json"))
    assert [p.stem for p in files] == sorted(c.stem for c in cells)
    row = json.loads(files[0].read_text())
    assert (tmp_path / row["schedule_file"]).is_file()
    assert (tmp_path / row["instance_file"]).is_file()
    assert len(list((tmp_path / "instances").glob("*.json"))) == 2  # one per instance
    assert not list(tmp_path.rglob("*.tmp*"))  # no temporary file left behind


def test_an_error_row_has_no_schedule_file(tmp_path):
    c = sweep.make_cells(sweep.make_config("small", 1, "fifo"))[0]
    store.store_row(tmp_path, c, sweep.error_row(c, "it failed"), None)
    (row,) = store.iter_rows(tmp_path)
    assert row["schedule_file"] is None and row["status"] == "error"
    assert store.done_keys(tmp_path) == {c.key}
    assert store.done_keys(tmp_path, retry_errors=True) == set()


def test_load_rows_and_consolidate(tmp_path):
    cells = _stored(tmp_path)
    df = sweep.load_rows(tmp_path)
    assert len(df) == len(cells) and df["cell"].is_unique
    assert list(df[store.SORT_COLUMNS].itertuples(index=False)) == sorted(
        df[store.SORT_COLUMNS].itertuples(index=False))
    path = sweep.consolidate(tmp_path)
    csv = pd.read_csv(path)
    assert list(csv["cell"]) == list(df["cell"])
    pd.testing.assert_frame_equal(sweep.load_rows(path)[["cell", "value"]], df[["cell", "value"]])
    # a folder with only results.csv (the cell files gone) still loads
    for p in (tmp_path / "cells").glob("*.json"):
        p.unlink()
    assert list(sweep.load_rows(tmp_path)["cell"]) == list(df["cell"])
    assert sweep.consolidate(tmp_path / "nothing") is None


def test_unreadable_rows_are_skipped(tmp_path, caplog):
    cells = _stored(tmp_path, methods="fifo", seeds=2)
    files = sorted((tmp_path / "cells").glob("*.json"))
    files[0].write_text('{"cell": "torn')
    (tmp_path / "cells" / "other.json").write_text('["not", "a", "row"]')
    assert store.done_keys(tmp_path) == {c.key for c in cells} - {files[0].stem.rsplit("--", 1)[1]}
    assert "unreadable row skipped" in caplog.text


def test_load_rows_refuses_what_holds_no_results(tmp_path):
    with pytest.raises(ValueError, match="no results"):
        sweep.load_rows(tmp_path)
    bad = tmp_path / "x.csv"
    bad.write_bytes(b"")
    with pytest.raises(ValueError, match="not a results CSV file"):
        sweep.load_rows(bad)
