"""Moved to :mod:`renyi.accounting.dpsgd`; this path stays as a thin re-export (the same module object)."""

import sys

from renyi.accounting import dpsgd as _moved
from renyi.accounting.dpsgd import *  # noqa: F401,F403  (the public names, for type checkers)

sys.modules[__name__] = _moved
