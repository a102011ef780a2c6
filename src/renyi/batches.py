"""Moved to :mod:`renyi.sampling.batches`; this path stays as a thin re-export (the same module object)."""

import sys

from renyi.sampling import batches as _moved
from renyi.sampling.batches import *  # noqa: F401,F403  (the public names, for type checkers)

sys.modules[__name__] = _moved
