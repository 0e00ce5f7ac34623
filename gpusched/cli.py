"""The ``gpusched`` command line.

Each group of subcommands lives in a module of :mod:`gpusched.commands` with a
``register(subparsers)`` function; a subcommand sets ``func(args) -> int``.
Bad input anywhere ends with exit code 2 and one line naming the file and the
field, never a traceback.

Building the parser imports nothing heavy (no numpy, numba, pandas, matplotlib or
solver): ``gpusched --version`` and ``--help`` answer at once, and each command
imports what it needs when it runs. The current folder is on ``sys.path`` (at its
end) so that a rule given as ``MODULE:NAME`` (``--policy mine:worst``) is imported
from a ``mine.py`` beside the user.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

__all__ = ["COMMAND_MODULES", "UsageError", "main", "version_text"]

COMMAND_MODULES: tuple[str, ...] = (
    "gpusched.commands.core",
    "gpusched.commands.sweep",
    "gpusched.commands.simulate",
    "gpusched.commands.traces",
    "gpusched.commands.bounds",
    "gpusched.commands.library",
    "gpusched.commands.pack",
)
"""Modules whose ``register(subparsers)`` adds subcommands, in help order."""


class UsageError(Exception):
    """Bad input: reported as one line, exit code 2."""


def library_edition() -> str:
    """The shipped benchmark library's edition (its ``index.json``'s ``version``), read
    without importing :mod:`instances` (``--version`` answers at once); ``unreadable``
    for a broken install. :func:`instances.library.load_library` reads the same file.
    """
    import importlib.util
    import json
    from pathlib import Path

    try:
        spec = importlib.util.find_spec("instances")  # finds the package, runs none of it
        folders = list(spec.submodule_search_locations or ()) if spec is not None else []
        index = Path(folders[0]) / "data" / "library" / "index.json"
        edition = json.loads(index.read_text(encoding="utf-8"))["version"]
    except (ValueError, OSError, LookupError, TypeError):  # pragma: no cover - a broken install
        return "unreadable"
    return edition if isinstance(edition, str) else "unreadable"


def version_text(version: str | None = None) -> str:
    """What ``--version`` prints: the package version (its major is the model version,
    ``.dev`` while in development) and the benchmark library's edition.
    """
    if version is None:
        from gpusched import __version__

        version = __version__
    major, dev = version.split(".")[0], ".dev" in version
    return (f"gpusched {version} (model version {major}{', in development' if dev else ''}; "
            f"benchmark library edition {library_edition()})")


class _VersionAction(argparse.Action):
    """``--version``, its text built only when asked for (it reads the library index)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        print(version_text())
        parser.exit()


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # main prints "gpusched: error: ..."; name the subcommand (``table: ...``) once
        sub = self.prog.removeprefix("gpusched").strip()
        raise UsageError(f"{sub}: {message}" if sub else message)


VERBOSE_HELP = "more log output (-vv: debug); also before the subcommand"


class _SubParser(_Parser):
    """A subcommand's parser: it takes ``-v/--verbose`` too, so that ``gpusched bench ...
    -v`` works as ``gpusched -v bench ...`` (the counts add up)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # SUPPRESS: a subcommand without -v leaves no attribute, and -v before it counts alone
        self.add_argument("-v", "--verbose", action="count", dest="sub_verbose",
                          default=argparse.SUPPRESS, help=VERBOSE_HELP)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, every subcommand registered."""
    parser = _Parser(
        prog="gpusched",
        description="GPU pool scheduling: FIFO vs constraint-aware allocation, with exact MILP bounds.",
    )
    parser.add_argument("--version", action=_VersionAction,
                        help="the package version (its major is the model version) and the "
                             "benchmark library's edition")
    parser.add_argument("-v", "--verbose", action="count", default=0, help=VERBOSE_HELP)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_SubParser)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def user_modules_importable() -> None:
    """Put the current folder at the end of ``sys.path`` (if it is not there), so that a
    user's rule ``MODULE:NAME`` imports from ``MODULE.py`` in it; at the end, so that a
    file there never hides a package the command line imports.
    """
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.append(cwd)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    os.environ.setdefault("MPLBACKEND", "Agg")  # files only: the command line opens no window
    try:
        args = build_parser().parse_args(argv)
        verbose = args.verbose + getattr(args, "sub_verbose", 0)
        logging.basicConfig(
            level=logging.WARNING - 10 * min(verbose, 2),
            format="%(levelname)s %(name)s: %(message)s",
        )
        user_modules_importable()
        return int(args.func(args))
    except UsageError as e:
        print(f"gpusched: error: {e}", file=sys.stderr)
        return 2
    except (ValueError, OSError) as e:
        print(f"gpusched: error: {_one_line(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # no traceback from a second Ctrl-C
        print("gpusched: interrupted", file=sys.stderr)
        return 130


def _one_line(e: BaseException) -> str:
    if isinstance(e, OSError) and e.filename is not None:
        return f"{e.filename}: {e.strerror or e}"
    return " ".join(str(e).split())


def entry() -> NoReturn:  # pragma: no cover - console-script wrapper
    """Console-script entry point."""
    sys.exit(main())
