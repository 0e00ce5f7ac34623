"""Execute the notebooks top to bottom and write them, with outputs, to a folder.

``make notebooks`` runs this in the full setting (``GPUSCHED_FULL=1``)::

    GPUSCHED_FULL=1 python notebooks/execute.py --output-dir results/notebooks

The committed notebooks carry no outputs; the executed copies go to the
output folder (``results/`` is not tracked). Each notebook runs with the
``notebooks/`` folder as its working directory, as under ``pytest --nbmake``.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent

logger = logging.getLogger("notebooks")


def execute(path: Path, output_dir: Path, timeout: int) -> Path:
    """Run one notebook and write the executed copy into ``output_dir``."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}
    )
    client.execute()
    output_dir.mkdir(parents=True, exist_ok=True)
    out = output_dir / path.name
    nbformat.write(nb, out)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebooks to run (default: every notebooks/*.ipynb)")
    parser.add_argument("--output-dir", type=Path, default=Path("results/notebooks"))
    parser.add_argument("--timeout", type=int, default=7200, help="seconds per cell")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    paths = args.notebooks or sorted(HERE.glob("[0-9][0-9]-*.ipynb"))
    for path in paths:
        t0 = time.perf_counter()
        out = execute(path, args.output_dir, args.timeout)
        logger.info("%s -> %s (%.1f s)", path.name, out, time.perf_counter() - t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
