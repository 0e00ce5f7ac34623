"""gpusched.sweep.config: seeds, flags and the TOML sweep file (pydantic schema, messages)."""

from __future__ import annotations

import textwrap

import pytest

from gpusched import sweep
from gpusched.sweep import config


def test_parse_seeds():
    assert sweep.parse_seeds(3) == (0, 1, 2)
    assert sweep.parse_seeds("3") == (0, 1, 2)
    assert sweep.parse_seeds("2-4") == (2, 3, 4)
    assert sweep.parse_seeds("1, 5,7") == (1, 5, 7)
    assert sweep.parse_seeds([4, 4, 2]) == (4, 2)
    for bad in (0, "4-2", "x", -1, [True], [-3], True, "", [], sweep.MAX_SEEDS + 1,
                f"0-{sweep.MAX_SEEDS}"):
        with pytest.raises(ValueError, match="seeds"):
            sweep.parse_seeds(bad)


def _write(tmp_path, text: str):
    p = tmp_path / "sweep.toml"
    p.write_text(textwrap.dedent(text))
    return p


def test_toml_config(tmp_path):
    p = _write(tmp_path, """
        families = ["small"]
        seeds = "0-2"
        methods = ["fifo", "milp"]
        time_limit = 7

        [params.milp]
        time_limit = 3
        mip_rel_gap = 0.01

        [variants.curve-fifo]
        method = "fifo-curve"

        [variants.list-value]
        method = "list"
        rule = "value"
        time_limit = 1.5

        [family_params.small]
        num_jobs = 5
    """)
    cfg = sweep.load_config(p)
    assert cfg.families == ("small",) and cfg.seeds == (0, 1, 2)
    specs = {s.label: s for s in cfg.methods}
    assert list(specs) == ["fifo", "milp", "curve-fifo", "list-value"]
    assert specs["fifo"].time_limit == 7 and specs["curve-fifo"].time_limit == 7
    assert specs["milp"].time_limit == 3 and specs["list-value"].time_limit == 1.5
    assert dict(specs["milp"].params) == {"mip_rel_gap": 0.01, "threads": 1}
    assert dict(specs["list-value"].params) == {"rule": "value"}
    assert specs["curve-fifo"].method == "fifo-curve"
    assert dict(cfg.family_params) == {"small": {"num_jobs": 5}}
    cells = sweep.make_cells(cfg)
    assert len(cells) == 12 and all(c.instance.num_jobs == 5 for c in cells)
    assert len({c.key for c in cells}) == 12


@pytest.mark.parametrize(("text", "message"), [
    # a misspelled key is named, wherever it is (in a method's table it used to reach the
    # method and fail every cell at run time)
    ('families = ["small"]\nmethods = ["fifo"]\ntime_limt = 5\n',
     r"sweep\.toml: time_limt: unknown key; allowed: \['families', "),
    ('families = ["small"]\nmethods = ["best"]\n[params.best]\ntime_limt = 5\n',
     r"sweep\.toml: params\.best\.time_limt: not a parameter of method 'best'; accepted: \["),
    ('families = ["small"]\nmethods = ["fifo"]\n[variants.v]\nmethod = "list"\nrul = "value"\n',
     r"sweep\.toml: variants\.v\.rul: not a parameter of method 'list'; accepted: .*'rule'"),
    ('families = ["small"]\nmethods = ["fifo"]\n[params.mlip]\nthreads = 2\n',
     r"sweep\.toml: params\.mlip: no method 'mlip' in methods \['fifo'\]"),
    # types and bounds, by field path
    ('families = ["small"]\nmethods = ["fifo"]\n[variants.v]\nmethod = []\n',
     r"sweep\.toml: variants\.v\.method: must be a string, got \[\]"),
    ('families = ["small"]\nmethods = ["fifo"]\n[variants.v]\nrule = "value"\n',
     r"sweep\.toml: variants\.v\.method: missing"),
    ('families = ["small"]\nmethods = ["fifo"]\n[variants.v]\nmethod = "list"\ntime_limit = -1\n',
     r"sweep\.toml: variants\.v\.time_limit: must be a number >= 0, got -1"),
    ('families = ["small"]\nmethods = ["fifo", 3]\n',
     r"sweep\.toml: methods\.1: must be a string, got 3"),
    ('families = ["small"]\nmethods = ["fifo"]\ntime_limit = true\n',
     r"sweep\.toml: time_limit: must be a number, got True"),
    ('families = ["small"]\nmethods = ["fifo"]\nseeds = "4-2"\n',
     r"sweep\.toml: seeds: empty range '4-2'$"),
    ('families = ["small"]\nmethods = ["nope"]\n',
     r"sweep\.toml: methods: unknown method 'nope'"),
    ('families = ["small"\n', r"sweep\.toml: malformed TOML"),
    ('families = ["small"]\nmethods = ["fifo"]\n[family_params.small]\nhorizon = 1000000000\n',
     r"sweep\.toml: family_params\.small\.horizon"),
])
def test_bad_sweep_files_name_the_file_and_the_field(tmp_path, text, message):
    with pytest.raises(ValueError, match=message):
        sweep.load_config(_write(tmp_path, text))


def test_several_errors_are_counted():
    with pytest.raises(ValueError, match=r"^families: must be a list, got 'x' "
                                         r"\(and 1 more error\)$"):
        config.config_from_dict({"families": "x", "methods": "y"})


def test_a_time_limit_of_infinity_is_no_limit_and_nan_is_refused():
    cfg = config.config_from_dict({"families": ["small"], "methods": ["fifo"],
                                    "time_limit": float("inf")})
    assert cfg.methods[0].time_limit == float("inf")
    with pytest.raises(ValueError, match="time_limit: must be a number >= 0"):
        config.config_from_dict({"families": ["small"], "methods": ["fifo"],
                                  "time_limit": float("nan")})


def test_make_config_from_flags():
    cfg = sweep.make_config("small, medium", "0-1", "fifo,milp,best", time_limit=4.0,
                            params={"milp": {"threads": 2}, "best": {"time_limit": 1}})
    assert cfg.families == ("small", "medium") and cfg.seeds == (0, 1)
    specs = {s.label: s for s in cfg.methods}
    assert specs["fifo"].time_limit == 4.0 and specs["best"].time_limit == 1.0
    assert dict(specs["milp"].params) == {"threads": 2}  # the user's threads are kept
    assert dict(specs["best"].params) == {}
    for kw, message in (
        ({"families": "nope"}, "families: unknown family 'nope'"),
        ({"methods": "nope"}, "methods: unknown method 'nope'"),
        ({"methods": ""}, "methods: no method given"),
        ({"methods": [sweep.MethodSpec("v", 3)]}, r"methods: 'v': the method must be a name, got 3"),
        ({"methods": [sweep.MethodSpec("a", "fifo"), sweep.MethodSpec("a", "list")]},
         "a label appears twice"),
        ({"families": ""}, "no family and no instance file"),
        ({"params": {"list": {"rul": 1}}, "methods": "list"},
         r"list\.rul: not a parameter of method 'list'"),
        ({"time_limit": -1.0}, r"fifo\.time_limit: must be a number >= 0"),
    ):
        args = {"families": "small", "seeds": 1, "methods": "fifo", **kw}
        with pytest.raises(ValueError, match=message):
            sweep.make_config(args.pop("families"), args.pop("seeds"), args.pop("methods"),
                              **args)


def test_method_parameters_of_heuristics_only(monkeypatch):
    import heuristics

    assert "rule" in config.method_parameters("list")
    assert "time_limit" in config.method_parameters("best")
    assert config.method_parameters("milp") is None  # HiGHS options: not checked here
    monkeypatch.setitem(heuristics.METHODS, "anything", lambda inst, **params: None)
    assert config.method_parameters("anything") is None
    sweep.make_config("small", 1, "anything", params={"anything": {"whatever": 1}})
