"""Render a formatted table as Markdown or booktabs LaTeX, with its caption and notes.

A :class:`Table` holds strings only (the views format the numbers); a
:class:`TableView` pairs it with the numeric frame that ``csv`` writes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

__all__ = ["FORMAT_ALIASES", "Table", "TableView", "fmt_ci", "latex_escape"]

FORMAT_ALIASES: dict[str, str] = {"md": "markdown", "tex": "latex"}
"""Other names of the formats (their file suffixes)."""

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
    "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "±": r"$\pm$", "→": r"$\rightarrow$", "–": "--", "—": "---", "≤": r"$\leq$",
    "≥": r"$\geq$", "×": r"$\times$", "−": "$-$",
}


def latex_escape(text: str) -> str:
    """Escape LaTeX's special characters (and the few symbols the tables use)."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def _latex_header(name: str, align: str) -> str:
    """A header cell; a name with ``\\n`` becomes a two-line nested tabular."""
    parts = name.split("\n")
    if len(parts) == 1:
        return latex_escape(name)
    inner = " \\\\ ".join(latex_escape(p) for p in parts)
    return f"\\begin{{tabular}}[b]{{@{{}}{align}@{{}}}}{inner}\\end{{tabular}}"


def fmt_ci(mean: float, half: float, digits: int = 1, signed: bool = False) -> str:
    """``mean ± half`` (``n/a`` for a missing mean, no ``±`` for a single value)."""
    if mean is None or not math.isfinite(mean):
        return "n/a"
    spec = f"{'+' if signed else ''}.{digits}f"
    s = format(mean, spec)
    if float(s.lstrip("+-") or 0) == 0:  # a mean that rounds to zero prints without a sign
        s = format(0.0, spec)
    if half is not None and math.isfinite(half):
        s += f" ± {half:.{digits}f}"
    return s


@dataclass
class Table:
    """A formatted table: header, string cells, caption and notes.

    A ``\\n`` in a column name breaks it in LaTeX; Markdown shows it on one line.
    ``align`` has one letter (``l`` or ``r``) per column; by default the first
    column is left-aligned and the others right-aligned.
    """

    columns: list[str]
    rows: list[list[str]]
    caption: str = ""
    notes: list[str] = field(default_factory=list)
    align: str = ""
    label: str = ""

    def _align(self) -> str:
        return self.align or ("l" + "r" * (len(self.columns) - 1))

    def frame(self) -> pd.DataFrame:
        """The cells as a frame of strings, one column per header."""
        return pd.DataFrame(self.rows, columns=range(len(self.columns)), dtype=object)

    def to_markdown(self) -> str:
        """A GitHub-flavoured Markdown table, caption above and notes below."""
        flat = [" ".join(c.split("\n")) for c in self.columns]
        body = self.frame().to_markdown(
            index=False, headers=flat, tablefmt="pipe", disable_numparse=True,
            colalign=["left" if a == "l" else "right" for a in self._align()],
        )
        lines = [f"**{self.caption}**", ""] if self.caption else []
        lines.append(body)
        if self.notes:
            lines += ["", *self.notes]
        return "\n".join(lines) + "\n"

    def to_latex(self) -> str:
        """A booktabs ``table`` float; needs ``\\usepackage{booktabs}`` only."""
        al = self._align()
        styler = self.frame().style.hide(axis="index")
        styler = styler.format(latex_escape).format_index(
            lambda i: _latex_header(self.columns[i], al[i]), axis=1)
        styler.set_table_styles([
            {"selector": "footnotesize", "props": ":;"},
            {"selector": "setlength", "props": ":{\\tabcolsep}{2.5pt};"},
        ], overwrite=False)
        text = styler.to_latex(
            hrules=True, column_format=al, position="htbp", position_float="centering",
            environment="table", caption=latex_escape(self.caption) if self.caption else None,
            label=self.label or None,
        )
        if self.notes:
            notes = ("\\par\\smallskip\n\\parbox{\\linewidth}{\\footnotesize "
                     + " ".join(latex_escape(n) for n in self.notes) + "}\n")
            head, end, tail = text.rpartition("\\end{table}")
            text = head + notes + end + tail
        return "% Requires \\usepackage{booktabs} in the preamble.\n" + text


@dataclass
class TableView:
    """One view: the numbers (``frame``) and their formatted table."""

    frame: pd.DataFrame
    table: Table

    def render(self, fmt: str) -> str:
        """``markdown`` (or ``md``), ``latex`` (or ``tex``) or ``csv`` text."""
        fmt = FORMAT_ALIASES.get(fmt, fmt)
        if fmt == "markdown":
            return self.table.to_markdown()
        if fmt == "latex":
            return self.table.to_latex()
        if fmt == "csv":
            return self.frame.to_csv(index=False)
        raise ValueError(f"format: expected markdown (md), latex (tex) or csv, got {fmt!r}")
