"""``python -m gpusched``: the command line."""

from gpusched.cli import entry

entry()
