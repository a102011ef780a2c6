"""Moved to :mod:`renyi.sampling.subsampling`; this path stays as a thin re-export (the same module object)."""

import sys

from renyi.sampling import subsampling as _moved
from renyi.sampling.subsampling import *  # noqa: F401,F403  (the public names, for type checkers)

sys.modules[__name__] = _moved
