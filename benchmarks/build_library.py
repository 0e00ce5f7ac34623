"""Build the benchmark library ``gpusched-lib/1`` shipped in ``instances/data/library``.

For every instance of :func:`plan` (every family, instances on nodes, trace
imports), in one process:

* a heuristic schedule: ``best`` (on nodes too: it places jobs);
* ``gpusched.solve(inst, "milp", time_limit=..., threads=2)`` (warm started by ``best``,
  the LNS helper beside HiGHS);
* ``milp.bound(inst, "lagrangian", time_limit=..., lower=<best value>)``.

The best known schedule is the best schedule that passes the checker; the
best known bound is the smallest valid one (not below the best known value):
the Lagrangian bound with its certificate, or the MILP's bound with the
solver run that proved it (solver, version, time limit, status, the bound's
source). A MILP stopped at its limit still proves its bound; the status says so.

The index is rewritten after each entry, so an interrupted build keeps what
it finished; ``--resume`` keeps the entries whose instance is unchanged. A
rebuilt entry never loses ground: its old schedule and bound (re-checked)
compete with the new runs, so a rebuild with longer limits only improves it.

Usage::

    python benchmarks/build_library.py                  # the whole library (about 20 min)
    python benchmarks/build_library.py --only small-s0,medium-s3 --resume
    python benchmarks/build_library.py --scale 0.2      # every time limit x 0.2 (a quick try)
    python benchmarks/build_library.py --resume --docs docs/library.md   # new entries, the table
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import gpusched
import instances
import milp
from instances import Instance
from instances.io import atomic_write_text
from instances.library import LIBRARY_FORMAT, content_hash, default_library_dir

logger = logging.getLogger("build_library")

VERSION = "2026.12"
"""The library version this script builds."""


@dataclass(frozen=True)
class Spec:
    """One library instance: how it is made and the time limits spent on it."""

    family: str
    source: str
    make: Callable[[], Instance]
    milp_s: float
    best_s: float = 3.0
    bound_s: float = 10.0


def _gen(family: str, seed: int, **params: Any) -> Callable[[], Instance]:
    return lambda: instances.generate(family, seed=seed, **params)


def _src(family: str, seed: int, **params: Any) -> str:
    extra = "".join(f", {k}={v}" for k, v in sorted(params.items()))
    return f"generate({family!r}, seed={seed}{extra})"


def _on_nodes(make: Callable[[], Instance], how: str) -> Callable[[], Instance]:
    def build() -> Instance:
        inst = make()
        if how == "n8":
            return instances.with_nodes(inst, 8).replace(name=f"{inst.name}-n8")
        mix = instances.openb_node_mix(inst.num_gpus, seed=0)
        return instances.with_nodes(inst, mix).replace(name=f"{inst.name}-openb")
    return build


def _openb(day: int, nodes: bool) -> Callable[[], Instance]:
    def build() -> Instance:
        if nodes:
            inst = instances.from_trace("openb", "openb:default", start=day * 86400,
                                        nodes="openb:nodes", num_gpus=16, service="servegen:0.3")
            return inst.replace(name=f"openb-d{day}-g16-nodes")
        inst = instances.from_trace("openb", "openb:default", start=day * 86400, num_gpus=16,
                                    service="servegen:0.3")
        return inst.replace(name=f"openb-d{day}-g16-flat")
    return build


def plan() -> list[Spec]:
    """Every instance of the library, in index order."""
    out: list[Spec] = []
    for s in range(5):
        out.append(Spec("seed-training-heavy", _src("seed-training-heavy", s),
                        _gen("seed-training-heavy", s), 10))
    for fam in instances.families.SEED_SCENARIOS:
        for s in range(2):
            out.append(Spec(fam, _src(fam, s), _gen(fam, s), 10))
    for s in range(8):
        out.append(Spec("small", _src("small", s), _gen("small", s), 10))
    for s in range(10):
        out.append(Spec("medium", _src("medium", s), _gen("medium", s), 20, best_s=5))
    for n, g, s, lim in ((500, 64, 0, 40), (1000, 128, 1, 60), (2000, 256, 0, 60)):
        p = {"num_jobs": n, "num_gpus": g}
        out.append(Spec("large", _src("large", s, **p), _gen("large", s, **p), lim, best_s=8,
                        bound_s=20))
    for s in range(4):
        out.append(Spec("trace-servegen", _src("trace-servegen", s), _gen("trace-servegen", s), 15))
    # instances on nodes: 8-GPU nodes and the openb cluster's node mix
    for s in range(4):
        out.append(Spec("medium", _src("medium", s) + " | with_nodes(8)",
                        _on_nodes(_gen("medium", s), "n8"), 20))
    for s in range(4, 8):
        out.append(Spec("medium", _src("medium", s) + " | with_nodes(openb_node_mix(G, seed=0))",
                        _on_nodes(_gen("medium", s), "openb"), 20))
    out.append(Spec("hc-multi-service", _src("hc-multi-service", 0) + " | with_nodes(8)",
                    _on_nodes(_gen("hc-multi-service", 0), "n8"), 15))
    out.append(Spec("hc-mixed", _src("hc-mixed", 0) + " | with_nodes(openb_node_mix(G, seed=0))",
                    _on_nodes(_gen("hc-mixed", 0), "openb"), 15))
    p = {"num_jobs": 500, "num_gpus": 64}
    out.append(Spec("large", _src("large", 0, **p) + " | with_nodes(8)",
                    _on_nodes(_gen("large", 0, **p), "n8"), 40, bound_s=20))
    out.append(Spec("large", _src("large", 0, **p) + " | with_nodes(openb_node_mix(G, seed=0))",
                    _on_nodes(_gen("large", 0, **p), "openb"), 40, bound_s=20))
    out.append(Spec("trace-servegen", _src("trace-servegen", 0) + " | with_nodes(8)",
                    _on_nodes(_gen("trace-servegen", 0), "n8"), 15))
    # trace imports: one-day windows of the openb trace, 16 GPUs, ServeGen traffic at 30%
    for day in (118, 124, 132, 140, 147):
        out.append(Spec("openb", f"from_trace('openb', 'openb:default', start={day}*86400, "
                        "nodes='openb:nodes', num_gpus=16, service='servegen:0.3')",
                        _openb(day, True), 20))
    out.append(Spec("openb", "from_trace('openb', 'openb:default', start=124*86400, "
                    "num_gpus=16, service='servegen:0.3')", _openb(124, False), 20))
    # the openb-day family (one day of openb pods in 15-minute slots on the openb node mix),
    # where it exists: three days, each its own seed
    if "openb-day" in instances.FAMILIES:
        for s in (3, 9, 17):
            out.append(Spec("openb-day", _src("openb-day", s), _gen("openb-day", s), 20))
    # arrival traces (version 4): a 3-day ITP window and a 1-day Philly window, value objective
    out.append(Spec("itp", _src("itp", 0), _gen("itp", 0), 20, bound_s=20))
    p = {"days": 1}
    out.append(Spec("philly", _src("philly", 0, **p), _gen("philly", 0, **p), 20, bound_s=20))
    # issue 41's class: wide jobs (8 and 4 of 16 GPUs) under a two-service curve, 12 seeds
    if "wide" in instances.FAMILIES:
        for s in range(12):
            out.append(Spec("wide", _src("wide", s), _gen("wide", s), 30, best_s=5))
    return out


def _heuristic(inst: Instance, limit: float) -> instances.Result:
    return gpusched.solve(inst, "best", time_limit=limit)  # on nodes too: best places jobs


def _previous(keep: dict[str, Any] | None, inst: Instance, root: Path) -> tuple[
        list[tuple[float, str, instances.Schedule, str]],
        list[tuple[float, int, dict[str, Any], str, Any]]]:
    """The schedule and bound of the entry being rebuilt, re-checked, as candidates.

    A rebuild never loses a best known value or bound: the old schedule competes
    with the new runs (re-checked against the instance) and the old bound with
    the new bounds (a certificate re-checked, a solver run taken as recorded).
    """
    if keep is None or keep["instance_sha256"] != content_hash(inst):
        return [], []
    bk, bd = keep["best_known"], keep["bound"]
    sched = instances.load_schedule(root / bk["schedule"])
    try:
        scheds = [(instances.evaluate(inst, sched).value, bk["method"], sched, bk["date"])]
    except instances.InfeasibleScheduleError as e:
        logger.warning("%s: the old schedule fails the checker (%s): dropped", inst.name, e)
        return [], []
    bounds: list[tuple[float, int, dict[str, Any], str, Any]] = []
    if "certificate" in bd:
        cert = instances.load_bound(root / bd["certificate"])
        if instances.check_bound(inst, cert, sched)[0]:
            bounds.append((float(bd["value"]), 0, {"certificate": bd["certificate"]}, bd["date"],
                           cert))
    else:
        bounds.append((float(bd["value"]), 1, {"solver": bd["solver"]}, bd["date"], None))
    return scheds, bounds


def build_entry(spec: Spec, inst: Instance, root: Path, scale: float, date: str,
                keep: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run the methods on one instance, write its files, return its index entry.

    ``keep``: the instance's current entry, whose schedule and bound stay when
    the new runs do not beat them (:func:`_previous`).
    """
    name = inst.name
    tol = 1e-9
    old_scheds, old_bounds = _previous(keep, inst, root)
    cands: list[tuple[float, str, instances.Schedule, str]] = list(old_scheds)
    t0 = time.perf_counter()
    heur = _heuristic(inst, spec.best_s * scale)
    t_heur = time.perf_counter() - t0
    cands.append((instances.evaluate(inst, heur.schedule).value, "best", heur.schedule, date))
    t0 = time.perf_counter()
    mr = gpusched.solve(inst, "milp", time_limit=spec.milp_s * scale, threads=2)  # LNS helper on
    t_milp = time.perf_counter() - t0
    cands.append((instances.evaluate(inst, mr.schedule).value, "milp", mr.schedule, date))
    # the largest; ties: the first (the old entry's, then the heuristic's)
    value, method, sched, found = max(cands, key=lambda c: c[0])
    t0 = time.perf_counter()
    b = milp.bound(inst, "lagrangian", time_limit=spec.bound_s * scale, lower=value)
    t_bound = time.perf_counter() - t0
    cert = b.certificate(inst)
    ok, _ = instances.check_bound(inst, cert, sched)
    floor = value - tol * max(1.0, abs(value))  # a bound below the best value is wrong
    bounds: list[tuple[float, int, dict[str, Any], str, Any]] = [
        x for x in old_bounds if x[0] >= floor]
    if ok:
        bounds.append((b.value, 0, {"certificate": f"bounds/{name}.json"}, date, cert))
    if mr.upper_bound is not None and str(mr.status) in ("optimal", "time_limit"):
        if mr.upper_bound >= floor:
            solver = {"name": gpusched.EXACT_METHODS["milp"], "version": version("highspy"),
                      "time_limit": spec.milp_s * scale, "status": str(mr.status),
                      "bound_method": mr.bound_method}
            bounds.append((float(mr.upper_bound), 1, {"solver": solver}, date, None))
        else:
            logger.warning("%s: the MILP's bound %r is below the best value %r: dropped",
                           name, mr.upper_bound, value)
    # the smallest; the certificate (checkable by anyone) when within 1e-9 of the solver's
    ub, _, proof, proved, ub_cert = min(
        bounds, key=lambda x: (x[0] * (1 - tol * (x[1] == 0)), x[1]))
    instances.save(inst, root / "instances" / f"{name}.json")
    instances.save_schedule(sched, root / "schedules" / f"{name}.json")
    cert_path = root / "bounds" / f"{name}.json"
    if "certificate" in proof:
        instances.save_bound(ub_cert, cert_path)
    elif cert_path.exists():
        cert_path.unlink()
    logger.info(
        "%s: best %.6g (%.1f s), milp %s %.6g bound %s (%.1f s), lagrangian %.6g (%.1f s): "
        "best %.6g by %s, bound %.6g (%s), gap %.3f%%",
        name, cands[len(old_scheds)][0], t_heur, mr.status, mr.value, mr.upper_bound,
        t_milp, b.value, t_bound, value, method, ub, next(iter(proof)),
        100 * (ub - value) / ub if ub else 0.0,
    )
    return {
        "name": name, "family": spec.family, "source": spec.source,
        "instance": f"instances/{name}.json", "instance_sha256": content_hash(inst),
        "best_known": {"value": value, "schedule": f"schedules/{name}.json", "method": method,
                       "date": found},
        "bound": {"value": ub, "date": proved, **proof},
    }


TABLE_MARKER = "<!-- the table: gpusched library list --format md -->"
"""The line of docs/library.md after which the table of best known values stands."""


def write_docs_table(page: Path, root: Path) -> None:
    """Replace what follows :data:`TABLE_MARKER` in ``page`` by the library's table."""
    from gpusched import library

    head, marker, _ = page.read_text().partition(TABLE_MARKER)
    if not marker:
        raise ValueError(f"{page}: no line {TABLE_MARKER!r}")
    atomic_write_text(page, head + marker + "\n" + library.table(root).render("md"))


def _write_index(root: Path, entries: list[dict[str, Any]]) -> None:
    text = json.dumps({"format": LIBRARY_FORMAT, "version": VERSION, "entries": entries}, indent=1)
    atomic_write_text(root / "index.json", text + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=default_library_dir(), help="library folder")
    ap.add_argument("--only", default="", help="comma-separated names to (re)build")
    ap.add_argument("--resume", action="store_true",
                    help="keep the entries already in the index whose instance is unchanged")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every time limit")
    ap.add_argument("--docs", type=Path, default=None,
                    help="a page whose table (after its TABLE_MARKER line) to rewrite")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    root: Path = args.out
    only = {x for x in args.only.split(",") if x}
    old: dict[str, dict[str, Any]] = {}
    index = root / "index.json"
    if index.exists() and (args.resume or only):
        old = {e["name"]: e for e in json.loads(index.read_text())["entries"]}
    date = time.strftime("%Y-%m-%d", time.gmtime())
    entries: list[dict[str, Any]] = []
    t_all = time.perf_counter()
    for spec in plan():
        inst = spec.make()
        keep = old.get(inst.name)
        rebuild = inst.name in only if only else not (
            keep is not None and keep["instance_sha256"] == content_hash(inst))
        if keep is not None and not rebuild:
            entries.append(keep)
            continue
        if only and inst.name not in only:
            continue
        entries.append(build_entry(spec, inst, root, args.scale, date, keep))
        _write_index(root, entries)
    _write_index(root, entries)
    if args.docs is not None:
        write_docs_table(args.docs, root)
    size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    print(f"{len(entries)} entries in {root.name}/, {size / 1e6:.2f} MB, "
          f"built in {time.perf_counter() - t_all:.0f} s")


if __name__ == "__main__":
    main()
