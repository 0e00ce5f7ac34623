"""`gpusched reproduce seed`: a short run end to end, then a resume that does no work."""

from __future__ import annotations

import pandas as pd
import pytest

from gpusched import reproduce, sweep, tables
from gpusched.cli import main
from instances.families import SEED_SCENARIOS


def test_seed_config_has_the_seed_methods():
    cfg = reproduce.seed_config(2, 3.0, ablation=False)
    assert cfg.families == ("seed-training-heavy", *SEED_SCENARIOS)
    assert cfg.seeds == (0, 1)
    specs = {s.label: s for s in cfg.methods}
    assert list(specs) == ["fifo", "fifo-curve", "best", "milp"]
    assert specs["milp"].time_limit == 3.0 and specs["milp"].params["threads"] == 1
    assert specs["fifo"].time_limit is None and specs["best"].time_limit is None
    tuned = reproduce.seed_config(1, 3.0, ablation=False, params={"best": {"time_limit": 2}})
    assert {s.label: s for s in tuned.methods}["best"].time_limit == 2.0
    full = reproduce.seed_config(2, 3.0)
    assert {"fifo", "fifo-curve", "best", "milp"} <= {s.label for s in full.methods}


@pytest.mark.slow
def test_reproduce_seed_cli(tmp_path, capsys):
    out = tmp_path / "seed"
    argv = ["reproduce", "seed", "-o", str(out), "--seeds", "1", "--time-limit", "1",
            "--no-ablation", "--workers", "2", "--no-progress", "-p", "best.time_limit=1"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "Seed reproduction" in text and "53.6 → 87.0" in text and "52-85 → 72-88" in text
    for fam in ("seed-training-heavy", *SEED_SCENARIOS):
        assert f"| {fam}" in text
    assert "24 cells run (0 errors)" in text
    for view in ("summary", "seed", "ablation"):
        for suffix in ("md", "tex", "csv"):
            assert (out / "tables" / f"{view}.{suffix}").stat().st_size > 100
    assert (out / "plots" / "profile-value.png").stat().st_size > 5000
    assert list((out / "plots").glob("gantt-seed-training-heavy-s0-*.png"))

    # the figures are the rows' figures: FIFO and the allocator on the seed instance
    df = sweep.load_rows(out)
    assert set(df["method"]) == {"fifo", "fifo-curve", "best", "milp"}
    assert (df["status"] != "error").all()
    seed_csv = pd.read_csv(out / "tables" / "seed.csv").set_index("scenario")
    s = df[df["family"] == "seed-training-heavy"].set_index("method")
    assert seed_csv.loc["seed-training-heavy", "util_fifo_mean"] == pytest.approx(
        100 * s.loc["fifo", "utilization"])
    assert seed_csv.loc["seed-training-heavy", "util_alloc_mean"] == pytest.approx(
        100 * s.loc["best", "utilization"])
    # the MILP's bound is never below any policy's value on the same instance
    d = tables.prepare(df)
    assert not d["ub_conflict"].any()
    assert (d["value"] <= d["best_ub"] + 1e-6).all()

    # resume: the same sweep has nothing left to run
    cfg = reproduce.seed_config(1, 1.0, ablation=False, params={"best": {"time_limit": 1}})
    again = sweep.run_bench(cfg, out, workers=1, progress=False)
    assert (again.ran, again.skipped) == (0, 24)
