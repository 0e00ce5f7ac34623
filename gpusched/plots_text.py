"""A label drawn inside its box only when it fits there, decided at draw time.

A Gantt bar's size on screen is known only once the figure is laid out, so the
first of a job's texts that fits (its name, then a shorter one) is drawn then,
or none: labels never spill over their bar or show cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from matplotlib.patches import Rectangle
from matplotlib.text import Text

__all__ = ["FittedLabel", "short_names"]

MARGIN = 0.9
"""Share of the box's width and height a label may take."""


def short_names(name: str) -> list[str]:
    """The texts to try for a job's label: ``train-14``, then ``14``."""
    tail = name.rsplit("-", 1)[-1]
    return [name] if tail == name or not tail else [name, tail]


class FittedLabel(Text):
    """A text centred on ``box``, drawn as the first of ``texts`` that fits inside it.

    ``shown`` is the text drawn last (``None``: none fitted).
    """

    def __init__(self, box: Rectangle, texts: Sequence[str], **kwargs: Any) -> None:
        x, y = box.get_x() + box.get_width() / 2, box.get_y() + box.get_height() / 2
        super().__init__(x, y, texts[0], ha="center", va="center", **kwargs)
        self.box = box
        self.texts = list(texts)
        self.shown: str | None = None
        self.set_in_layout(False)  # inside its box by construction: no say in the layout

    def fitting(self, renderer: Any) -> str | None:
        """The first of the texts that fits inside the box as drawn now, or ``None``."""
        room = self.box.get_window_extent(renderer)
        for text in self.texts:
            self.set_text(text)
            ext = super().get_window_extent(renderer)
            if ext.width <= MARGIN * room.width and ext.height <= MARGIN * room.height:
                return text
        return None

    def draw(self, renderer: Any) -> None:
        self.shown = self.fitting(renderer)
        if self.shown is None:
            self.set_text("")
            return
        self.set_text(self.shown)
        super().draw(renderer)
