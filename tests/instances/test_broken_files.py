"""The corpus of broken files: every one is refused, by the library and by the CLI.

Instances, schedules and bench sweep files (TOML), one file per validation
rule plus wrong types, NaN and infinity, huge numbers, truncated and binary
files.

``tests/data/broken/expected.json`` maps each broken file to the fragments its
error message must contain (the field at fault). The library raises
``ValueError`` whose message starts with the file and names the field; the
command line exits with code 2 and prints exactly one line naming both, never
a traceback.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import paths
import pytest

import instances
from gpusched import sweep
from gpusched.cli import main
from instances.model import MAX_HORIZON, MAX_JOBS

BROKEN = paths.DATA / "broken"
EXPECTED: dict[str, list[str]] = json.loads((BROKEN / "expected.json").read_text())
BASE_INSTANCE = BROKEN / "base" / "instance.json"
BASE_SCHEDULE = BROKEN / "base" / "schedule.json"

INSTANCE_FILES = sorted(k for k in EXPECTED if k.startswith("instance/"))
SCHEDULE_FILES = sorted(k for k in EXPECTED if k.startswith("schedule/"))
BENCH_FILES = sorted(k for k in EXPECTED if k.startswith("bench/"))


def _assert_names(message: str, path: Path, fragments: list[str]) -> None:
    assert str(path) in message, f"message does not name the file: {message}"
    for frag in fragments:
        assert frag in message, f"message does not name {frag!r}: {message}"


def _assert_one_line_exit_2(code: int, err: str, path: Path, fragments: list[str]) -> None:
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("gpusched: error: ")
    _assert_names(lines[0], path, fragments)


def test_every_corpus_file_has_an_expectation():
    on_disk = {
        str(p.relative_to(BROKEN)) for sub in ("instance", "schedule", "bench")
        for p in (BROKEN / sub).iterdir()
    }
    assert on_disk == set(EXPECTED)
    assert all(EXPECTED.values()), "every file must name at least one expected fragment"


def test_base_files_are_valid():
    inst = instances.load(BASE_INSTANCE)
    m = instances.evaluate(inst, instances.load_schedule(BASE_SCHEDULE))
    assert m.jobs_run == 2


@pytest.mark.parametrize("name", INSTANCE_FILES)
def test_broken_instance_library(name):
    path = BROKEN / name
    with pytest.raises(ValueError) as err:
        instances.load(path)
    _assert_names(str(err.value), path, EXPECTED[name])
    assert str(err.value).startswith(f"{path}: ")


@pytest.mark.parametrize("name", INSTANCE_FILES)
def test_broken_instance_cli(name, capsys):
    path = BROKEN / name
    code = main(["solve", str(path), "--method", "fifo"])
    out, err = capsys.readouterr()
    assert out == ""
    _assert_one_line_exit_2(code, err, path, EXPECTED[name])
    code = main(["check", str(path), str(BASE_SCHEDULE)])
    _assert_one_line_exit_2(code, capsys.readouterr().err, path, EXPECTED[name])


@pytest.mark.parametrize("name", SCHEDULE_FILES)
def test_broken_schedule_library(name):
    path = BROKEN / name
    inst = instances.load(BASE_INSTANCE)
    with pytest.raises(ValueError) as err:
        schedule = instances.load_schedule(path)
        instances.evaluate(inst, schedule)  # an unknown job is only known against the instance
    for frag in EXPECTED[name]:
        assert frag in str(err.value), str(err.value)


@pytest.mark.parametrize("name", SCHEDULE_FILES)
def test_broken_schedule_cli(name, capsys):
    path = BROKEN / name
    code = main(["check", str(BASE_INSTANCE), str(path)])
    out, err = capsys.readouterr()
    assert out == ""
    _assert_one_line_exit_2(code, err, path, EXPECTED[name])


@pytest.mark.parametrize("name", BENCH_FILES)
def test_broken_bench_config_library(name):
    """Refused by the loader (naming the file) or, for a family parameter, when the
    instances are drawn; in either case fast, before any cell runs."""
    path = BROKEN / name
    t0 = time.perf_counter()
    with pytest.raises(ValueError) as err:
        config = sweep.load_config(path)
        sweep.make_cells(config)
    assert time.perf_counter() - t0 < 2
    for frag in EXPECTED[name]:
        assert frag in str(err.value), str(err.value)


@pytest.mark.parametrize("name", BENCH_FILES)
def test_broken_bench_config_cli(name, capsys, tmp_path):
    path = BROKEN / name
    out = tmp_path / "out"
    code = main(["bench", "--config", str(path), "-o", str(out), "--no-progress"])
    _assert_one_line_exit_2(code, capsys.readouterr().err, path, EXPECTED[name])
    assert not out.exists()  # refused before any folder or cell (no clock: the machine may be loaded)


def test_bench_config_naming_a_broken_instance_file(tmp_path, capsys):
    config = tmp_path / "sweep.toml"
    bad = BROKEN / "instance" / "gpus-string.json"
    config.write_text(f'methods = ["fifo"]\ninstances = [{json.dumps(str(bad))}]\n')
    code = main(["bench", "--config", str(config), "-o", str(tmp_path / "out"), "--no-progress"])
    _assert_one_line_exit_2(code, capsys.readouterr().err, config, [str(bad), "jobs[0].gpus"])


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", "instance/gpus-string.json", "--method", "fifo"],
        ["check", "base/instance.json", "schedule/unknown-job.json"],
        ["check", "instance/binary-garbage.bin", "base/schedule.json"],
    ],
)
@pytest.mark.slow
def test_console_script_prints_no_traceback(argv):
    """The real console script, in a subprocess: one line, exit 2."""
    argv = [str(BROKEN / a) if "/" in a else a for a in argv]
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from gpusched.cli import main; sys.exit(main())", *argv],
        capture_output=True, text=True, timeout=60,
    )
    bad = Path(argv[1] if argv[0] == "solve" else next(a for a in argv if "broken/" in a and "base" not in a))
    _assert_one_line_exit_2(proc.returncode, proc.stderr, bad, [])


def test_missing_file_is_one_line(tmp_path, capsys):
    path = tmp_path / "nope.json"
    assert main(["solve", str(path), "--method", "fifo"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and str(path) in err


def test_directory_instead_of_file(tmp_path, capsys):
    assert main(["solve", str(tmp_path), "--method", "fifo"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and str(tmp_path) in err


# ----------------------------------------------------------------- huge inputs
def _base_dict() -> dict:
    return json.loads(BASE_INSTANCE.read_text())


def test_huge_job_count_refused_before_building_anything():
    """10^7 jobs are refused by count, before any job is validated or any array built."""
    data = _base_dict()
    data["jobs"] = [data["jobs"][0]] * 10**7
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"^jobs: .*10000000"):
        instances.instance_from_dict(data)
    assert time.perf_counter() - t0 < 0.5
    assert MAX_JOBS < 10**7


def test_huge_horizon_refused_before_building_anything():
    data = _base_dict()
    data["horizon"] = 10**9
    data["services"][0]["demand"] = [0] * 10  # never read
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"^horizon: .*1000000000"):
        instances.instance_from_dict(data)
    assert time.perf_counter() - t0 < 0.5
    assert MAX_HORIZON < 10**9


def test_huge_job_file_refused_before_parsing(tmp_path, capsys):
    """A file of 10^7 jobs is refused by its size, before the JSON is parsed.

    Parsed, such a file would take gigabytes of memory; the size check reads
    no byte of it.
    """
    path = tmp_path / "ten-million-jobs.json"
    job = b'{"name":"j","gpus":1,"duration":1},'
    chunk = job * 100_000
    with path.open("wb") as f:
        f.write(b'{"format":"gpusched-instance/1","name":"huge","num_gpus":8,"horizon":24,"jobs":[')
        for _ in range(100):
            f.write(chunk)
        f.write(b'{"name":"last","gpus":1,"duration":1}]}\n')
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="size") as err:
        instances.load(path)
    assert time.perf_counter() - t0 < 0.5
    assert str(err.value).startswith(f"{path}: ")
    assert main(["solve", str(path), "--method", "fifo"]) == 2
    _assert_one_line_exit_2(2, capsys.readouterr().err, path, ["size"])


# ------------------------------------------------------- bad command-line input
@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["generate", "no-such-family"], "family"),
        (["generate", "medium", "--seed", "-1"], "seed"),
        (["generate", "medium", "-p", "bogus=1"], "bogus"),
        (["generate", "medium", "-p", "num_jobs=abc"], "num_jobs"),
        (["generate", "medium", "-p", "num_jobs=-5"], "num_jobs"),
        (["generate", "medium", "-p", "num_jobs=2.5"], "num_jobs"),
        (["generate", "medium", "-p", "num_jobs=true"], "num_jobs"),
        (["generate", "medium", "-p", "num_gpus=0"], "num_gpus"),
        (["generate", "medium", "-p", "num_jobs=NaN"], "num_jobs"),
        (["generate", "medium", "-p", "horizon=1000000000"], "horizon"),
        (["generate", "large", "-p", "num_jobs=10000000"], "num_jobs"),
        (["generate", "medium", "-p", "=3"], "--param"),
        (["solve", "BASE", "--method", "no-such-method"], "method"),
        (["solve", "BASE", "--method", "fifo", "-p", "bogus=1"], "bogus"),
        (["solve", "BASE", "--method", "fifo", "--time-limit", "-1"], "--time-limit"),
        (["solve", "BASE", "--method", "fifo", "--time-limit", "nan"], "--time-limit"),
        (["solve", "BASE", "--method", "fifo", "--time-limit", "abc"], "--time-limit"),
        (["solve", "BASE", "--method", "sampling", "-p", "seed=1.5"], "seed"),
        (["check", "BASE"], "schedule"),
        (["check", "BASE", "BASE"], "format"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(argv, fragment, capsys):
    """Refused fast (a horizon of 10^9 or 10^7 jobs is never drawn)."""
    argv = [str(BASE_INSTANCE) if a == "BASE" else a for a in argv]
    t0 = time.perf_counter()
    code = main(argv)
    assert time.perf_counter() - t0 < 5
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert fragment in err


def test_output_path_is_a_directory(tmp_path, capsys):
    assert main(["generate", "small", "-o", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and str(tmp_path) in err
    assert list(tmp_path.iterdir()) == []  # no temporary file left behind


# ------------------------------------------------------------ table and plot
@pytest.mark.parametrize(
    ("name", "content", "fragment"),
    [
        ("binary.csv", b"\xff\xfe\x00\x13", "not a results CSV file"),
        ("empty.csv", b"", "not a results CSV file"),
        ("other.csv", b"a,b\n1,2\n", "missing column"),
        ("no-such-folder", None, "no results"),
    ],
)
def test_table_of_a_broken_results_file(tmp_path, capsys, name, content, fragment):
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    code = main(["table", str(path)])
    _assert_one_line_exit_2(code, capsys.readouterr().err, path, [fragment])


@pytest.mark.parametrize("schedule", ["schedule/unknown-job.json", "schedule/start-float.json"])
def test_plot_of_a_broken_schedule(tmp_path, capsys, schedule):
    path = BROKEN / schedule
    code = main(["plot", str(BASE_INSTANCE), str(path), "-o", str(tmp_path / "fig")])
    _assert_one_line_exit_2(code, capsys.readouterr().err, path, EXPECTED[schedule])
    assert list(tmp_path.iterdir()) == []
