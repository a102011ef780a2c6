"""Moved to :mod:`renyi.sampling._allocation_gaussian`; this path stays as a thin re-export (the same module object)."""

import sys

from renyi.sampling import _allocation_gaussian as _moved
from renyi.sampling._allocation_gaussian import *  # noqa: F401,F403  (the public names, for type checkers)

sys.modules[__name__] = _moved
