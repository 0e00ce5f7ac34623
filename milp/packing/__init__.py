"""The bound of the packing experiment: the most GPU milli any offline placement could hold.

:func:`packing_bound` solves the configuration LP over node types by column
generation on HiGHS (:mod:`.bound`, pricing by a MIP per node type in
:mod:`.pricing`), returns the bound with its dual certificate (which
:func:`instances.packing.check_packing_bound` re-checks) and the best
offline packing found (the restricted master as a MIP, realized on actual
pods and nodes, :mod:`.columns`), so that the bound's own gap is stated.
"""

from .bound import PackingBound, packing_bound
from .columns import Column, Groups, group, realize
from .pricing import Priced, price_type

__all__ = ["Column", "Groups", "PackingBound", "Priced", "group", "packing_bound", "price_type",
           "realize"]
