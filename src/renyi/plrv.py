"""Moved to :mod:`renyi.divergences.plrv`; this path stays as a thin re-export (the same module object)."""

import sys

from renyi.divergences import plrv as _moved
from renyi.divergences.plrv import *  # noqa: F401,F403  (the public names, for type checkers)

sys.modules[__name__] = _moved
