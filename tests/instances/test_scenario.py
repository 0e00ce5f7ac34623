"""Scenarios (instances.scenario): the file, its validation and the two models.

The broken files of ``tests/data/broken/scenario/`` are each refused, by the
library (a ``ValueError`` naming the file and the field) and by the command
line (exit 2, one line); the lognormal model has the stated variance,
autocorrelation and mean; the trace model's forecast is the mean of the
previous days of the shipped series, recomputed here.
"""

from __future__ import annotations

import json
import math

import numpy as np
import paths
import pytest

import gpusched
import instances
from gpusched.cli import main
from instances import Instance, Job, Scenario, Service
from instances.scenario import trace_forecast_error

BROKEN = paths.DATA / "broken"
BASE_INSTANCE = BROKEN / "base" / "instance.json"

EXPECTED: dict[str, list[str]] = {
    "other-instance.json": ["instance", "'other'", "'tiny'"],
    "missing-service.json": ["actual", "missing service 'chat'"],
    "unknown-service.json": ['actual["search"]', "no service"],
    "length-short.json": ['actual["chat"]', "length", "horizon (6)", "got 5"],
    "length-long.json": ['actual["chat"]', "length", "got 7"],
    "demand-negative.json": ['actual["chat"][2]', ">= 0", "-2"],
    "demand-float.json": ['actual["chat"][2]', "integer", "2.5"],
    "demand-float-whole.json": ['actual["chat"][2]', "integer", "2.0"],
    "demand-string.json": ['actual["chat"][2]', "integer"],
    "demand-bool.json": ['actual["chat"][1]', "integer"],
    "demand-null.json": ['actual["chat"]', "list of integers"],
    "demand-over-pool.json": ['actual["chat"][3]', "num_gpus (4)", "got 5"],
    "demand-nan.json": ["actual.chat[2]", "NaN"],
    "actual-missing.json": ["actual", "missing"],
    "actual-list.json": ["actual", "must be an object"],
    "instance-missing.json": ["instance", "missing"],
    "instance-number.json": ["instance", "string"],
    "format-missing.json": ["format", "missing"],
    "format-instance.json": ["format", "gpusched-scenario/1"],
    "unknown-field.json": ["forecast", "unknown field"],
    "duplicate-service.json": ["actual", "duplicate key", "chat"],
    "top-level-array.json": ["top level", "JSON object"],
    "truncated.json": ["malformed JSON"],
    "empty.json": ["empty"],
}


def _base() -> Instance:
    return instances.load(BASE_INSTANCE)


# ------------------------------------------------------------------ the corpus
def test_every_broken_scenario_has_an_expectation():
    on_disk = {p.name for p in (BROKEN / "scenario").iterdir()}
    assert on_disk == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_broken_scenario_library(name):
    path = BROKEN / "scenario" / name
    with pytest.raises(ValueError) as err:
        instances.load_scenario(path, _base())
    msg = str(err.value)
    assert msg.startswith(f"{path}: "), msg
    for frag in EXPECTED[name]:
        assert frag in msg, f"{frag!r} not in {msg!r}"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_broken_scenario_cli(name, capsys):
    path = BROKEN / "scenario" / name
    code = main(["simulate", str(BASE_INSTANCE), "--scenario", str(path), "--method", "fifo",
                 "--no-bound"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert lines[0].startswith("gpusched: error: ") and str(path) in lines[0]
    for frag in EXPECTED[name]:
        assert frag in " ".join(lines[0].split()), lines[0]


# ------------------------------------------------------------------ the file
def test_round_trip(tmp_path):
    inst = instances.generate("hc-multi-service", seed=0)
    sc = instances.scenario(inst, "lognormal", seed=4, sigma=0.3, rho=0.2)
    path = tmp_path / "sc.json"
    instances.save_scenario(sc, path)
    back = instances.load_scenario(path, inst)
    assert back == sc and dict(back.meta) == json.loads(json.dumps(dict(sc.meta)))
    assert json.loads(path.read_text())["format"] == "gpusched-scenario/1"
    instances.save_scenario(back, tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == path.read_bytes()


def test_summed_actual_inference_over_the_pool_is_refused():
    inst = Instance("two", 4, 3, (Service("a", 1.0, (1, 1, 1)), Service("b", 1.0, (1, 1, 1))), ())
    sc = Scenario("two", {"a": (2, 3, 1), "b": (2, 2, 0)})
    with pytest.raises(ValueError, match=r"^actual: summed actual inference at slot 1 is 5, over num_gpus \(4\)"):
        sc.validate(inst)
    with pytest.raises(ValueError, match="summed actual"):
        instances.actual_instance(inst, sc)


def test_actual_instance_keeps_the_name_and_jobs():
    inst = _base()
    sc = Scenario("tiny", {"chat": (0, 1, 3, 2, 0, 0)})
    act = instances.actual_instance(inst, sc)
    assert act.name == inst.name and act.jobs == inst.jobs
    assert act.services[0].demand == (0, 1, 3, 2, 0, 0)
    assert act.services[0].priority == inst.services[0].priority


def test_scenario_values_are_checked_when_built():
    with pytest.raises(ValueError, match=r'actual\["chat"\]\[1\]: must be >= 0'):
        Scenario("x", {"chat": (1, -1)})
    with pytest.raises(ValueError, match=r'actual\["chat"\]\[0\]: must be an integer'):
        Scenario("x", {"chat": (np.float64(1.0),)})
    assert Scenario("x", {"chat": np.array([1, 2])}).actual["chat"] == (1, 2)


# ------------------------------------------------------------------ lognormal
def _flat(G: int = 100_000, T: int = 20_000, level: int = 10_000) -> Instance:
    return Instance("flat", G, T, (Service("s", 1.0, (level,) * T),), ())


def test_lognormal_has_the_stated_sigma_rho_and_mean():
    inst = _flat()
    sigma, rho = 0.25, 0.6
    sc = instances.scenario(inst, "lognormal", seed=0, sigma=sigma, rho=rho)
    ratio = np.array(sc.actual["s"]) / 10_000
    assert abs(ratio.mean() - 1.0) < 0.01  # mean-one correction
    eps = np.log(ratio) + sigma**2 / 2
    assert abs(eps.std() - sigma) < 0.01
    assert abs(np.corrcoef(eps[1:], eps[:-1])[0, 1] - rho) < 0.03
    med = instances.scenario(inst, "lognormal", seed=0, sigma=sigma, rho=rho, mean_one=False)
    r2 = np.array(med.actual["s"]) / 10_000
    assert abs(np.median(r2) - 1.0) < 0.01 and r2.mean() > 1.02  # the forecast is the median


def test_lognormal_is_deterministic_for_a_seed():
    inst = instances.generate("hc-mixed", seed=0)
    a = instances.scenario(inst, "lognormal", seed=3, sigma=0.2, rho=0.5)
    b = instances.scenario(inst, "lognormal", seed=3, sigma=0.2, rho=0.5)
    c = instances.scenario(inst, "lognormal", seed=4, sigma=0.2, rho=0.5)
    assert a == b and a != c
    assert a.meta == {"model": "lognormal", "seed": 3,
                      "params": {"sigma": 0.2, "rho": 0.5, "mean_one": True}}
    zero = instances.scenario(inst, "lognormal", seed=3, sigma=0.0)
    assert zero.actual == {s.name: s.demand for s in inst.services}


def test_lognormal_rounds_and_fits_the_pool():
    # two services near the pool: values clipped to [0, G] and the total capped
    # at G by lowering the last service first
    inst = Instance("near", 8, 200, (Service("a", 1.0, (5,) * 200), Service("b", 1.0, (3,) * 200)), ())
    sc = instances.scenario(inst, "lognormal", seed=1, sigma=0.8, rho=0.3)
    a, b = np.array(sc.actual["a"]), np.array(sc.actual["b"])
    assert ((a >= 0) & (a <= 8) & (b >= 0)).all() and (a + b <= 8).all()
    assert (a + b == 8).any()  # the cap was needed
    raw = instances.scenario(Instance("solo", 8, 200, (Service("a", 1.0, (5,) * 200),), ()),
                             "lognormal", seed=1, sigma=0.8, rho=0.3)
    assert np.array_equal(np.array(raw.actual["a"]), a)  # the first service is drawn the same, never lowered
    sc.validate(inst)


@pytest.mark.parametrize(
    "params,field",
    [({"sigma": -0.1}, "sigma"), ({"sigma": math.inf}, "sigma"), ({"rho": 1.5}, "rho"),
     ({"rho": "x"}, "rho"), ({"mean_one": 1}, "mean_one"), ({"bogus": 1}, "bogus")],
)
def test_lognormal_bad_parameter(params, field):
    with pytest.raises(ValueError, match=f"^{field}"):
        instances.scenario(_base(), "lognormal", **params)


def test_unknown_model_and_bad_seed():
    with pytest.raises(ValueError, match=r"^model"):
        instances.scenario(_base(), "gaussian")
    with pytest.raises(ValueError, match=r"^seed"):
        instances.scenario(_base(), "lognormal", seed=-1)


# ------------------------------------------------------------------ trace
def test_trace_forecast_is_the_mean_of_the_previous_days():
    rps = instances.servegen.servegen_hourly_rps()
    days = rps.reshape(-1, 24)
    for day in (1, 6, 13):
        fc, ac = trace_forecast_error(day)
        assert np.allclose(fc, days[:day].mean(axis=0))
        assert np.array_equal(ac, days[day])
    fc, _ = trace_forecast_error(9, history=3)
    assert np.allclose(fc, days[6:9].mean(axis=0))
    fc, ac = trace_forecast_error(3, days=2)
    assert np.allclose(fc[24:], days[:4].mean(axis=0)) and np.array_equal(ac[24:], days[4])


@pytest.mark.parametrize("day", [0, 14, -1, 2.5])
def test_trace_day_out_of_range(day):
    with pytest.raises(ValueError, match=r"^day"):
        trace_forecast_error(day)


def test_trace_scenario_pairs_forecast_instance_with_the_day():
    inst, sc = instances.trace_scenario(day=5, seed=2)
    family = instances.generate("trace-servegen", seed=2, num_gpus=16, throughput_rps=40.0,
                                days=1, start_day=5)
    assert inst.jobs == family.jobs and inst.name == f"{family.name}-forecast" == sc.instance
    svc = family.services[0].name
    assert sc.actual[svc] == family.services[0].demand  # the actual is the day itself
    fc, _ = trace_forecast_error(5)
    assert inst.services[0].demand == tuple(int(x) for x in np.ceil(fc / 40.0))
    assert inst.services[0].demand != family.services[0].demand  # real forecast error
    sc.validate(inst)


def test_trace_model_applies_the_series_error_to_any_instance():
    inst = Instance("flat", 1000, 48, (Service("s", 1.0, (400,) * 48),), (Job("a", 1, 1),))
    sc = instances.scenario(inst, "trace", day=4)
    fc, ac = trace_forecast_error(4, days=2)
    assert sc.actual["s"] == tuple(int(x) for x in np.rint(400 * ac / fc))
    assert sc.meta["params"] == {"day": 4, "history": None}
    assert instances.scenario(inst, "trace", day=4, seed=9) == sc  # draws nothing
    with pytest.raises(ValueError, match=r"^day"):
        instances.scenario(inst, "trace", day=13)  # two days do not fit after day 13


# ------------------------------------------------------------------ command line
def test_cli_scenario_to_stdout_and_bad_parameter(capsys, tmp_path):
    assert main(["scenario", str(BASE_INSTANCE), "--sigma", "0.3", "--seed", "2"]) == 0
    d = json.loads(capsys.readouterr().out)
    sc = instances.scenario_from_dict(d, _base())
    assert sc == instances.scenario(_base(), "lognormal", seed=2, sigma=0.3)
    assert main(["scenario", str(BASE_INSTANCE), "--rho", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "rho" in err[0]
    assert main(["scenario", str(BASE_INSTANCE), "--model", "nope"]) == 2
    assert "model" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_trace_day_writes_the_forecast_instance_and_its_day(tmp_path, capsys):
    sc_path, inst_path = tmp_path / "sc.json", tmp_path / "inst.json"
    argv = ["scenario", "--trace-day", "7", "--seed", "3", "--history", "4",
            "-p", "contention=2.5", "-o", str(sc_path), "--instance-out", str(inst_path)]
    assert main(argv) == 0
    inst = instances.load(inst_path)
    sc = instances.load_scenario(sc_path, inst)
    want_inst, want_sc = instances.trace_scenario(7, 3, history=4, contention=2.5)
    assert inst == want_inst and sc == want_sc
    assert sc.meta["params"]["history"] == 4
    # the pair replays on the command line
    capsys.readouterr()
    assert main(["simulate", str(inst_path), "--scenario", str(sc_path), "--method", "list",
                 "--no-bound", "--json"]) == 0
    replayed = gpusched.simulate(inst, sc, "list", clairvoyant=False).realized_value
    assert json.loads(capsys.readouterr().out)["realized_value"] == pytest.approx(replayed)
    # without -o the scenario goes to standard output
    assert main(["scenario", "--trace-day", "2", "--instance-out", str(inst_path)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert instances.scenario_from_dict(d, instances.load(inst_path)) == instances.trace_scenario(2)[1]


@pytest.mark.parametrize(
    "argv,field",
    [
        (["--trace-day", "0", "--instance-out", "{i}"], "day"),
        (["--trace-day", "14", "--instance-out", "{i}"], "day"),
        (["--trace-day", "7"], "--instance-out"),
        (["--trace-day", "7", "--instance-out", "{i}", "--sigma", "0.2"], "--sigma"),
        (["--trace-day", "7", "--instance-out", "{i}", "--model", "trace"], "--model"),
        (["--trace-day", "7", "--instance-out", "{i}", "-p", "nope=1"], "nope"),
        (["--trace-day", "7", "--instance-out", "{i}", "-p", "days=2"], "days"),
        (["--trace-day", "7", "--instance-out", "{i}", "-p", "seed=2"], "seed"),
        (["--trace-day", "7", "--instance-out", "{i}", "--history", "0"], "history"),
        (["--trace-day", "7", "--instance-out", "{i}", "-p", "num_gpus=2"], "num_gpus"),
        ([str(BASE_INSTANCE), "--trace-day", "7", "--instance-out", "{i}"], "instance"),
        ([str(BASE_INSTANCE), "--instance-out", "{i}"], "--instance-out"),
        ([], "instance"),
        ([str(BASE_INSTANCE), "--history", "2"], "history"),  # lognormal has no history
    ],
)
def test_cli_trace_day_bad_input_exit_2_one_line(tmp_path, capsys, argv, field):
    inst_path = tmp_path / "inst.json"
    argv = [a.replace("{i}", str(inst_path)) for a in argv]
    assert main(["scenario", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and field in err[0] and "Traceback" not in err[0]
    assert not inst_path.exists()


def test_trace_scenario_refuses_the_parameters_it_sets():
    for key in ("days", "start_day"):
        with pytest.raises(ValueError, match=rf"^{key}"):
            instances.trace_scenario(7, **{key: 2})
