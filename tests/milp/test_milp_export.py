"""milp.export: readable names, the PuLP problem, MPS and LP files read back to the same model."""

from __future__ import annotations

import warnings

import pulp
import pytest

import instances
import milp
from instances import Instance, Job


@pytest.mark.parametrize("family,seed", [("small", 0), ("hc-mixed", 1), ("seed-training-heavy", 2)])
@pytest.mark.slow
def test_pulp_model_is_the_same_model(family: str, seed: int, tmp_path) -> None:
    inst = instances.generate(family, seed=seed)
    form = milp.build(inst)
    prob = form.to_pulp()
    assert len(prob.variables()) == form.num_cols
    assert prob.numConstraints() == form.num_rows
    with warnings.catch_warnings():  # PuLP 3.3 deprecates the constraints mapping
        warnings.simplefilter("ignore", DeprecationWarning)
        constraints = list(prob.constraints.values())
    assert sum(len(c) for c in constraints) == form.nnz
    names = [v.name for v in prob.variables()]
    assert len(set(names)) == len(names)
    job = inst.jobs[int(form.col_job[0])].name.replace("-", "_")
    assert any(n.startswith(f"x_{job}_s") for n in names)
    # same optimum through PuLP as straight from the arrays
    direct = milp.solve(inst, warm_start=None, time_limit=30, mip_gap=0)
    via = milp.solve(inst, backend="pulp", warm_start=None, time_limit=30, mip_gap=0)
    assert direct.status == via.status == "optimal"
    assert direct.value == pytest.approx(via.value)
    # exports read back to the same sizes
    form.write_mps(str(tmp_path / "m.mps"))
    form.write_lp(str(tmp_path / "m.lp"))
    _, back = pulp.LpProblem.fromMPS(str(tmp_path / "m.mps"), sense=pulp.LpMaximize)
    assert len(back.variables()) == form.num_cols
    assert back.numConstraints() == form.num_rows
    assert (tmp_path / "m.lp").read_text().count("cap_t") == form.stats["capacity_rows"]


def _read_back(path: str) -> tuple[object, float]:
    """A model file read by HiGHS: its LP and its optimum (maximize)."""
    import highspy

    from milp.highs import silence_banner

    silence_banner()
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    assert h.readModel(path) == highspy.HighsStatus.kOk
    h.setOptionValue("mip_rel_gap", 0.0)
    h.run()
    assert h.modelStatusToString(h.getModelStatus()) == "Optimal"
    return h.getLp(), float(h.getInfo().objective_function_value)


@pytest.mark.parametrize("family,seed", [("small", 0), ("hc-mixed", 1)])
@pytest.mark.slow
def test_highs_export_reads_back_to_the_same_model_and_optimum(family: str, seed: int,
                                                              tmp_path) -> None:
    inst = instances.generate(family, seed=seed)
    form = milp.build(inst)
    opt = milp.solve(inst, warm_start=None, time_limit=30, mip_gap=0)
    assert opt.status == "optimal"
    for suffix, write in ((".mps", form.write_mps), (".lp", form.write_lp)):
        path = str(tmp_path / f"m{suffix}")
        write(path)
        lp, value = _read_back(path)
        assert (lp.num_col_, lp.num_row_) == (form.num_cols, form.num_rows), suffix
        assert lp.a_matrix_.start_[-1] == form.nnz, suffix
        assert lp.col_names_ == [n.replace("-", "_") for n in form.col_names()], suffix
        assert value == pytest.approx(opt.value, rel=1e-9), suffix
    form.write_mps(str(tmp_path / "noext"))  # the format comes from the suffix, added if missing
    assert (tmp_path / "noext.mps").exists()


def test_names_stay_unique_when_sanitizing_collides() -> None:
    inst = Instance("n", 2, 3, (), (Job("a-b", 1, 1, 1.0), Job("a_b", 1, 1, 2.0)))
    prob = milp.build(inst).to_pulp()
    names = [v.name for v in prob.variables()]
    assert len(set(names)) == len(names) == 6
