"""Moved to :mod:`renyi.core._names`; this path stays as a thin re-export (the same module object)."""

import sys

from renyi.core import _names as _moved
from renyi.core._names import *  # noqa: F401,F403  (the public names, for type checkers)

sys.modules[__name__] = _moved
