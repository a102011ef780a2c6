"""Moved to :mod:`renyi.core.display`; this path stays as a thin re-export (the same module object)."""

import sys

from renyi.core import display as _moved
from renyi.core.display import *  # noqa: F401,F403  (the public names, for type checkers)

sys.modules[__name__] = _moved
