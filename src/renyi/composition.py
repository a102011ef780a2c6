"""Moved to :mod:`renyi.guarantees.composition`; this path stays as a thin re-export (the same module object)."""

import sys

from renyi.guarantees import composition as _moved
from renyi.guarantees.composition import *  # noqa: F401,F403  (the public names, for type checkers)

sys.modules[__name__] = _moved
