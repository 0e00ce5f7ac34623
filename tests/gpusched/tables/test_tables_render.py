"""gpusched.tables.render: the shape of Markdown and booktabs LaTeX, escaping, formats."""

from __future__ import annotations

import io
import math
import re

import pandas as pd
import pytest
from table_rows import hand_rows

from gpusched import tables


@pytest.fixture
def rows() -> pd.DataFrame:
    return hand_rows()


def _md_shape(text: str) -> None:
    lines = [ln for ln in text.splitlines() if ln.startswith("|")]
    assert len(lines) >= 3
    counts = {ln.count("|") for ln in lines}
    assert len(counts) == 1, counts
    assert re.fullmatch(r"\|(:?-+:?\|)+", lines[1])


def _latex_shape(text: str, ncols: int) -> None:
    assert "\\begin{tabular}" in text and text.rstrip().endswith("\\end{table}")
    for k in ("\\toprule", "\\midrule", "\\bottomrule"):
        assert text.count(k) == 1, k
    body = text.split("\\toprule")[1].split("\\bottomrule")[0]
    rows = [ln for ln in body.splitlines() if ln.endswith("\\\\")]
    assert rows and all(ln.count(" & ") == ncols - 1 for ln in rows)
    spec = re.search(r"\\begin\{tabular\}\{([lrc]+)\}", text).group(1)
    assert len(spec) == ncols
    for raw in ("±", "→", "—"):  # unicode symbols are turned into LaTeX
        assert raw not in text
    assert re.search(r"(?<!\\)%", text.split("\n", 1)[1]) is None  # every % escaped
    assert re.search(r"(?<!\\)_", text.split("\n", 1)[1]) is None  # every _ escaped


@pytest.mark.parametrize("name", ["summary", "seed", "ablation"])
def test_formats_shape(rows, name):
    r = rows.copy()
    r["family"] = ["seed-training-heavy"] * 4 + ["hc-mixed"] * 4
    tv = tables.view(r, name)
    _md_shape(tv.render("markdown"))
    _latex_shape(tv.render("latex"), len(tv.table.columns))
    back = pd.read_csv(io.StringIO(tv.render("csv")))
    assert len(back) == len(tv.frame)
    with pytest.raises(ValueError, match="format"):
        tv.render("html")


def test_latex_escape():
    assert tables.latex_escape("a_b 50% & $x# {y}") == r"a\_b 50\% \& \$x\# \{y\}"
    assert tables.latex_escape("1 ± 2 → 3") == r"1 $\pm$ 2 $\rightarrow$ 3"


def test_fmt_ci():
    assert tables.fmt_ci(1.234, 0.5) == "1.2 ± 0.5"
    assert tables.fmt_ci(3.0, math.nan, signed=True) == "+3.0"
    assert tables.fmt_ci(math.nan, 1.0) == "n/a"
    assert tables.fmt_ci(12.6, 3.2, digits=0) == "13 ± 3"


def test_table_by_hand():
    t = tables.Table(columns=["Name", "Two\nlines"], rows=[["a_b", "1 ± 2"], ["c", "30"]],
                     caption="Cap & co", notes=["50% of it"], label="tab:x")
    md = t.to_markdown()
    assert md.startswith("**Cap & co**\n\n| Name ")
    assert re.search(r"\| +Two lines \|", md) and md.rstrip().endswith("50% of it")
    _md_shape(md)
    assert re.search(r"\|:-+\|-+:\|", md)  # left, then right aligned
    tex = t.to_latex()
    _latex_shape(tex, 2)
    assert "\\caption{Cap \\& co}" in tex and "\\label{tab:x}" in tex
    assert "a\\_b & 1 $\\pm$ 2 \\\\" in tex and "50\\% of it" in tex
    assert "\\begin{tabular}[b]{@{}r@{}}Two \\\\ lines\\end{tabular}" in tex


def test_render_formats_and_aliases():
    tv = tables.TableView(pd.DataFrame({"x": [1.5]}), tables.Table(["x"], [["1.5"]]))
    assert tv.render("md") == tv.render("markdown")
    assert tv.render("tex") == tv.render("latex")
    assert tv.render("csv") == "x\n1.5\n"
    with pytest.raises(ValueError, match="format: expected markdown"):
        tv.render("html")




def test_a_mean_that_rounds_to_zero_has_no_minus_sign() -> None:
    from gpusched.tables.render import fmt_ci

    assert fmt_ci(-0.04, 0.08, digits=1) == "0.0 ± 0.1"
    assert fmt_ci(-0.004, 0.0, digits=2, signed=True) == "+0.00 ± 0.00"
    assert fmt_ci(-0.06, 0.01, digits=1) == "-0.1 ± 0.0"
