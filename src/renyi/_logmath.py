"""Moved to :mod:`renyi.core._logmath`; this path stays as a thin re-export (the same module object)."""

import sys

from renyi.core import _logmath as _moved
from renyi.core._logmath import *  # noqa: F401,F403  (the public names, for type checkers)

sys.modules[__name__] = _moved
