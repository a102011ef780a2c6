"""Moved to :mod:`renyi.mechanisms._noise`; this path stays as a thin re-export (the same module object)."""

import sys

from renyi.mechanisms import _noise as _moved
from renyi.mechanisms._noise import *  # noqa: F401,F403  (the public names, for type checkers)

sys.modules[__name__] = _moved
