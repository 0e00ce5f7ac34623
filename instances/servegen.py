"""The ServeGen serving-traffic series shipped in ``instances/data/``.

Request rates derived from ServeGen (the public repository alibaba/ServeGen,
folder ``data/language/m-large/``), Apache License 2.0; the README beside the
files states their origin. Figures computed from them keep this attribution.
"""

from __future__ import annotations

import csv
from importlib import resources

import numpy as np

__all__ = ["hourly_means", "read_series", "servegen_hourly_rps"]

TOTAL_RATE_FILE = "language_m-large_total_rate_10min.csv"
"""The 10-minute total request rate over 14 days (columns ``t_seconds,total_rate_rps,active_clients``)."""


def read_series(filename: str, column: str) -> np.ndarray:
    """One numeric column of a CSV file shipped in ``instances/data/``."""
    text = resources.files("instances").joinpath(f"data/{filename}").read_text()
    rows = list(csv.DictReader(text.splitlines()))
    return np.array([float(r[column]) for r in rows])


def hourly_means(rate: np.ndarray, windows_per_hour: int = 6) -> np.ndarray:
    """Mean of each hour's windows, zero windows (gaps in the data) left out.

    An hour with no data takes the value of the previous hour (the first
    hour, the mean of the others).
    """
    hours = np.asarray(rate, dtype=float).reshape(-1, windows_per_hour)
    valid = hours > 0
    counts = valid.sum(axis=1)
    means = np.where(counts > 0, (hours * valid).sum(axis=1) / np.maximum(counts, 1), np.nan)
    for i in range(len(means)):
        if np.isnan(means[i]):
            means[i] = means[i - 1] if i > 0 else np.nanmean(means)
    return means


def servegen_hourly_rps() -> np.ndarray:
    """Hourly mean request rate (req/s) over 14 days, from the shipped ServeGen series.

    The 10-minute totals are averaged per hour by :func:`hourly_means`.
    """
    return hourly_means(read_series(TOTAL_RATE_FILE, "total_rate_rps"))
