"""A table by name that other packages extend through an entry-point group.

The methods, the placement rules and the priority rules are each one
:class:`Registry`: built-ins are entered at import, a user's entries by a
``register_*`` call, and installed packages' entries through the group,
loaded the first time a name the table lacks is asked for, or the whole
table is listed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, MutableMapping
from importlib.metadata import entry_points
from typing import TypeVar

__all__ = ["Registry", "import_object"]

logger = logging.getLogger(__name__)

V = TypeVar("V")


class Registry(MutableMapping[str, V]):
    """A ``dict`` that loads its entry-point group before it answers for a name it lacks, or lists all.

    Parameters
    ----------
    group
        The entry-point group (``gpusched.methods``, ``gpusched.placements``, ...).
    enter
        Called once per entry point as ``enter(name, loaded_object)``; it
        registers the object (in this table and any beside it).
    check
        Called on every loaded entry point before any is entered: it raises
        for an object of the wrong kind, and then none is entered.
    """

    def __init__(self, group: str, enter: Callable[[str, object], None] | None = None,
                 check: Callable[[str, object], None] | None = None) -> None:
        self.group = group
        self._enter = enter
        self._check = check
        self._data: dict[str, V] = {}
        self._loaded = False
        self._lock = threading.RLock()

    def load(self) -> list[str]:
        """Register the entry points of :attr:`group` (once per process); the names this call added."""
        with self._lock:
            if self._loaded:
                return []
            # a broken plugin is not optional: it stops the load, one line naming it
            loaded = [(ep.name, _load(ep, self.group)) for ep in entry_points(group=self.group)]
            for name, obj in loaded:
                if self._check is not None:
                    self._check(name, obj)
            self._loaded = True
            for name, obj in loaded:  # all checked: entered together, once
                if self._enter is not None:
                    self._enter(name, obj)
            logger.debug("plugins of %s: %s", self.group, [n for n, _ in loaded])
            return [n for n, _ in loaded]

    def __getitem__(self, name: str) -> V:
        if name not in self._data:
            self.load()
        return self._data[name]

    def __contains__(self, name: object) -> bool:
        if name not in self._data:
            self.load()
        return name in self._data

    def __setitem__(self, name: str, value: V) -> None:
        self._data[name] = value

    def __delitem__(self, name: str) -> None:
        del self._data[name]

    def __iter__(self) -> Iterator[str]:
        self.load()
        return iter(list(self._data))

    def __len__(self) -> int:
        self.load()
        return len(self._data)

    def __repr__(self) -> str:
        return repr(self._data)

    def holds(self, name: str) -> bool:
        """Whether ``name`` is registered, without loading the plugins."""
        return name in self._data


def _load(ep: object, group: str) -> object:
    """An entry point's object; a plugin that does not load is a :class:`ValueError` naming it."""
    try:
        return ep.load()  # type: ignore[attr-defined,no-any-return]
    except Exception as exc:  # whatever a broken plugin raises on import
        raise ValueError(f"{group}: entry point {getattr(ep, 'name', ep)!r} = "
                         f"{getattr(ep, 'value', '?')!r} does not load "
                         f"({type(exc).__name__}: {exc})") from exc


def import_object(spec: str, field: str) -> object:
    """The object a ``MODULE:NAME`` spec names (``NAME`` may be dotted), imported from the Python path.

    Raises
    ------
    ValueError
        Naming ``field`` and ``spec`` when the module does not import or has no such name.
    """
    import importlib
    import os
    import sys

    module, _, name = spec.partition(":")
    if not module or not name:
        raise ValueError(f"{field}: {spec!r} is not of the form MODULE:NAME")
    try:
        try:
            obj: object = importlib.import_module(module)
        except ModuleNotFoundError:
            if os.getcwd() in sys.path or "" in sys.path:
                raise
            sys.path.append(os.getcwd())  # the current directory, as the command line promises
            obj = importlib.import_module(module)
    except Exception as exc:  # any import failure of a user's module is the user's input error
        raise ValueError(f"{field}: cannot import module {module!r} of {spec!r} "
                         f"({type(exc).__name__}: {exc})") from exc
    for part in name.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"{field}: module {module!r} has no {name!r} (from {spec!r})")
        obj = getattr(obj, part)
    return obj
