"""gpusched.bench, the harness's first name: every name of gpusched.sweep, the same objects."""

from __future__ import annotations

import pytest

from gpusched import bench, sweep, tables


@pytest.mark.parametrize("name", sweep.__all__)
def test_bench_re_exports_sweep(name):
    assert getattr(bench, name) is getattr(sweep, name)


def test_names_the_notebooks_and_tests_use():
    for name in ("BenchConfig", "MethodSpec", "Cell", "make_config", "make_cells", "run_bench",
                 "load_rows", "instance_hash", "MAX_SEEDS", "config_from_dict"):
        assert hasattr(bench, name), name
    for name in ("prepare", "seed_view", "summary_view", "ablation_view", "PUBLISHED",
                 "ABLATION_GRID", "TableView", "VIEWS", "view", "ci95", "latex_escape"):
        assert hasattr(tables, name), name
