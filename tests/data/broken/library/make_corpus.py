"""Write the broken-library corpus beside this file (run from the repository root).

``base/`` is a valid two-entry library (one bound proved by a Lagrangian
certificate, one by a solver run); every other folder is ``base/`` with one
thing broken, and ``expected.json`` says how it must be refused: exit 2
(the library cannot be read: ``load_library`` raises) or exit 1 (an entry
does not hold: ``verify`` reports it, ``check_entry`` raises), and the
fragments the message must name.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import gpusched
import instances
import milp
from instances.library import LIBRARY_FORMAT, content_hash

HERE = Path(__file__).parent


def _entry(root: Path, inst: instances.Instance, proof: str) -> dict:
    r = gpusched.solve(inst, "milp", time_limit=10)
    name = inst.name
    instances.save(inst, root / "instances" / f"{name}.json")
    instances.save_schedule(r.schedule, root / "schedules" / f"{name}.json")
    if proof == "certificate":
        b = milp.bound(inst, "lagrangian", lower=r.value)
        cert = b.certificate(inst)
        instances.save_bound(cert, root / "bounds" / f"{name}.json")
        bound = {"value": b.value, "date": "2026-12-01", "certificate": f"bounds/{name}.json"}
    else:
        bound = {"value": r.upper_bound, "date": "2026-12-01",
                 "solver": {"name": "highs", "version": "1.16.0", "time_limit": 10.0,
                            "status": str(r.status), "bound_method": r.bound_method}}
    return {"name": name, "family": inst.meta["family"], "source": f"generate({inst.meta['family']!r}, seed=0)",
            "instance": f"instances/{name}.json", "instance_sha256": content_hash(inst),
            "best_known": {"value": r.value, "schedule": f"schedules/{name}.json", "method": "milp",
                           "date": "2026-12-01"},
            "bound": bound}


def _index(root: Path) -> dict:
    return json.loads((root / "index.json").read_text())


def _write_index(root: Path, data: dict) -> None:
    (root / "index.json").write_text(json.dumps(data, indent=1) + "\n")


def _case(name: str) -> Path:
    dst = HERE / name
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(HERE / "base", dst)
    return dst


def main() -> None:
    base = HERE / "base"
    if base.exists():
        shutil.rmtree(base)
    a = instances.generate("small", seed=0)
    b = instances.generate("seed-training-heavy", seed=0)
    entries = [_entry(base, a, "certificate"), _entry(base, b, "solver")]
    _write_index(base, {"format": LIBRARY_FORMAT, "version": "2026.12", "entries": entries})
    sa, sb = "small-s0", "seed-training-heavy-s0"

    # exit 1: an entry does not hold
    d = _case("infeasible-schedule")  # every job of small-s0 starts at slot 0
    p = d / "schedules" / f"{sa}.json"
    s = json.loads(p.read_text())
    s["starts"] = {j.name: 0 for j in a.jobs}
    p.write_text(json.dumps(s, indent=1) + "\n")

    d = _case("bound-below-value")  # the solver's bound lowered below the schedule's value
    x = _index(d)
    x["entries"][1]["bound"]["value"] = x["entries"][1]["best_known"]["value"] - 1.0
    _write_index(d, x)

    d = _case("certificate-does-not-hold")  # every multiplier 100: L(lam) far above the stated value
    p = d / "bounds" / f"{sa}.json"
    c = json.loads(p.read_text())
    c["multipliers"] = [100.0] * len(c["multipliers"])
    p.write_text(json.dumps(c) + "\n")

    d = _case("certificate-wrong-length")  # one multiplier short
    p = d / "bounds" / f"{sa}.json"
    c = json.loads(p.read_text())
    c["multipliers"] = c["multipliers"][:-1]
    p.write_text(json.dumps(c) + "\n")

    d = _case("value-not-the-schedules")  # best_known.value above what the schedule achieves
    x = _index(d)
    x["entries"][1]["best_known"]["value"] += 5.0
    _write_index(d, x)

    d = _case("instance-changed")  # a job's priority changed in the instance file
    p = d / "instances" / f"{sb}.json"
    p.write_text(p.read_text().replace('"priority": ', '"priority": 1', 1))

    # exit 2: the library cannot be read
    d = _case("missing-file")
    (d / "schedules" / f"{sb}.json").unlink()

    d = _case("unknown-format")
    x = _index(d)
    x["format"] = "gpusched-lib/9"
    _write_index(d, x)

    d = _case("truncated-index")
    text = (d / "index.json").read_text()
    (d / "index.json").write_text(text[: len(text) // 2])

    d = _case("unknown-field")
    x = _index(d)
    x["entries"][0]["best_known"]["optimal"] = True
    _write_index(d, x)

    d = _case("two-proofs")  # a bound with a certificate and a solver run
    x = _index(d)
    x["entries"][0]["bound"]["solver"] = x["entries"][1]["bound"]["solver"]
    _write_index(d, x)


if __name__ == "__main__":
    main()
