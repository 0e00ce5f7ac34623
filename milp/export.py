"""The formulation written out: readable names, a PuLP problem, MPS and LP files (HiGHS's writer)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .formulation import Formulation

__all__ = ["col_names", "pulp_model", "row_names", "write_model"]


def col_names(form: Formulation) -> list[str]:
    """Readable, unique column names, ``x_<job>_s<start>``.

    An aggregated group's column is named after its first job with the
    group size, ``x_<job>+<n-1>_s<start>``. Names that would collide once
    an LP writer replaces its special characters get a ``_c<col>`` suffix.
    """
    names = []
    for col in range(form.num_cols):
        k = int(form.col_group[col])
        job = form.instance.jobs[int(form.col_job[col])].name
        extra = f"+{form.groups[k].size - 1}" if form.groups[k].size > 1 else ""
        names.append(f"x_{job}{extra}_s{int(form.col_start[col])}")
    return _unique(names)


def row_names(form: Formulation) -> list[str]:
    """Readable, unique row names: ``assign_<job>``, ``cap_t<slot>``, ``clique_t<slot>``,
    ``round_t<slot>``."""
    from .formulation import ROW_ASSIGN, ROW_CAPACITY, ROW_ROUNDED

    names = []
    for kind, ref in zip(form.row_kind.tolist(), form.row_ref.tolist()):
        if kind == ROW_ASSIGN:
            names.append(f"assign_{form.instance.jobs[int(form.groups[ref][0])].name}")
        elif kind == ROW_CAPACITY:
            names.append(f"cap_t{ref}")
        elif kind == ROW_ROUNDED:
            names.append(f"round_t{ref}")
        else:
            names.append(f"clique_t{ref}")
    return _unique(names)


def pulp_model(form: Formulation) -> tuple[Any, list[Any]]:
    """The same model as a ``pulp.LpProblem`` (maximize), and its variables in column order.

    Rows and columns keep the formulation's order and names (:func:`col_names`,
    :func:`row_names`, as sanitized by PuLP).
    """
    import pulp

    prob = pulp.LpProblem(safe_name(form.instance.name), pulp.LpMaximize)
    cols = col_names(form)
    # PuLP >= 3.3 creates variables through the problem; older ones directly
    make = getattr(prob, "add_variable", None) or pulp.LpVariable
    xs = [
        make(
            name, float(form.col_lower[i]), float(form.col_upper[i]),
            pulp.LpBinary if form.col_upper[i] == 1 else pulp.LpInteger,
        )
        for i, name in enumerate(cols)
    ]
    prob += pulp.LpAffineExpression(zip(xs, form.c.tolist())), "value"
    csr = form.A.tocsr()
    indptr, indices, data = csr.indptr, csr.indices.tolist(), csr.data.tolist()
    for r, name in enumerate(row_names(form)):
        lo, hi = indptr[r], indptr[r + 1]
        expr = pulp.LpAffineExpression([(xs[indices[i]], data[i]) for i in range(lo, hi)])
        up, low = float(form.row_upper[r]), float(form.row_lower[r])
        if np.isfinite(up):
            prob += pulp.LpConstraint(expr, pulp.LpConstraintLE, name, up)
        if np.isfinite(low):
            prob += pulp.LpConstraint(expr, pulp.LpConstraintGE, name + "_lo", low)
    return prob, xs


def write_model(form: Formulation, path: str, suffix: str) -> None:
    """Write ``form`` with HiGHS's own writer, as MPS (``suffix=".mps"``) or LP (``".lp"``).

    HiGHS picks the format by the file's suffix, appended to ``path`` unless
    it ends so. The arrays go to HiGHS in one ``passModel`` (objective
    unscaled) with the names of :func:`col_names` and :func:`row_names`
    (characters other than letters, digits, ``_`` and ``.`` become ``_``, as
    PuLP writes them); then ``writeModel``.

    Raises
    ------
    RuntimeError
        If HiGHS refuses the model or cannot write the file.
    """
    import highspy

    from .highs import pass_model, silence_banner

    text = str(path)
    if not text.lower().endswith(suffix):
        text += suffix
    silence_banner()
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    pass_model(h, form, scale=1.0)
    lp = h.getLp()
    # names an LP file allows (HiGHS writes c0, c1, ... for all when one is not)
    lp.col_names_ = [safe_name(n) for n in col_names(form)]
    lp.row_names_ = [safe_name(n) for n in row_names(form)]
    lp.model_name_ = safe_name(form.instance.name)
    if h.passModel(lp) == highspy.HighsStatus.kError:
        raise RuntimeError("HiGHS refused the named model (passModel returned kError)")
    if h.writeModel(text) == highspy.HighsStatus.kError:
        raise RuntimeError(f"{text}: HiGHS could not write the model")


def safe_name(name: str) -> str:
    """``name`` with every character but letters, digits, ``_`` and ``.`` replaced by ``_``."""
    return "".join(ch if ch.isalnum() or ch in "_." else "_" for ch in name) or "model"


def _unique(names: list[str]) -> list[str]:
    safe = [safe_name(n) for n in names]
    seen: dict[str, int] = {}
    for s in safe:
        seen[s] = seen.get(s, 0) + 1
    return [n if seen[s] == 1 else f"{n}_c{i}" for i, (n, s) in enumerate(zip(names, safe))]
