"""Messages of a broken instance file a new user hit (issue 38): complete, naming the file,
the line and the column, and every key problem of one object."""

from __future__ import annotations

import json

import pytest

import instances
from gpusched.cli import main
from instances.io import check_keys


def _instance_text() -> str:
    return instances.dumps(instances.generate("small", seed=0))


@pytest.mark.parametrize(("cut", "said"), [
    (300, "Unterminated string starting at line 12 column 6 (the file ends before it closes: "
          "was the file cut short?)"),
    (None, None),
])
def test_a_truncated_file_is_said_in_full(tmp_path, capsys, cut, said) -> None:
    text = _instance_text()
    if cut is None:  # cut right after a comma: the file ends where a value is expected
        cut = text.index("\n", 200)
        said = "Expecting "
    path = tmp_path / "x.json"
    path.write_text(text[:cut])
    with pytest.raises(ValueError) as e:
        instances.load(path)
    msg = str(e.value)
    assert msg.startswith(f"{path}: malformed JSON: ") and said in msg
    assert "line " in msg and " column " in msg
    assert not msg.rstrip().endswith(" at")
    assert main(["solve", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f"gpusched: error: {msg}\n"


@pytest.mark.parametrize(("text", "said"), [
    ('{"a": 1,}', "Expecting property name enclosed in double quotes at line 1 column 9"),
    ('{"a": 1} x', "Extra data at line 1 column 10"),
    ('{"a": "x\ty"}', "Invalid control character at line 1 column 9"),
    ('{\n  "a": ', "Expecting value at line 2 column 8 (the end of the file: was the file cut short?)"),
])
def test_malformed_json_names_the_line_and_column(tmp_path, text, said) -> None:
    path = tmp_path / "x.json"
    path.write_text(text)
    with pytest.raises(ValueError) as e:
        instances.load(path)
    assert str(e.value) == f"{path}: malformed JSON: {said}"


def _with_job(tmp_path, change) -> str:
    data = json.loads(_instance_text())
    change(data["jobs"][0])
    path = tmp_path / "x.json"
    path.write_text(json.dumps(data))
    return str(path)


def _rename(old: str, new: str):
    def change(job: dict) -> None:
        job[new] = job.pop(old)
    return change


@pytest.mark.parametrize(("change", "said"), [
    (_rename("gpus", "gpu"), "jobs[0]: 'gpus' is a required property; unknown key 'gpu' "
                             "(did you mean 'gpus'?)"),
    (_rename("duration", "durations"), "jobs[0]: 'duration' is a required property; unknown key "
                                       "'durations' (did you mean 'duration'?)"),
    (_rename("priority", "prioirty"), "jobs[0]: unknown key 'prioirty' (did you mean 'priority'?)"),
    (lambda job: job.pop("gpus"), "jobs[0]: 'gpus' is a required property"),
    (lambda job: job.update(zzz=1), "jobs[0]: unknown key 'zzz' (known: name, kind, gpus, "),
])
def test_a_misspelt_key_is_said_missing_and_unknown(tmp_path, capsys, change, said) -> None:
    path = _with_job(tmp_path, change)
    with pytest.raises(ValueError) as e:
        instances.load(path)
    assert str(e.value).startswith(f"{path}: {said}")
    assert main(["solve", path]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and said in err


def test_a_misspelt_top_level_key(tmp_path) -> None:
    data = json.loads(_instance_text())
    data["num_gpu"] = data.pop("num_gpus")
    path = tmp_path / "x.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"\(top level\): 'num_gpus' is a required property; "
                                         r"unknown key 'num_gpu' \(did you mean 'num_gpus'\?\)"):
        instances.load(path)


def test_check_keys_names_a_misspelt_key_beside_the_missing_one() -> None:
    with pytest.raises(ValueError, match=r"^x\.value: missing; unknown field 'valeu' beside it"):
        check_keys({"valeu": 1, "date": "d"}, ("value", "date"), where="x")
    with pytest.raises(ValueError, match=r"^x\.dat: unknown field \(expected value, date\); "
                                         r"did you mean 'date'\?$"):
        check_keys({"value": 1, "date": "d", "dat": 2}, ("value", "date"), where="x")
    with pytest.raises(ValueError, match=r"^x\.value: missing$"):
        check_keys({"date": "d"}, ("value", "date"), where="x")
