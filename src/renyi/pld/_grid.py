"""Moved to :mod:`renyi.accounting.pld._grid`; this path stays as a thin re-export (the same module object)."""

import sys

from renyi.accounting.pld import _grid as _moved
from renyi.accounting.pld._grid import *  # noqa: F401,F403  (the public names, for type checkers)

sys.modules[__name__] = _moved
