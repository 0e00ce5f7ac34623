"""The options of :func:`milp.solve`, as one typed, checked object.

:class:`MILPParams` holds what a solve is asked to do (limits, backend,
formulation, bounds held beside the backend); what it is given to work from
(a warm start, incumbent hooks, a finished flat solve or relaxation, a
Lagrangian bound found earlier, a progress bar) stays a keyword of
:func:`milp.solve`. ::

    p = MILPParams(time_limit=30, threads=2, cliques=True)
    milp.solve(inst, params=p)
    milp.solve(inst, params=p, mip_gap=0)          # a keyword overrides the field
    milp.solve(inst, time_limit=30, threads=2)     # the same as MILPParams(...)
    MILPParams.from_mapping({"mip_gap": 0, "presolve": "off"})  # a TOML table, say
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from instances.arrays import Reservation

from .core import check_args
from .cuts import check_rounding
from .formulation import DEFAULT_MAX_COLUMNS, DEFAULT_ROUNDING
from .shares import RELAXATIONS
from .symmetry import SYMMETRY

__all__ = ["FLAT_SHARE", "MILPParams"]

FLAT_SHARE = 0.1
"""On nodes, the share of :func:`milp.solve`'s time limit the flat solve first may take (at most
10 s)."""

_FLAGS = ("aggregate", "cliques", "fixing", "windows")


@dataclass(frozen=True)
class MILPParams:
    """How :func:`milp.solve` solves an instance: limits, backend, formulation and bounds.

    Change a field with :func:`dataclasses.replace` or :meth:`with_options`;
    :meth:`from_mapping` reads one from plain values (a TOML table, ``--param``
    flags), the names that are not fields becoming backend options.

    Attributes
    ----------
    time_limit
        Wall-clock seconds for everything (model build, LP relaxation, search);
        default 60, ``>= 0``.
    mip_gap
        Relative gap at which the search stops and reports ``optimal``
        (default ``1e-4``, in ``[0, 1)``).
    threads
        Solver threads (default 1, an integer ``>= 1``).
    backend
        A key of :data:`milp.BACKENDS`: ``"highs"`` (default; method ``milp``),
        ``"pulp"`` (``milp-pulp``), ``"cpsat"`` (``cpsat``) or ``"portfolio"``
        (method ``milp``: HiGHS and CP-SAT in parallel, for ``threads >= 2``).
    max_columns
        Refuse larger models (see :func:`milp.build`); an integer ``>= 0``.
    aggregate, cliques, rounding
        Formulation options (see :func:`milp.build`); ``rounding`` is held as a
        tuple of integers ``>= 2``.
    windows
        Add the window rows of :mod:`milp.wide` to the model HiGHS solves
        (jobs that cannot share a slot, at most ``k`` of them whole in a window;
        default ``False``, measured in docs/milp.md).
    lagrangian
        Compute a Lagrangian bound (:func:`milp.bound`; on nodes the flat
        relaxation's, valid there too) before the backend runs, within a
        tenth of the time limit: ``None`` (default) for models of 50,000
        columns or more, and afterwards (a short search) whenever the
        backend left no dual or LP bound; ``True`` always, ``False`` never. A
        :class:`milp.Bound` found earlier for the instance is not an option
        but an input: ``milp.solve(inst, lagrangian=bound)`` holds it as it is.
    fixing
        Reduced-cost fixing (:mod:`milp.fixing`) relative to the warm
        start's value ``V`` before the backend runs; the reduced model's
        bounds then count as ``max(V, bound)``.
    symmetry
        On nodes, the handling of identical nodes (:data:`milp.SYMMETRY`);
        ``None`` (default): ``"none"`` for CP-SAT, ``"fix"`` otherwise.
    flat_share
        On nodes, the share of ``time_limit`` (at most 10 s) for solving the
        flat model first, in ``[0, 1]`` (default :data:`FLAT_SHARE`): its bound
        bounds the node optimum, its schedule placed on the nodes is a warm
        start. ``0``: no flat solve.
    relaxation
        On model version 3, the relaxation solved first in place of the flat
        model (``flat_share`` of the time, at most 10 s), its bound held
        (named by its kind): a key of :data:`milp.RELAXATIONS`; ``None``
        (default): ``"fluid"`` with shared jobs (its point, given GPU slots
        first fit, is a warm start too), ``"flat"`` otherwise.
    reservation
        ``"curve"`` (default) or ``"peak"``: the model of :func:`milp.build` under it
        (the pool row at ``G - P``, each node its GPUs less those peak withholds there,
        by index on version 3), and the schedule checked under it with the reservation
        enforced. Under ``peak`` a warm start that breaks the peak reservation is left
        out (said in the message), the flat solve first (on nodes) is under ``peak``
        too and its schedule not placed, and the bounds held under ``curve`` (the
        Lagrangian, a relaxation's) stay valid: every ``peak`` schedule is a ``curve`` one.
    backend_options
        Options of the backend by name, held read-only. HiGHS: ``root_lp``,
        ``seed``, ``cutoff`` (a probe whose closed tree proves a bound) and HiGHS
        options by name (see :func:`milp.highs.solve_highs`); CP-SAT: ``seed`` and
        CP-SAT parameters by name. Checked by the backend when it runs
        (``params: ...``); ``lns_helper`` is refused here (it is
        :func:`matheuristics.solve_milp`'s).

    Raises
    ------
    ValueError
        For a field out of its range, naming it (``"mip_gap: must be in [0, 1), got 1.5"``).
    """

    time_limit: float = 60.0
    mip_gap: float = 1e-4
    threads: int = 1
    backend: str = "highs"
    max_columns: int = DEFAULT_MAX_COLUMNS
    aggregate: bool = True
    cliques: bool = False
    rounding: tuple[int, ...] = DEFAULT_ROUNDING
    windows: bool = False
    lagrangian: bool | None = None
    fixing: bool = False
    symmetry: str | None = None
    flat_share: float = FLAT_SHARE
    relaxation: str | None = None
    reservation: Reservation = "curve"
    backend_options: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        check_args(self.backend, self.time_limit, self.mip_gap, self.threads)
        if not (isinstance(self.max_columns, (int, np.integer)) and not isinstance(
                self.max_columns, bool) and self.max_columns >= 0):
            raise ValueError(f"max_columns: must be an integer >= 0, got {self.max_columns!r}")
        for name in _FLAGS:
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name}: must be True or False, got {getattr(self, name)!r}")
        object.__setattr__(self, "rounding", tuple(int(d) for d in check_rounding(self.rounding)))
        if not isinstance(self.lagrangian, bool | None):
            raise ValueError(f"lagrangian: must be True, False or None, got {self.lagrangian!r} "
                             "(a bound found earlier is given to milp.solve(lagrangian=...))")
        if self.symmetry is not None and self.symmetry not in SYMMETRY:
            raise ValueError(f"symmetry: must be one of {list(SYMMETRY)}, got {self.symmetry!r}")
        if not (isinstance(self.flat_share, (int, float)) and not isinstance(self.flat_share, bool)
                and 0 <= self.flat_share <= 1):
            raise ValueError(f"flat_share: must be in [0, 1], got {self.flat_share!r}")
        if self.relaxation is not None and self.relaxation not in RELAXATIONS:
            raise ValueError(f"relaxation: must be one of {list(RELAXATIONS)}, "
                             f"got {self.relaxation!r}")
        if self.reservation not in ("curve", "peak"):
            raise ValueError(f"reservation: must be 'curve' or 'peak', got {self.reservation!r}")
        self._check_backend_options()

    def _check_backend_options(self) -> None:
        """Hold the backend options read-only, refusing what is not one."""
        if not isinstance(self.backend_options, Mapping) or not all(
                isinstance(k, str) for k in self.backend_options):
            raise ValueError("backend_options: must be a mapping of option names to values, "
                             f"got {self.backend_options!r}")
        if "lns_helper" in self.backend_options:
            raise ValueError(
                "lns_helper: the LNS helper is added above the MILP, by matheuristics.solve_milp; "
                "milp.solve takes incumbent hooks (hooks=)"
            )
        object.__setattr__(self, "backend_options", MappingProxyType(dict(self.backend_options)))

    @classmethod
    def fields(cls) -> tuple[str, ...]:
        """The names of the fields (the options :meth:`from_mapping` does not pass to the backend)."""
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_mapping(cls, options: Mapping[str, Any], base: MILPParams | None = None) -> MILPParams:
        """The params of plain values: fields by name, every other name a backend option.

        Parameters
        ----------
        options
            Option names and values (a TOML table, ``--param`` flags, the
            keywords of :func:`milp.solve`). A ``backend_options`` mapping among
            them is merged like the other backend options.
        base
            The params the values override (default: :class:`MILPParams`'s
            defaults); its backend options are kept, those given added over them.

        Raises
        ------
        ValueError
            For a bad value, naming its field.
        """
        base = cls() if base is None else base
        names = set(cls.fields()) - {"backend_options"}
        given = {k: v for k, v in options.items() if k in names}
        extra = {k: v for k, v in options.items() if k not in names and k != "backend_options"}
        nested = options.get("backend_options", {})
        if not isinstance(nested, Mapping):
            raise ValueError(f"backend_options: must be a mapping of option names to values, "
                             f"got {nested!r}")
        if not given and not extra and not nested:
            return base
        return dataclasses.replace(
            base, **given, backend_options={**base.backend_options, **nested, **extra})

    def with_options(self, **options: Any) -> MILPParams:
        """These params with ``options`` over them (:meth:`from_mapping` with ``base=self``)."""
        return type(self).from_mapping(options, base=self)

    def call(self) -> dict[str, Any]:
        """The options every :func:`milp.solve` result records in its ``params``.

        The time limit, gap, threads, backend and formulation, then the
        backend options; the others are recorded where they apply.
        """
        return {
            "time_limit": self.time_limit, "mip_gap": self.mip_gap, "threads": self.threads,
            "backend": self.backend, "aggregate": self.aggregate, "cliques": self.cliques,
            "rounding": list(self.rounding), **self.backend_options,
        }
