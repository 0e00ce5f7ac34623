"""``gpusched reproduce``: the seed's comparison rerun (:mod:`.seed`, on our generated
instances) and on the openb trace (:mod:`.real`), each a resumable sweep and its
tables and plots."""

from . import real, seed
from .real import *  # noqa: F403
from .seed import *  # noqa: F403

__all__ = real.__all__ + seed.__all__
