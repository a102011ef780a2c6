"""Moved to :mod:`renyi.guarantees.zcdp`; this path stays as a thin re-export (the same module object)."""

import sys

from renyi.guarantees import zcdp as _moved
from renyi.guarantees.zcdp import *  # noqa: F401,F403  (the public names, for type checkers)

sys.modules[__name__] = _moved
