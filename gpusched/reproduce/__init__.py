"""``gpusched reproduce``: the seed's comparison rerun (:mod:`.seed`, on our generated
instances), on the openb trace (:mod:`.real`) and on the ITP and Philly arrival logs
under both objectives (:mod:`.arrivals`), each a resumable sweep and its tables and
plots."""

from . import arrivals, real, seed
from .arrivals import *  # noqa: F403
from .real import *  # noqa: F403
from .seed import *  # noqa: F403

__all__ = arrivals.__all__ + real.__all__ + seed.__all__
