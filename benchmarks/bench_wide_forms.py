"""HiGHS alone on ``wide`` seeds under two reformulations tried for issue 41; prints, asserts nothing.

Neither reformulation is in the library: this script keeps the measurement
that says why. Per seed, HiGHS (``--threads`` threads, ``parallel`` as given,
no warm start) on three models of the same instance:

- ``x``: the time-indexed model of :func:`milp.build` (the library's);
- ``step``: the same model in cumulative variables ``z_k = sum_{i <= k} x_i``
  per job (``x = D z``, rows ``z_{k-1} <= z_k``): capacity rows of two entries
  per job instead of one per covering start, the same LP;
- ``shift``: the ``x`` model with a left-shift row per start ``s`` after the
  release of a job of at least ``--shift-gpus`` GPUs: the others' load at slot
  ``s - 1`` is at least ``C_{s-1} - g_j + 1`` when ``x_{j,s} = 1``. Valid for
  an optimum because a job's worth does not rise with its start: a job that
  fits a slot earlier moves there at no loss, and so on until none does.

Per model: status, value, dual bound, nodes, wall seconds, and the root bound
at the first node line of HiGHS's log with cuts in the LP. ``--cutoff`` tells HiGHS the library's
best known value (as ``objective_bound``, less 0.5), to see a proof's length
from the optimum.

Usage::

    python benchmarks/bench_wide_forms.py --seeds 7-7 --limit 120
    python benchmarks/bench_wide_forms.py --seeds 3,6 --threads 2 --parallel on --cutoff
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import instances
import milp
from instances.library import load_library
from milp.export import objective_scale, pass_model
from milp.formulation import ROW_SYM
from milp.highs import new_highs

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the benchmarks package

from benchmarks.args import seed_list


def _reformed(form: milp.Formulation, c: np.ndarray, A: sp.spmatrix, lower: np.ndarray,
              upper: np.ndarray) -> milp.Formulation:
    """``form`` with objective ``c`` and matrix ``A``: its rows, then rows valid for an optimum
    (kind ``ROW_SYM``, as the symmetry order rows) within ``lower`` and ``upper``."""
    added = A.shape[0] - form.num_rows
    return dataclasses.replace(
        form, c=c, A=sp.csc_matrix(A),
        row_lower=np.r_[form.row_lower, lower], row_upper=np.r_[form.row_upper, upper],
        row_kind=np.r_[form.row_kind, np.full(added, ROW_SYM, dtype=form.row_kind.dtype)],
        row_ref=np.r_[form.row_ref, np.zeros(added, dtype=form.row_ref.dtype)])


def step_model(form: milp.Formulation) -> milp.Formulation:
    """The flat model in cumulative variables per job (columns sorted by group, then start):
    column ``k`` is 1 when its job has started by its start."""
    n = form.num_x
    grp = form.col_group
    later = np.flatnonzero(np.r_[False, grp[1:] == grp[:-1]])
    D = sp.csc_matrix((np.r_[np.ones(n), -np.ones(later.size)],
                       (np.r_[np.arange(n), later], np.r_[np.arange(n), later - 1])), shape=(n, n))
    k = np.arange(later.size)
    M = sp.csr_matrix((np.r_[np.ones(k.size), -np.ones(k.size)],
                       (np.r_[k, k], np.r_[later - 1, later])), shape=(k.size, n))
    A = sp.vstack([(form.A @ D).tocsr(), M]).tocsc()
    A.eliminate_zeros()
    return _reformed(form, D.T @ form.c, A, np.full(k.size, -np.inf), np.zeros(k.size))


def shift_model(inst: instances.Instance, form: milp.Formulation,
                min_gpus: int) -> milp.Formulation:
    """The ``x`` model with the left-shift rows of the starts of jobs of ``min_gpus`` GPUs or more."""
    n = form.num_x
    job, start = form.col_job, form.col_start
    g, p, r = inst.gpus[job], inst.durations[job], inst.releases[job]
    cap = np.asarray(inst.batch_capacity()).ravel()
    slot = np.repeat(start, p) + (np.arange(p.sum()) - np.repeat(np.cumsum(p) - p, p))
    col = np.repeat(np.arange(n), p)
    cover = sp.csr_matrix((g[col].astype(float), (slot, col)), shape=(inst.horizon, n))
    sel = np.flatnonzero((g >= min_gpus) & (start > r) & (start >= 1))
    sel = sel[cap[start[sel] - 1] - g[sel] + 1 > 0]
    rows = cover[start[sel] - 1].tocoo()
    other = job[rows.col] != job[sel[rows.row]]
    R = sp.csr_matrix((np.r_[rows.data[other], -(cap[start[sel] - 1] - g[sel] + 1.0)],
                       (np.r_[rows.row[other], np.arange(sel.size)], np.r_[rows.col[other], sel])),
                      shape=(sel.size, n))
    return _reformed(form, form.c, sp.vstack([form.A, R]), np.zeros(sel.size),
                     np.full(sel.size, np.inf))


def run(model: milp.Formulation, form: milp.Formulation, args: argparse.Namespace,
        cutoff: float | None) -> dict[str, float | str]:
    """HiGHS on one model of ``form``'s instance, at ``form``'s objective scale; its figures,
    and the root bound read from its log."""
    h = new_highs(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "highs.log"
        for key, value in (("output_flag", True), ("log_to_console", False),
                           ("log_file", str(log)),
                           ("parallel", args.parallel), ("time_limit", args.limit),
                           ("mip_rel_gap", 1e-4)):
            h.setOptionValue(key, value)
        scale = pass_model(h, model, objective_scale(form.c))
        if cutoff is not None:
            h.setOptionValue("objective_bound", -(cutoff - 0.5) * scale)
        t0 = time.perf_counter()
        h.run()
        wall = time.perf_counter() - t0
        text = log.read_text()
    info = h.getInfo()
    # the first node line with cuts in the LP: "0 0 0 0.00% <bound> <sol> <gap> <cuts> <inlp> ..."
    root = re.findall(r"^\s*[A-Za-z]?\s+0\s+0\s+0\s+\S+\s+(\d+\.?\d*)\s+\S+\s+\S+\s+\d+\s+[1-9]\d*\s",
                      text, flags=re.M)
    return {"status": h.modelStatusToString(h.getModelStatus()),
            "value": info.objective_function_value / scale, "bound": info.mip_dual_bound / scale,
            "nodes": info.mip_node_count, "wall": wall,
            "root": float(root[0]) if root else float("nan"), "nnz": model.nnz,
            "rows": model.num_rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="7-7", help="wide seeds: 0-11, 7-7 (seed 7), 3 (seeds 0-2) or 0,5,7")
    ap.add_argument("--limit", type=float, default=120.0, help="HiGHS's seconds per model")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--parallel", default="choose", choices=("choose", "on", "off"))
    ap.add_argument("--models", default="x,step,shift")
    ap.add_argument("--shift-gpus", type=int, default=8, help="left-shift rows for jobs this wide")
    ap.add_argument("--cutoff", action="store_true", help="tell HiGHS the best known value")
    args = ap.parse_args()
    if not set(args.models.split(",")) <= {"x", "step", "shift"}:
        ap.error(f"--models: names from x, step, shift, got {args.models!r}")
    lib = load_library() if args.cutoff else None
    print(f"# HiGHS {args.threads} thread(s), parallel {args.parallel}, {args.limit:g} s a model")
    print("| seed | model | rows | nonzeros | root bound, first with cuts in the LP | status | value | bound "
          "| nodes | wall s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for seed in seed_list(args.seeds):
        inst = instances.generate("wide", seed=seed)
        form = milp.build(inst)
        cutoff = lib.get(inst.name).best_value if lib is not None else None
        for name in args.models.split(","):
            model = (form if name == "x" else step_model(form) if name == "step"
                     else shift_model(inst, form, args.shift_gpus))
            f = run(model, form, args, cutoff)
            print(f"| {seed} | {name} | {f['rows']} | {f['nnz']:,} | {f['root']:,.2f} | {f['status']} "
                  f"| {f['value']:,.0f} | {f['bound']:,.2f} | {f['nodes']:,} | {f['wall']:.1f} |",
                  flush=True)


if __name__ == "__main__":
    main()
