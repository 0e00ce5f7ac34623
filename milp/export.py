"""The formulation written out: to a HiGHS object, to PuLP, to MPS and LP files.

Everything here reads a formulation through :class:`ModelArrays` (what
:class:`milp.Formulation` is), so this module depends on no other of ``milp``.
"""

from __future__ import annotations

import math
import os
import sys
import threading
from typing import Any, Protocol

import numpy as np

from instances import Instance

__all__ = ["ModelArrays", "objective_scale", "pass_model", "pulp_model", "safe_name",
           "silence_banner", "unique_names", "write_model"]


class ModelArrays(Protocol):
    """The arrays and names of a MILP ``max c x`` within row and column bounds (read-only)."""

    @property
    def instance(self) -> Instance: ...

    @property
    def c(self) -> np.ndarray: ...

    @property
    def A(self) -> Any: ...

    @property
    def row_lower(self) -> np.ndarray: ...

    @property
    def row_upper(self) -> np.ndarray: ...

    @property
    def col_lower(self) -> np.ndarray: ...

    @property
    def col_upper(self) -> np.ndarray: ...

    @property
    def integrality(self) -> np.ndarray: ...

    @property
    def num_cols(self) -> int: ...

    @property
    def num_rows(self) -> int: ...

    @property
    def nnz(self) -> int: ...

    def col_names(self) -> list[str]: ...

    def row_names(self) -> list[str]: ...


_banner_lock = threading.Lock()
_banner_done: list[bool] = []


def silence_banner() -> None:
    """Create the process's first ``Highs`` with the C-level stdout closed.

    HiGHS prints its two-line banner to stdout when the first instance of a
    process is created, before any option can turn output off; that would
    break the command line's one-line ``--json`` output. Later instances
    print nothing.
    """
    with _banner_lock:
        if _banner_done:
            return
        import highspy

        sys.stdout.flush()
        saved = os.dup(1)
        try:
            with open(os.devnull, "w") as null:
                os.dup2(null.fileno(), 1)
                highspy.Highs()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        _banner_done.append(True)


def objective_scale(c: np.ndarray) -> float:
    """Power of two that brings the largest objective coefficient near 1,000.

    HiGHS reads a cost of 1e20 or more as infinite and treats costs near its
    tolerances (about 1e-7) as zero, so values far from 1 would give a
    refused model or a wrong optimum. Multiplying by a power of two is exact
    in floating point, and dividing HiGHS's objective and bound by it gives
    them back unchanged. Coefficients whose largest is within
    ``[1e-3, 1e6]`` keep their scale (1.0).
    """
    top = float(np.abs(c).max(initial=0.0))
    if top == 0.0 or 1e-3 <= top <= 1e6:
        return 1.0
    return float(2.0 ** (10 - math.ceil(math.log2(top))))


def pass_model(h: Any, form: ModelArrays, scale: float | None = None) -> float:
    """Pass ``form`` to ``h`` with its objective scaled (by :func:`objective_scale` unless
    ``scale`` is given); return the scale."""
    import highspy

    A = form.A
    scale = objective_scale(form.c) if scale is None else scale
    status = h.passModel(
        form.num_cols, form.num_rows, form.nnz,
        int(highspy.MatrixFormat.kColwise), int(highspy.ObjSense.kMaximize), 0.0,
        form.c * scale, form.col_lower, form.col_upper, form.row_lower, form.row_upper,
        A.indptr.astype(np.int32), A.indices.astype(np.int32), A.data,
        form.integrality.astype(np.int32),
    )
    if status == highspy.HighsStatus.kError:
        raise RuntimeError("HiGHS refused the model (passModel returned kError)")
    return scale


def pulp_model(form: ModelArrays) -> tuple[Any, list[Any]]:
    """The same model as a ``pulp.LpProblem`` (maximize), and its variables in column order.

    Rows and columns keep the formulation's order and names
    (:meth:`milp.Formulation.col_names`, :meth:`~milp.Formulation.row_names`,
    as sanitized by PuLP).
    """
    import pulp

    prob = pulp.LpProblem(safe_name(form.instance.name), pulp.LpMaximize)
    cols = form.col_names()
    # PuLP >= 3.3 creates variables through the problem; older ones directly
    make = getattr(prob, "add_variable", None) or pulp.LpVariable
    xs = [
        make(
            name, float(form.col_lower[i]), float(form.col_upper[i]),
            pulp.LpBinary if form.col_upper[i] == 1 else pulp.LpInteger,
        ) if form.integrality[i] else make(name, float(form.col_lower[i]), None, pulp.LpContinuous)
        for i, name in enumerate(cols)
    ]
    prob += pulp.LpAffineExpression(zip(xs, form.c.tolist())), "value"
    csr = form.A.tocsr()
    indptr, indices, data = csr.indptr, csr.indices.tolist(), csr.data.tolist()
    for r, name in enumerate(form.row_names()):
        lo, hi = indptr[r], indptr[r + 1]
        expr = pulp.LpAffineExpression([(xs[indices[i]], data[i]) for i in range(lo, hi)])
        up, low = float(form.row_upper[r]), float(form.row_lower[r])
        if np.isfinite(up):
            prob += pulp.LpConstraint(expr, pulp.LpConstraintLE, name, up)
        if np.isfinite(low):
            prob += pulp.LpConstraint(expr, pulp.LpConstraintGE, name + "_lo", low)
    return prob, xs


def write_model(form: ModelArrays, path: str, suffix: str) -> None:
    """Write ``form`` with HiGHS's own writer, as MPS (``suffix=".mps"``) or LP (``".lp"``).

    HiGHS picks the format by the file's suffix, appended to ``path`` unless
    it ends so. The arrays go to HiGHS in one ``passModel`` (objective
    unscaled) with the formulation's names
    (characters other than letters, digits, ``_`` and ``.`` become ``_``, as
    PuLP writes them); then ``writeModel``.

    Raises
    ------
    RuntimeError
        If HiGHS refuses the model or cannot write the file.
    """
    import highspy

    text = str(path)
    if not text.lower().endswith(suffix):
        text += suffix
    silence_banner()
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    pass_model(h, form, scale=1.0)
    lp = h.getLp()
    # names an LP file allows (HiGHS writes c0, c1, ... for all when one is not)
    lp.col_names_ = [safe_name(n) for n in form.col_names()]
    lp.row_names_ = [safe_name(n) for n in form.row_names()]
    lp.model_name_ = safe_name(form.instance.name)
    if h.passModel(lp) == highspy.HighsStatus.kError:
        raise RuntimeError("HiGHS refused the named model (passModel returned kError)")
    if h.writeModel(text) == highspy.HighsStatus.kError:
        raise RuntimeError(f"{text}: HiGHS could not write the model")


def safe_name(name: str) -> str:
    """``name`` with every character but letters, digits, ``_`` and ``.`` replaced by ``_``."""
    return "".join(ch if ch.isalnum() or ch in "_." else "_" for ch in name) or "model"


def unique_names(names: list[str]) -> list[str]:
    """``names`` made unique once sanitized (:func:`safe_name`): a ``_c<i>`` suffix where two meet."""
    safe = [safe_name(n) for n in names]
    seen: dict[str, int] = {}
    for s in safe:
        seen[s] = seen.get(s, 0) + 1
    return [n if seen[s] == 1 else f"{n}_c{i}" for i, (n, s) in enumerate(zip(names, safe))]
