"""Moved to :mod:`renyi.core._optimize`; this path stays as a thin re-export (the same module object)."""

import sys

from renyi.core import _optimize as _moved
from renyi.core._optimize import *  # noqa: F401,F403  (the public names, for type checkers)

sys.modules[__name__] = _moved
